package loadtest

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"math"
	"os"
	"os/exec"
	"runtime"
	"strings"
	"text/tabwriter"
	"time"
)

// Plan is a whole measurement: every scenario at every connection count, each run against the
// target and then against the ceiling.
type Plan struct {
	Scenarios   []string
	Connections []int
	Duration    time.Duration
	Warmup      time.Duration
	// Requests, when positive, bounds each run by a request count as well.
	Requests int
	Timeout  time.Duration
	Seed     uint64
	// NoCeiling skips the ceiling runs (ratios are then absent).
	NoCeiling bool
	// Progress, if set, gets a line as each run ends.
	Progress io.Writer
	// Pool is how many requests each scenario's pool holds (DefaultPoolSize when 0): the
	// runs walk it, and the ceiling answers each of its requests with the target's bytes.
	Pool int
	// CeilingProcess, if set, makes the command of a ceiling of its own process (one that runs
	// ServeCeiling, as `partnersim ceiling` does), for a target that runs in its own process;
	// unset, the ceiling is served from this one (see Ceiling).
	CeilingProcess func() *exec.Cmd
	// Rounds, when above 1, interleaves the target's and the ceiling's runs: each side runs
	// Rounds turns of Duration/Rounds, in the order target, ceiling, ceiling, target, target, …
	// (each side's warm-up before its first turn only), and a side's figures are those of its
	// turns together. A change in the machine's speed during a pair (other work, a neighbour on
	// the host) then falls on both sides alike instead of on whichever ran in it. Runs bounded
	// by Requests, or without a ceiling, are one turn.
	Rounds int
	// Around, if set, wraps each run against the target (not the ceiling), e.g. to profile
	// just those: with Rounds, each of the target's turns.
	Around func(scenario string, connections int, run func() error) error
}

// Target is a running API and what its scenarios draw on.
type Target struct {
	BaseURL string `json:"base_url"`
	APIKey  string `json:"-"`
	// Name labels the target's rows ("partnersim" when self-hosted).
	Name string `json:"name"`
	// Description says what it serves, for the report (fixtures, users, orders).
	Description string `json:"description"`
	Data        *Data  `json:"data"`
}

// Report is the outcome of a Plan.
type Report struct {
	Machine Machine `json:"machine"`
	Target  Target  `json:"target"`
	// Command is the command line that made the report, when the caller sets it.
	Command string  `json:"command,omitempty"`
	Runs    []Pair  `json:"runs"`
	Checks  []Check `json:"checks"`
}

// Pair is one scenario at one connection count, against the target and the ceiling.
type Pair struct {
	Scenario    string  `json:"scenario"`
	Connections int     `json:"connections"`
	Target      *Result `json:"target"`
	Ceiling     *Result `json:"ceiling,omitempty"`
	// Ratio is target ÷ ceiling for each figure: below 1 for throughput, above 1 for latency.
	Ratio *Ratios `json:"ratio_to_ceiling,omitempty"`
}

// Ratios are the target's figures divided by the ceiling's.
type Ratios struct {
	RPS  float64 `json:"req_per_s"`
	P50  float64 `json:"p50"`
	P99  float64 `json:"p99"`
	P999 float64 `json:"p99_9"`
}

// Check is one of the targets of BENCHMARKS.md, judged on the report's figures.
type Check struct {
	Name  string  `json:"name"`
	Want  string  `json:"want"`
	Got   float64 `json:"got"`
	Unit  string  `json:"unit"`
	Pass  bool    `json:"pass"`
	Notes string  `json:"notes,omitempty"`
}

// Machine describes where the figures were taken.
type Machine struct {
	Date       string `json:"date"`
	CPUs       int    `json:"cpus"`
	CPUModel   string `json:"cpu_model"`
	GOMAXPROCS int    `json:"gomaxprocs"`
	GoVersion  string `json:"go_version"`
	OSArch     string `json:"os_arch"`
	// LoadAvg is /proc/loadavg's 1, 5 and 15 minute figures when the measurement began: other
	// work on the machine skews every figure (the ratios less so).
	LoadAvg string `json:"load_avg"`
}

// ThisMachine describes the machine now.
func ThisMachine() Machine {
	m := Machine{Date: time.Now().UTC().Format(time.RFC3339), CPUs: runtime.NumCPU(), GOMAXPROCS: runtime.GOMAXPROCS(0),
		GoVersion: runtime.Version(), OSArch: runtime.GOOS + "/" + runtime.GOARCH}
	if f, err := os.Open("/proc/cpuinfo"); err == nil {
		sc := bufio.NewScanner(f)
		for sc.Scan() {
			if k, v, ok := strings.Cut(sc.Text(), ":"); ok && strings.TrimSpace(k) == "model name" {
				m.CPUModel = strings.TrimSpace(v)
				break
			}
		}
		f.Close()
	}
	if b, err := os.ReadFile("/proc/loadavg"); err == nil {
		if f := strings.Fields(string(b)); len(f) >= 3 {
			m.LoadAvg = strings.Join(f[:3], " ")
		}
	}
	return m
}

// Measure runs the plan against t. Each scenario's ceiling serves answers captured from t.
func Measure(ctx context.Context, t Target, p Plan) (*Report, error) {
	rep := &Report{Machine: ThisMachine(), Target: t}
	around := p.Around
	if around == nil {
		around = func(_ string, _ int, run func() error) error { return run() }
	}
	for _, name := range p.Scenarios {
		sc, err := NewScenario(name, t.Data)
		if err != nil {
			return nil, err
		}
		n := p.Pool
		if n <= 0 {
			n = DefaultPoolSize
		}
		pool := sc.Draw(p.Seed, n)
		var ceiling *Ceiling
		if !p.NoCeiling {
			captured, err := CapturePool(ctx, t.BaseURL, t.APIKey, pool)
			if err != nil {
				return nil, err
			}
			if ceiling, err = p.startCeiling(captured); err != nil {
				return nil, err
			}
		}
		for _, conns := range p.Connections {
			cfg := Config{BaseURL: t.BaseURL, APIKey: t.APIKey, Connections: conns, Duration: p.Duration, Warmup: p.Warmup,
				Requests: p.Requests, Timeout: p.Timeout, Seed: p.Seed, Pool: pool}
			pair, err := p.pair(ctx, cfg, sc, ceiling, func(run func() error) error { return around(name, conns, run) })
			if err != nil {
				closeCeiling(ceiling)
				return nil, err
			}
			pair.Target.Server = t.Name
			p.progress(pair.Target)
			if pair.Ceiling != nil {
				p.progress(pair.Ceiling)
			}
			rep.Runs = append(rep.Runs, pair)
		}
		closeCeiling(ceiling)
	}
	rep.Checks = checks(rep)
	return rep, nil
}

// pair runs cfg against the target and, when there is one, against its ceiling, in the
// turns p.Rounds asks for (around wraps each of the target's).
func (p Plan) pair(ctx context.Context, cfg Config, sc *Scenario, ceiling *Ceiling, around func(func() error) error) (Pair, error) {
	pair := Pair{Scenario: sc.Name, Connections: cfg.Connections}
	turns := max(p.Rounds, 1)
	if ceiling == nil || cfg.Requests > 0 {
		turns = 1
	}
	sides := []Config{cfg}
	if ceiling != nil {
		c := cfg
		c.BaseURL = ceiling.URL
		sides = append(sides, c)
	}
	for i := range sides {
		// Each side keeps its connections from turn to turn, as a partner's app keeps its own.
		sides[i].Client = NewClient(cfg.Connections, cfg.Timeout)
		defer sides[i].Client.CloseIdleConnections()
		sides[i].Duration = cfg.Duration / time.Duration(turns)
	}
	var got [2]*tally
	for turn := range 2 * turns {
		side := (turn + 1) / 2 % 2 // 0 1 1 0 0 1 1 0 …: the target, then the ceiling, in ABBA order
		if side >= len(sides) {
			continue
		}
		c := sides[side]
		if got[side] != nil {
			c.Warmup = 0
		}
		runtime.GC()
		var r *Result
		run := func() (err error) {
			r, err = Run(ctx, c, sc)
			return err
		}
		var err error
		if side == 0 {
			err = around(run)
		} else {
			err = run()
		}
		if err != nil {
			return pair, err
		}
		if got[side] == nil {
			got[side] = r.tally
		} else {
			got[side].add(r.tally)
		}
	}
	pair.Target = got[0].result(sc, cfg.Connections)
	if got[1] != nil {
		pair.Ceiling = got[1].result(sc, cfg.Connections)
		pair.Ceiling.Server = "ceiling"
		pair.Ratio = ratios(pair.Target, pair.Ceiling)
	}
	return pair, nil
}

// startCeiling serves captured where the plan says the target runs.
func (p Plan) startCeiling(captured map[string]*Captured) (*Ceiling, error) {
	if p.CeilingProcess != nil {
		return StartCeilingProcess(p.CeilingProcess(), captured)
	}
	return StartCeiling(captured)
}

func closeCeiling(c *Ceiling) {
	if c != nil {
		_ = c.Close()
	}
}

func (p Plan) progress(r *Result) {
	if p.Progress != nil {
		fmt.Fprintf(p.Progress, "  %-6s %3d conn  %-10s %9.0f req/s  p50 %.3f ms  p99 %.3f ms  errors %d  cpu %s\n",
			r.Scenario, r.Connections, r.Server, r.RPS, r.Latency.P50MS, r.Latency.P99MS, r.Errors, cpuText(r.CPU))
	}
}

func ratios(t, c *Result) *Ratios {
	div := func(a, b float64) float64 {
		if b == 0 {
			return 0
		}
		return math.Round(a/b*100) / 100
	}
	return &Ratios{RPS: div(t.RPS, c.RPS), P50: div(t.Latency.P50MS, c.Latency.P50MS), P99: div(t.Latency.P99MS, c.Latency.P99MS),
		P999: div(t.Latency.P999MS, c.Latency.P999MS)}
}

// checks judges the targets on whichever runs the report has.
func checks(rep *Report) []Check {
	var out []Check
	for _, p := range rep.Runs {
		switch {
		case p.Scenario == "detail" && p.Connections == 32 && p.Ratio != nil:
			out = append(out, Check{Name: "Get User Detail throughput at 32 connections", Want: "≥ 0.70 × ceiling", Got: p.Ratio.RPS, Unit: "× ceiling",
				Pass: p.Ratio.RPS >= 0.70, Notes: fmt.Sprintf("%.0f vs %.0f req/s", p.Target.RPS, p.Ceiling.RPS)})
		case p.Scenario == "detail" && p.Connections == 1:
			out = append(out, Check{Name: "Get User Detail p50 at 1 connection", Want: "≤ 0.10 ms", Got: p.Target.Latency.P50MS, Unit: "ms",
				Pass: p.Target.Latency.P50MS <= 0.10, Notes: ceilingNote(p, func(r *Result) float64 { return r.Latency.P50MS })})
		case p.Scenario == "mix" && p.Connections == 32:
			out = append(out, Check{Name: "mix p99 at 32 connections", Want: "≤ 10 ms", Got: p.Target.Latency.P99MS, Unit: "ms",
				Pass: p.Target.Latency.P99MS <= 10, Notes: ceilingNote(p, func(r *Result) float64 { return r.Latency.P99MS })})
		}
	}
	for _, p := range rep.Runs {
		if p.Target.Errors > 0 {
			out = append(out, Check{Name: fmt.Sprintf("%s at %d connections: no errors", p.Scenario, p.Connections), Want: "0", Got: float64(p.Target.Errors), Unit: "errors"})
		}
	}
	return out
}

// cpuText shows CPU use as "own/other" cores.
func cpuText(c *CPUUse) string {
	if c == nil {
		return "-"
	}
	return fmt.Sprintf("%.2f/%.2f", c.Own, c.Other)
}

func ceilingNote(p Pair, f func(*Result) float64) string {
	if p.Ceiling == nil {
		return ""
	}
	return fmt.Sprintf("ceiling %.3f ms", f(p.Ceiling))
}

// WriteText writes the report as tables for people.
func (rep *Report) WriteText(w io.Writer) error {
	m := rep.Machine
	fmt.Fprintf(w, "machine  %d CPUs (%s), GOMAXPROCS %d, %s %s, load avg %s, %s\n", m.CPUs, m.CPUModel, m.GOMAXPROCS, m.GoVersion, m.OSArch, m.LoadAvg, m.Date)
	fmt.Fprintf(w, "target   %s %s\n", rep.Target.BaseURL, rep.Target.Description)
	if rep.Command != "" {
		fmt.Fprintf(w, "command  %s\n", rep.Command)
	}
	fmt.Fprintln(w)
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "scenario\tconns\tserver\treq/s\t×ceil\tp50 ms\t×ceil\tp99 ms\t×ceil\tp99.9 ms\t×ceil\tmax ms\tbytes\trequests\terrors\tcpu own/other\t")
	for _, p := range rep.Runs {
		r, x := p.Target, p.Ratio
		rx := func(f func(*Ratios) float64) string {
			if x == nil {
				return "-"
			}
			return fmt.Sprintf("%.2f", f(x))
		}
		fmt.Fprintf(tw, "%s\t%d\t%s\t%.0f\t%s\t%.3f\t%s\t%.3f\t%s\t%.3f\t%s\t%.3f\t%d\t%d\t%d\t%s\t\n", p.Scenario, p.Connections, r.Server,
			r.RPS, rx(func(x *Ratios) float64 { return x.RPS }), r.Latency.P50MS, rx(func(x *Ratios) float64 { return x.P50 }),
			r.Latency.P99MS, rx(func(x *Ratios) float64 { return x.P99 }), r.Latency.P999MS, rx(func(x *Ratios) float64 { return x.P999 }),
			r.Latency.MaxMS, r.BytesPerResponse, r.Requests, r.Errors, cpuText(r.CPU))
		if c := p.Ceiling; c != nil {
			fmt.Fprintf(tw, "\t\t%s\t%.0f\t\t%.3f\t\t%.3f\t\t%.3f\t\t%.3f\t%d\t%d\t%d\t%s\t\n", c.Server, c.RPS, c.Latency.P50MS, c.Latency.P99MS,
				c.Latency.P999MS, c.Latency.MaxMS, c.BytesPerResponse, c.Requests, c.Errors, cpuText(c.CPU))
		}
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	fmt.Fprintf(w, "(×ceil: the figure over the ceiling's in the same run; cpu: cores used during the run by this process / by the rest of the machine, which shares the %d CPUs)\n", m.CPUs)
	var kinds bool
	for _, p := range rep.Runs {
		kinds = kinds || len(p.Target.Kinds) > 0
	}
	if kinds {
		fmt.Fprintln(w)
		tw = tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
		fmt.Fprintln(tw, "scenario\tconns\tkind\treq/s\tshare\tp50 ms\tp99 ms\tp99.9 ms\tmax ms\terrors\t")
		for _, p := range rep.Runs {
			for _, k := range p.Target.Kinds {
				fmt.Fprintf(tw, "%s\t%d\t%s\t%.0f\t%.0f%%\t%.3f\t%.3f\t%.3f\t%.3f\t%d\t\n", p.Scenario, p.Connections, k.Kind, k.RPS,
					100*float64(k.Latency.Count)/float64(max(p.Target.Latency.Count, 1)), k.Latency.P50MS, k.Latency.P99MS, k.Latency.P999MS, k.Latency.MaxMS, k.Errors)
			}
		}
		if err := tw.Flush(); err != nil {
			return err
		}
	}
	if len(rep.Checks) > 0 {
		fmt.Fprintln(w)
		for _, c := range rep.Checks {
			mark := "MISS"
			if c.Pass {
				mark = "ok  "
			}
			note := ""
			if c.Notes != "" {
				note = " (" + c.Notes + ")"
			}
			fmt.Fprintf(w, "%s  %s: %.3f %s, want %s%s\n", mark, c.Name, c.Got, c.Unit, c.Want, note)
		}
	}
	for _, p := range rep.Runs {
		for _, r := range []*Result{p.Target, p.Ceiling} {
			if r != nil && len(r.ErrorSamples) > 0 {
				fmt.Fprintf(w, "\nerrors of %s %s at %d connections:\n  %s\n", r.Server, r.Scenario, r.Connections, strings.Join(r.ErrorSamples, "\n  "))
			}
		}
	}
	return nil
}
