package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/partnersim/partnersim/features"
)

// kvFlag collects repeatable NAME=VALUE flags (also comma-separated, for the environment).
type kvFlag map[string]string

func (k kvFlag) String() string {
	keys := make([]string, 0, len(k))
	for n := range k {
		keys = append(keys, n)
	}
	sort.Strings(keys)
	parts := make([]string, 0, len(keys))
	for _, n := range keys {
		parts = append(parts, n+"=…")
	}
	return strings.Join(parts, ",")
}

// Type names the value in help.
func (k kvFlag) Type() string { return "NAME=VALUE" }

func (k kvFlag) Set(s string) error {
	for part := range strings.SplitSeq(s, ",") {
		n, v, ok := strings.Cut(strings.TrimSpace(part), "=")
		if !ok || n == "" {
			return fmt.Errorf("expected NAME=VALUE, got %q", part)
		}
		k[n] = v
	}
	return nil
}

// newContractCmd is `partnersim contract`: it runs the embedded contract features against a
// deployment (decisions D14): `partnersim contract --base-url http://127.0.0.1:8080/v1
// --sandbox-url http://127.0.0.1:8080 --sandbox-token …`, or against a real deployment with
// --api-key and no control plane (then @sandbox scenarios are skipped). It fails when a scenario
// fails.
func newContractCmd() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "contract --base-url URL [--api-key KEY] [--sandbox-url URL --sandbox-token TOKEN] [--tags EXPR] [--format pretty|junit|cucumber]",
		Short: "run the Gherkin contract suites against any implementation of the API",
		Long:  "Runs the embedded Gherkin contract suites against an implementation of the partner API.",
		Args:  noArgs,
	}
	fs := cmd.Flags()
	var (
		o           features.Options
		output      string
		seed        int64
		keysWithout = kvFlag{}
		vars        = kvFlag{}
		wait        time.Duration
		spec        string
		stateURL    string
		also        = map[string]*string{"junit": new(string), "cucumber": new(string)}
	)
	fs.StringVar(&o.BaseURL, "base-url", "", "API base URL with its version segment (http://127.0.0.1:8080/v1) (required)")
	fs.StringVar(&o.APIKey, "api-key", "", "a key with every scope, used when there is no control plane")
	fs.StringVar(&o.SandboxURL, "sandbox-url", "", "control plane root (http://127.0.0.1:8080); without it @sandbox scenarios are skipped")
	fs.StringVar(&o.SandboxToken, "sandbox-token", "", "control plane x-sandbox-token (--sandbox-url defaults to the base URL's origin)")
	fs.StringVar(&stateURL, "state-url", "", "root of any implementation of the state adapter (partnersim openapi --state-adapter), used as --sandbox-url: scenarios needing a capability it lacks are skipped")
	fs.StringVar(&o.Tags, "tags", "", `godog tag expression, e.g. "@spec && ~@webhook"`)
	fs.StringVar(&o.Name, "name", "", "run only scenarios whose name matches this regular expression")
	fs.StringVar(&o.Format, "format", "pretty", "report format: pretty, progress, junit or cucumber")
	fs.StringVar(&output, "output", "", "write the report to this file (default stdout)")
	fs.StringVar(also["junit"], "junit", "", "also write a JUnit XML report to this file (for CI test reports)")
	fs.StringVar(also["cucumber"], "cucumber", "", "also write a cucumber JSON report to this file")
	fs.IntVar(&o.Concurrency, "concurrency", 8, "scenarios run at once")
	fs.Int64Var(&seed, "random", 0, "shuffle scenario order with this seed (-1 picks one; 0 keeps file order)")
	fs.Var(keysWithout, "key-without", "SCOPE=KEY: a key lacking exactly SCOPE, for the 403 scenarios without a control plane (repeatable)")
	fs.Var(vars, "var", "NAME=VALUE: an input of the data-driven scenarios (repeatable): "+features.VarsHelp())
	fs.StringVar(&o.SigningSecret, "signing-secret", "", "the institution's webhook signing secret, when it already has one")
	fs.StringVar(&o.ReceiverListen, "receiver-listen", "127.0.0.1:0", "where the suite's webhook receiver listens")
	fs.StringVar(&o.ReceiverURL, "receiver-url", "", "the receiver's URL as the deployment reaches it; @webhook scenarios need it unless the base URL is on loopback")
	fs.DurationVar(&wait, "wait", 10*time.Second, "how long to wait for a delivery")
	fs.BoolVar(&o.KeepTenants, "keep-tenants", false, "keep the institutions the run creates through the control plane (by default it deletes them when it ends)")
	fs.BoolVar(&o.NoPreflight, "no-preflight", false, "skip the check, before the run, that the sandbox token and the keys given can run the suite")
	fs.StringVar(&spec, "openapi", "", "OpenAPI document (FILE or URL) every response is checked against; default the target's /openapi.json when it serves one; off to check none")
	cmd.RunE = func(cmd *cobra.Command, _ []string) error {
		o.KeysWithout, o.Vars, o.Randomize, o.Wait = keysWithout, vars, seed, wait
		if stateURL != "" {
			if o.SandboxURL != "" && o.SandboxURL != stateURL {
				return errors.New("contract: give one of --state-url and --sandbox-url (a state adapter is the control plane the run uses)")
			}
			o.SandboxURL = stateURL
		}
		return runContract(cmd.Context(), o, output, spec, reportFiles{"junit": *also["junit"], "cucumber": *also["cucumber"]}, cmd.OutOrStdout(), cmd.ErrOrStderr())
	}
	return cmd
}

// humanFormats are the report formats written for people, which end with the run's summary.
var humanFormats = []string{"pretty", "progress"}

// reportFiles are extra reports to write when the run ends: format → file ("" for none).
type reportFiles map[string]string

// runContract runs the suites as o says, writing the report to output (stdout when empty) and
// the extra reports to their files.
func runContract(ctx context.Context, o features.Options, output, spec string, extra reportFiles, stdout, stderr io.Writer) error {
	if !slices.Contains(features.Formats, o.Format) {
		return fmt.Errorf("contract: unknown --format %q (%s)", o.Format, strings.Join(features.Formats, ", "))
	}
	if o.SandboxToken != "" && o.SandboxURL == "" {
		u, err := url.Parse(o.BaseURL)
		if err == nil && u.Host != "" {
			o.SandboxURL = u.Scheme + "://" + u.Host
		}
	}
	if o.SandboxURL != "" && o.SandboxToken == "" {
		o.SandboxToken = fallbackToken(o.SandboxURL)
	}
	o.Output = stdout
	if output != "" {
		f, err := os.Create(output)
		if err != nil {
			return fmt.Errorf("contract: %w", err)
		}
		defer f.Close()
		o.Output = f
	}
	underPath(&o)
	checker, docs, err := withOpenAPI(ctx, &o, spec)
	if err != nil {
		return err
	}
	rep, err := features.Run(ctx, o)
	if err != nil {
		return fmt.Errorf("contract: %w", err)
	}
	for _, format := range features.Formats {
		if path := extra[format]; path != "" {
			if err := writeReport(rep, format, path); err != nil {
				return err
			}
		}
	}
	// A human report on stdout already ends with the summaries: say them once.
	summarise := output != "" || !slices.Contains(humanFormats, o.Format)
	if summarise {
		fmt.Fprintln(stderr, "contract:", rep.Summary())
	}
	if checker != nil {
		n, bad := checker.Stats()
		fmt.Fprintf(stderr, "contract: openapi: %d exchanges checked against %s, %d disagreed\n", n, docs, bad)
	} else {
		fmt.Fprintln(stderr, "contract: openapi: responses not checked against a document (none served at /openapi.json, or --openapi off)")
	}
	if summarise {
		fmt.Fprintln(stderr, "contract:", rep.RulesSummary())
	}
	for _, f := range rep.Failed() {
		fmt.Fprintf(stderr, "  FAILED %s: %s\n      %s\n", f.Feature, f.Name, strings.ReplaceAll(f.Err, "\n", "\n      "))
	}
	for _, p := range rep.Cleanup {
		fmt.Fprintln(stderr, "contract: cleanup:", p)
	}
	if !rep.OK() {
		if len(rep.Failed()) == 0 {
			return errors.New("contract: the suite did not pass (undefined or pending steps)")
		}
		return fmt.Errorf("contract: %d scenarios failed: %w", len(rep.Failed()), errReported)
	}
	if len(rep.Cleanup) > 0 {
		return fmt.Errorf("contract: the suite passed, but %d institutions it created are still in the sandbox (see above; DELETE /_sandbox/institutions/{id} removes one)", len(rep.Cleanup))
	}
	return nil
}

// writeReport writes the run's report in format to path.
func writeReport(rep *features.Report, format, path string) error {
	f, err := os.Create(path)
	if err != nil {
		return fmt.Errorf("contract: --%s: %w", format, err)
	}
	if err := rep.Write(f, format); err != nil {
		f.Close()
		return fmt.Errorf("contract: --%s %s: %w", format, path, err)
	}
	if err := f.Close(); err != nil {
		return fmt.Errorf("contract: --%s %s: %w", format, path, err)
	}
	return nil
}

// underPath serves a control plane reached under a path — one shard behind a proxy,
// /_shards/NAME (decisions D20) — as the suite and the documents know it, at /_sandbox/…: the
// run's SandboxURL becomes the origin and its client adds the path on the wire.
func underPath(o *features.Options) {
	u, err := url.Parse(o.SandboxURL)
	if err != nil || strings.Trim(u.Path, "/") == "" {
		return
	}
	if o.HTTPClient == nil {
		o.HTTPClient = features.DefaultHTTPClient()
	}
	client := *o.HTTPClient
	next := client.Transport
	if next == nil {
		next = http.DefaultTransport
	}
	client.Transport = prefixed{host: u.Host, prefix: strings.TrimSuffix(u.Path, "/"), next: next}
	o.HTTPClient = &client
	o.SandboxURL = u.Scheme + "://" + u.Host
}

// prefixed adds prefix to the path of every control-plane request to host.
type prefixed struct {
	host, prefix string
	next         http.RoundTripper
}

func (p prefixed) RoundTrip(r *http.Request) (*http.Response, error) {
	if r.URL.Host != p.host || !strings.HasPrefix(r.URL.Path, "/_sandbox/") {
		return p.next.RoundTrip(r)
	}
	r = r.Clone(r.Context())
	r.URL.Path = p.prefix + r.URL.Path
	if r.URL.RawPath != "" {
		r.URL.RawPath = p.prefix + r.URL.RawPath
	}
	return p.next.RoundTrip(r)
}
