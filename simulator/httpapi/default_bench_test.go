package httpapi_test

import (
	"context"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"sync"
	"testing"

	"github.com/labstack/echo/v4"

	"github.com/partnersim/partnersim/fixtures"
	"github.com/partnersim/partnersim/simulator/sandbox"
)

// defaultSandbox is one sandbox over the embedded default set, shared by the benchmarks below.
var defaultSandbox = sync.OnceValues(func() (*sandbox.Sandbox, error) {
	dir, err := os.MkdirTemp("", "partnersim-bench-default")
	if err != nil {
		return nil, err
	}
	return sandbox.Open(context.Background(), sandbox.Config{DBPath: filepath.Join(dir, "default.db"), Fixtures: fixtures.Default()})
})

// harborSandbox returns the default sandbox and a read:user key of ins_harbor.
func harborSandbox(tb testing.TB) (*sandbox.Sandbox, string) {
	tb.Helper()
	sb, err := defaultSandbox()
	if err != nil {
		tb.Fatal(err)
	}
	for _, k := range sb.Fixtures.Keys {
		if k.InstitutionID == "ins_harbor" && k.HasScope("read:user") {
			return sb, k.Plaintext
		}
	}
	tb.Fatal("no read:user key of ins_harbor")
	return nil, ""
}

// BenchmarkDefaultDetail is Get User Detail of three default users in-process — the README's
// first user (a fixture-given history, 11 KB), one with a generated history and an unfunded
// one (493 B) — beside a bare echo handler answering the same bytes: the per-request cost the
// sandbox adds to what echo and net/http cost anyway.
func BenchmarkDefaultDetail(b *testing.B) {
	sb, key := harborSandbox(b)
	for _, user := range []string{"usr_hfcu_0001", "usr_hfcu_0002", "usr_hfcu_0009"} {
		path := "/v1/users/" + user + "/?user_account_id_type=platform"
		rec := httptest.NewRecorder()
		req := httptest.NewRequest("GET", path, nil)
		req.Host = "127.0.0.1:8080" // a loopback sandbox answers loopback Hosts only
		req.Header.Set("x-api-key", key)
		sb.Server.ServeHTTP(rec, req)
		if rec.Code != 200 {
			b.Fatalf("%s: %d %s", path, rec.Code, rec.Body)
		}
		body, header := rec.Body.Bytes(), rec.Header().Clone()
		e := echo.New()
		e.GET("/*", func(c echo.Context) error {
			h := c.Response().Header()
			for k, v := range header {
				h[k] = v
			}
			c.Response().WriteHeader(200)
			_, err := c.Response().Write(body)
			return err
		})
		for _, t := range []struct {
			name string
			h    http.Handler
		}{{"sandbox", sb.Server}, {"ceiling", e}} {
			b.Run(user+"/"+t.name, func(b *testing.B) {
				b.ReportAllocs()
				w := &discard{h: http.Header{}}
				for b.Loop() {
					req := httptest.NewRequest("GET", path, nil)
					req.Host = "127.0.0.1:8080"
					req.Header.Set("x-api-key", key)
					clear(w.h)
					t.h.ServeHTTP(w, req)
					if w.code != 200 {
						b.Fatal(w.code)
					}
				}
			})
		}
	}
}

// discard is a ResponseWriter that keeps only the status: the benchmark measures the handler.
type discard struct {
	h    http.Header
	code int
}

func (d *discard) Header() http.Header         { return d.h }
func (d *discard) WriteHeader(code int)        { d.code = code }
func (d *discard) Write(p []byte) (int, error) { return len(p), nil }

// The fixed cost of a request — routing, the checks before it, the key, the scope, the query,
// the journal, the headers — holds to a few allocations: a small answer's speed is that cost
// (BENCHMARKS.md, the unfunded default user). Get User Detail asked for again allocates 2
// times: the response's own header values (the request id and the Content-Length, with their
// slices: headValues) and the journal entry's one copy. The key reaches the handler in the server's own context (reqContext,
// not echo's map), the type is read from the raw query (validate.QueryValue, no map and no
// collector) and the body's buffer goes back to its pool in its own box.
func TestDetailFixedCostAllocations(t *testing.T) {
	if testing.Short() {
		t.Skip("opens the default sandbox")
	}
	sb, key := harborSandbox(t)
	req := httptest.NewRequest("GET", "/v1/users/usr_hfcu_0009/?user_account_id_type=platform", nil)
	req.Host = "127.0.0.1:8080"
	req.Header.Set("x-api-key", key)
	w := &discard{h: http.Header{}}
	allocs := testing.AllocsPerRun(200, func() {
		clear(w.h)
		sb.Server.ServeHTTP(w, req)
		if w.code != http.StatusOK {
			t.Fatalf("status %d", w.code)
		}
	})
	if allocs > 2 && !raceOn {
		t.Errorf("Get User Detail of usr_hfcu_0009: %v allocations a request, want at most 2", allocs)
	}
	t.Logf("%v allocations a request", allocs)
}

// BenchmarkDetailFixedCost is Get User Detail of the unfunded default user asked for again
// (its view kept, a 493-byte answer), one request built once and served over and over: what is
// left is the fixed cost every request pays (routing, the checks before it, the key, the query,
// the journal, the headers), without httptest's request.
func BenchmarkDetailFixedCost(b *testing.B) {
	sb, key := harborSandbox(b)
	req := httptest.NewRequest("GET", "/v1/users/usr_hfcu_0009/?user_account_id_type=platform", nil)
	req.Host = "127.0.0.1:8080"
	req.Header.Set("x-api-key", key)
	w := &discard{h: http.Header{}}
	b.ReportAllocs()
	for b.Loop() {
		clear(w.h)
		sb.Server.ServeHTTP(w, req)
		if w.code != http.StatusOK {
			b.Fatal(w.code)
		}
	}
}
