package httpapi_test

import (
	"net/http"
	"net/http/httptest"
	"testing"
)

// The fixed cost of a request — routing, the checks before it, the key, the scope, the query,
// the journal, the headers — holds to a few allocations: a small answer's speed is that cost
// (BENCHMARKS.md, the unfunded default user). Get User Detail asked for again allocates under
// 30 times (78 before the route chains were wrapped once and the store kept its views).
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
	if allocs > 30 {
		t.Errorf("Get User Detail of usr_hfcu_0009: %v allocations a request, want under 30", allocs)
	}
	t.Logf("%v allocations a request", allocs)
}
