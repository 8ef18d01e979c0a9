package sandbox

import (
	"context"
	cryptorand "crypto/rand"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"log/slog"
	"math/rand/v2"
	"net"
	"net/netip"
	"os"
	"runtime/debug"
	"strings"
	"sync/atomic"
	"time"

	"github.com/partnersim/partnersim/fixtures"
	"github.com/partnersim/partnersim/simulator"
	"github.com/partnersim/partnersim/simulator/bolt"
	"github.com/partnersim/partnersim/simulator/control"
	"github.com/partnersim/partnersim/simulator/httpapi"
	"github.com/partnersim/partnersim/simulator/httpapi/console"
	"github.com/partnersim/partnersim/simulator/netguard"
	"github.com/partnersim/partnersim/simulator/scenario"
	"github.com/partnersim/partnersim/simulator/webhook"
)

// Config says how to start a sandbox.
type Config struct {
	// DBPath is the bbolt file; it is created if missing.
	DBPath string
	// Fixtures is the fixture set loaded into an empty store (and on reset); nil means the
	// embedded default set.
	Fixtures fs.FS
	// APIVersions are the mounted API versions ("v1" always first).
	APIVersions []string
	// SandboxToken overrides the fixtures' control-plane token.
	SandboxToken string
	// Seed and FrozenClock select deterministic mode (decisions D8).
	Seed        *uint64
	FrozenClock *time.Time
	// ShardTag, when set, begins every id and key this sandbox issues (simulator.NewShardIDs):
	// the shard's name, by which a proxy routes them (decisions D20).
	ShardTag string
	// Logger receives structured logs; nil discards them.
	Logger *slog.Logger
	// Exposed says the sandbox listens on an address that is not loopback (see IsLoopback):
	// it then refuses the fixtures' published sandbox token and, unless
	// AllowLoopbackCallbacks says otherwise, loopback callback URLs (decisions D17).
	Exposed bool
	// AllowedHosts are the Host names answered besides loopback ones (decisions D18): while the
	// sandbox is loopback-bound (not Exposed) only loopback Hosts and these are answered;
	// Exposed, any Host is unless this list is given. An entry starting with "." matches the
	// name and every name under it.
	AllowedHosts []string
	// TrustedProxies are the reverse proxies whose X-Forwarded-For names the client (decisions
	// D18); from any other peer the header is ignored.
	TrustedProxies []netip.Prefix
	// AllowLoopbackCallbacks allows or refuses callback URLs on loopback; nil means allowed
	// unless Exposed (a partner could otherwise make an exposed sandbox fetch its host's
	// loopback-only services and read the answers in the delivery log).
	AllowLoopbackCallbacks *bool
	// RetrySchedule and DeliveryTimeout tune webhook delivery (nil/0: decisions D8's defaults).
	RetrySchedule   []time.Duration
	DeliveryTimeout time.Duration
	// Workers is how many deliveries run at once (0: 32).
	Workers int
	// NoControl switches the control plane off.
	NoControl bool
	// NoPublishedKeys refuses the fixture sets' published API keys (this set's and the default
	// set's) as unknown keys (decisions D18): anyone who reaches an exposed sandbox knows them.
	NoPublishedKeys bool
	// RateLimit and RateBurst limit each key's requests a second (0: off).
	RateLimit float64
	RateBurst int
	// LoadProgress, when set, reports the load of a set into an empty store (Build).
	LoadProgress Progress
	// CheckStore runs the store's full page-by-page consistency check at open, whatever its
	// size (small files are always checked).
	CheckStore bool
	// Metrics, when set, counts requests, webhook attempts and the queue; MetricsOnAPI also
	// serves them at /metrics on the API's listener (behind the sandbox token beyond loopback).
	Metrics      *httpapi.Metrics
	MetricsOnAPI bool
}

// Sandbox is a running simulator: its store, HTTP handler and webhook dispatcher, and the
// control plane's service over them.
type Sandbox struct {
	DB         *bolt.DB
	Server     *httpapi.Server
	Fixtures   *fixtures.Set
	Clock      *simulator.Clock
	Guard      *netguard.Guard
	Dispatcher *webhook.Dispatcher
	// Token is the control plane's x-sandbox-token.
	Token string
	// Loaded is true when this start loaded the fixtures into an empty store.
	Loaded bool

	service   *control.Service
	scenarios *scenario.Runner
	// stop ends the dispatcher's intake, abort its attempts in flight; done closes when it
	// has stopped.
	stop, abort context.CancelFunc
	done        chan struct{}
	closed      atomic.Bool
}

// defaultSetToken is the embedded default set's published sandbox token.
func defaultSetToken() string {
	b, err := fs.ReadFile(fixtures.Default(), fixtures.FileSandbox)
	if err != nil {
		return ""
	}
	var v struct {
		Token string `json:"sandbox_token"`
	}
	_ = json.Unmarshal(b, &v)
	return v.Token
}

// IsLoopback reports whether a listen address (host:port) accepts only loopback connections:
// a loopback IP or "localhost". An empty host or 0.0.0.0 listens everywhere.
func IsLoopback(addr string) bool {
	host, _, err := net.SplitHostPort(addr)
	if err != nil {
		host = addr
	}
	if host == "localhost" {
		return true
	}
	ip := net.ParseIP(strings.Trim(host, "[]"))
	return ip != nil && ip.IsLoopback()
}

// Open opens the store at cfg.DBPath, loads the fixtures when the store is empty (or a previous
// load was cut short), builds the server and starts the dispatcher.
func Open(ctx context.Context, cfg Config) (*Sandbox, error) {
	cfg = cfg.withDefaults()
	fsys := cfg.Fixtures
	if fsys == nil {
		fsys = fixtures.Default()
	}
	clock := simulator.NewClock(nil)
	if cfg.FrozenClock != nil {
		clock = simulator.NewFrozenClock(*cfg.FrozenClock)
	}
	// The set's small files first: the store is opened with their defaults for new
	// institutions. Their problems are reported once the store says whether it was loaded (an
	// empty one gets the whole set, whose check reports every problem).
	settings, settingsErr := fixtures.OpenSettings(fsys)
	wake := webhook.NewWaker()
	db, err := openStore(cfg, clock, bolt.Options{Check: cfg.CheckStore, Notify: wake.Wake, Defaults: defaultsOf(settings)})
	if err != nil {
		return nil, err
	}
	sb := &Sandbox{DB: db, Clock: clock}
	stored, err := sb.loadFixtures(ctx, fsys, settings, settingsErr, cfg.LoadProgress)
	if err == nil {
		err = db.RestoreClock(ctx) // the offsets are state (decisions D9)
	}
	if err == nil {
		err = sb.chooseToken(cfg, stored)
	}
	if err == nil {
		err = sb.wire(cfg, fsys, wake)
	}
	if err == nil {
		// Scenario runs in flight when the process last stopped go on (they are state).
		err = sb.scenarios.Resume(ctx)
	}
	if err != nil {
		if sb.scenarios != nil {
			sb.scenarios.Close()
		}
		db.Close()
		return nil, err
	}
	runCtx, stop := context.WithCancel(context.Background())
	abortCtx, abort := context.WithCancel(context.Background())
	sb.stop, sb.abort, sb.done = stop, abort, make(chan struct{})
	go func() {
		defer close(sb.done)
		if err := sb.Dispatcher.RunDraining(runCtx, abortCtx); err != nil {
			cfg.Logger.Error("dispatcher stopped", slog.Any("err", err))
		}
	}()
	return sb, nil
}

// defaultsOf are the store's defaults from a set's settings (none when they failed to open).
func defaultsOf(settings *fixtures.Set) bolt.Defaults {
	if settings == nil {
		return bolt.Defaults{}
	}
	return bolt.DefaultsOf(settings)
}

// withDefaults fills what cfg leaves out: a discarding logger and the v1 API.
func (cfg Config) withDefaults() Config {
	if cfg.Logger == nil {
		cfg.Logger = slog.New(slog.NewTextHandler(io.Discard, nil))
	}
	if len(cfg.APIVersions) == 0 {
		cfg.APIVersions = []string{"v1"}
	}
	return cfg
}

// openStore opens the bbolt store, its ids seeded in deterministic mode (decisions D8); a
// damaged file is refused with the ways to recover.
func openStore(cfg Config, clock *simulator.Clock, opts bolt.Options) (*bolt.DB, error) {
	var src io.Reader
	if cfg.Seed != nil {
		src = rand.NewChaCha8(seedBytes(*cfg.Seed))
	}
	db, err := bolt.Open(cfg.DBPath, clock, simulator.NewShardIDs(src, cfg.ShardTag), opts)
	if errors.Is(err, bolt.ErrDamaged) {
		return nil, fmt.Errorf("%w. Nothing was changed. To recover: copy a saved snapshot over it (%s.snapshots/NAME.db, "+
			"written by `partnersim snapshot save NAME`; a running sandbox takes `partnersim snapshot restore NAME`), "+
			"or delete it to reload the fixtures", err, cfg.DBPath)
	}
	if err != nil {
		return nil, err
	}
	return db, nil
}

// loadFixtures gives the store its set and sb.Fixtures the set's small files (settings, or
// settingsErr when they failed), and returns the sandbox token the store kept ("" for a store
// loaded now). A store already loaded from the set needs only its small files (keys to print,
// defaults for new institutions, scenarios); an empty one gets the whole set, checked and
// written in one pass (bolt's Build), whose check covers the small files' too.
func (sb *Sandbox) loadFixtures(ctx context.Context, fsys fs.FS, settings *fixtures.Set, settingsErr error, progress bolt.Progress) (stored string, err error) {
	loaded, stored, err := sb.DB.Loaded(ctx)
	if err != nil {
		return "", err
	}
	set, err := settings, settingsErr
	if !loaded {
		if set, err = sb.DB.Build(ctx, fsys, progress); err == nil {
			err = settingsErr
		}
	}
	if err != nil {
		if fixtures.Problems(err) != nil {
			return "", fmt.Errorf("fixtures: %w", err)
		}
		return "", fmt.Errorf("load fixtures: %w", err)
	}
	if !loaded {
		sb.Loaded, stored = true, set.SandboxToken
		// Serve with the set's settings only, as a restart does: the checked set's index of
		// every user (13 MiB at 100,000 users) is the build's, not the server's. Then the
		// build's decode and write buffers are garbage: give the memory back to the OS rather
		// than serving with the load's peak heap.
		set = settings
		debug.FreeOSMemory()
	}
	sb.Fixtures = set
	return stored, nil
}

// chooseToken sets the control plane's token: --sandbox-token, else the one the store keeps,
// else a fresh one; beyond loopback it must pass httpapi.CheckExposedToken. A fresh token comes from the
// store's ids (seeded in deterministic mode) on loopback, and beyond it from the system's
// random source whatever the seed: a token a published seed reproduces is no secret
// (decisions D18).
func (sb *Sandbox) chooseToken(cfg Config, stored string) error {
	sb.Token = stored
	if cfg.SandboxToken != "" {
		sb.Token = cfg.SandboxToken
	}
	switch {
	case sb.Token != "":
	case cfg.Exposed:
		sb.Token = "sbxtok_" + cryptorand.Text()
	default:
		sb.Token = "sbxtok_" + sb.DB.IDs.New("t")[2:]
	}
	if cfg.Exposed && !cfg.NoControl {
		return httpapi.CheckExposedToken(sb.Token, stored, sb.Fixtures.SandboxToken, defaultSetToken())
	}
	return nil
}

// wire builds the address guard, the dispatcher, the control service and the scenario runner
// over the store, and the server (with the QA console when the control plane is on) over them.
func (sb *Sandbox) wire(cfg Config, fsys fs.FS, wake *webhook.Waker) error {
	db := sb.DB
	allowLoopback := !cfg.Exposed
	if cfg.AllowLoopbackCallbacks != nil {
		allowLoopback = *cfg.AllowLoopbackCallbacks
	}
	sb.Guard = netguard.New(netguard.Options{AllowLoopback: allowLoopback})
	var observe func(inst, outcome string)
	if cfg.Metrics != nil {
		observe = cfg.Metrics.Attempt
	}
	sb.Dispatcher = webhook.New(db, webhook.Config{Workers: cfg.Workers, Schedule: cfg.RetrySchedule, Timeout: cfg.DeliveryTimeout,
		Dial: sb.Guard.DialContext, Clock: sb.Clock, Log: cfg.Logger, Observe: observe, Wake: wake})
	if cfg.Metrics != nil {
		cfg.Metrics.Watch(httpapi.MetricsSources{Queued: sb.Dispatcher.Queued, StoreSize: func() int64 {
			st, err := os.Stat(cfg.DBPath)
			if err != nil {
				return 0
			}
			return st.Size()
		}})
	}
	sb.service = control.New(control.Config{Store: db, Guard: sb.Guard, Sender: sb.Dispatcher, Settler: sb.Dispatcher, SnapshotDir: cfg.DBPath + ".snapshots",
		Reload: func(ctx context.Context) error {
			// The whole set, checked again: the start may have read only its settings.
			set, err := fixtures.Open(fsys)
			if err != nil {
				return fmt.Errorf("fixtures: %w", err)
			}
			return db.Seed(ctx, set, false)
		}})
	sb.service.OnClockMove(sb.Dispatcher.Wake)
	first := ""
	if len(sb.Fixtures.Institutions) > 0 {
		first = sb.Fixtures.Institutions[0].ID
	}
	sb.scenarios = scenario.NewRunner(scenario.Config{Service: db, Moves: sb.service, Store: db, Clock: sb.Clock, IDs: db.IDs,
		Scenarios: sb.Fixtures.Scenarios, Institution: first})
	sb.service.PlayStepsWith(sb.scenarios)
	deps := httpapi.Deps{Store: db, Webhooks: db, Guard: sb.Guard, Tester: sb.service}
	if cfg.NoPublishedKeys {
		deps.Store = httpapi.RefuseKeys(db, publishedKeys(sb.Fixtures))
	}
	if !cfg.NoControl {
		// The store serves the operations that are one transaction; the control service those
		// that orchestrate several parts (docs/decisions.md, "How the code is arranged").
		deps.Tenants, deps.Institutions, deps.Trading, deps.Deliveries, deps.Sandbox = db, db, db, db, sb.service
		deps.Scenarios = sb.scenarios
	}
	sb.Server = httpapi.NewServer(httpapi.Config{APIVersions: cfg.APIVersions, Clock: sb.Clock, SandboxToken: sb.Token,
		LoopbackOnly: !cfg.Exposed, AllowedHosts: cfg.AllowedHosts, RateLimit: cfg.RateLimit, RateBurst: cfg.RateBurst,
		Metrics: cfg.Metrics, ServeMetrics: cfg.MetricsOnAPI, TrustedProxies: cfg.TrustedProxies}, deps, cfg.Logger)
	sb.service.AfterReset(sb.Server.ClearJournal)
	if cfg.NoControl {
		return nil
	}
	// The QA console (decisions D15) is part of the control plane: on and off with it.
	con, err := console.New(console.Config{Token: sb.Token, Operations: deps.Operations, Traffic: sb.Server, Clock: sb.Clock,
		Throttle: sb.Server.TokenThrottle(), Log: cfg.Logger})
	if err != nil {
		return err
	}
	sb.Server.Mount(console.Prefix, con)
	return nil
}

// Ready says whether the sandbox serves: its store open and its dispatcher running (a
// Sandbox exists only once its set is built).
func (sb *Sandbox) Ready() error {
	select {
	case <-sb.done:
		return errors.New("webhook dispatcher stopped")
	default:
	}
	if sb.closed.Load() {
		return errors.New("store closed")
	}
	return nil
}

// Close stops delivery (pending deliveries stay in the outbox for the next start; attempts in
// flight are cut short and stay pending too) and scenario runs waiting on the clock (waiting
// for them to end), and closes the store.
// Listener wraps ln, the listener the sandbox is served on, so that every request reaches the
// server as a FastAPI app's would reach Starlette: a path with an invalid percent-escape is
// routed, not refused by net/http (httpapi.Listener, decisions D19).
func (sb *Sandbox) Listener(ln net.Listener) net.Listener { return httpapi.Listener(ln) }

// publishedKeys are the plaintext keys of set and of the embedded default set (a store keeps
// the keys of the set it was first loaded from).
func publishedKeys(set *fixtures.Set) map[string]bool {
	keys := map[string]bool{}
	for _, k := range set.Keys {
		keys[k.Plaintext] = true
	}
	if def, err := fixtures.OpenSettings(fixtures.Default()); err == nil {
		for _, k := range def.Keys {
			keys[k.Plaintext] = true
		}
	}
	return keys
}

// Close stops delivery (pending deliveries stay in the outbox for the next start) and
// scenario runs waiting on the clock (waiting for them to end), and closes the store.
func (sb *Sandbox) Close() error {
	sb.abort()
	return sb.Shutdown(context.Background())
}

// Shutdown drains and closes the sandbox: the dispatcher takes nothing more from the outbox,
// its attempts in flight finish and are recorded until ctx ends (then they are cut short and
// stay pending, attempted again after restart), scenario runs waiting on the clock end, and
// the store closes. Call it after the HTTP server has stopped taking requests.
func (sb *Sandbox) Shutdown(ctx context.Context) error {
	if sb.closed.Swap(true) {
		return nil
	}
	sb.stop()
	select {
	case <-sb.done:
	case <-ctx.Done():
		sb.abort()
		<-sb.done
	}
	sb.abort()
	sb.scenarios.Close()
	return sb.DB.Close()
}

func seedBytes(seed uint64) [32]byte {
	var b [32]byte
	for i := range 4 {
		v := seed + uint64(i)*0x9e3779b97f4a7c15
		for j := range 8 {
			b[i*8+j] = byte(v >> (8 * j))
		}
	}
	return b
}
