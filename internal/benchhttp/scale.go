package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
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
func (d *decade) cpuPerMillion() float64 {
	return d.buildCPU.Seconds() / (float64(d.records()) / 1e6)
}

// scaleScenarios are the serving rows of every decade, in the table's order.
var scaleScenarios = []string{"detail", "users", "orders", "mix"}

// The targets of `make bench-scale`.
const (
	scaleMaxRSS       = 2 << 30 // bytes, the largest decade's build
	scaleMaxCPUGrowth = 1.2     // CPU per record, one decade over the one before
	scaleMaxDrift     = 0.10    // a serving ratio of the largest decade against the one before
	scaleMaxReady     = 500 * time.Millisecond
)

// scale builds and serves every size of users (ten orders each), largest last, and prints one
// table and writes the chart.
func (b *bench) scale(ctx context.Context, sizes []int, svgPath string) error {
	machine, err := b.begin()
	if err != nil {
		return err
	}
	var ds []*decade
	for _, n := range sizes {
		d := &decade{users: n, orders: 10 * n, ratios: map[string]float64{}, gc: map[string]float64{}}
		if err := b.oneDecade(ctx, d); err != nil {
			return fmt.Errorf("%d users: %w", n, err)
		}
		ds = append(ds, d)
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

// oneDecade generates the set (once: kept between runs), builds its store with `partnersim
// fixtures build` as its own process, restarts on it and measures the serving rows.
func (b *bench) oneDecade(ctx context.Context, d *decade) error {
	name := fmt.Sprintf("%s users + %s orders", shortCount(d.users), shortCount(d.orders))
	dir := filepath.Join(b.cfg.dir, fmt.Sprintf("set-%d-%d", d.users, d.orders))
	if _, err := os.Stat(filepath.Join(dir, fixtures.FileUsers)); err != nil {
		b.logf("%s: generating the set into %s (kept for later runs)…", name, dir)
		tmp := dir + ".tmp"
		os.RemoveAll(tmp)
		if err := generate.Write(tmp, generate.Options{Users: d.users, Orders: d.orders, Seed: 1}); err != nil {
			return err
		}
		if err := os.Rename(tmp, dir); err != nil {
			return err
		}
	}
	db := filepath.Join(b.cfg.dir, fmt.Sprintf("scale-%d.db", d.users))
	os.Remove(db)
	b.logf("%s: building %s…", name, db)
	cmd := exec.CommandContext(ctx, b.cfg.bin, "fixtures", "build", "--force", dir, db)
	var out strings.Builder
	cmd.Stdout, cmd.Stderr = &out, &out
	t0 := time.Now()
	if err := cmd.Run(); err != nil {
		return fmt.Errorf("fixtures build: %w: %s", err, out.String())
	}
	d.buildWall = time.Since(t0)
	if ru, ok := cmd.ProcessState.SysUsage().(*syscall.Rusage); ok {
		d.peakRSS = ru.Maxrss * 1024 // kB on Linux
	}
	d.buildSys = cmd.ProcessState.SystemTime()
	d.buildCPU = cmd.ProcessState.UserTime() + d.buildSys
	if fi, err := os.Stat(db); err == nil {
		d.storeSize = fi.Size()
	}
	b.logf("%s: built in %s, CPU %s (system %s; %.1f s per million records), peak RSS %s, store %s", name, d.buildWall.Round(100*time.Millisecond),
		d.buildCPU.Round(100*time.Millisecond), d.buildSys.Round(100*time.Millisecond), d.cpuPerMillion(), mib(d.peakRSS), mib(d.storeSize))

	_, data, key, err := openForLoad(os.DirFS(dir))
	if err != nil {
		return err
	}
	s, err := b.serve(ctx, db, dir, fmt.Sprintf("scale-%d", d.users))
	if err != nil {
		return err
	}
	defer s.stop()
	d.ready = s.ready
	b.logf("%s: ready after a restart in %s", name, s.ready.Round(time.Millisecond))
	client := loadtest.NewClient(1, 10*time.Second)
	err = data.Complete(ctx, client, s.base, key)
	client.CloseIdleConnections()
	if err != nil {
		return err
	}
	target := loadtest.Target{BaseURL: s.base, APIKey: key, Data: data, Name: "partnersim serve"}
	for _, sc := range scaleScenarios {
		p, gc, err := b.measure(ctx, s, target, sc, 1)
		if err != nil {
			return err
		}
		d.ratios[sc] = p.Target.RPS / p.Ceiling.RPS
		d.gc[sc] = gc
		if sc == "mix" {
			d.p99x = p.Target.Latency.P99MS / p.Ceiling.Latency.P99MS
		}
		b.logf("%s: %s %.0f vs %.0f req/s = %.2f ×, GC %s, load %s", name, sc, p.Target.RPS, p.Ceiling.RPS, d.ratios[sc], dash(gcText(gc)), loadavg())
	}
	d.serveRSS = s.rss()
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
	fmt.Fprintf(w, "- build: `partnersim fixtures build --force SET DB` as its own process on a set generated once (seed 1, kept in %s); CPU is the process's user + system time (getrusage; the system part, in brackets, is the kernel's: the file's and the spill runs' writes and reads, and reclaiming the page cache for them), peak RSS its high-water mark (ru_maxrss), records are users + orders\n", b.cfg.dir)
	fmt.Fprintf(w, "- serving: `partnersim serve` restarted on the built store; each ratio is `loadtest.Measure` at 32 connections, %s URLs walked in order for %s after a 2 s warm-up, over a ceiling answering each URL with partnersim's own bytes for it (as `make bench-http`'s rows over many URLs); %s\n", groupDigits(b.pool()), b.cfg.varied, b.turnsText())
}

func commitText() string {
	commit := strings.TrimSpace(output("git", "rev-parse", "--short", "HEAD"))
	if strings.TrimSpace(output("git", "status", "--porcelain", "--untracked-files=no")) != "" {
		commit += " (with uncommitted changes)"
	}
	return commit
}
