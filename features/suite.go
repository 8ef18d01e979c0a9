package features

import (
	"context"
	"embed"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"net"
	"net/http"
	"net/url"
	"regexp"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/cucumber/godog"
)

// embedded holds the feature files, so the partnersim binary carries them (partnersim contract).
//
//go:embed *.feature
var embedded embed.FS

// Features returns the embedded feature files.
func Features() fs.FS { return embedded }

// AllScopes are the scopes a full key carries (decisions D3).
var AllScopes = []string{"read:user", "read:orders", "manage:sessions", "manage:webhooks"}

// Options says what to check and how to report it. BaseURL is required; everything else has a
// default. Without SandboxURL the @sandbox scenarios are skipped and the others use APIKey,
// KeysWithout and Vars.
type Options struct {
	// BaseURL is the API base URL, version segment included (http://127.0.0.1:8080/v1).
	BaseURL string
	// APIKey is a key of the partner's institution with every scope; used when there is no
	// control plane to issue keys.
	APIKey string
	// SandboxURL is the control plane's root (http://127.0.0.1:8080), or the root of any
	// implementation of the state adapter (openapi/state-adapter.yaml); empty means none. The
	// run asks it for its capabilities (GET /_sandbox/capabilities) and skips a scenario that
	// needs one it lacks.
	SandboxURL string
	// SandboxToken is the control plane's x-sandbox-token.
	SandboxToken string
	// KeysWithout maps a scope to a key of the same institution lacking exactly that scope, for
	// the 403 scenarios when there is no control plane.
	KeysWithout map[string]string
	// Vars are ids known to exist in a deployment without a control plane (user_id: a platform
	// user id visible to APIKey).
	Vars map[string]string
	// SigningSecret is the institution's webhook signing secret, when the institution already
	// has one (a real deployment); the sandbox issues a fresh one per scenario.
	SigningSecret string
	// ReceiverListen is where the suite's webhook receiver listens (default 127.0.0.1:0).
	ReceiverListen string
	// ReceiverURL is the receiver's URL as the implementation reaches it; empty means the
	// listen address. @webhook scenarios run only when the implementation can reach it: a
	// ReceiverURL was given, or the base URL is on loopback.
	ReceiverURL string
	// Tags is a godog tag expression ("@spec && ~@webhook").
	Tags string
	// Name, when set, is a regular expression; only scenarios whose name matches run.
	Name string
	// Paths are feature files to run (names inside Features()); empty means all.
	Paths []string
	// Format is one of Formats: pretty (default) and progress print each scenario as it ends,
	// whole; junit and cucumber are written when the run ends. Report.Write renders any of them
	// again from the returned Report.
	Format string
	// Output receives the report (default io.Discard).
	Output io.Writer
	// Concurrency is how many scenarios run at once (default 8).
	Concurrency int
	// Randomize shuffles scenario order with this seed; -1 picks one, 0 keeps file order.
	Randomize int64
	// Wait bounds every wait for a delivery or a state change (default 10s).
	Wait time.Duration
	// StopOnFailure stops starting scenarios after the first failure (make mutants: a mutant is
	// killed by its first failing scenario).
	StopOnFailure bool
	// HTTPClient makes the API and control-plane calls (default: 15s timeout, no redirects).
	HTTPClient *http.Client
	// KeepTenants keeps the institutions the run created through the control plane; by
	// default the run deletes them when it ends, leaving a shared sandbox as it found it.
	KeepTenants bool
	// NoPreflight skips the check, before any scenario runs, that the sandbox token and the
	// keys given can run the suite.
	NoPreflight bool
}

// Run runs the features against opts.BaseURL and reports every scenario. The error is for
// options that cannot work (no base URL, a receiver that cannot listen); failed scenarios are
// in the report.
func Run(ctx context.Context, opts Options) (*Report, error) {
	o, err := opts.withDefaults()
	if err != nil {
		return nil, err
	}
	if !o.NoPreflight {
		if err := preflight(ctx, o); err != nil {
			return nil, err
		}
	}
	rn, err := newRun(ctx, o)
	if err != nil {
		return nil, err
	}
	defer rn.close()
	rep := &Report{Start: time.Now()}
	var live *liveWriter
	var onScenario func(ScenarioResult)
	if o.Format == "pretty" || o.Format == "progress" {
		live = &liveWriter{w: o.Output, format: o.Format}
		onScenario = live.scenario
	}
	rec, suiteName := newRecorder(rep, onScenario)
	defer rec.release(suiteName)
	paths := o.Paths
	if len(paths) == 0 {
		paths = []string{"."}
	}
	suite := godog.TestSuite{
		Name: suiteName,
		ScenarioInitializer: func(sc *godog.ScenarioContext) {
			newWorld(rn, rec).register(sc)
		},
		Options: &godog.Options{
			Format:         recorderFormat,
			Output:         io.Discard,
			NoColors:       true,
			Strict:         true,
			StopOnFailure:  o.StopOnFailure,
			Concurrency:    o.Concurrency,
			Randomize:      o.Randomize,
			Tags:           o.Tags,
			FS:             Features(),
			Paths:          paths,
			DefaultContext: ctx,
		},
	}
	rep.ExitCode = suite.Run()
	rep.Cleanup = rn.cleanup(ctx)
	rep.Duration = time.Since(rep.Start)
	if rep.ExitCode == 2 {
		return rep, errors.New("godog refused the options (bad tag expression or feature path)")
	}
	if live != nil {
		live.finish(rep)
	} else if err := rep.Write(o.Output, o.Format); err != nil {
		return rep, fmt.Errorf("writing the %s report: %w", o.Format, err)
	}
	return rep, nil
}

func (o Options) withDefaults() (Options, error) {
	if o.BaseURL == "" {
		return o, errors.New("a base URL is required (http://host:port/v1)")
	}
	u, err := url.Parse(o.BaseURL)
	if err != nil || u.Scheme == "" || u.Host == "" {
		return o, fmt.Errorf("base URL %q is not an absolute URL", o.BaseURL)
	}
	o.BaseURL = strings.TrimSuffix(o.BaseURL, "/")
	o.SandboxURL = strings.TrimSuffix(o.SandboxURL, "/")
	if o.SandboxURL == "" && o.APIKey == "" {
		return o, errors.New("no control plane and no API key: for a sandbox, pass --sandbox-url (or export PARTNERSIM_SANDBOX_URL, as `partnersim serve` prints); for a deployment without one, pass --api-key with a key of every scope")
	}
	if o.Format == "" {
		o.Format = "pretty"
	}
	if !slices.Contains(Formats, o.Format) {
		return o, fmt.Errorf("unknown report format %q (one of %s)", o.Format, strings.Join(Formats, ", "))
	}
	if o.Output == nil {
		o.Output = io.Discard
	}
	if o.Concurrency <= 0 {
		o.Concurrency = 8
	}
	if o.Wait <= 0 {
		o.Wait = 10 * time.Second
	}
	if o.ReceiverListen == "" {
		o.ReceiverListen = "127.0.0.1:0"
	}
	if o.Name != "" {
		if _, err := regexp.Compile(o.Name); err != nil {
			return o, fmt.Errorf("scenario name filter: %w", err)
		}
	}
	if o.HTTPClient == nil {
		o.HTTPClient = DefaultHTTPClient()
	}
	return o, nil
}

// DefaultHTTPClient is the client a run uses unless Options.HTTPClient gives one: a 15 s
// timeout, redirects not followed (the suites check the API's 307s themselves).
func DefaultHTTPClient() *http.Client {
	return &http.Client{
		Timeout:       15 * time.Second,
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse },
	}
}

// run is what the scenarios of one Run share: options, the HTTP client, the webhook receiver
// hub and the signing secret learnt by whichever scenario subscribed first (only in a
// deployment without a control plane, where every scenario uses the same institution).
type run struct {
	opts    Options
	client  *http.Client
	hub     *hub
	name    *regexp.Regexp
	webhook bool // whether the implementation can reach the receiver hub

	// serial lets a @serial scenario run alone: every other scenario holds it shared while it
	// runs, a @serial one holds it exclusively (it waits for the running ones to end, and the
	// others wait for it). Scenarios that move the process-wide virtual clock and then check
	// exact times need it (decisions D9: the clock is shared).
	serial sync.RWMutex

	// caps are the capabilities the control plane declares (nil: all, or no control plane).
	caps map[string]bool

	mu        sync.Mutex
	secret    string
	secretSet chan struct{}
	created   []string // institutions created through the control plane, deleted at the end
}

// track records an institution the run created.
func (rn *run) track(id string) {
	rn.mu.Lock()
	defer rn.mu.Unlock()
	rn.created = append(rn.created, id)
}

func newRun(ctx context.Context, o Options) (*run, error) {
	var caps map[string]bool
	if o.SandboxURL != "" {
		var err error
		if caps, err = fetchCapabilities(ctx, o.HTTPClient, o.SandboxURL, o.SandboxToken); err != nil {
			return nil, err
		}
	}
	h, err := newHub(o.ReceiverListen, o.ReceiverURL)
	if err != nil {
		return nil, fmt.Errorf("webhook receiver: %w", err)
	}
	rn := &run{opts: o, client: o.HTTPClient, hub: h, secretSet: make(chan struct{}), caps: caps}
	if o.Name != "" {
		rn.name = regexp.MustCompile(o.Name)
	}
	rn.webhook = o.ReceiverURL != "" || isLoopbackURL(o.BaseURL)
	if o.SigningSecret != "" {
		rn.learnSecret(o.SigningSecret)
	}
	return rn, nil
}

func (rn *run) close() { rn.hub.close() }

// learnSecret records the shared institution's signing secret (first one wins).
func (rn *run) learnSecret(s string) {
	rn.mu.Lock()
	defer rn.mu.Unlock()
	if rn.secret == "" && s != "" {
		rn.secret = s
		close(rn.secretSet)
	}
}

// sharedSecret waits up to d for the shared institution's secret.
func (rn *run) sharedSecret(d time.Duration) string {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-rn.secretSet:
	case <-t.C:
	}
	rn.mu.Lock()
	defer rn.mu.Unlock()
	return rn.secret
}

func (rn *run) sandbox() bool { return rn.opts.SandboxURL != "" }

func isLoopbackURL(raw string) bool {
	u, err := url.Parse(raw)
	if err != nil {
		return false
	}
	h := u.Hostname()
	if h == "localhost" {
		return true
	}
	ip := net.ParseIP(h)
	return ip != nil && ip.IsLoopback()
}

func hasTag(tags []string, t string) bool { return slices.Contains(tags, t) }
