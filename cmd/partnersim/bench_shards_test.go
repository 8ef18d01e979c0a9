package main

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"github.com/tidwall/gjson"
)

// TestBenchShards is `make bench-shards` (docs/SCALING.md): the mix on each of three
// institutions at once, against one process serving all three, against that process behind
// nginx, and against three shards behind nginx. It runs only when PARTNERSIM_BENCH_SHARDS is
// set; PARTNERSIM_BENCH_SHARDS_DURATION (default 10s) and _CONNECTIONS (per institution,
// default 8) size it.
func TestBenchShards(t *testing.T) {
	if os.Getenv("PARTNERSIM_BENCH_SHARDS") == "" {
		t.Skip("a measurement, not a test: make bench-shards")
	}
	duration, conns := "10s", "8"
	if d := os.Getenv("PARTNERSIM_BENCH_SHARDS_DURATION"); d != "" {
		duration = d
	}
	if c := os.Getenv("PARTNERSIM_BENCH_SHARDS_CONNECTIONS"); c != "" {
		conns = c
	}
	bin, err := buildOnce()
	require.NoError(t, err)
	load, _ := os.ReadFile("/proc/loadavg")
	var rows []string
	measure := func(layout, target, set string) {
		var (
			wg       sync.WaitGroup
			mu       sync.Mutex
			rps      float64
			p99, p50 float64
			errs     int64
		)
		for _, name := range []string{"a", "b", "c"} {
			wg.Add(1)
			go func() {
				defer wg.Done()
				out := filepath.Join(t.TempDir(), "load.json")
				b, err := exec.Command(bin, "load", "--scenario", "mix", "--target", target, "--api-key", shardKeys[name], "--fixtures", set,
					"--connections", conns, "--warmup", "2s", "--duration", duration, "--no-ceiling", "--json", out).CombinedOutput()
				if err != nil {
					t.Errorf("%s, institution of shard %s: %v\n%s", layout, name, err, b)
					return
				}
				rep, err := os.ReadFile(out)
				if err != nil {
					t.Error(err)
					return
				}
				r := gjson.GetBytes(rep, "runs.0.target")
				mu.Lock()
				defer mu.Unlock()
				rps += r.Get("req_per_s").Float()
				p50, p99 = max(p50, r.Get("latency.p50_ms").Float()), max(p99, r.Get("latency.p99_ms").Float())
				errs += r.Get("errors").Int()
			}()
		}
		wg.Wait()
		rows = append(rows, fmt.Sprintf("| %s | %.0f | %.1f | %.1f | %d |", layout, rps, p50, p99, errs))
	}

	// One process serving the three institutions, reached directly and through nginx.
	one := startShardCluster(t, []shard{{Name: "a", Institutions: []string{"ins_harbor", "ins_prairie", "ins_cedar"}}})
	measure("1 process, direct", "http://"+one.addrs["a"], one.set)
	measure("1 process behind nginx", one.proxy, one.set)
	for _, c := range one.shards {
		_ = c.cmd.Process.Kill()
		_ = c.cmd.Wait()
	}
	three := startShardCluster(t, threeShards)
	measure("3 shards behind nginx", three.proxy, three.set)

	n, _ := strconv.Atoi(conns)
	fmt.Printf("\nthe mix on three institutions at once (%d connections each, %s measured after 2s warm-up; load average at start %s)\n\n",
		n, duration, strings.Join(strings.Fields(string(load))[:3], " "))
	fmt.Println("| layout | req/s (sum) | p50 ms (worst) | p99 ms (worst) | errors |\n| --- | --- | --- | --- | --- |")
	fmt.Println(strings.Join(rows, "\n"))
	fmt.Printf("\nmeasured %s\n", time.Now().UTC().Format(time.RFC3339))
}
