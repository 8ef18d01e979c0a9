package loadtest

import (
	"context"
	"errors"
	"fmt"
	"io"
	"math"
	"math/rand/v2"
	"net"
	"net/http"
	"sync"
	"sync/atomic"
	"time"
)

// Config is one run of the driver.
type Config struct {
	// BaseURL is the target's root, e.g. "http://127.0.0.1:8080" (the scenario's paths start
	// with /v1/).
	BaseURL string
	// APIKey is sent as x-api-key.
	APIKey string
	// Connections is how many workers run, each on its own keep-alive connection.
	Connections int
	// Duration bounds the measured part of the run. It always stops by then (requests in flight
	// at the deadline are awaited, up to Timeout).
	Duration time.Duration
	// Warmup runs the scenario unmeasured first (connections opened, caches warm).
	Warmup time.Duration
	// Requests, when positive, ends the run after that many requests (or Duration, first).
	Requests int
	// Rate, when positive, paces the workers to that many requests a second in total (an open
	// loop per worker); zero is closed loop, as fast as answers come.
	Rate float64
	// Timeout bounds one request (default 10s).
	Timeout time.Duration
	// Seed makes the request sequence of each worker reproducible.
	Seed uint64
	// Client, if set, is used instead of a client built for the run (it must allow Connections
	// idle connections to the target).
	Client *http.Client
	// Pool, if set, is the sequence of requests the run walks (from its start, over again
	// when it ends) instead of drawing each from the scenario: the same requests for the
	// target and for a ceiling that answers them.
	Pool *Pool
}

// Result is one measured run.
type Result struct {
	Server      string        `json:"server"` // "partnersim", "ceiling" or the target's URL
	Scenario    string        `json:"scenario"`
	Connections int           `json:"connections"`
	Elapsed     time.Duration `json:"-"`
	ElapsedS    float64       `json:"elapsed_s"`
	Requests    int           `json:"requests"`
	Errors      int           `json:"errors"`
	// ErrorSamples are the first few errors, for the report.
	ErrorSamples []string `json:"error_samples,omitempty"`
	RPS          float64  `json:"req_per_s"`
	// BytesPerResponse is the mean body size.
	BytesPerResponse int     `json:"bytes_per_response"`
	Latency          Latency `json:"latency"`
	// Kinds break the run down by request kind (scenarios of more than one kind).
	Kinds []KindResult `json:"kinds,omitempty"`
	// CPU is the CPU time used during the run, in cores (1 = one core busy the whole time):
	// by this process (client, and the server when self-hosted) and by everything else on the
	// machine, which competes for the same cores (Linux only; absent elsewhere).
	CPU *CPUUse `json:"cpu,omitempty"`

	tally *tally // what the figures summarise, for adding turns up
}

// CPUUse is CPU time over wall time, in cores.
type CPUUse struct {
	Own   float64 `json:"own_cores"`
	Other float64 `json:"other_cores"`
}

// KindResult is one request kind's share of a run.
type KindResult struct {
	Kind    string  `json:"kind"`
	Errors  int     `json:"errors"`
	RPS     float64 `json:"req_per_s"`
	Latency Latency `json:"latency"`
}

// NewClient is the driver's client: keep-alive connections, as many idle ones per host as
// workers (so none is ever closed and reopened), no compression, no redirects followed, no
// proxy (the target is loopback).
func NewClient(connections int, timeout time.Duration) *http.Client {
	if timeout <= 0 {
		timeout = 10 * time.Second
	}
	return &http.Client{
		Transport: &http.Transport{
			Proxy:                 nil,
			DialContext:           (&net.Dialer{Timeout: 5 * time.Second, KeepAlive: 30 * time.Second}).DialContext,
			MaxIdleConns:          connections,
			MaxIdleConnsPerHost:   connections,
			MaxConnsPerHost:       connections,
			IdleConnTimeout:       90 * time.Second,
			DisableCompression:    true,
			ResponseHeaderTimeout: timeout,
		},
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse },
		Timeout:       timeout,
	}
}

// worker is one closed-loop (or paced) requester.
type worker struct {
	id      int
	rng     *rand.Rand
	measure bool
	counts
}

// counts are what requests came to: a worker's, or a run's (its workers' added up).
type counts struct {
	lat     []shard // by kind
	errs    []int   // by kind
	done    int     // requests answered or failed (not those cut off by the hard stop)
	bytes   int64
	samples []string
}

func newCounts(kinds int) counts { return counts{lat: make([]shard, kinds), errs: make([]int, kinds)} }

// add counts u into c.
func (c *counts) add(u *counts) {
	for k := range c.lat {
		c.lat[k] = append(c.lat[k], u.lat[k]...)
		c.errs[k] += u.errs[k]
	}
	c.done += u.done
	c.bytes += u.bytes
	c.samples = append(c.samples, u.samples...)
}

// Run drives sc against cfg.BaseURL and measures it.
func Run(ctx context.Context, cfg Config, sc *Scenario) (*Result, error) {
	if cfg.Connections < 1 {
		return nil, errors.New("loadtest: connections must be at least 1")
	}
	if cfg.Duration <= 0 && cfg.Requests <= 0 {
		return nil, errors.New("loadtest: give a duration or a request count")
	}
	if cfg.Duration <= 0 {
		cfg.Duration = time.Hour
	}
	if cfg.Pool != nil && len(cfg.Pool.Paths) == 0 {
		return nil, errors.New("loadtest: the pool is empty")
	}
	if cfg.Timeout <= 0 {
		cfg.Timeout = 10 * time.Second
	}
	client := cfg.Client
	if client == nil {
		client = NewClient(cfg.Connections, cfg.Timeout)
		defer client.CloseIdleConnections()
	}
	if cfg.Warmup > 0 {
		warm := cfg
		warm.Duration, warm.Requests, warm.Warmup, warm.Seed = cfg.Warmup, 0, 0, cfg.Seed^0x9e3779b97f4a7c15
		if _, err := runPhase(ctx, warm, sc, client, false); err != nil {
			return nil, err
		}
	}
	return runPhase(ctx, cfg, sc, client, true)
}

// perWorkerCap estimates how many samples a worker will record, so its shards are allocated
// before the clock starts.
func perWorkerCap(cfg Config, kinds int) int {
	var total float64
	switch {
	case cfg.Requests > 0:
		total = float64(cfg.Requests)
	case cfg.Rate > 0:
		total = cfg.Rate * cfg.Duration.Seconds() * 1.05
	default:
		total = 40_000 * cfg.Duration.Seconds() // above what two cores serve over loopback
	}
	per := int(total/float64(cfg.Connections)) + 16
	if kinds > 1 {
		per = per/2 + 16 // the largest kind of a mix takes well under half
	}
	return min(per, 8<<20)
}

func runPhase(parent context.Context, cfg Config, sc *Scenario, client *http.Client, measure bool) (*Result, error) {
	ctx, cancel := context.WithCancel(parent)
	defer cancel()
	workers := make([]*worker, cfg.Connections)
	capacity := perWorkerCap(cfg, len(sc.Kinds))
	for i := range workers {
		w := &worker{id: i, rng: rand.New(rand.NewPCG(cfg.Seed, uint64(i)+1)), measure: measure, counts: newCounts(len(sc.Kinds))}
		if measure {
			for k := range w.lat {
				w.lat[k] = make(shard, 0, capacity)
			}
		}
		workers[i] = w
	}
	var tickets, cursor atomic.Int64
	var interval time.Duration
	if cfg.Rate > 0 {
		interval = time.Duration(float64(cfg.Connections) / cfg.Rate * float64(time.Second))
	}
	cpu0 := sampleCPU()
	start := time.Now()
	deadline := start.Add(cfg.Duration)
	// A hard stop: requests still out Timeout after the deadline are abandoned.
	hard := time.AfterFunc(cfg.Duration+cfg.Timeout, cancel)
	defer hard.Stop()
	var wg sync.WaitGroup
	for _, w := range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			next := start.Add(interval * time.Duration(w.id) / time.Duration(cfg.Connections))
			for {
				if interval > 0 {
					if d := time.Until(next); d > 0 {
						t := time.NewTimer(d)
						select {
						case <-t.C:
						case <-ctx.Done():
							t.Stop()
							return
						}
					}
					next = next.Add(interval)
					if now := time.Now(); now.Sub(next) > interval { // fell behind: do not burst to catch up
						next = now
					}
				}
				if ctx.Err() != nil || !time.Now().Before(deadline) {
					return
				}
				if cfg.Requests > 0 && tickets.Add(1) > int64(cfg.Requests) {
					return
				}
				kind, path := 0, ""
				if cfg.Pool != nil {
					i := int((cursor.Add(1) - 1) % int64(len(cfg.Pool.Paths)))
					kind, path = cfg.Pool.Kinds[i], cfg.Pool.Paths[i]
				} else {
					kind, path = sc.pick(w.rng)
				}
				w.do(ctx, client, cfg, kind, path)
			}
		}()
	}
	wg.Wait()
	elapsed := time.Since(start)
	cpu1 := sampleCPU()
	if err := parent.Err(); err != nil {
		return nil, err
	}
	if !measure {
		return nil, nil
	}
	t := collect(sc, workers, elapsed)
	if cpu0.ok && cpu1.ok {
		own, all := cpu1.own-cpu0.own, cpu1.all-cpu0.all
		t.cpu = &cpuSpent{own: own, other: max(all-own, 0)}
	}
	return t.result(sc, cfg.Connections), nil
}

// do makes one request, of the scenario's kind-th kind, and records it.
func (w *worker) do(ctx context.Context, client *http.Client, cfg Config, kind int, path string) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, cfg.BaseURL+path, nil)
	if err != nil {
		w.fail(kind, fmt.Sprintf("GET %s: %v", path, err))
		return
	}
	req.Header.Set("x-api-key", cfg.APIKey)
	begin := time.Now()
	res, err := client.Do(req)
	if err != nil {
		if ctx.Err() != nil { // cut off by the hard stop: not the server's fault, not counted
			return
		}
		w.done++
		w.fail(kind, fmt.Sprintf("GET %s: %v", path, err))
		return
	}
	n, err := io.Copy(io.Discard, res.Body)
	res.Body.Close()
	took := time.Since(begin)
	w.done++
	if w.measure {
		w.lat[kind] = append(w.lat[kind], took)
	}
	w.bytes += n
	switch {
	case err != nil:
		w.fail(kind, fmt.Sprintf("GET %s: reading the body: %v", path, err))
	case res.StatusCode != http.StatusOK:
		w.fail(kind, fmt.Sprintf("GET %s: status %d", path, res.StatusCode))
	}
}

func (w *worker) fail(kind int, msg string) {
	w.errs[kind]++
	if len(w.samples) < 3 {
		w.samples = append(w.samples, msg)
	}
}

// tally is what a run counted, before it is summarised. The turns of one side of an interleaved
// pair add up to one tally (Plan.Rounds).
type tally struct {
	counts
	elapsed time.Duration
	cpu     *cpuSpent // nil where CPU time is not measured
}

// cpuSpent is the CPU time used during a run: by this process and by the rest of the machine.
type cpuSpent struct{ own, other time.Duration }

func collect(sc *Scenario, workers []*worker, elapsed time.Duration) *tally {
	t := &tally{counts: newCounts(len(sc.Kinds)), elapsed: elapsed}
	for _, w := range workers {
		t.counts.add(&w.counts)
	}
	return t
}

// add counts u into t, another turn of the same side.
func (t *tally) add(u *tally) {
	t.counts.add(&u.counts)
	t.elapsed += u.elapsed
	if t.cpu != nil && u.cpu != nil {
		t.cpu.own += u.cpu.own
		t.cpu.other += u.cpu.other
	} else {
		t.cpu = nil
	}
}

// result summarises t.
func (t *tally) result(sc *Scenario, conns int) *Result {
	res := &Result{Scenario: sc.Name, Connections: conns, Elapsed: t.elapsed, ElapsedS: t.elapsed.Seconds(), tally: t}
	var all []time.Duration
	for k, kind := range sc.Kinds {
		lat := t.lat[k] // summarize sorts it: the order of samples does not matter once a run ended
		all = append(all, lat...)
		kr := KindResult{Kind: kind.Name, Errors: t.errs[k], Latency: summarize(lat), RPS: float64(len(lat)) / t.elapsed.Seconds()}
		res.Errors += kr.Errors
		if len(sc.Kinds) > 1 {
			res.Kinds = append(res.Kinds, kr)
		}
	}
	res.ErrorSamples = t.samples[:min(len(t.samples), 5)]
	res.Latency = summarize(all)
	res.Requests = t.done
	res.RPS = float64(t.done) / t.elapsed.Seconds()
	if len(all) > 0 {
		res.BytesPerResponse = int(t.bytes / int64(len(all)))
	}
	if t.cpu != nil {
		res.CPU = &CPUUse{Own: round2(t.cpu.own.Seconds() / t.elapsed.Seconds()), Other: round2(t.cpu.other.Seconds() / t.elapsed.Seconds())}
	}
	return res
}

func round2(x float64) float64 { return math.Round(x*100) / 100 }
