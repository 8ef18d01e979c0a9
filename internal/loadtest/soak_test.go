package loadtest

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"runtime/pprof"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// soakConfig is one soak: the mix at a steady rate for a while.
type soakConfig struct {
	Duration    time.Duration
	Rate        float64
	Connections int
	// Fixtures is a set folder to self-host (empty: the embedded default set).
	Fixtures string
}

// TestSoakShort is the soak's short form, run in CI: the mix at a steady rate over loopback
// against a self-hosted sandbox for about 12 s, with no error, no goroutine growth and no heap
// growth. TestSoakLong is the same at length.
func TestSoakShort(t *testing.T) {
	soak(t, soakConfig{Duration: 12 * time.Second, Rate: 100, Connections: 8})
}

// TestSoakLong runs only when PARTNERSIM_SOAK gives its duration (PARTNERSIM_SOAK=10m);
// PARTNERSIM_SOAK_RATE (requests a second, default 500), PARTNERSIM_SOAK_CONNECTIONS (default 16)
// and PARTNERSIM_SOAK_FIXTURES (a set folder, default the embedded set) tune it.
// Run it with a test timeout above its duration: go test -run TestSoakLong -timeout 15m ./loadtest
func TestSoakLong(t *testing.T) {
	v := os.Getenv("PARTNERSIM_SOAK")
	if v == "" {
		t.Skip("set PARTNERSIM_SOAK=10m to run the long soak")
	}
	d, err := time.ParseDuration(v)
	require.NoError(t, err, "PARTNERSIM_SOAK=%q: want a duration such as 10m", v)
	cfg := soakConfig{Duration: d, Rate: 500, Connections: 16, Fixtures: os.Getenv("PARTNERSIM_SOAK_FIXTURES")}
	if r, err := strconv.ParseFloat(os.Getenv("PARTNERSIM_SOAK_RATE"), 64); err == nil && r > 0 {
		cfg.Rate = r
	}
	if n, err := strconv.Atoi(os.Getenv("PARTNERSIM_SOAK_CONNECTIONS")); err == nil && n > 0 {
		cfg.Connections = n
	}
	soak(t, cfg)
}

func soak(t *testing.T, cfg soakConfig) {
	before := settledGoroutines(0, time.Second)
	hc := HostConfig{DBPath: filepath.Join(t.TempDir(), "soak.db")}
	if cfg.Fixtures != "" {
		hc.Fixtures = os.DirFS(cfg.Fixtures)
	}
	h, err := SelfHost(context.Background(), hc)
	require.NoError(t, err)
	hosted := true
	defer func() {
		if hosted {
			h.Close()
		}
	}()
	tg := MustTarget(t, h)
	sc, err := NewScenario("mix", tg.Data)
	require.NoError(t, err)
	client := NewClient(cfg.Connections, 10*time.Second)
	run := Config{BaseURL: tg.BaseURL, APIKey: tg.APIKey, Connections: cfg.Connections, Rate: cfg.Rate, Client: client, Seed: 42}

	// Warm up: closed loop first, so that every connection is open (paced requests seldom
	// overlap, and the pool would open the rest later, mid-soak), then at the soak's rate.
	warm := run
	warm.Duration, warm.Rate = 500*time.Millisecond, 0
	_, err = Run(context.Background(), warm, sc)
	require.NoError(t, err)
	warm.Duration, warm.Rate = time.Second, cfg.Rate
	_, err = Run(context.Background(), warm, sc)
	require.NoError(t, err)
	baseline := settledGoroutines(0, time.Second)

	// The soak, with the heap sampled (after a GC) 60 times.
	var (
		heap []uint64
		mu   sync.Mutex
		done = make(chan struct{})
		wg   sync.WaitGroup
	)
	wg.Add(1)
	go func() {
		defer wg.Done()
		every := max(cfg.Duration/60, 200*time.Millisecond)
		tick := time.NewTicker(every)
		defer tick.Stop()
		// Stop sampling before the run ends: merging the latencies allocates.
		end := time.After(cfg.Duration - every/2)
		for {
			select {
			case <-done:
				return
			case <-end:
				return
			case <-tick.C:
				runtime.GC()
				var m runtime.MemStats
				runtime.ReadMemStats(&m)
				mu.Lock()
				heap = append(heap, m.HeapInuse)
				mu.Unlock()
			}
		}
	}()
	run.Duration = cfg.Duration
	res, err := Run(context.Background(), run, sc)
	close(done)
	wg.Wait()
	require.NoError(t, err)
	t.Logf("soak: %d requests in %s (%.0f req/s, mix), p50 %.3f ms, p99 %.3f ms, p99.9 %.3f ms, max %.3f ms",
		res.Requests, res.Elapsed.Round(time.Millisecond), res.RPS, res.Latency.P50MS, res.Latency.P99MS, res.Latency.P999MS, res.Latency.MaxMS)

	assert.Zero(t, res.Errors, "errors: %v", res.ErrorSamples)
	want := cfg.Rate * cfg.Duration.Seconds()
	assert.InDelta(t, want, float64(res.Requests), want*0.2, "a steady %.0f req/s", cfg.Rate)

	// No goroutine growth: with the same connections open and idle, the count settles back.
	after := settledGoroutines(baseline, 5*time.Second)
	if !assert.LessOrEqual(t, after, baseline, "goroutines: %d at steady state before the soak, %d after", baseline, after) {
		dumpGoroutines(t)
	}

	// No heap growth: the last third of the samples against the first third.
	mu.Lock()
	samples := append([]uint64(nil), heap...)
	mu.Unlock()
	require.GreaterOrEqual(t, len(samples), 6, "heap samples")
	third := len(samples) / 3
	first, last := mean(samples[:third]), mean(samples[len(samples)-third:])
	t.Logf("heap in use: first third %.1f MiB, last third %.1f MiB (%d samples: %s)", first/(1<<20), last/(1<<20), len(samples), mib(samples))
	assert.LessOrEqual(t, last, first*1.10+1<<20, "heap grew from %.1f MiB to %.1f MiB", first/(1<<20), last/(1<<20))

	// And nothing is left behind once everything is closed.
	client.CloseIdleConnections()
	require.NoError(t, h.Close())
	hosted = false
	end := settledGoroutines(before, 5*time.Second)
	if !assert.LessOrEqual(t, end, before, "goroutines: %d before the sandbox started, %d after it closed", before, end) {
		dumpGoroutines(t)
	}
}

// settledGoroutines polls runtime.NumGoroutine until it is at most target (or, with target 0,
// until it stops changing), for up to wait, and returns the last count.
func settledGoroutines(target int, wait time.Duration) int {
	deadline := time.Now().Add(wait)
	n := runtime.NumGoroutine()
	for stable := 0; time.Now().Before(deadline); {
		time.Sleep(20 * time.Millisecond)
		m := runtime.NumGoroutine()
		switch {
		case target > 0 && m <= target:
			return m
		case target == 0 && m == n:
			if stable++; stable >= 5 {
				return m
			}
		default:
			stable = 0
		}
		n = m
	}
	return n
}

func dumpGoroutines(t *testing.T) {
	var b strings.Builder
	_ = pprof.Lookup("goroutine").WriteTo(&b, 1)
	t.Log(b.String())
}

func mean(xs []uint64) float64 {
	var s float64
	for _, x := range xs {
		s += float64(x)
	}
	return s / float64(len(xs))
}

func mib(xs []uint64) string {
	parts := make([]string, len(xs))
	for i, x := range xs {
		parts[i] = fmt.Sprintf("%.1f", float64(x)/(1<<20))
	}
	return strings.Join(parts, " ")
}
