package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"log/slog"
	"net"
	"net/http"
	"net/netip"
	"os"
	"slices"
	"strings"
	"sync/atomic"
	"time"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/partnersim/partnersim/fixtures"
	"github.com/partnersim/partnersim/simulator"
	"github.com/partnersim/partnersim/simulator/hostcheck"
	"github.com/partnersim/partnersim/simulator/sandbox"
)

// serveConfig is everything `partnersim serve` takes.
type serveConfig struct {
	Addr         string
	DBPath       string
	FixturesDir  string
	APIVersions  string
	SandboxToken string
	LogLevel     string
	Seed         uint64
	FrozenClock  string
	NoControl    bool
	NoPublished  bool
	Loopback     bool
	Retry        string
	Timeout      time.Duration
	Workers      int
	RateLimit    float64
	RateBurst    int
	CheckStore   bool
	AllowedHosts []string
	// ShutdownTimeout bounds the drain on SIGTERM: requests in flight and webhook attempts in
	// flight finish within it, or are cut (the attempts then stay pending in the outbox).
	ShutdownTimeout time.Duration
	// DrainDelay is how long, on SIGTERM, the sandbox goes on serving with /readyz at 503 and
	// every connection closed after its answer before it closes its listener: time for a load
	// balancer to hear it and for kept-alive connections to end between requests.
	DrainDelay time.Duration
	// MetricsAddr, when set, serves Prometheus' /metrics on a listener of its own (and not on
	// the API's); unset, /metrics is on the API's listener, behind the sandbox token beyond
	// loopback.
	MetricsAddr string
	// TrustedProxies are --trusted-proxy's CIDRs (or single addresses).
	TrustedProxies []string
	MaxConns       int
	// ShardMap and Shard run this process as one shard of a shard map file, or Institutions
	// (and Shard, for its tag) as a shard without one (decisions D20).
	ShardMap, Shard string
	Institutions    []string
}

func defaultServeConfig() serveConfig {
	return serveConfig{Addr: "127.0.0.1:8080", DBPath: "partnersim.db", APIVersions: "v1", LogLevel: "info", Loopback: true,
		Retry: "5s,5m,30m,2h,5h,10h,10h", Timeout: 10 * time.Second, Workers: 32, RateBurst: 10,
		ShutdownTimeout: 20 * time.Second, MaxConns: sandbox.DefaultConnLimits().MaxConns}
}

// newServeCmd is `partnersim serve`: the sandbox on a bbolt file until interrupted.
func newServeCmd(getenv func(string) string) *cobra.Command {
	cfg := defaultServeConfig()
	cmd := &cobra.Command{
		Use:   "serve",
		Short: "start the sandbox (API, control plane, webhook delivery) on a bbolt file",
		Args:  noArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return serve(cmd.Context(), cfg, cmd.Flags(), getenv, cmd.OutOrStdout(), cmd.ErrOrStderr())
		},
	}
	fs := cmd.Flags()
	fs.StringVar(&cfg.Addr, "addr", cfg.Addr, "listen address (host:port; port 0 picks a free one)")
	fs.StringVar(&cfg.DBPath, "db", cfg.DBPath, "bbolt file holding the sandbox's state (created if missing)")
	fs.StringVar(&cfg.FixturesDir, "fixtures", "", "fixture set directory loaded into an empty store (default: the embedded set)")
	fs.StringVar(&cfg.APIVersions, "api-versions", cfg.APIVersions, "comma-separated API versions to mount, e.g. v1,v2")
	fs.StringVar(&cfg.SandboxToken, "sandbox-token", "", "control-plane token (default: the fixtures' token, else generated)")
	fs.StringVar(&cfg.LogLevel, "log-level", cfg.LogLevel, "debug, info, warn or error")
	fs.Uint64Var(&cfg.Seed, "seed", 0, "deterministic mode: seed for ids and secrets (with --frozen-clock)")
	fs.StringVar(&cfg.FrozenClock, "frozen-clock", "", "deterministic mode: RFC 3339 instant the clock is frozen at")
	fs.BoolVar(&cfg.NoControl, "no-control", false, "switch the control plane (/_sandbox/) off")
	fs.BoolVar(&cfg.NoPublished, "no-published-keys", false, "refuse the fixture sets' published API keys (401, as unknown keys); create keys through the control plane "+
		"(beyond loopback anyone who reaches the sandbox knows the published ones)")
	fs.BoolVar(&cfg.Loopback, "allow-loopback-callbacks", cfg.Loopback, "allow callback URLs on loopback (http://127.0.0.1:…) for local receivers (default: on when --addr is loopback, off otherwise)")
	fs.StringVar(&cfg.Retry, "retry-schedule", cfg.Retry, "delays before each webhook retry (its length is the number of retries)")
	fs.DurationVar(&cfg.Timeout, "delivery-timeout", cfg.Timeout, "timeout of one webhook attempt")
	fs.IntVar(&cfg.Workers, "delivery-workers", cfg.Workers, "webhook attempts in flight at once")
	fs.Float64Var(&cfg.RateLimit, "rate-limit", 0, "requests a second allowed per API key (0: off); beyond it 429 with Retry-After")
	fs.IntVar(&cfg.RateBurst, "rate-burst", cfg.RateBurst, "burst of the per-key rate limit")
	fs.StringArrayVar(&cfg.AllowedHosts, "allowed-host", nil, "a Host name answered besides loopback ones (repeatable or comma-separated; .example.test matches every name under it); "+
		"beyond loopback, given at all, only these and loopback names are answered (421 otherwise)")
	fs.DurationVar(&cfg.ShutdownTimeout, "shutdown-timeout", cfg.ShutdownTimeout, "on SIGTERM or Ctrl-C, how long requests and webhook attempts in flight may take to finish "+
		"(attempts cut then stay pending and are made after restart); keep it below Kubernetes' terminationGracePeriodSeconds")
	fs.DurationVar(&cfg.DrainDelay, "drain-delay", 0, "on SIGTERM, how long to go on serving with /readyz at 503 and connections closed after each answer "+
		"before the listener closes (behind a load balancer: a few seconds, longer than its readiness probe period)")
	fs.StringVar(&cfg.MetricsAddr, "metrics-addr", "", "serve Prometheus /metrics on this address of its own (e.g. 0.0.0.0:9090 for a cluster's scraper) "+
		"instead of on --addr, where beyond loopback it needs the x-sandbox-token header")
	fs.StringArrayVar(&cfg.TrustedProxies, "trusted-proxy", nil, "a reverse proxy's address or CIDR whose X-Forwarded-For names the client (repeatable; "+
		"the right-most address that is not a trusted proxy is the client, for the token throttle); from any other peer the header is ignored")
	fs.IntVar(&cfg.MaxConns, "max-connections", cfg.MaxConns, "most connections open at once; beyond it 503 with Retry-After")
	fs.StringVar(&cfg.ShardMap, "shard-map", "", "serve as one shard of this shard map file (with --shard): only its institutions, ids and keys issued with its name first, "+
		"421 for another shard's institution; --addr defaults to the shard's (see `partnersim shard-map`)")
	fs.StringVar(&cfg.Shard, "shard", "", "the shard of --shard-map this process is (without a map: the name that begins the ids and keys it issues)")
	fs.StringSliceVar(&cfg.Institutions, "institutions", nil, "without --shard-map: serve only these institutions of the set (comma-separated); 421 for the others'")
	fs.BoolVar(&cfg.CheckStore, "check-store", false, "check every page of the store file at start (files up to 64 MiB always are)")
	return cmd
}

// serve runs the sandbox as cfg says (fs tells which flags were given) until ctx ends.
func serve(ctx context.Context, cfg serveConfig, flags *pflag.FlagSet, getenv func(string) string, stdout, stderr io.Writer) error {
	var level slog.Level
	if err := level.UnmarshalText([]byte(cfg.LogLevel)); err != nil {
		return fmt.Errorf("--log-level %q: use debug, info, warn or error", cfg.LogLevel)
	}
	var token atomic.Pointer[string]
	log := newServeLogger(stderr, level, func() string {
		if t := token.Load(); t != nil {
			return *t
		}
		return ""
	})

	wrap := func(h http.Handler) http.Handler { return h }
	var own fs.FS
	if cfg.ShardMap != "" || cfg.Shard != "" || len(cfg.Institutions) > 0 {
		all := fixtures.Default()
		if cfg.FixturesDir != "" {
			all = os.DirFS(cfg.FixturesDir)
		}
		var (
			self    shard
			cleanup func()
			err     error
		)
		own, wrap, self, cleanup, err = shardServe(cfg.ShardMap, cfg.Shard, cfg.Institutions, all)
		if err != nil {
			return err
		}
		defer cleanup()
		if !flags.Changed("addr") && self.Addr != "" {
			cfg.Addr = self.Addr
		}
	}
	sbCfg, err := sandboxConfig(cfg, flags, log, stderr)
	if err != nil {
		return err
	}
	if own != nil {
		sbCfg.Fixtures, sbCfg.ShardTag = own, cfg.Shard
	}
	start := time.Now()
	// Listen first: a busy port fails before the store is created, opened or loaded. The
	// gate answers at once — the probes, and "sandbox is loading" with the build's progress
	// everywhere else — while the store opens and a set builds.
	ln, err := net.Listen("tcp", cfg.Addr)
	if err != nil {
		return fmt.Errorf("listen on %s: %w (is another partnersim running? pass --addr 127.0.0.1:0 or another port)", cfg.Addr, err)
	}
	gate := sandbox.NewGate()
	limits := sandbox.DefaultConnLimits()
	limits.MaxConns = cfg.MaxConns
	srv := limits.HTTPServer(gate)
	errc := make(chan error, 2)
	// The sandbox's listener wrap needs no open sandbox (a nil receiver serves): the gate
	// answers through it from the start.
	go func() { errc <- srv.Serve((*sandbox.Sandbox).Listener(nil, limits.Listener(ln))) }()
	defer srv.Close()
	metrics := sandbox.NewMetrics()
	sbCfg.Metrics, sbCfg.MetricsOnAPI = metrics, cfg.MetricsAddr == ""
	if cfg.MetricsAddr != "" {
		mln, err := net.Listen("tcp", cfg.MetricsAddr)
		if err != nil {
			return fmt.Errorf("--metrics-addr %s: %w", cfg.MetricsAddr, err)
		}
		mux := http.NewServeMux()
		mux.Handle("GET /metrics", metrics.Handler())
		msrv := &http.Server{Handler: mux, ReadHeaderTimeout: 10 * time.Second}
		go func() { errc <- msrv.Serve(mln) }()
		defer msrv.Close()
		log.Info("metrics", slog.String("addr", mln.Addr().String()))
	}
	progress := sbCfg.LoadProgress
	sbCfg.LoadProgress = func(phase string, done, total int) {
		gate.Progress(phase, done, total)
		metrics.Build(phase, done, total)
		if progress != nil {
			progress(phase, done, total)
		}
	}
	sb, err := sandbox.Open(ctx, sbCfg)
	if err != nil {
		if ctx.Err() != nil {
			log.Info("stopped while loading: the store is left unmarked and is built again at the next start")
			return nil
		}
		return err
	}
	defer sb.Close()
	token.Store(&sb.Token)
	// A soft memory limit and the collector's pace for serving, from what the runtime holds
	// once the store is open and again after every collection (serveGC, heapFollower,
	// decisions D17). Set after the fixture load, which may need more; GOMEMLIMIT and GOGC
	// override them.
	var storeSize int64
	if st, err := os.Stat(sb.DB.Path()); err == nil {
		storeSize = st.Size()
	}
	defer followHeap(storeSize, getenv("GOMEMLIMIT") == "", getenv("GOGC") == "").stop()
	gate.Ready(wrap(sb.Server), sb.Ready)
	printBanner(stdout, sb, ln.Addr().String(), cfg, time.Since(start))
	log.Info("serving", slog.String("addr", ln.Addr().String()), slog.String("db", cfg.DBPath))

	select {
	case err := <-errc:
		if !errors.Is(err, http.ErrServerClosed) {
			return err
		}
		return nil
	case <-ctx.Done():
	}
	// Drain: /readyz turns 503, the listener closes, requests in flight finish, then webhook
	// attempts in flight finish (or, at the timeout, stay pending), and the store closes.
	gate.Drain()
	log.Info("shutting down", slog.Duration("drain_delay", cfg.DrainDelay), slog.Duration("timeout", cfg.ShutdownTimeout))
	if cfg.DrainDelay > 0 {
		time.Sleep(cfg.DrainDelay)
	}
	shutdownCtx, cancel := context.WithTimeout(context.Background(), cfg.ShutdownTimeout)
	defer cancel()
	err = srv.Shutdown(shutdownCtx)
	if serr := sb.Shutdown(shutdownCtx); err == nil {
		err = serr
	}
	return err
}

// sandboxConfig is the sandbox's configuration from serve's flags (fs tells which were given),
// each checked with an error that says what to pass instead.
func sandboxConfig(cfg serveConfig, fs *pflag.FlagSet, log *slog.Logger, stderr io.Writer) (sandbox.Config, error) {
	sbCfg := sandbox.Config{DBPath: cfg.DBPath, SandboxToken: cfg.SandboxToken, Logger: log, NoControl: cfg.NoControl, NoPublishedKeys: cfg.NoPublished,
		Exposed: !sandbox.IsLoopback(cfg.Addr), DeliveryTimeout: cfg.Timeout, Workers: cfg.Workers, RateLimit: cfg.RateLimit, RateBurst: cfg.RateBurst, CheckStore: cfg.CheckStore,
		LoadProgress: afterTwoSeconds(newBuildProgress(stderr, isTerminal(stderr), time.Now()))}
	for _, part := range strings.Split(cfg.Retry, ",") {
		if part = strings.TrimSpace(part); part == "" {
			continue
		}
		d, err := time.ParseDuration(part)
		if err != nil || d <= 0 {
			return sandbox.Config{}, fmt.Errorf("--retry-schedule %q: a comma-separated list of positive durations such as 5s,5m,30m", cfg.Retry)
		}
		sbCfg.RetrySchedule = append(sbCfg.RetrySchedule, d)
	}
	if sbCfg.RetrySchedule == nil {
		sbCfg.RetrySchedule = []time.Duration{}
	}
	hosts, err := allowedHosts(cfg.AllowedHosts)
	if err != nil {
		return sandbox.Config{}, err
	}
	sbCfg.AllowedHosts = hosts
	for _, p := range cfg.TrustedProxies {
		prefix, err := parseTrustedProxy(strings.TrimSpace(p))
		if err != nil {
			return sandbox.Config{}, err
		}
		sbCfg.TrustedProxies = append(sbCfg.TrustedProxies, prefix)
	}
	if cfg.MaxConns < 1 {
		return sandbox.Config{}, fmt.Errorf("--max-connections %d: at least 1", cfg.MaxConns)
	}
	versions, err := parseAPIVersions(cfg.APIVersions)
	if err != nil {
		return sandbox.Config{}, err
	}
	sbCfg.APIVersions = versions
	if cfg.FixturesDir != "" {
		if st, err := os.Stat(cfg.FixturesDir); err != nil || !st.IsDir() {
			return sandbox.Config{}, fmt.Errorf("--fixtures %q is not a directory", cfg.FixturesDir)
		}
		sbCfg.Fixtures = os.DirFS(cfg.FixturesDir)
	}
	if cfg.FrozenClock != "" {
		t, err := time.Parse(time.RFC3339Nano, cfg.FrozenClock)
		if err != nil {
			return sandbox.Config{}, fmt.Errorf("--frozen-clock %q: want an RFC 3339 time such as 2026-01-01T00:00:00Z", cfg.FrozenClock)
		}
		sbCfg.FrozenClock = &t
	}
	if fs.Changed("allow-loopback-callbacks") {
		sbCfg.AllowLoopbackCallbacks = &cfg.Loopback
	}
	if fs.Changed("seed") {
		sbCfg.Seed = &cfg.Seed
	}
	return sbCfg, nil
}

// parseTrustedProxy reads a --trusted-proxy value: a CIDR, or one address.
func parseTrustedProxy(s string) (netip.Prefix, error) {
	if p, err := netip.ParsePrefix(s); err == nil {
		return p.Masked(), nil
	}
	if a, err := netip.ParseAddr(s); err == nil && a.Zone() == "" {
		return netip.PrefixFrom(a, a.BitLen()), nil
	}
	return netip.Prefix{}, fmt.Errorf("--trusted-proxy %q: a reverse proxy's address or CIDR, e.g. 10.0.0.7 or 10.0.0.0/24", s)
}

// newServeLogger is serve's structured log on w: JSON, times as the sandbox writes them, and
// the sandbox token (secret's answer, once known) masked wherever it appears (decisions D18:
// the token is printed once, in the banner).
func newServeLogger(w io.Writer, level slog.Level, secret func() string) *slog.Logger {
	return slog.New(slog.NewJSONHandler(w, &slog.HandlerOptions{Level: level, ReplaceAttr: func(groups []string, a slog.Attr) slog.Attr {
		a = logTime(groups, a)
		tok := secret()
		if tok == "" {
			return a
		}
		switch a.Value.Kind() {
		case slog.KindString:
			if strings.Contains(a.Value.String(), tok) {
				a.Value = slog.StringValue(strings.ReplaceAll(a.Value.String(), tok, "…"))
			}
		case slog.KindAny:
			if err, ok := a.Value.Any().(error); ok && strings.Contains(err.Error(), tok) {
				a.Value = slog.StringValue(strings.ReplaceAll(err.Error(), tok, "…"))
			}
		}
		return a
	}}))
}

// allowedHosts reads --allowed-host's values, repeated or comma-separated, for serve and proxy
// alike, and refuses one that would answer every Host (hostcheck.CheckName, decisions D18).
func allowedHosts(flags []string) ([]string, error) {
	var hosts []string
	for _, list := range flags {
		for _, h := range strings.Split(list, ",") {
			h = strings.TrimSpace(h)
			if err := hostcheck.CheckName(h); err != nil {
				return nil, fmt.Errorf("--allowed-host %q: %w", h, err)
			}
			hosts = append(hosts, h)
		}
	}
	return hosts, nil
}

// logTime writes every time in a log line — the line's own and any attribute's — as the sandbox
// writes every other time it emits (simulator.FormatTime: pydantic v2's datetime, decisions D5).
func logTime(_ []string, a slog.Attr) slog.Attr {
	if a.Value.Kind() == slog.KindTime {
		a.Value = slog.StringValue(simulator.FormatTime(a.Value.Time()))
	}
	return a
}

func validVersion(v string) bool {
	if len(v) < 2 || v[0] != 'v' {
		return false
	}
	for _, c := range v[1:] {
		if c < '0' || c > '9' {
			return false
		}
	}
	return true
}

// printBanner tells a newcomer everything needed to make a first call.
func printBanner(w io.Writer, sb *sandbox.Sandbox, addr string, cfg serveConfig, took time.Duration) {
	base := "http://" + addr
	fmt.Fprintf(w, "partnersim sandbox ready in %s\n\n", took.Round(time.Millisecond))
	fmt.Fprintf(w, "  API base URL    %s/v1\n", base)
	for _, v := range strings.Split(cfg.APIVersions, ",")[1:] {
		fmt.Fprintf(w, "                  %s/%s (preview)\n", base, strings.TrimSpace(v))
	}
	// The token is printed once (decisions D18): in the export line when there is one.
	exports := sandboxExports(base, sb.Token, cfg.NoControl)
	tokenShown := sb.Token
	if strings.Contains(exports, sb.Token) {
		tokenShown = "$PARTNERSIM_SANDBOX_TOKEN (below)"
	}
	if cfg.NoControl {
		fmt.Fprintln(w, "  control plane   off (--no-control)")
	} else {
		fmt.Fprintf(w, "  control plane   %s/_sandbox/   header x-sandbox-token: %s\n", base, tokenShown)
		fmt.Fprintf(w, "  QA console      %s/_sandbox/ui/   (sign in with the sandbox token)\n", base)
	}
	state := "existing state kept"
	if sb.Loaded {
		state = "fixtures loaded"
	}
	fixtures := "default"
	if cfg.FixturesDir != "" {
		fixtures = cfg.FixturesDir
	}
	fmt.Fprintf(w, "  store           %s (%s; fixtures: %s)\n\n", cfg.DBPath, state, fixtures)
	institutions := sb.Fixtures.Institutions
	if cfg.NoPublished {
		fmt.Fprintln(w, "  API keys        the fixtures' published keys are refused (--no-published-keys): create one with POST /_sandbox/institutions/{id}/keys")
		institutions = nil
	} else {
		fmt.Fprintln(w, "  API keys (header x-api-key):")
	}
	for _, in := range institutions {
		fmt.Fprintf(w, "    %s (%s)\n", in.Name, in.ID)
		for _, k := range sb.Fixtures.Keys {
			if k.InstitutionID != in.ID {
				continue
			}
			scopes := make([]string, len(k.Scopes))
			for i, s := range k.Scopes {
				scopes[i] = string(s)
			}
			fmt.Fprintf(w, "      %s  %s\n", k.Plaintext, strings.Join(scopes, " "))
		}
	}
	if key := readUserKey(sb); key != "" && !cfg.NoPublished {
		fmt.Fprintf(w, "\n  try: curl -H 'x-api-key: %s' '%s/v1/users/?per_page=2'\n", key, base)
	}
	if exports != "" {
		fmt.Fprintf(w, "\n  in another terminal, so that partnersim trigger, scenario, deliveries and receive reach this sandbox:\n    %s\n", exports)
	}
	fmt.Fprintln(w)
}

// readUserKey is the first fixture key with read:user, for the banner's first call ("" if none).
func readUserKey(sb *sandbox.Sandbox) string {
	for _, k := range sb.Fixtures.Keys {
		if slices.Contains(k.Scopes, simulator.ScopeReadUser) {
			return k.Plaintext
		}
	}
	return ""
}

// sandboxExports is the export line another terminal needs for the control-plane commands to
// reach a sandbox at base with token, or "" when the defaults do.
func sandboxExports(base, token string, noControl bool) string {
	var vars []string
	if base != defaultSandboxURL {
		vars = append(vars, "PARTNERSIM_SANDBOX_URL="+shellQuote(base))
	}
	if !noControl && token != defaultSandboxToken() {
		vars = append(vars, "PARTNERSIM_SANDBOX_TOKEN="+shellQuote(token))
	}
	if len(vars) == 0 {
		return ""
	}
	return "export " + strings.Join(vars, " ")
}

// parseAPIVersions reads --api-versions: comma-separated versions, v1 first (decisions D2).
func parseAPIVersions(list string) ([]string, error) {
	versions := strings.Split(list, ",")
	for i, v := range versions {
		versions[i] = strings.TrimSpace(v)
		if !validVersion(versions[i]) {
			return nil, fmt.Errorf("--api-versions %q: each version is v followed by digits, e.g. v1,v2", list)
		}
	}
	if versions[0] != "v1" {
		return nil, fmt.Errorf("--api-versions %q: v1 is always mounted and must come first", list)
	}
	return versions, nil
}
