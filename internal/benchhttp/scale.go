package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/partnersim/partnersim/fixtures"
	"github.com/partnersim/partnersim/fixtures/generate"
	"github.com/partnersim/partnersim/internal/loadtest"
)

// decade is one size of `make bench-scale`: what building and serving it cost.
type decade struct {
	users, orders int
	buildWall     time.Duration
	buildCPU      time.Duration // user + system of the build process
	buildSys      time.Duration // of which system
	peakRSS       int64         // bytes, the build process's high-water mark
	storeSize     int64         // bytes
	ready         time.Duration // serve on the built store: process start → /health
	serveRSS      float64       // MB, the serve after the rows
	ratios        map[string]float64
	p99x          float64 // the mix's p99 over the ceiling's
	gc            map[string]float64
}

func (d *decade) records() int { return d.users + d.orders }

// cpuPerMillion is the build's CPU seconds per million records (users + orders).
func (d *decade) cpuPerMillion() float64 { return perMillion(d.buildCPU, d.records()) }

// scaleScenarios are the serving rows of every decade, in the table's order.
var scaleScenarios = []string{"detail", "users", "orders", "mix"}

// The targets of `make bench-scale`.
const (
	scaleMaxRSS       = 2 << 30 // bytes, the largest decade's build
	scaleMaxCPUGrowth = 1.2     // CPU per record, one decade over the one before
	scaleMaxDrift     = 0.10    // a serving ratio of the largest decade against the one before
	scaleMaxReady     = 500 * time.Millisecond
)

// scale builds every size of users (ten orders each), smallest first, then serves them all and
// measures each serving row on every size in turn, and prints one table and writes the chart.
//
// The rows of one scenario run back to back across the sizes (10k, 100k, 1M; then the next
// scenario), not a size's four rows and then the next size's: the flatness verdict compares two
// sizes' ratios, and a machine whose speed drifts over the run's minutes would otherwise be
// judged as growth (decisions D14).
func (b *bench) scale(ctx context.Context, sizes []int, svgPath string) error {
	machine, err := b.begin()
	if err != nil {
		return err
	}
	var ds []*decade
	for _, n := range sizes {
		d := &decade{users: n, orders: 10 * n, ratios: map[string]float64{}, gc: map[string]float64{}}
		if err := b.buildDecade(ctx, d); err != nil {
			return fmt.Errorf("%d users: %w", n, err)
		}
		ds = append(ds, d)
	}
	served := make([]*decadeServer, len(ds))
	defer func() {
		for _, s := range served {
			if s != nil {
				s.stop()
			}
		}
	}()
	for i, d := range ds {
		if served[i], err = b.serveDecade(ctx, d); err != nil {
			return fmt.Errorf("%d users: %w", d.users, err)
		}
	}
	for _, sc := range scaleScenarios {
		for i, d := range ds {
			if err := b.scaleRow(ctx, d, served[i], sc); err != nil {
				return fmt.Errorf("%d users: %w", d.users, err)
			}
		}
	}
	for i, d := range ds {
		d.serveRSS = served[i].rss()
	}
	b.printScale(os.Stdout, machine, ds)
	if svgPath != "" {
		f, err := os.Create(svgPath)
		if err != nil {
			return err
		}
		writeScaleSVG(f, ds)
		if err := f.Close(); err != nil {
			return err
		}
		b.logf("chart written to %s", svgPath)
	}
	return nil
}

func (d *decade) name() string { return setName(d.users, d.orders) }

func (b *bench) setDir(d *decade) string {
	return filepath.Join(b.cfg.dir, fmt.Sprintf("set-%d-%d", d.users, d.orders))
}

func (b *bench) storePath(d *decade) string {
	return filepath.Join(b.cfg.dir, fmt.Sprintf("scale-%d.db", d.users))
}

// buildDecade generates the set (once: kept between runs) and builds its store with `partnersim
// fixtures build` as its own process, b.cfg.buildRuns times; the run of least CPU is the
// decade's figure (the others only slower by the machine's other work), its peak RSS the
// largest of any run.
func (b *bench) buildDecade(ctx context.Context, d *decade) error {
	dir := b.setDir(d)
	if _, err := os.Stat(filepath.Join(dir, fixtures.FileUsers)); err != nil {
		b.logf("%s: generating the set into %s (kept for later runs)…", d.name(), dir)
		tmp := dir + ".tmp"
		os.RemoveAll(tmp)
		if err := generate.Write(tmp, generate.Options{Users: d.users, Orders: d.orders, Seed: 1}); err != nil {
			return err
		}
		if err := os.Rename(tmp, dir); err != nil {
			return err
		}
	}
	db := b.storePath(d)
	for run := 1; run <= max(b.cfg.buildRuns, 1); run++ {
		os.Remove(db)
		b.logf("%s: building %s (run %d of %d)…", d.name(), db, run, max(b.cfg.buildRuns, 1))
		r, err := buildOnce(ctx, b.cfg.bin, dir, db)
		if err != nil {
			return err
		}
		b.logf("%s: built in %s, CPU %s (system %s; %.1f s per million records), peak RSS %s", d.name(), r.wall.Round(100*time.Millisecond),
			r.cpu.Round(100*time.Millisecond), r.sys.Round(100*time.Millisecond), perMillion(r.cpu, d.records()), mib(r.peak))
		if run == 1 || r.cpu < d.buildCPU {
			d.buildWall, d.buildCPU, d.buildSys = r.wall, r.cpu, r.sys
		}
		d.peakRSS = max(d.peakRSS, r.peak)
	}
	if fi, err := os.Stat(db); err == nil {
		d.storeSize = fi.Size()
	}
	return nil
}

// decadeServer is a decade's `partnersim serve` and what the load needs to drive it.
type decadeServer struct {
	*server
	target loadtest.Target
}

// serveDecade restarts on the built store (the restart's time is the decade's figure) and
// completes the load's data from it.
func (b *bench) serveDecade(ctx context.Context, d *decade) (*decadeServer, error) {
	dir := b.setDir(d)
	_, data, key, err := openForLoad(os.DirFS(dir))
	if err != nil {
		return nil, err
	}
	s, err := b.serve(ctx, b.storePath(d), dir, fmt.Sprintf("scale-%d", d.users))
	if err != nil {
		return nil, err
	}
	d.ready = s.ready
	b.logf("%s: ready after a restart in %s", d.name(), s.ready.Round(time.Millisecond))
	client := loadtest.NewClient(1, 10*time.Second)
	err = data.Complete(ctx, client, s.base, key)
	client.CloseIdleConnections()
	if err != nil {
		s.stop()
		return nil, err
	}
	return &decadeServer{server: s, target: loadtest.Target{BaseURL: s.base, APIKey: key, Data: data, Name: "partnersim serve"}}, nil
}

// scaleRow measures one serving row of a decade.
func (b *bench) scaleRow(ctx context.Context, d *decade, s *decadeServer, sc string) error {
	p, gc, err := b.measure(ctx, s.server, s.target, sc, 1)
	if err != nil {
		return err
	}
	d.ratios[sc] = p.Target.RPS / p.Ceiling.RPS
	d.gc[sc] = gc
	if sc == "mix" {
		d.p99x = p.Target.Latency.P99MS / p.Ceiling.Latency.P99MS
	}
	b.logf("%s: %s %.0f vs %.0f req/s = %.2f ×, GC %s, load %s", d.name(), sc, p.Target.RPS, p.Ceiling.RPS, d.ratios[sc], dash(gcText(d.gc[sc])), loadavg())
	return nil
}

func mib(n int64) string { return fmt.Sprintf("%.0f MiB", float64(n)/(1<<20)) }

// printScale writes the table: one row a decade, then the targets with their verdicts.
func (b *bench) printScale(w io.Writer, m loadtest.Machine, ds []*decade) {
	fmt.Fprintf(w, "`make bench-scale` — %s, commit %s, %s (%d CPUs), %s, %s; load average at the start %s, at the end %s; took %s.\n\n",
		m.Date, commitText(), m.CPUModel, m.CPUs, m.GoVersion, m.OSArch, m.LoadAvg, loadavg(), time.Since(b.start).Round(time.Second))
	fmt.Fprintln(w, "| users + orders | build wall | build CPU (of which system) | CPU s per million records (× the decade before) | peak RSS of the build | store file | ready after a restart | random detail | random user list | random order list | mix (p99 × ceiling's) | serve RSS after the rows |")
	fmt.Fprintln(w, "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
	for i, d := range ds {
		growth := ""
		if i > 0 {
			growth = fmt.Sprintf(" (%.2f ×)", d.cpuPerMillion()/ds[i-1].cpuPerMillion())
		}
		ratio := func(sc string) string {
			return fmt.Sprintf("%.2f × (GC %s)", d.ratios[sc], dash(gcText(d.gc[sc])))
		}
		fmt.Fprintf(w, "| %s + %s | %.1f s | %.1f s (%.1f s) | %.1f%s | %s | %s | %d ms | %s | %s | %s | %s, p99 %.1f × | %.0f MB |\n",
			shortCount(d.users), shortCount(d.orders), d.buildWall.Seconds(), d.buildCPU.Seconds(), d.buildSys.Seconds(), d.cpuPerMillion(), growth,
			mib(d.peakRSS), mib(d.storeSize), d.ready.Milliseconds(), ratio("detail"), ratio("users"), ratio("orders"), ratio("mix"), d.p99x, d.serveRSS)
	}
	fmt.Fprintln(w)
	fmt.Fprintln(w, "| target | figure | verdict |")
	fmt.Fprintln(w, "|---|---|---|")
	last := ds[len(ds)-1]
	fmt.Fprintf(w, "| peak RSS of the %s build ≤ %s | %s | %s |\n", shortCount(last.users), mib(scaleMaxRSS), mib(last.peakRSS), verdict(last.peakRSS <= scaleMaxRSS))
	for i := 1; i < len(ds); i++ {
		g := ds[i].cpuPerMillion() / ds[i-1].cpuPerMillion()
		fmt.Fprintf(w, "| build CPU per record, %s over %s, ≤ %.1f × | %.2f × | %s |\n", shortCount(ds[i].users), shortCount(ds[i-1].users), scaleMaxCPUGrowth, g, verdict(g <= scaleMaxCPUGrowth))
	}
	if len(ds) > 1 {
		prev := ds[len(ds)-2]
		for _, sc := range scaleScenarios {
			drift := last.ratios[sc]/prev.ratios[sc] - 1
			fmt.Fprintf(w, "| %s ratio, %s within %.0f %% of %s | %.2f × against %.2f × (%+.0f %%) | %s |\n", sc, shortCount(last.users), 100*scaleMaxDrift,
				shortCount(prev.users), last.ratios[sc], prev.ratios[sc], 100*drift, verdict(drift >= -scaleMaxDrift && drift <= scaleMaxDrift))
		}
	}
	fmt.Fprintf(w, "| ready after a restart at %s ≤ %d ms | %d ms | %s |\n", shortCount(last.users), scaleMaxReady.Milliseconds(), last.ready.Milliseconds(), verdict(last.ready <= scaleMaxReady))
	fmt.Fprintln(w)
	fmt.Fprintf(w, "- build: `partnersim fixtures build --force SET DB` as its own process on a set generated once (seed 1, kept in %s), %s; CPU is the process's user + system time (getrusage; the system part, in brackets, is the kernel's: the file's and the spill runs' writes and reads, and reclaiming the page cache for them), peak RSS its high-water mark (ru_maxrss; the largest of the runs), records are users + orders\n", b.cfg.dir, b.buildRunsText())
	fmt.Fprintf(w, "- serving: `partnersim serve` restarted on each built store, all sizes up at once; each ratio is `loadtest.Measure` at 32 connections, %s URLs walked in order for %s after a 2 s warm-up, over a ceiling answering each URL with partnersim's own bytes for it (as `make bench-http`'s rows over many URLs); %s; one scenario's rows run back to back across the sizes, then the next scenario's\n", groupDigits(b.pool()), b.cfg.varied, b.turnsText())
}

// buildRunsText says which of a size's builds the table shows.
func (b *bench) buildRunsText() string {
	if b.cfg.buildRuns <= 1 {
		return "one run"
	}
	return fmt.Sprintf("the run of least CPU of %d (each run's figures are in the log above)", b.cfg.buildRuns)
}

func commitText() string {
	commit := strings.TrimSpace(output("git", "rev-parse", "--short", "HEAD"))
	if strings.TrimSpace(output("git", "status", "--porcelain", "--untracked-files=no")) != "" {
		commit += " (with uncommitted changes)"
	}
	return commit
}
