package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/netip"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"runtime/pprof"
	"strconv"
	"strings"
	"time"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/partnersim/partnersim/fixtures"
	"github.com/partnersim/partnersim/fixtures/generate"
	"github.com/partnersim/partnersim/internal/loadtest"
)

// loadConfig is everything `partnersim load` takes.
type loadConfig struct {
	Target      string
	APIKey      string
	AllowRemote bool
	FixturesDir string
	Users       int
	Orders      int
	Seed        int64
	DBPath      string
	Connections string
	Scenarios   string
	Duration    time.Duration
	Warmup      time.Duration
	Requests    int
	Timeout     time.Duration
	NoCeiling   bool
	Rounds      int
	JSONPath    string
	CPUProfile  string
	Strict      bool
}

const loadUsage = `Drives the partner API over loopback with a request mix, bounded in time, and reports req/s and
p50/p99/p99.9 of each run next to the same figures of a bare echo handler serving the same bytes
(the ceiling), measured in the same run at the same connection count. The ceiling runs where
the target does: in this process beside a self-hosted sandbox, in a process of its own for a
--target.

Target (one of):
  self-hosted (default)   a sandbox in this process on 127.0.0.1:0, loaded from --fixtures DIR,
                          or from a set of --users N (and --orders M) generated into a temporary
                          folder, or from the embedded default set
  --target URL            a running simulator on loopback; --fixtures DIR names the set it serves
                          (default: the embedded set) so the load knows its users; --api-key K`

// newLoadCmd is `partnersim load`: the load harness behind BENCHMARKS.md.
func newLoadCmd() *cobra.Command {
	cfg := loadConfig{Connections: "1,32", Scenarios: "detail,mix", Duration: 10 * time.Second, Warmup: 2 * time.Second,
		Timeout: 10 * time.Second, Seed: 1, Rounds: 4}
	cmd := &cobra.Command{
		Use:   "load [flags]",
		Short: "drive a sandbox over loopback and report req/s and latency against a bare-echo ceiling",
		Long:  loadUsage,
		Args:  noArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return runLoad(cmd.Context(), cfg, commandLine(cmd), cmd.OutOrStdout(), cmd.ErrOrStderr())
		},
	}
	fs := cmd.Flags()
	fs.SortFlags = false // commandLine visits the flags in the order they were given
	fs.StringVar(&cfg.Target, "target", "", "base URL of a running simulator (default: self-host one)")
	fs.StringVar(&cfg.APIKey, "api-key", "", "x-api-key to load with (default: the set's read:user+read:orders key of its largest institution)")
	fs.BoolVar(&cfg.AllowRemote, "allow-remote", false, "allow a --target that is not loopback (load traffic to anything else is normally refused)")
	fs.StringVar(&cfg.FixturesDir, "fixtures", "", "fixture set to self-host, or the set --target serves")
	fs.IntVar(&cfg.Users, "users", 0, "self-host a generated set of this many users")
	fs.IntVar(&cfg.Orders, "orders", 0, "orders of the generated set (0: 10 per user)")
	fs.Int64Var(&cfg.Seed, "seed", cfg.Seed, "seed of the generated set and of the request sequences")
	fs.StringVar(&cfg.DBPath, "db", "", "bbolt file of the self-hosted sandbox, kept and reused when it exists (default: a temporary one)")
	fs.StringVar(&cfg.Connections, "connections", cfg.Connections, "comma-separated connection counts (one worker each)")
	fs.StringVar(&cfg.Scenarios, "scenario", cfg.Scenarios, "comma-separated scenarios: "+strings.Join(loadtest.ScenarioNames, ", "))
	fs.DurationVar(&cfg.Duration, "duration", cfg.Duration, "measured time of each run (each is run against the target and the ceiling)")
	fs.DurationVar(&cfg.Warmup, "warmup", cfg.Warmup, "unmeasured time before each run")
	fs.IntVar(&cfg.Requests, "requests", 0, "end each run after this many requests (or --duration, first)")
	fs.DurationVar(&cfg.Timeout, "timeout", cfg.Timeout, "timeout of one request")
	fs.BoolVar(&cfg.NoCeiling, "no-ceiling", false, "skip the ceiling runs")
	fs.IntVar(&cfg.Rounds, "rounds", cfg.Rounds, "split each run into this many turns, interleaved with the ceiling's (target, ceiling, ceiling, target, …), so that a change in the machine's speed falls on both alike; 1 runs the target, then the ceiling")
	fs.StringVar(&cfg.JSONPath, "json", "", "also write the report as JSON to this file")
	fs.StringVar(&cfg.CPUProfile, "cpuprofile", "", "write a CPU profile of each run against the target (not the ceiling) to FILE-<scenario>-<conns>.prof (one turn: it sets --rounds 1); self-hosted, it holds the client's work too")
	fs.BoolVar(&cfg.Strict, "strict", false, "exit with status 1 when a target of BENCHMARKS.md is missed (errors always do)")
	return cmd
}

// ceilingCommand runs `bin ceiling`, a ceiling in its own process.
func ceilingCommand(bin string) func() *exec.Cmd {
	return func() *exec.Cmd { return exec.Command(bin, "ceiling") }
}

// newCeilingCmd is `partnersim ceiling`, hidden: the ceiling of `partnersim load --target` and
// `make bench-http` in a process of its own (loadtest.StartCeilingProcess starts it).
func newCeilingCmd() *cobra.Command {
	return &cobra.Command{
		Use:    "ceiling",
		Short:  "serve the captured answers read from standard input (started by partnersim load)",
		Args:   noArgs,
		Hidden: true,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return loadtest.ServeCeiling(cmd.InOrStdin(), cmd.OutOrStdout())
		},
	}
}

// commandLine is the command as given (flags in their order, then those the environment set),
// for the report.
func commandLine(cmd *cobra.Command) string {
	line := cmd.CommandPath()
	cmd.Flags().Visit(func(f *pflag.Flag) { line += " --" + f.Name + " " + f.Value.String() })
	return line
}

func runLoad(ctx context.Context, cfg loadConfig, command string, stdout, stderr io.Writer) error {
	conns, err := parseConnections(cfg.Connections)
	if err != nil {
		return err
	}
	scenarios := splitList(cfg.Scenarios)
	for _, s := range scenarios {
		if _, err := loadtest.NewScenario(s, &loadtest.Data{PlatformIDs: []string{"x"}}); err != nil {
			return fmt.Errorf("--scenario: %w", err)
		}
	}
	switch {
	case len(scenarios) == 0:
		return errors.New("--scenario: name at least one scenario")
	case cfg.Duration <= 0:
		return errors.New("--duration must be positive: every run is bounded in time")
	case cfg.Target != "" && (cfg.Users > 0 || cfg.DBPath != ""):
		return errors.New("--users and --db self-host a sandbox: they do not go with --target")
	case cfg.Users > 0 && cfg.FixturesDir != "":
		return errors.New("give --fixtures DIR or --users N, not both")
	case cfg.Users < 0 || cfg.Orders < 0:
		return errors.New("--users and --orders must not be negative")
	case cfg.Rounds < 1:
		return errors.New("--rounds must be at least 1 (1: the target's run, then the ceiling's)")
	}

	target, cleanup, err := loadTarget(ctx, cfg, stderr)
	if err != nil {
		return err
	}
	defer cleanup()

	plan := loadtest.Plan{Scenarios: scenarios, Connections: conns, Duration: cfg.Duration, Warmup: cfg.Warmup, Requests: cfg.Requests,
		Timeout: cfg.Timeout, Seed: uint64(cfg.Seed), NoCeiling: cfg.NoCeiling, Rounds: cfg.Rounds, Progress: stderr}
	if cfg.Target != "" {
		// The target runs in its own process: so does its ceiling (loadtest.Ceiling says why).
		exe, err := os.Executable()
		if err != nil {
			return fmt.Errorf("finding this binary to run the ceiling: %w", err)
		}
		plan.CeilingProcess = ceilingCommand(exe)
	}
	if cfg.CPUProfile != "" {
		plan.Rounds = 1 // a profile is of one uninterrupted run
		plan.Around = func(scenario string, n int, run func() error) error {
			name := strings.TrimSuffix(cfg.CPUProfile, ".prof") + fmt.Sprintf("-%s-%d.prof", scenario, n)
			f, err := os.Create(name)
			if err != nil {
				return err
			}
			defer f.Close()
			if err := pprof.StartCPUProfile(f); err != nil {
				return err
			}
			defer pprof.StopCPUProfile()
			return run()
		}
	}
	runs := len(scenarios) * len(conns) * 2
	if cfg.NoCeiling {
		runs /= 2
	}
	fmt.Fprintf(stderr, "load: %d runs of %s (+%s warm-up) against %s\n", runs, cfg.Duration, cfg.Warmup, target.BaseURL)
	rep, err := loadtest.Measure(ctx, *target, plan)
	if err != nil {
		return err
	}
	rep.Command = command
	fmt.Fprintln(stdout)
	if err := rep.WriteText(stdout); err != nil {
		return err
	}
	if cfg.JSONPath != "" {
		b, err := json.MarshalIndent(rep, "", "  ")
		if err != nil {
			return err
		}
		if err := os.WriteFile(cfg.JSONPath, append(b, '\n'), 0o644); err != nil {
			return err
		}
	}
	for _, c := range rep.Checks {
		if !c.Pass && (cfg.Strict || c.Unit == "errors") {
			return fmt.Errorf("load: %s: %w", c.Name, errReported)
		}
	}
	return nil
}

// loadTarget self-hosts a sandbox or checks --target, and learns the users to load.
func loadTarget(ctx context.Context, cfg loadConfig, stderr io.Writer) (*loadtest.Target, func(), error) {
	cleanup := func() {}
	if cfg.Target != "" {
		base, err := checkTarget(cfg.Target, cfg.AllowRemote)
		if err != nil {
			return nil, nil, err
		}
		fsys, desc := fixtures.Default(), "(serving the embedded default set)"
		if cfg.FixturesDir != "" {
			fsys, desc = os.DirFS(cfg.FixturesDir), "(serving "+cfg.FixturesDir+")"
		}
		set, err := fixtures.Open(fsys)
		if err != nil {
			return nil, nil, fmt.Errorf("--fixtures: %w", err)
		}
		t, err := prepareTarget(ctx, base, cfg.APIKey, set, cfg.Timeout)
		if err != nil {
			return nil, nil, err
		}
		t.Name, t.Description = "target", desc
		return t, cleanup, nil
	}

	var fsys = fixtures.Default()
	desc := "self-hosted, embedded default set"
	if cfg.FixturesDir != "" {
		if st, err := os.Stat(cfg.FixturesDir); err != nil || !st.IsDir() {
			return nil, nil, fmt.Errorf("--fixtures %q is not a directory", cfg.FixturesDir)
		}
		fsys, desc = os.DirFS(cfg.FixturesDir), "self-hosted, fixtures "+cfg.FixturesDir
	}
	if cfg.Users > 0 {
		orders := cfg.Orders
		if orders <= 0 {
			orders = 10 * cfg.Users
		}
		dir, err := os.MkdirTemp("", "partnersim-load-set-")
		if err != nil {
			return nil, nil, err
		}
		cleanup = func() { os.RemoveAll(dir) }
		fmt.Fprintf(stderr, "load: generating %d users and %d orders (seed %d)…\n", cfg.Users, orders, cfg.Seed)
		start := time.Now()
		if err := generate.Write(filepath.Join(dir, "set"), generate.Options{Users: cfg.Users, Orders: orders, Seed: cfg.Seed}); err != nil {
			cleanup()
			return nil, nil, err
		}
		fmt.Fprintf(stderr, "load: generated in %s\n", time.Since(start).Round(time.Millisecond))
		fsys = os.DirFS(filepath.Join(dir, "set"))
		desc = fmt.Sprintf("self-hosted, generated set of %d users and %d orders (seed %d)", cfg.Users, orders, cfg.Seed)
	}
	fmt.Fprintln(stderr, "load: opening the sandbox (loading the set into an empty store)…")
	h, err := loadtest.SelfHost(ctx, loadtest.HostConfig{Fixtures: fsys, DBPath: cfg.DBPath})
	if err != nil {
		cleanup()
		return nil, nil, err
	}
	fmt.Fprintf(stderr, "load: sandbox ready in %s on %s\n", h.LoadTime.Round(time.Millisecond), h.URL)
	prev := cleanup
	cleanup = func() { h.Close(); prev() }
	t, err := prepareTarget(ctx, h.URL, cfg.APIKey, h.Set, cfg.Timeout)
	if err != nil {
		cleanup()
		return nil, nil, err
	}
	t.Name, t.Description = "partnersim", fmt.Sprintf("(%s; store opened in %s)", desc, h.LoadTime.Round(time.Millisecond))
	return t, cleanup, nil
}

func prepareTarget(ctx context.Context, base, key string, set *fixtures.Set, timeout time.Duration) (*loadtest.Target, error) {
	data, key, err := loadtest.FromSet(set, key)
	if err != nil {
		return nil, err
	}
	client := loadtest.NewClient(1, timeout)
	defer client.CloseIdleConnections()
	if err := data.Complete(ctx, client, base, key); err != nil {
		return nil, err
	}
	return &loadtest.Target{BaseURL: base, APIKey: key, Data: data}, nil
}

// checkTarget accepts an http URL whose host is loopback: an IP literal in 127.0.0.0/8 or ::1,
// or "localhost". Anything else needs allowRemote: this tool generates load, and load goes only
// to machines we are allowed to load.
func checkTarget(raw string, allowRemote bool) (string, error) {
	u, err := url.Parse(raw)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return "", fmt.Errorf("--target %q: want a base URL such as http://127.0.0.1:8080", raw)
	}
	host := u.Hostname()
	loopback := strings.EqualFold(host, "localhost")
	if ip, err := netip.ParseAddr(host); err == nil {
		loopback = ip.Unmap().IsLoopback()
	}
	if !loopback && !allowRemote {
		return "", fmt.Errorf("--target %q is not loopback (127.0.0.0/8, ::1 or localhost): load goes only to this machine unless --allow-remote", raw)
	}
	base := strings.TrimRight(u.Scheme+"://"+u.Host+u.Path, "/")
	base = strings.TrimSuffix(base, "/v1") // the scenarios' paths carry the version
	return base, nil
}

func parseConnections(s string) ([]int, error) {
	var out []int
	for _, part := range splitList(s) {
		n, err := strconv.Atoi(part)
		if err != nil || n < 1 || n > 4096 {
			return nil, fmt.Errorf("--connections %q: a comma-separated list of counts from 1 to 4096", s)
		}
		out = append(out, n)
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("--connections %q: give at least one count", s)
	}
	return out, nil
}

func splitList(s string) []string {
	var out []string
	for _, p := range strings.Split(s, ",") {
		if p = strings.TrimSpace(p); p != "" {
			out = append(out, p)
		}
	}
	return out
}
