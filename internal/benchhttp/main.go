package main

import (
	"bufio"
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"io/fs"
	"net"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/partnersim/partnersim/fixtures"
	"github.com/partnersim/partnersim/fixtures/generate"
	"github.com/partnersim/partnersim/internal/loadtest"
	"github.com/partnersim/partnersim/internal/nginx"
	"github.com/partnersim/partnersim/simulator"
)

type config struct {
	bin, dir      string
	duration      time.Duration
	varied        time.Duration
	runs          int
	rounds        int
	users, orders int
	only          string
	deliveriesPkg string
	pool          int
	scale, svg    string
	buildRuns     int
	baseline      string // the commit the large set's build CPU is judged against
	repo          string // the git repository holding it
	buildPairs    int
}

func main() {
	var cfg config
	flag.StringVar(&cfg.bin, "bin", "bin/partnersim", "the partnersim binary to measure")
	flag.StringVar(&cfg.dir, "dir", filepath.Join(os.TempDir(), "partnersim-bench-http"), "work folder: the generated large set and the stores (the set is kept between runs)")
	flag.DurationVar(&cfg.duration, "duration", 5*time.Second, "each wrk run (the target's, then the ceiling's)")
	flag.IntVar(&cfg.runs, "runs", 3, "first serves of the large set, mix runs and delivery runs")
	flag.DurationVar(&cfg.varied, "varied-duration", 20*time.Second, "each side's measured time in a row over many URLs (the target's turns together, and the ceiling's)")
	flag.IntVar(&cfg.rounds, "rounds", 8, "turns of the target and of the ceiling, interleaved, in each row over many URLs (loadtest.Plan.Rounds)")
	flag.IntVar(&cfg.users, "users", 100_000, "users of the large set")
	flag.IntVar(&cfg.orders, "orders", 1_000_000, "orders of the large set")
	flag.StringVar(&cfg.only, "only", "", "run one part: default, large, build (large's build against the baseline alone), varied (large without its builds), mix, proxy or deliveries (all when empty)")
	flag.StringVar(&cfg.baseline, "baseline", defaultBaseline, "the commit whose `fixtures build` of the large set the current binary's is judged against, both run alternately (built once from -repo's history, kept in -dir)")
	flag.StringVar(&cfg.repo, "repo", ".", "the git repository holding -baseline")
	flag.IntVar(&cfg.buildPairs, "build-pairs", 3, "builds of the large set by the baseline's binary and by the current one, alternated")
	flag.IntVar(&cfg.pool, "pool", 0, "URLs drawn for each row over many URLs (0: loadtest.DefaultPoolSize)")
	flag.StringVar(&cfg.deliveriesPkg, "deliveries-pkg", "./simulator/bolt/", "package of the delivery benchmarks")
	flag.StringVar(&cfg.scale, "scale", "", "instead of the table above: build and serve sets of these many users (comma-separated, ten orders each) and print `make bench-scale`'s table")
	flag.IntVar(&cfg.buildRuns, "build-runs", 2, "with -scale: builds of each size; the one of least CPU is the size's figure")
	flag.StringVar(&cfg.svg, "svg", "", "with -scale: write the chart to this file")
	flag.Parse()
	if cfg.scale != "" {
		var sizes []int
		for _, f := range strings.Split(cfg.scale, ",") {
			n, err := strconv.Atoi(strings.TrimSpace(f))
			if err != nil || n < 10 {
				fmt.Fprintf(os.Stderr, "bench-scale: -scale: %q is not a number of users\n", f)
				os.Exit(2)
			}
			sizes = append(sizes, n)
		}
		b := &bench{cfg: cfg, out: os.Stderr}
		if err := b.scale(context.Background(), sizes, cfg.svg); err != nil {
			fmt.Fprintln(os.Stderr, "bench-scale:", err)
			os.Exit(1)
		}
		return
	}
	if _, err := exec.LookPath("wrk"); err != nil {
		fmt.Fprintln(os.Stderr, "bench-http needs wrk on the PATH: on Debian or Ubuntu, sudo apt-get install wrk")
		os.Exit(2)
	}
	b := &bench{cfg: cfg, out: os.Stderr}
	if err := b.run(context.Background()); err != nil {
		fmt.Fprintln(os.Stderr, "bench-http:", err)
		os.Exit(1)
	}
}

// row is one line of the table.
type row struct {
	name, conns      string
	target, ceiling  float64 // req/s
	p50, p99         float64 // ms
	cp50, cp99       float64 // ms, the ceiling's
	want, verdict    string
	gc, load, detail string
}

type bench struct {
	cfg   config
	out   io.Writer
	rows  []row
	notes []string
	start time.Time
}

func (b *bench) logf(format string, args ...any) {
	fmt.Fprintf(b.out, "[%s] %s\n", time.Since(b.start).Round(time.Second), fmt.Sprintf(format, args...))
}

func (b *bench) note(format string, args ...any) {
	b.notes = append(b.notes, fmt.Sprintf(format, args...))
}

// begin starts the clock of the log, makes the work folder and names the binary by its
// absolute path, and returns the machine the figures are measured on.
func (b *bench) begin() (loadtest.Machine, error) {
	b.start = time.Now()
	if err := os.MkdirAll(b.cfg.dir, 0o755); err != nil {
		return loadtest.Machine{}, err
	}
	bin, err := filepath.Abs(b.cfg.bin)
	if err != nil {
		return loadtest.Machine{}, err
	}
	b.cfg.bin = bin
	return loadtest.ThisMachine(), nil
}

func (b *bench) run(ctx context.Context) error {
	machine, err := b.begin()
	if err != nil {
		return err
	}
	part := func(name string) bool { return b.cfg.only == "" || b.cfg.only == name }
	if part("default") {
		if err := b.defaultSet(ctx); err != nil {
			return fmt.Errorf("default set: %w", err)
		}
	}
	if part("large") || part("build") || part("varied") || part("mix") {
		if err := b.largeSet(ctx, largeParts{firstServes: part("large"), baseline: part("large") || part("build"),
			rows: part("large") || part("varied"), mix: part("mix")}); err != nil {
			return fmt.Errorf("large set: %w", err)
		}
	}
	if part("proxy") {
		if err := b.proxyRows(ctx); err != nil {
			return fmt.Errorf("proxy: %w", err)
		}
	}
	if part("deliveries") {
		if err := b.deliveries(ctx); err != nil {
			return fmt.Errorf("deliveries: %w", err)
		}
	}
	b.note("ratio: partnersim's req/s ÷ the ceiling's, a bare echo v4 server answering the very bytes and headers partnersim answered, run right after partnersim's run. One-URL rows: `wrk -t1 -cN -d%s --latency` on that URL, a 1 s unmeasured wrk run first. Rows over many URLs (a random user, random list pages, the mix): `loadtest.Measure`, %s URLs drawn once and walked in order by 32 connections for %s after a 2 s warm-up, the ceiling answering each URL with partnersim's own bytes for it, captured before the runs; %s", b.cfg.duration, groupDigits(b.pool()), b.cfg.varied, b.turnsText())
	b.note("GC share: the collector's CPU in the serving process (pauses, assists and background marking, from GODEBUG=gctrace=1) ÷ the process's CPU time (/proc/PID/stat) over the run; on a busy machine a descheduled mark worker counts as busy, so it reads high there")
	b.note("load avg: /proc/loadavg (1, 5, 15 minutes) as the row began; the machine's other work slows partnersim and its ceiling alike, which is why the ratios are the figures that count")
	b.print(os.Stdout, machine)
	return nil
}

// print writes the report: what was measured where, then the one table.
func (b *bench) print(w io.Writer, m loadtest.Machine) {
	fmt.Fprintf(w, "`make bench-http` — %s, commit %s, %s (%d CPUs), %s, %s; load average at the start %s, at the end %s; took %s.\n\n",
		m.Date, commitText(), m.CPUModel, m.CPUs, m.GoVersion, m.OSArch, m.LoadAvg, loadavg(), time.Since(b.start).Round(time.Second))
	fmt.Fprintln(w, "| row | conns | partnersim | ceiling | ratio | p50 ms (ceiling) | p99 ms (ceiling) | target | verdict | GC share of server CPU | load avg |")
	fmt.Fprintln(w, "|---|---:|---:|---:|---:|---:|---:|---|---|---:|---|")
	for _, r := range b.rows {
		ratio := "–"
		if r.ceiling > 0 && r.target > 0 {
			ratio = fmt.Sprintf("%.2f ×", r.target/r.ceiling)
		}
		num := func(v float64) string {
			if v == 0 {
				return "–"
			}
			return fmt.Sprintf("%.0f", v)
		}
		lat := func(v, c float64) string {
			if v == 0 {
				return "–"
			}
			if c == 0 {
				return fmt.Sprintf("%.3f", v)
			}
			return fmt.Sprintf("%.3f (%.3f)", v, c)
		}
		name := r.name
		if r.detail != "" {
			name += " — " + r.detail
		}
		fmt.Fprintf(w, "| %s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s |\n", name, r.conns, num(r.target), num(r.ceiling), ratio,
			lat(r.p50, r.cp50), lat(r.p99, r.cp99), r.want, r.verdict, dash(r.gc), r.load)
	}
	if len(b.notes) > 0 {
		fmt.Fprintln(w)
		for _, n := range b.notes {
			fmt.Fprintln(w, "- "+n)
		}
	}
}

func dash(s string) string {
	if s == "" {
		return "–"
	}
	return s
}

func output(name string, args ...string) string {
	out, _ := exec.Command(name, args...).Output()
	return string(out)
}

func loadavg() string {
	b, _ := os.ReadFile("/proc/loadavg")
	f := strings.Fields(string(b))
	if len(f) < 3 {
		return "?"
	}
	return strings.Join(f[:3], " ")
}

// server is a running `partnersim serve`.
type server struct {
	cmd     *exec.Cmd
	base    string
	started time.Time
	ready   time.Duration
	trace   string // the gctrace file
	pid     int
	exited  chan struct{} // closed once the process has ended (watch)
}

// watch waits for the started process in the background: exited says when it has ended, to the
// readiness poll (a serve that cannot start is reported at once) and to stop.
func (s *server) watch() {
	s.exited = make(chan struct{})
	go func() { _ = s.cmd.Wait(); close(s.exited) }()
}

// gone reports whether the process has ended.
func (s *server) gone() bool {
	select {
	case <-s.exited:
		return true
	default:
		return false
	}
}

// serve starts `partnersim serve --db DB [--fixtures DIR]` on a free loopback port and waits
// for /health.
func (b *bench) serve(ctx context.Context, db, fixturesDir, name string) (*server, error) {
	addr, err := freeAddr()
	if err != nil {
		return nil, err
	}
	args := []string{"serve", "--db", db, "--addr", addr}
	if fixturesDir != "" {
		args = append(args, "--fixtures", fixturesDir)
	}
	trace := filepath.Join(b.cfg.dir, name+".gctrace")
	errf, err := os.Create(trace)
	if err != nil {
		return nil, err
	}
	cmd := exec.CommandContext(ctx, b.cfg.bin, args...)
	cmd.Env = append(os.Environ(), "GODEBUG=gctrace=1")
	cmd.Stdout, cmd.Stderr = io.Discard, errf
	s := &server{cmd: cmd, base: "http://" + addr, trace: trace}
	s.started = time.Now()
	if err := cmd.Start(); err != nil {
		errf.Close()
		return nil, err
	}
	errf.Close()
	s.pid = cmd.Process.Pid
	s.watch()
	client := &http.Client{Timeout: time.Second}
	if pollHealth(client, s.base, time.Now().Add(5*time.Minute), s.gone) {
		s.ready = time.Since(s.started)
		return s, nil
	}
	s.stop()
	tail, _ := os.ReadFile(trace)
	return nil, fmt.Errorf("serve did not become ready: %.2000s", tail)
}

// healthPoll is how often pollHealth asks: the readiness times it reports are this fine.
const healthPoll = 2 * time.Millisecond

// pollHealth asks base's /health every healthPoll until it answers 200 (true), or until the
// deadline passes or gone says the process ended (false). It reads each answer to its end
// before closing it, so that one kept-alive connection carries every poll: closed unread (the
// "sandbox is loading" answer has a body), the client's transport cannot reuse the connection,
// and the measured server accepted, served and closed a connection of its own for every poll —
// about 8,000 in a first serve of the 100k set, each costing it about twice the CPU of a poll
// on a kept-alive connection (0.48–0.52 ms against 0.26–0.28 ms, an idle sandbox on the
// two-core box under load): work it did only because it was measured.
func pollHealth(client *http.Client, base string, deadline time.Time, gone func() bool) bool {
	for {
		res, err := client.Get(base + "/health")
		if err == nil {
			_, _ = io.Copy(io.Discard, io.LimitReader(res.Body, 64<<10))
			res.Body.Close()
			if res.StatusCode == http.StatusOK {
				return true
			}
		}
		if time.Now().After(deadline) || gone() {
			return false
		}
		time.Sleep(healthPoll)
	}
}

func (s *server) stop() {
	_ = s.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-s.exited:
	case <-time.After(10 * time.Second):
		_ = s.cmd.Process.Kill()
		<-s.exited
	}
}

// cpuTicks is the server's user+system CPU time so far, in clock ticks.
func (s *server) cpuTicks() int64 {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", s.pid))
	if err != nil {
		return 0
	}
	f := strings.Fields(string(b[strings.LastIndexByte(string(b), ')')+1:]))
	if len(f) < 13 {
		return 0
	}
	u, _ := strconv.ParseInt(f[11], 10, 64)
	k, _ := strconv.ParseInt(f[12], 10, 64)
	return u + k
}

// rss is the server's VmRSS in MB.
func (s *server) rss() float64 {
	b, _ := os.ReadFile(fmt.Sprintf("/proc/%d/status", s.pid))
	for _, line := range strings.Split(string(b), "\n") {
		if v, ok := strings.CutPrefix(line, "VmRSS:"); ok {
			kb, _ := strconv.ParseFloat(strings.TrimSuffix(strings.TrimSpace(v), " kB"), 64)
			return kb / 1000
		}
	}
	return 0
}

var gcLine = regexp.MustCompile(`^gc \d+ @([0-9.]+)s \d+%: [^,]*, ([0-9.]+)\+([0-9.]+)/([0-9.]+)/[0-9.]+\+([0-9.]+) ms cpu`)

// gcCPU sums the collector's CPU (pauses, assists and background marking, as gctrace reports
// them; idle-time marking left out) over the cycles that began in [from, to).
func (s *server) gcCPU(from, to time.Time) time.Duration {
	f, err := os.Open(s.trace)
	if err != nil {
		return 0
	}
	defer f.Close()
	lo, hi := from.Sub(s.started).Seconds(), to.Sub(s.started).Seconds()
	var ms float64
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		m := gcLine.FindStringSubmatch(sc.Text())
		if m == nil {
			continue
		}
		at, _ := strconv.ParseFloat(m[1], 64)
		if at < lo || at >= hi {
			continue
		}
		for _, v := range m[2:] {
			x, _ := strconv.ParseFloat(v, 64)
			ms += x
		}
	}
	return time.Duration(ms * float64(time.Millisecond))
}

// measured runs fn and returns the collector's share of the server's CPU meanwhile, in per
// cent (-1 when the server used no measurable CPU).
func (s *server) measured(fn func() error) (float64, error) {
	gc, cpu, err := s.spent(fn)
	if err != nil {
		return -1, err
	}
	return gcShare(gc, cpu), nil
}

// spent runs fn and returns the server's CPU time meanwhile and the collector's part of it.
func (s *server) spent(fn func() error) (gc, cpu time.Duration, err error) {
	t0, c0 := time.Now(), s.cpuTicks()
	if err := fn(); err != nil {
		return 0, 0, err
	}
	t1, c1 := time.Now(), s.cpuTicks()
	time.Sleep(50 * time.Millisecond) // the trace line of a cycle that just ended
	return s.gcCPU(t0, t1), time.Duration(c1-c0) * time.Second / 100, nil
}

// gcShare is gc over cpu in per cent, -1 when cpu is nothing measurable.
func gcShare(gc, cpu time.Duration) float64 {
	if cpu <= 0 {
		return -1
	}
	return 100 * gc.Seconds() / cpu.Seconds()
}

// maxGC is the collector's largest share of the server's CPU a row with a target may take.
const maxGC = 3.0

// gcText shows a GC share.
func gcText(gc float64) string {
	if gc < 0 {
		return ""
	}
	return fmt.Sprintf("%.1f %%", gc)
}

// judged sets r's target and verdict: want (already met or not: ok) and the GC share.
func (r *row) judged(want string, ok bool, gc float64) {
	r.gc = gcText(gc)
	r.want = want + fmt.Sprintf(", GC ≤ %.0f %%", maxGC)
	r.verdict = verdict(ok && gc <= maxGC)
}

// wrkResult is one wrk run.
type wrkResult struct {
	rps, p50, p99 float64
}

var (
	wrkRPS = regexp.MustCompile(`Requests/sec:\s+([0-9.]+)`)
	wrkPct = regexp.MustCompile(`(?m)^\s+(50|99)%\s+([0-9.]+)(us|ms|s)\s*$`)
	wrkBad = regexp.MustCompile(`Non-2xx or 3xx responses: (\d+)|Socket errors: .*`)
)

// wrk drives url with conns connections for d.
func wrk(ctx context.Context, target, key string, conns int, d time.Duration) (wrkResult, error) {
	args := []string{"-t1", fmt.Sprintf("-c%d", conns), fmt.Sprintf("-d%ds", int(d.Seconds())), "--latency"}
	if key != "" {
		args = append(args, "-H", "x-api-key: "+key)
	}
	out, err := exec.CommandContext(ctx, "wrk", append(args, target)...).CombinedOutput()
	if err != nil {
		return wrkResult{}, fmt.Errorf("wrk %s: %w: %s", target, err, out)
	}
	if m := wrkBad.FindString(string(out)); m != "" {
		return wrkResult{}, fmt.Errorf("wrk %s: %s", target, m)
	}
	var r wrkResult
	if m := wrkRPS.FindStringSubmatch(string(out)); m != nil {
		r.rps, _ = strconv.ParseFloat(m[1], 64)
	}
	for _, m := range wrkPct.FindAllStringSubmatch(string(out), -1) {
		v, _ := strconv.ParseFloat(m[2], 64)
		switch m[3] {
		case "us":
			v /= 1000
		case "s":
			v *= 1000
		}
		if m[1] == "50" {
			r.p50 = v
		} else {
			r.p99 = v
		}
	}
	if r.rps == 0 {
		return r, fmt.Errorf("wrk %s: no figures in %s", target, out)
	}
	return r, nil
}

// ceilingProcess is the command of a ceiling in a process of its own, `partnersim ceiling`: the
// server it is set beside, `partnersim serve`, runs in its own process too (loadtest.Ceiling).
func (b *bench) ceilingProcess() *exec.Cmd { return exec.Command(b.cfg.bin, "ceiling") }

// urlRow measures path on s against the ceiling answering its bytes: 32 connections, then
// 1 connection, each the target's run then the ceiling's. min32 is the ratio to meet at 32
// connections (0: none), maxP50 the p50 at one connection (0: none).
func (b *bench) urlRow(ctx context.Context, s *server, key, path, name, detail string, min32, maxP50 float64, oneConn bool) error {
	client := loadtest.NewClient(1, 10*time.Second)
	defer client.CloseIdleConnections()
	captured, err := loadtest.Capture(ctx, client, s.base, key, path)
	if err != nil {
		return err
	}
	ceil, err := loadtest.StartCeilingProcess(b.ceilingProcess(), map[string]*loadtest.Captured{path: captured})
	if err != nil {
		return err
	}
	defer ceil.Close()
	if detail != "" {
		detail += ", "
	}
	detail += fmt.Sprintf("%s B", groupDigits(len(captured.Body)))
	if _, err := wrk(ctx, s.base+path, key, 32, time.Second); err != nil { // warm-up, not measured
		return err
	}
	conns := []int{32}
	if oneConn {
		conns = append(conns, 1)
	}
	for _, n := range conns {
		load := loadavg()
		var t wrkResult
		gc, err := s.measured(func() (err error) { t, err = wrk(ctx, s.base+path, key, n, b.cfg.duration); return err })
		if err != nil {
			return err
		}
		c, err := wrk(ctx, ceil.URL+path, key, n, b.cfg.duration)
		if err != nil {
			return err
		}
		r := row{name: name, conns: strconv.Itoa(n), target: t.rps, ceiling: c.rps, p50: t.p50, p99: t.p99, cp50: c.p50, cp99: c.p99,
			gc: gcText(gc), load: load, detail: detail}
		switch {
		case n == 32 && min32 > 0:
			r.judged(fmt.Sprintf("≥ %.2f ×", min32), t.rps/c.rps >= min32, gc)
		case n == 1 && maxP50 > 0:
			r.judged(fmt.Sprintf("p50 ≤ %.2f ms", maxP50), t.p50 <= maxP50, gc)
		}
		b.rows = append(b.rows, r)
		b.logf("%s, %d conns: %.0f vs %.0f req/s = %.2f ×, p50 %.3f (%.3f) ms, p99 %.3f (%.3f) ms, GC %s, load %s",
			name, n, t.rps, c.rps, t.rps/c.rps, t.p50, c.p50, t.p99, c.p99, dash(r.gc), load)
	}
	return nil
}

func verdict(ok bool) string {
	if ok {
		return "met"
	}
	return "**missed**"
}

func groupDigits(n int) string {
	s := strconv.Itoa(n)
	for i := len(s) - 3; i > 0; i -= 3 {
		s = s[:i] + "," + s[i:]
	}
	return s
}

func detailPath(platformID string) string {
	return "/v1/users/" + url.PathEscape(platformID) + "/?user_account_id_type=platform"
}

// eachDefaultUser calls fn with each user of the default set's institution the load measures,
// and returns the API key it measures with.
func eachDefaultUser(fn func(simulator.User) error) (key string, err error) {
	set, data, key, err := openForLoad(fixtures.Default())
	if err != nil {
		return "", err
	}
	return key, set.EachUser(func(u simulator.User) error {
		if u.InstitutionID != data.InstitutionID {
			return nil
		}
		return fn(u)
	})
}

// openForLoad opens and checks the set in fsys and returns what a load needs of it: the
// institution's data and the API key.
func openForLoad(fsys fs.FS) (*fixtures.Set, *loadtest.Data, string, error) {
	set, err := fixtures.Open(fsys)
	if err != nil {
		return nil, nil, "", err
	}
	data, key, err := loadtest.FromSet(set, "")
	return set, data, key, err
}

// readyRow records how long a process took from its start to answering, against 500 ms.
func (b *bench) readyRow(name string, ready time.Duration) {
	b.rows = append(b.rows, row{name: name, conns: "–", detail: ms(ready), want: "≤ 500 ms", verdict: verdict(ready <= 500*time.Millisecond), load: loadavg()})
}

// serveDefault serves the default set from a new store (name.db in the work folder), built on
// this first start; the log calls the process name.
func (b *bench) serveDefault(ctx context.Context, name string) (db string, s *server, err error) {
	db = filepath.Join(b.cfg.dir, name+".db")
	os.Remove(db)
	s, err = b.serve(ctx, db, "", name)
	return db, s, err
}

// defaultSet measures the default fixtures: first start on an empty store (ready time), the
// detail rows, RSS after them, and a restart's ready time.
func (b *bench) defaultSet(ctx context.Context) error {
	// The institution's users: those with a fixture-given history, the first with a generated
	// one (funded) and the first unfunded (no value: an empty generated history).
	var given, generated, unfunded []string
	key, err := eachDefaultUser(func(u simulator.User) error {
		switch {
		case u.History != nil:
			given = append(given, u.PlatformID)
		case funded(u):
			generated = append(generated, u.PlatformID)
		default:
			unfunded = append(unfunded, u.PlatformID)
		}
		return nil
	})
	if err != nil {
		return err
	}
	db, s, err := b.serveDefault(ctx, "default")
	if err != nil {
		return err
	}
	b.logf("default set: first start (empty store) ready in %s", s.ready.Round(time.Millisecond))
	b.readyRow("default set: ready after the first start (empty store)", s.ready)
	defer func() { s.stop() }()
	for _, id := range given {
		if err := b.urlRow(ctx, s, key, detailPath(id), "Get User Detail, default set, fixture-given history", id, 0.75, 0.10, true); err != nil {
			return err
		}
	}
	if len(generated) > 0 {
		if err := b.urlRow(ctx, s, key, detailPath(generated[0]), "Get User Detail, default set, generated history", generated[0], 0.75, 0.10, true); err != nil {
			return err
		}
	}
	if len(unfunded) > 0 {
		if err := b.urlRow(ctx, s, key, detailPath(unfunded[0]), "Get User Detail, default set, unfunded (small body)", unfunded[0], 0.75, 0.10, true); err != nil {
			return err
		}
	}
	rss := s.rss()
	b.rows = append(b.rows, row{name: "default set: RSS after the rows above", conns: "–", detail: fmt.Sprintf("%.1f MB", rss),
		want: "≤ 64 MB", verdict: verdict(rss <= 64), load: loadavg()})
	s.stop()
	if s, err = b.serve(ctx, db, "", "default-restart"); err != nil {
		return err
	}
	b.readyRow("default set: ready after a restart", s.ready)
	return nil
}

// proxyRows measure what `partnersim proxy` costs: one Get User Detail URL of the default set
// driven by wrk through the proxy and directly (the ceiling columns), alternated, at 1
// connection (p50 added ≤ 0.2 ms) and at 32 (≥ 0.7 × the direct req/s). The judged rows run the
// proxy as a partner's CI does, by default (--when-behind wait: every exchange checked, the app
// waiting for the checks); rows beside them run it with --when-behind shed (the app never waits,
// what the checks cannot keep up with is counted unchecked): its forwarding's cost.
func (b *bench) proxyRows(ctx context.Context) error {
	var user string
	key, err := eachDefaultUser(func(u simulator.User) error {
		if user == "" && funded(u) {
			user = u.PlatformID
		}
		return nil
	})
	if err != nil {
		return err
	}
	_, s, err := b.serveDefault(ctx, "proxy-upstream")
	if err != nil {
		return err
	}
	defer s.stop()
	path := detailPath(user)
	for _, m := range []struct {
		mode, name, detail string
		judged             bool
	}{
		{"wait", "Get User Detail through `partnersim proxy` (ceiling columns: the same URL direct)",
			", checked against the served documents, every exchange (--when-behind wait, the default)", true},
		{"shed", "Get User Detail through `partnersim proxy --when-behind shed` (ceiling columns: the same URL direct)",
			", checked against the served documents as far as the checks keep up", false},
	} {
		var args []string // wait: the default, as a partner runs it
		if m.mode != "wait" {
			args = []string{"--when-behind", m.mode}
		}
		out := filepath.Join(b.cfg.dir, "proxy-"+m.mode+".out")
		px, err := startProxy(ctx, b.cfg.bin, s.base, out, args...)
		if err != nil {
			return err
		}
		err = b.viaRows(ctx, s.base, px, path, key, m.name, user+m.detail, m.judged, 1, 32)
		px.stop()
		if err != nil {
			return err
		}
		// What shed skipped in both its rows, warm-ups included, from the line the proxy prints as it
		// stops (wait skips nothing and prints no such line).
		said, _ := os.ReadFile(out)
		if c := regexp.MustCompile(`(\d+) exchanges forwarded unchecked, (\d+) more not checked against the document`).FindSubmatch(said); c != nil {
			b.rows[len(b.rows)-1].detail += fmt.Sprintf("; in both rows %s exchanges unchecked and %s not checked against the document", c[1], c[2])
		}
	}
	// The reference: nginx's plain proxy_pass, a forwarding proxy that checks nothing, in the
	// same place on the same box. What it reaches is the most any proxy here could.
	addr, err := freeAddr()
	if err != nil {
		return err
	}
	dir := filepath.Join(b.cfg.dir, "nginx")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	ngx, err := nginx.Start(dir, nginx.Forward(addr, strings.TrimPrefix(s.base, "http://")), addr, 1)
	if errors.Is(err, nginx.ErrMissing) {
		b.note("No nginx reference row: %v.", err)
		return nil
	}
	if err != nil {
		return err
	}
	defer ngx.Stop()
	return b.viaRows(ctx, s.base, &server{base: "http://" + addr}, path, key, "Get User Detail through nginx's `proxy_pass` (the reference: a forwarding proxy that checks nothing; ceiling columns: the same URL direct)",
		user+", nginx"+nginxVersion()+", one worker, kept-alive upstream connections", false, 1, 32)
}

// startProxy starts `partnersim proxy` in front of upstream, its output written to the file
// out, and waits for it to answer.
func startProxy(ctx context.Context, bin, upstream, out string, args ...string) (*server, error) {
	addr, err := freeAddr()
	if err != nil {
		return nil, err
	}
	f, err := os.Create(out)
	if err != nil {
		return nil, err
	}
	defer f.Close() // the child has its own descriptor
	cmd := exec.CommandContext(ctx, bin, append([]string{"proxy", "--upstream", upstream, "--addr", addr, "--poll-interval", "0"}, args...)...)
	cmd.Stdout, cmd.Stderr = f, io.Discard
	if err := cmd.Start(); err != nil {
		return nil, err
	}
	px := &server{cmd: cmd, base: "http://" + addr, pid: cmd.Process.Pid}
	px.watch()
	if pollHealth(&http.Client{Timeout: time.Second}, px.base, time.Now().Add(time.Minute), px.gone) {
		return px, nil
	}
	px.stop()
	return nil, errors.New("the proxy did not answer /health within a minute")
}

// viaRows measure one URL through a proxy and directly (the ceiling columns), alternated, at
// each of conns; judged, they carry the proxy's targets (p50 added ≤ 0.2 ms, ≥ 0.7 ×). After
// each run through the proxy it waits for the proxy to idle (a proxy of ours still checks what
// it queued), so the direct run is not measured beside those checks.
func (b *bench) viaRows(ctx context.Context, direct string, px *server, path, key, name, detail string, judged bool, conns ...int) error {
	for _, u := range []string{direct, px.base} { // warm-up, not measured
		if _, err := wrk(ctx, u+path, key, 32, time.Second); err != nil {
			return err
		}
	}
	px.idle()
	for _, n := range conns {
		load := loadavg()
		via, err := wrk(ctx, px.base+path, key, n, b.cfg.duration)
		if err != nil {
			return err
		}
		px.idle()
		d, err := wrk(ctx, direct+path, key, n, b.cfg.duration)
		if err != nil {
			return err
		}
		r := row{name: name, conns: strconv.Itoa(n), target: via.rps, ceiling: d.rps, p50: via.p50, p99: via.p99, cp50: d.p50, cp99: d.p99, load: load,
			detail: fmt.Sprintf("%s; p50 added %.3f ms", detail, via.p50-d.p50)}
		switch {
		case !judged:
		case n == 1:
			r.want, r.verdict = "p50 added ≤ 0.20 ms", verdict(via.p50-d.p50 <= 0.20)
		default:
			r.want, r.verdict = "≥ 0.70 × direct", verdict(via.rps/d.rps >= 0.70)
		}
		b.rows = append(b.rows, r)
		b.logf("%s, %d conns: %.0f vs %.0f req/s direct = %.2f ×, p50 %.3f (%.3f) ms", strings.SplitN(name, " (", 2)[0], n, via.rps, d.rps, via.rps/d.rps, via.p50, d.p50)
	}
	return nil
}

// idle waits, at most 30 s, until the server (a child of ours; nothing for nginx, which runs no
// checks) used at most one clock tick of CPU in 100 ms.
func (s *server) idle() {
	if s.cmd == nil {
		return
	}
	for deadline, t := time.Now().Add(30*time.Second), s.cpuTicks(); time.Now().Before(deadline); {
		time.Sleep(100 * time.Millisecond)
		now := s.cpuTicks()
		if now-t <= 1 {
			return
		}
		t = now
	}
}

// freeAddr is a loopback address no one listens on (for a child to take).
func freeAddr() (string, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return "", err
	}
	defer ln.Close()
	return ln.Addr().String(), nil
}

// nginxVersion is nginx -v's version after a space (" 1.22.1"), or "" when it does not say.
func nginxVersion() string {
	bin, err := nginx.Path()
	if err != nil {
		return ""
	}
	out, _ := exec.Command(bin, "-v").CombinedOutput() // nginx prints "nginx version: nginx/1.22.1"
	if _, v, ok := strings.Cut(strings.TrimSpace(string(out)), "nginx/"); ok {
		return " " + v
	}
	return ""
}

func funded(u simulator.User) bool {
	for _, a := range u.Accounts {
		if !a.Cash.IsZero() || len(a.Holdings) > 0 {
			return true
		}
	}
	return false
}

func ms(d time.Duration) string { return fmt.Sprintf("%d ms", d.Milliseconds()) }

// largeParts says which measures of the generated set to run.
type largeParts struct {
	firstServes bool // serves that build the set into an empty store
	baseline    bool // `fixtures build` against the baseline commit's, alternated
	rows, mix   bool // after a restart: the rows over many URLs, the mix
}

// largeSet measures the generated set: first serves (each building the set into an empty
// store), its build against the baseline commit's, then a restart on the built store with its
// detail, list pages and the mix.
func (b *bench) largeSet(ctx context.Context, p largeParts) error {
	dir, err := b.generatedSet()
	if err != nil {
		return err
	}
	_, data, key, err := openForLoad(os.DirFS(dir))
	if err != nil {
		return err
	}
	l := largeRun{dir: dir, db: filepath.Join(b.cfg.dir, "large.db"), key: key, data: data,
		name: setName(b.cfg.users, b.cfg.orders), records: b.cfg.users + b.cfg.orders,
		// One user in the middle of the institution's creation order: a detail like any other.
		user: data.PlatformIDs[len(data.PlatformIDs)/2]}
	if p.firstServes {
		if err := b.firstServes(ctx, l); err != nil {
			return err
		}
	}
	if p.baseline {
		load := loadavg()
		a, err := b.buildAgainstBaseline(ctx, l.dir, l.records)
		if err != nil {
			return err
		}
		b.rows = append(b.rows, a.rows(l.name, load)...)
		b.note("build CPU against the baseline: `partnersim fixtures build --force SET DB` of %s by the baseline commit's binary (built once from git with the measured binary's Go release, kept in %s) and by the measured one, %d pairs alternated in the same minutes, each into a new store; CPU is the process's user + system time (getrusage, the system part in brackets), records are users + orders, and the ratio of the mean CPUs is judged (decisions D14)",
			l.name, filepath.Join(b.cfg.dir, "baseline"), max(b.cfg.buildPairs, 1))
	}
	if !p.rows && !p.mix {
		return nil
	}
	return b.afterRestart(ctx, l, p.rows, p.mix)
}

// largeRun is what the measures of the generated set share.
type largeRun struct {
	dir, db, key, name, user string
	records                  int // users + orders
	data                     *loadtest.Data
}

// generatedSet returns the folder of the generated set, writing it first if an earlier run
// did not (it is kept for later runs).
func (b *bench) generatedSet() (string, error) {
	dir := filepath.Join(b.cfg.dir, fmt.Sprintf("set-%d-%d", b.cfg.users, b.cfg.orders))
	if _, err := os.Stat(filepath.Join(dir, fixtures.FileUsers)); err == nil {
		return dir, nil
	}
	b.logf("generating %d users and %d orders into %s (kept for later runs)…", b.cfg.users, b.cfg.orders, dir)
	tmp := dir + ".tmp"
	os.RemoveAll(tmp)
	if err := generate.Write(tmp, generate.Options{Users: b.cfg.users, Orders: b.cfg.orders, Seed: 1}); err != nil {
		return "", err
	}
	return dir, os.Rename(tmp, dir)
}

// firstServes measures serves that each build the set into an empty store, and a detail
// right after each.
func (b *bench) firstServes(ctx context.Context, l largeRun) error {
	for i := range b.cfg.runs {
		os.Remove(l.db)
		s, err := b.serve(ctx, l.db, l.dir, fmt.Sprintf("large-first-%d", i+1))
		if err != nil {
			return err
		}
		// The CPU the process took to get there (user + system): what the wall time follows
		// on a quiet machine, and much less moved by a busy one. No verdict: the build is
		// judged against the baseline's, alternated on the same box (decisions D14).
		cpu := time.Duration(s.cpuTicks()) * time.Second / 100
		b.logf("%s: first serve (build) %d ready in %s, CPU %.1f s", l.name, i+1, s.ready.Round(time.Millisecond), cpu.Seconds())
		b.rows = append(b.rows, row{name: fmt.Sprintf("%s: build on the first serve, run %d (process start → /health)", l.name, i+1), conns: "–",
			detail: fmt.Sprintf("%.1f s (CPU %.1f s; %.1f s and %.1f CPU-s per million records)", s.ready.Seconds(), cpu.Seconds(),
				perMillion(s.ready, l.records), perMillion(cpu, l.records)), load: loadavg()})
		err = b.urlRow(ctx, s, l.key, detailPath(l.user), fmt.Sprintf("Get User Detail, %s, first serve after the build, run %d", l.name, i+1), l.user, 0.75, 0.10, i == 0)
		s.stop()
		if err != nil {
			return err
		}
	}
	return nil
}

// afterRestart measures a serve on the built store: its readiness, the detail and list
// pages, a random user each request, and the mix.
func (b *bench) afterRestart(ctx context.Context, l largeRun, rows, mix bool) error {
	if _, err := os.Stat(l.db); err != nil {
		// -only mix: the store of an earlier run, or built now (not measured).
		b.logf("building %s into %s…", l.name, l.db)
		out, err := exec.CommandContext(ctx, b.cfg.bin, "fixtures", "build", "--force", l.dir, l.db).CombinedOutput()
		if err != nil {
			return fmt.Errorf("fixtures build: %w: %s", err, out)
		}
	}
	s, err := b.serve(ctx, l.db, l.dir, "large-restart")
	if err != nil {
		return err
	}
	defer s.stop()
	b.rows = append(b.rows, row{name: l.name + ": ready after a restart", conns: "–", detail: ms(s.ready), load: loadavg()})
	if rows {
		if err := b.urlRow(ctx, s, l.key, detailPath(l.user), "Get User Detail, "+l.name+", after a restart", l.user, 0.75, 0.10, true); err != nil {
			return err
		}
	}
	client := loadtest.NewClient(1, 10*time.Second)
	err = l.data.Complete(ctx, client, s.base, l.key)
	client.CloseIdleConnections()
	if err != nil {
		return err
	}
	target := loadtest.Target{BaseURL: s.base, APIKey: l.key, Data: l.data, Name: "partnersim serve"}
	if rows {
		for _, v := range variedRows {
			if err := b.variedRow(ctx, s, target, l.name, v); err != nil {
				return err
			}
		}
	}
	if mix {
		for i := range b.cfg.runs {
			if err := b.mixRow(ctx, s, target, l.name, i); err != nil {
				return err
			}
		}
	}
	return nil
}

// measure runs one scenario at 32 connections against target, with the GC of the serve s
// over the run. The ceiling answers every request of the run's pool with the target's own
// bytes for it.
func (b *bench) measure(ctx context.Context, s *server, target loadtest.Target, scenario string, seed uint64) (loadtest.Pair, float64, error) {
	var gc, cpu time.Duration
	rep, err := loadtest.Measure(ctx, target, loadtest.Plan{Scenarios: []string{scenario}, Connections: []int{32},
		Duration: b.cfg.varied, Warmup: 2 * time.Second, Timeout: 10 * time.Second, Seed: seed, Pool: b.cfg.pool,
		Rounds: b.cfg.rounds, CeilingProcess: b.ceilingProcess,
		// The GC share of the target's turns alone (not of capturing the ceiling's answers).
		Around: func(_ string, _ int, run func() error) error {
			g, c, err := s.spent(run)
			gc, cpu = gc+g, cpu+c
			return err
		}})
	if err != nil {
		return loadtest.Pair{}, -1, err
	}
	p := rep.Runs[0]
	if p.Target.Errors > 0 {
		return p, gcShare(gc, cpu), fmt.Errorf("%s: %d errors: %v", scenario, p.Target.Errors, p.Target.ErrorSamples)
	}
	return p, gcShare(gc, cpu), nil
}

// varied is a row over many URLs: a scenario of `partnersim load` and its target ratio.
type varied struct {
	scenario, name string
	min            float64
}

// variedRows are the rows that look like a partner's app: a different URL each request.
var variedRows = []varied{
	{"detail", "Get User Detail, %s, a random user each request (`partnersim load --scenario detail`)", 0.85},
	{"users", "Get User List, %s, a random filtered page each request (`--scenario users`)", 0.75},
	{"orders", "Get Order List, %s, a random filtered page each request (`--scenario orders`)", 0.75},
}

// variedRow measures one of variedRows: nothing the store or the renderer kept for one URL
// helps here, and the ceiling answers each URL's own bytes.
func (b *bench) variedRow(ctx context.Context, s *server, target loadtest.Target, name string, v varied) error {
	load := loadavg()
	p, gc, err := b.measure(ctx, s, target, v.scenario, 1)
	if err != nil {
		return err
	}
	ratio := p.Target.RPS / p.Ceiling.RPS
	r := row{name: fmt.Sprintf(v.name, name), conns: "32",
		target: p.Target.RPS, ceiling: p.Ceiling.RPS, p50: p.Target.Latency.P50MS, p99: p.Target.Latency.P99MS, cp50: p.Ceiling.Latency.P50MS,
		cp99: p.Ceiling.Latency.P99MS, load: load,
		detail: fmt.Sprintf("%s URLs, the ceiling answering each its own bytes; mean body %s B", groupDigits(b.pool()), groupDigits(p.Target.BytesPerResponse))}
	r.judged(fmt.Sprintf("≥ %.2f ×", v.min), ratio >= v.min, gc)
	b.rows = append(b.rows, r)
	b.logf("%s: %.0f vs %.0f req/s = %.2f ×, p99 %.2f (%.2f) ms, GC %s, load %s", v.scenario, p.Target.RPS, p.Ceiling.RPS, ratio,
		p.Target.Latency.P99MS, p.Ceiling.Latency.P99MS, dash(r.gc), load)
	return nil
}

// turnsText says how a row over many URLs shares its time between the target and the ceiling.
func (b *bench) turnsText() string {
	if b.cfg.rounds <= 1 {
		return "partnersim's run, then the ceiling's"
	}
	return fmt.Sprintf("the time is %d turns of %s each side, interleaved (partnersim, ceiling, ceiling, partnersim, …), so that a change in the machine's speed falls on both alike", b.cfg.rounds, b.cfg.varied/time.Duration(b.cfg.rounds))
}

func (b *bench) pool() int {
	if b.cfg.pool > 0 {
		return b.cfg.pool
	}
	return loadtest.DefaultPoolSize
}

// mix's targets: throughput and p99 against the ceiling replaying the mix's own answers.
const (
	mixMinRatio = 0.6
	mixMaxP99   = 2.0
)

// mixRow measures run i of the mix.
func (b *bench) mixRow(ctx context.Context, s *server, target loadtest.Target, name string, i int) error {
	load := loadavg()
	p, gc, err := b.measure(ctx, s, target, "mix", uint64(i+1))
	if err != nil {
		return err
	}
	t, c := p.Target.Latency, p.Ceiling.Latency
	ratio := p.Target.RPS / p.Ceiling.RPS
	r := row{name: fmt.Sprintf("mix, %s (`partnersim load --scenario mix --connections 32`), run %d", name, i+1), conns: "32",
		target: p.Target.RPS, ceiling: p.Ceiling.RPS, p50: t.P50MS, p99: t.P99MS, cp50: c.P50MS, cp99: c.P99MS, load: load,
		detail: fmt.Sprintf("%s URLs, the ceiling replaying the mix's own answers; p99 %.1f × the ceiling's", groupDigits(b.pool()), t.P99MS/c.P99MS)}
	r.judged(fmt.Sprintf("≥ %.2f ×, p99 ≤ %.0f × the ceiling's", mixMinRatio, mixMaxP99), ratio >= mixMinRatio && t.P99MS <= mixMaxP99*c.P99MS, gc)
	b.rows = append(b.rows, r)
	b.logf("mix run %d: %.0f vs %.0f req/s = %.2f ×, p99 %.2f ms (ceiling %.2f), GC %s, load %s", i+1, p.Target.RPS, p.Ceiling.RPS, ratio, t.P99MS, c.P99MS, dash(r.gc), load)
	return nil
}

// shortCount writes a count as the tables name sizes: 1M, 100k, or the digits when it is not
// a round thousand.
func shortCount(n int) string {
	switch {
	case n > 0 && n%1_000_000 == 0:
		return fmt.Sprintf("%dM", n/1_000_000)
	case n > 0 && n%1000 == 0:
		return fmt.Sprintf("%dk", n/1000)
	}
	return groupDigits(n)
}

// setName is how the tables and the log name a set of users and orders.
func setName(users, orders int) string {
	return fmt.Sprintf("%s users + %s orders", shortCount(users), shortCount(orders))
}

var benchMetric = regexp.MustCompile(`(?m)^Benchmark(DeliveryThroughput|SignedPostCeiling)\S*\s+\d+\s+.*?([0-9.]+) deliveries/s`)

// deliveries runs the delivery benchmark and the signed-POST ceiling alternately, runs times.
func (b *bench) deliveries(ctx context.Context) error {
	testBin := filepath.Join(b.cfg.dir, "bolt.test")
	if out, err := exec.CommandContext(ctx, "go", "test", "-c", "-o", testBin, b.cfg.deliveriesPkg).CombinedOutput(); err != nil {
		return fmt.Errorf("go test -c: %w: %s", err, out)
	}
	for i := range b.cfg.runs {
		load := loadavg()
		got := map[string]float64{}
		for _, bench := range []string{"DeliveryThroughput", "SignedPostCeiling"} {
			cmd := exec.CommandContext(ctx, testBin, "-test.run", "^$", "-test.bench", "^Benchmark"+bench+"$", "-test.benchtime", "20000x")
			cmd.Dir = b.cfg.dir
			out, err := cmd.CombinedOutput()
			if err != nil {
				return fmt.Errorf("%s: %w: %s", bench, err, out)
			}
			m := benchMetric.FindStringSubmatch(string(out))
			if m == nil {
				return fmt.Errorf("%s: no deliveries/s in %s", bench, out)
			}
			got[m[1]], _ = strconv.ParseFloat(m[2], 64)
		}
		t, c := got["DeliveryThroughput"], got["SignedPostCeiling"]
		b.rows = append(b.rows, row{name: fmt.Sprintf("deliveries/s, durable outbox → loopback receiver, run %d", i+1), conns: "32 workers",
			target: t, ceiling: c, want: "≥ 0.50 × the signed-POST loop", verdict: verdict(t >= 0.5*c), load: load})
		b.logf("deliveries run %d: %.0f vs %.0f/s = %.2f ×, load %s", i+1, t, c, t/c, load)
	}
	return nil
}
