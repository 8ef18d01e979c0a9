package httpapi_test

import (
	"context"
	"fmt"
	"math/rand/v2"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strconv"
	"sync"
	"testing"

	"github.com/tidwall/gjson"

	"github.com/partnersim/partnersim/fixtures"
	"github.com/partnersim/partnersim/fixtures/generate"
	"github.com/partnersim/partnersim/simulator"
	"github.com/partnersim/partnersim/simulator/sandbox"
)

// benchSandbox is one sandbox over a generated set of PARTNERSIM_BENCH_USERS users (default
// 100,000) and PARTNERSIM_BENCH_ORDERS orders (default 100,000), shared by the benchmarks.
// PARTNERSIM_BENCH_SET and PARTNERSIM_BENCH_DB name a set generated and a store built before
// (`partnersim fixtures generate` and `fixtures build`: the 100k users + 1M orders set
// of `make bench-http`), which are then used as they are.
var benchSandbox = sync.OnceValues(func() (*benchSet, error) {
	if set, db := os.Getenv("PARTNERSIM_BENCH_SET"), os.Getenv("PARTNERSIM_BENCH_DB"); set != "" && db != "" {
		sb, err := sandbox.Open(context.Background(), sandbox.Config{DBPath: db, Fixtures: os.DirFS(set)})
		return &benchSet{sb, set}, err
	}
	users, orders := 100_000, 100_000
	if n, err := strconv.Atoi(os.Getenv("PARTNERSIM_BENCH_USERS")); err == nil {
		users = n
	}
	if n, err := strconv.Atoi(os.Getenv("PARTNERSIM_BENCH_ORDERS")); err == nil {
		orders = n
	}
	dir, err := os.MkdirTemp("", "partnersim-bench")
	if err != nil {
		return nil, err
	}
	set := filepath.Join(dir, "set")
	if err := generate.Write(set, generate.Options{Users: users, Orders: orders, Seed: 1}); err != nil {
		return nil, err
	}
	sb, err := sandbox.Open(context.Background(), sandbox.Config{DBPath: filepath.Join(dir, "bench.db"), Fixtures: os.DirFS(set)})
	return &benchSet{sb, set}, err
})

// benchSet is the benchmarks' sandbox and the folder of the set it serves.
type benchSet struct {
	*sandbox.Sandbox
	dir string
}

// benchTarget returns the handler, a key of the largest institution and some of its user ids.
func benchTarget(b *testing.B) (http.Handler, string, []string) {
	b.Helper()
	sb, err := benchSandbox()
	if err != nil {
		b.Fatal(err)
	}
	set, err := fixtures.Open(os.DirFS(sb.dir))
	if err != nil {
		b.Fatal(err)
	}
	var key, inst string
	best := -1
	insts, counts, err := sb.DB.Institutions(context.Background())
	if err != nil {
		b.Fatal(err)
	}
	for i, in := range insts {
		if counts[i] > best {
			best, inst = counts[i], in.ID
		}
	}
	for _, k := range sb.Fixtures.Keys {
		if k.InstitutionID == inst && k.HasScope("read:user") && k.HasScope("read:orders") {
			key = k.Plaintext
		}
	}
	rec := httptest.NewRecorder()
	req := httptest.NewRequest("GET", "/v1/users/?per_page=100&last_record_number=1000", nil)
	req.Host = "127.0.0.1" // loopback Hosts only (decisions D18)
	req.Header.Set("x-api-key", key)
	sb.Server.ServeHTTP(rec, req)
	var ids []string
	for _, it := range gjson.Get(rec.Body.String(), "items").Array() {
		ids = append(ids, it.Get("user_account_id").String())
	}
	if len(ids) == 0 {
		b.Fatalf("no users: %s", rec.Body.String())
	}
	// Every user of the institution, so that a detail drawn at random is a different user
	// almost every time (as a partner's app asks), never one of a few the store keeps.
	var pids []string
	err = set.EachUser(func(u simulator.User) error {
		if u.InstitutionID == inst {
			pids = append(pids, u.PlatformID)
		}
		return nil
	})
	if err != nil {
		b.Fatal(err)
	}
	b.Logf("institution %s: %d users; key %s", inst, best, key[:9])
	return sb.Server, key, pids
}

func serve(b *testing.B, h http.Handler, key, path string) {
	req := httptest.NewRequest("GET", path, nil)
	req.Host = "127.0.0.1" // loopback Hosts only (decisions D18)
	req.Header.Set("x-api-key", key)
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, req)
	if rec.Code != 200 {
		b.Fatalf("%s: %d %s", path, rec.Code, rec.Body.String())
	}
}

// BenchmarkUserDetail is Get User Detail in-process (routing, auth, store, history, JSON).
func BenchmarkUserDetail(b *testing.B) {
	h, key, pids := benchTarget(b)
	r := rand.New(rand.NewPCG(1, 1))
	for b.Loop() {
		serve(b, h, key, "/v1/users/"+pids[r.IntN(len(pids))]+"/?user_account_id_type=platform")
	}
}

// BenchmarkUserListFiltered is a filtered Get User List page with total_records, in-process.
func BenchmarkUserListFiltered(b *testing.B) {
	h, key, _ := benchTarget(b)
	for _, q := range []string{
		"crypto_kyc_status=approved&per_page=25",
		"product=robo&per_page=25&last_record_number=500",
		"securities_kyc_status=approved&crypto_kyc_status=pending&per_page=25",
		"created_at_start=2025-06-01&created_at_end=2025-09-01&per_page=25",
		"per_page=100&last_record_number=5000",
	} {
		b.Run(q, func(b *testing.B) {
			for b.Loop() {
				serve(b, h, key, "/v1/users/?"+q)
			}
		})
	}
}

// BenchmarkOrderListFiltered is a filtered Get Order List page, in-process.
func BenchmarkOrderListFiltered(b *testing.B) {
	h, key, _ := benchTarget(b)
	for _, q := range []string{"status=completed&per_page=25", "side=sell&product=crypto&per_page=25", "placed_at_start=2026-03-01&per_page=25&last_record_number=200"} {
		b.Run(q, func(b *testing.B) {
			for b.Loop() {
				serve(b, h, key, "/v1/orders/?"+q)
			}
		})
	}
}

var _ = fmt.Sprint
