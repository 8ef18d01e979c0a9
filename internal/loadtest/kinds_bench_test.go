package loadtest

import (
	"context"
	"math/rand/v2"
	"net/http"
	"net/http/httptest"
	"os"
	"testing"
)

// BenchmarkMixKinds serves each kind of the mix scenario in-process (the handler called
// directly: routing, auth, store, rendering — no socket, no client), one sub-benchmark a kind,
// so the server's CPU per request of each kind shows on its own. It runs over a fixture set
// and a store built from it (a large one is built once with `partnersim fixtures build`):
//
//	PARTNERSIM_LOAD_SET=set100k PARTNERSIM_LOAD_DB=b100k.db go test -run '^$' -bench MixKinds ./loadtest/
//
// The store is opened for writing (keys are touched on open): give it a copy.
func BenchmarkMixKinds(b *testing.B) {
	set, db := os.Getenv("PARTNERSIM_LOAD_SET"), os.Getenv("PARTNERSIM_LOAD_DB")
	if set == "" || db == "" {
		b.Skip("PARTNERSIM_LOAD_SET and PARTNERSIM_LOAD_DB name the fixture set and its store")
	}
	ctx := context.Background()
	h, d, key := benchHost(b, HostConfig{Fixtures: os.DirFS(set), DBPath: db})
	if err := d.Complete(ctx, NewClient(1, 0), h.URL, key); err != nil {
		b.Fatal(err)
	}
	sc, err := NewScenario("mix", d)
	if err != nil {
		b.Fatal(err)
	}
	for _, k := range sc.Kinds {
		b.Run(k.Name, func(b *testing.B) {
			r := rand.New(rand.NewPCG(1, 1))
			w := &sinkWriter{header: http.Header{}}
			start := sampleCPU()
			for b.Loop() {
				req := httptest.NewRequest(http.MethodGet, k.Next(r), nil)
				req.Host = "127.0.0.1" // loopback Hosts only (decisions D18)
				req.Header.Set("x-api-key", key)
				w.reset()
				h.Sandbox.Server.ServeHTTP(w, req)
				if w.code != http.StatusOK {
					b.Fatalf("%s: %d %.200s", req.URL, w.code, w.body)
				}
			}
			reportCPU(b, start)
		})
	}
}

// benchHost serves a sandbox of cfg for a benchmark (SelfHost), closed when it ends, with the
// set's data and its key of the largest institution (FromSet).
func benchHost(b *testing.B, cfg HostConfig) (*Hosted, *Data, string) {
	h, err := SelfHost(context.Background(), cfg)
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { _ = h.Close() })
	d, key, err := FromSet(h.Set, "")
	if err != nil {
		b.Fatal(err)
	}
	return h, d, key
}

// reportCPU reports the process's CPU time per operation since start (every goroutine's,
// the collector's included): on a shared machine it moves far less than the wall time.
func reportCPU(b *testing.B, start cpuSample) {
	if end := sampleCPU(); start.ok && end.ok {
		b.ReportMetric(float64(end.own-start.own)/float64(b.N), "cpu-ns/op")
	}
}

// sinkWriter is the response writer of BenchmarkMixKinds: it keeps the status and the start of
// the body and drops the rest, as a socket would, so the benchmark's allocations are the
// server's (httptest.ResponseRecorder grows a buffer for every body).
type sinkWriter struct {
	header http.Header
	code   int
	body   []byte
}

func (w *sinkWriter) reset() {
	clear(w.header)
	w.code, w.body = 0, w.body[:0]
}

func (w *sinkWriter) Header() http.Header { return w.header }

func (w *sinkWriter) WriteHeader(code int) {
	if w.code == 0 {
		w.code = code
	}
}

func (w *sinkWriter) Write(p []byte) (int, error) {
	w.WriteHeader(http.StatusOK)
	if room := 200 - len(w.body); room > 0 {
		w.body = append(w.body, p[:min(room, len(p))]...)
	}
	return len(p), nil
}
