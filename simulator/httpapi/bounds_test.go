package httpapi_test

import (
	"context"
	"encoding/json"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/partnersim/partnersim/internal/sandboxtest"
	"github.com/partnersim/partnersim/simulator"
	"github.com/partnersim/partnersim/simulator/sandbox"
)

// D17: a body of many wrong items answers a 422 of at most 1,000 items in the usual shape, so
// a 1 MiB body can no longer answer a 100 MB error.
func TestValidationErrorCapped(t *testing.T) {
	a := MustServe(t)
	rules := strings.Repeat(`{"path":1},`, 50_000)
	r := a.Control(t, "PUT", "/_sandbox/faults", `{"rules":[`+rules[:len(rules)-1]+`]}`)
	require.Equal(t, 422, r.Status, r.Body[:min(len(r.Body), 300)])
	assert.Equal(t, int64(1000), r.JSON("detail.#").Int())
	assert.Equal(t, `{"type":"string_type","loc":["body","rules",999,"path"],"msg":"Input should be a valid string","input":1}`,
		r.JSON("detail.999").Raw)
	assert.Less(t, len(r.Body), 200_000)
}

// D17: the journal keeps each path and query cut to 4 KiB, flagged as truncated, so a client
// without a key sending huge URLs cannot make the sandbox hold them.
func TestJournalEntryBounded(t *testing.T) {
	a := MustServe(t)
	long := strings.Repeat("x", 60_000)
	r := a.Get(t, "/v1/users/?q="+long, keyAll)
	require.Equal(t, 200, r.Status)
	a.Get(t, "/v1/users/"+long+"/", "") // no key: journaled all the same
	a.Get(t, "/v1/users/?per_page=1", keyAll)

	j := a.MustControl(t, "GET", "/_sandbox/requests?limit=3", "")
	short, path, query := j.JSON("requests.0"), j.JSON("requests.1"), j.JSON("requests.2")
	assert.False(t, short.Get("truncated").Exists(), "a short request is not flagged: %s", short.Raw)
	assert.Equal(t, "per_page=1", short.Get("query").String())

	assert.True(t, path.Get("truncated").Bool(), "a long path is flagged")
	assert.Len(t, path.Get("path").String(), 4096)
	assert.True(t, strings.HasPrefix(path.Get("path").String(), "/v1/users/xxx"))

	assert.True(t, query.Get("truncated").Bool(), "a long query is flagged")
	assert.Len(t, query.Get("query").String(), 4096)
	assert.Equal(t, "/v1/users/", query.Get("path").String())
}

// D17: the request line and headers are bounded at 64 KiB in all: a longer URL answers 414,
// larger headers 431, both in the {"detail": …} shape, before any work is done.
func TestRequestLineAndHeadersBounded(t *testing.T) {
	a := MustServe(t)
	r := a.Get(t, "/v1/users/?q="+strings.Repeat("x", 70_000), keyAll)
	assert.Equal(t, 414, r.Status)
	assert.JSONEq(t, `{"detail":"Request URI too long: the request line and headers may take at most 65536 bytes"}`, r.Body)

	r = a.Call(t, "GET", "/v1/users/", "", "x-api-key: "+keyAll, "X-Filler: "+strings.Repeat("y", 70_000))
	assert.Equal(t, 431, r.Status)
	assert.JSONEq(t, `{"detail":"Request header fields too large: the request line and headers may take at most 65536 bytes"}`, r.Body)

	r = a.Get(t, "/v1/users/?q="+strings.Repeat("x", 60_000), keyAll)
	assert.Equal(t, 200, r.Status, "just under the bound is served")
}

// D17: a client that goes away mid-request stops the work; the request is journaled as 499
// and logged as cancelled, never as an internal error.
func TestClientDisconnectIsCancelledNotInternal(t *testing.T) {
	var logs sandboxtest.Buffer
	a := MustServe(t, func(c *sandbox.Config) { c.Logger = slog.New(slog.NewTextHandler(&logs, nil)) })
	a.MustControl(t, "PUT", "/_sandbox/faults", `{"rules":[{"path":"/v1/users/","latency_ms":30000}]}`)

	// The same sandbox behind a server that counts requests entering it.
	var entered atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		entered.Add(1)
		a.SB.Server.ServeHTTP(w, r)
	}))
	defer srv.Close()

	ctx, cancel := context.WithCancel(context.Background())
	req, err := http.NewRequestWithContext(ctx, "GET", srv.URL+"/v1/users/", nil)
	require.NoError(t, err)
	req.Header.Set("x-api-key", keyAll)
	done := make(chan error, 1)
	go func() {
		res, err := http.DefaultClient.Do(req)
		if err == nil {
			res.Body.Close()
		}
		done <- err
	}()
	// Cancel once the request is inside the server (the fault holds it there).
	require.Eventually(t, func() bool { return entered.Load() > 0 }, 5*time.Second, 2*time.Millisecond)
	cancel()
	require.Error(t, <-done)

	var status int64
	require.Eventually(t, func() bool {
		status = a.MustControl(t, "GET", "/_sandbox/requests?limit=1", "").JSON("requests.0.status").Int()
		return status != 0
	}, 5*time.Second, 5*time.Millisecond, "the cancelled request is journaled")
	assert.Equal(t, int64(499), status)
	assert.NotContains(t, logs.String(), "internal error")
	assert.Contains(t, logs.String(), "request cancelled by the client")
}

// A time filter anywhere in the validator's range (years 1 to 9999) gives the
// right page — year 3000 once wrapped below 1970 and listed every user — and a cursor beyond
// 2^63 is echoed exactly, as Python's unbounded ints do.
func TestTimeFiltersAcrossTheWholeRange(t *testing.T) {
	a := MustServe(t)
	all := a.Get(t, "/v1/users/?per_page=1", keyAll).JSON("total_records").Int()
	allOrders := a.Get(t, "/v1/orders/?per_page=1", keyAll).JSON("total_records").Int()
	require.Positive(t, all)
	require.Positive(t, allOrders)
	for q, want := range map[string]int64{
		"created_at_start=3000-01-01":                           0,
		"created_at_start=9999-12-31T23:59:59.999999":           0,
		"created_at_end=1500-01-01":                             0,
		"created_at_end=0001-01-01":                             0,
		"created_at_start=1500-01-01":                           all,
		"created_at_end=3000-01-01":                             all,
		"created_at_start=0001-01-01&created_at_end=9999-12-31": all,
		"created_at_start=2300-01-01&sort_key=user_account_id":  0,
	} {
		r := a.Get(t, "/v1/users/?"+q, keyAll)
		require.Equal(t, 200, r.Status, q)
		assert.Equal(t, want, r.JSON("total_records").Int(), q)
		assert.Equal(t, min(want, 25), r.JSON("items.#").Int(), q)
	}
	for q, want := range map[string]int64{
		"placed_at_start=3000-01-01": 0, "placed_at_end=1500-01-01": 0,
		"placed_at_start=1500-01-01": allOrders, "placed_at_end=3000-01-01": allOrders,
	} {
		assert.Equal(t, want, a.Get(t, "/v1/orders/?"+q, keyAll).JSON("total_records").Int(), q)
	}

	r := a.Get(t, "/v1/users/?last_record_number=18446744073709551616", keyAll)
	require.Equal(t, 200, r.Status)
	assert.Equal(t, "18446744073709551616", r.JSON("last_record_number").Raw)
	assert.Equal(t, int64(0), r.JSON("items.#").Int())
	assert.Equal(t, all, r.JSON("total_records").Int())
	r = a.Get(t, "/v1/orders/?last_record_number=%2B0009223372036854775808", keyAll)
	assert.Equal(t, "9223372036854775808", r.JSON("last_record_number").Raw)
}

// Stored times are bounded to what the index can order (README limits): a control-plane user
// created in year 3000 is refused with a 422 naming the range, and the clock stops before it.
func TestStoredTimesBounded(t *testing.T) {
	a := MustServe(t)
	inst, _ := a.tenant(t, "", "")
	r := a.Control(t, "POST", "/_sandbox/institutions/"+inst+"/users",
		`{"user_account_id":"far","created_at":"3000-01-01T00:00:00Z","accounts":[{"product":"crypto","kyc_status":"pending"}]}`)
	require.Equal(t, 422, r.Status, r.Body)
	assert.Equal(t, `{"detail":[{"type":"value_error","loc":["body","created_at"],"msg":"Value error, the sandbox stores times from 1700-01-01 to 2199-12-31","input":"3000-01-01T00:00:00Z","ctx":{"error":{}}}]}`, r.Body)
	// Every time a created user carries is bounded alike, as a fixture set's are.
	r = a.Control(t, "POST", "/_sandbox/institutions/"+inst+"/users",
		`{"user_account_id":"far","terms_and_conditions":{"accepted_at":"1699-12-31T23:59:59Z","version":"v1"},"accounts":[{"product":"crypto","kyc_status":"approved","kyc_approved_at":"9999-12-31T00:00:00Z"}]}`)
	require.Equal(t, 422, r.Status, r.Body)
	assert.Equal(t, `{"detail":[{"type":"value_error","loc":["body","terms_and_conditions","accepted_at"],"msg":"Value error, the sandbox stores times from 1700-01-01 to 2199-12-31","input":"1699-12-31T23:59:59Z","ctx":{"error":{}}},{"type":"value_error","loc":["body","accounts",0,"kyc_approved_at"],"msg":"Value error, the sandbox stores times from 1700-01-01 to 2199-12-31","input":"9999-12-31T00:00:00Z","ctx":{"error":{}}}]}`, r.Body)
	for i := 0; i < 20; i++ {
		if r = a.Control(t, "POST", "/_sandbox/clock/advance", `{"seconds":315360000}`); r.Status != 200 {
			break
		}
	}
	assert.Equal(t, 400, r.Status, "the clock stops before 2200")
	assert.Contains(t, r.Body, "the virtual clock cannot move there")
}

// Prices answered by the control plane keep two decimals at least, as money
// does ("64000.00", not "64000"), and any finer precision they were given.
func TestPricesKeepTwoDecimals(t *testing.T) {
	a := MustServe(t)
	inst, _ := a.tenant(t, "", "")
	r := a.MustControl(t, "PUT", "/_sandbox/institutions/"+inst+"/prices", `{"BTC":"64000","AAPL":"190.1","ETH":"3120.12345"}`)
	assert.Equal(t, "64000.00", r.JSON("BTC").String())
	assert.Equal(t, "190.10", r.JSON("AAPL").String())
	assert.Equal(t, "3120.12345", r.JSON("ETH").String())
}

// OPTIONS on an API route answers 405 with Allow, as FastAPI without CORS
// middleware does — not echo's automatic 204 that skipped authentication.
func TestOptionsIsMethodNotAllowed(t *testing.T) {
	a := MustServe(t)
	for _, path := range []string{"/v1/users/", "/v1/webhooks/subscriptions", "/_sandbox/institutions"} {
		r := a.Call(t, "OPTIONS", path, "")
		assert.Equal(t, 405, r.Status, path)
		assert.JSONEq(t, `{"detail":"Method Not Allowed"}`, r.Body, path)
		assert.NotEmpty(t, r.Header.Get("Allow"), path)
		assert.NotContains(t, r.Header.Get("Allow"), "OPTIONS", path)
	}
}

// A reset is atomic for readers, as a snapshot restore is: concurrent reads
// never see a missing key (401) or an empty institution mid-reset.
func TestResetIsAtomicForReaders(t *testing.T) {
	a := MustServe(t)
	want := a.Get(t, "/v1/users/?per_page=1", keyAll).JSON("total_records").Int()
	require.Positive(t, want)

	stop := make(chan struct{})
	var wg sync.WaitGroup
	var reads atomic.Int64
	bad := make(chan string, 100)
	for i := 0; i < 4; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				select {
				case <-stop:
					return
				default:
				}
				r := a.Get(t, "/v1/users/?per_page=1", keyAll)
				reads.Add(1)
				if r.Status != 200 || r.JSON("total_records").Int() != want {
					select {
					case bad <- r.Body:
					default:
					}
				}
			}
		}()
	}
	for i := 0; i < 5; i++ {
		a.MustControl(t, "POST", "/_sandbox/reset", "")
	}
	close(stop)
	wg.Wait()
	close(bad)
	require.Positive(t, reads.Load())
	for b := range bad {
		t.Errorf("a read during reset saw %.200s", b)
	}
}

// The journal's entries must not pin the request they describe: net/http cuts the method out
// of the request line, so a journaled method kept a 60 KB query alive in each of 1,000 entries
// (85 MB of RSS). Sixty requests with 1 MB queries must leave the heap about where it was.
func TestJournalDoesNotPinRequests(t *testing.T) {
	a := MustServe(t)
	long := strings.Repeat("q", 1<<20-200)
	var m0, m1 runtime.MemStats
	a.Get(t, "/v1/users/?x=1", "")
	runtime.GC()
	runtime.ReadMemStats(&m0)
	for range 60 {
		a.Call(t, "GET", "/v1/users/?x="+long[:60_000], "") // reaches the journal (401)
	}
	runtime.GC()
	runtime.ReadMemStats(&m1)
	grew := int64(m1.HeapAlloc) - int64(m0.HeapAlloc)
	assert.Less(t, grew, int64(2<<20), "heap grew %d bytes over 60 journaled 60 KB requests", grew)
}

// No input renders past the room a page or a history makes for it (decisions D17): at both
// ends of the storable clock, users with every product, kyc_approved_at at the ends of the
// storable times, to the microsecond, the most cash int64 cents hold and more, and
// a long user_account_id plain or to escape answer their lists and details, whole JSON.
func TestLargestInputsRender(t *testing.T) {
	for _, now := range []time.Time{simulator.FirstStorableTime, simulator.LastStorableTime} {
		a := MustServe(t, func(c *sandbox.Config) { c.FrozenClock = &now })
		inst, key := a.tenant(t, "", "")
		var ids []string
		for i, uaid := range []string{strings.Repeat("u", 4000), strings.Repeat(`\"\u0001é`, 1000)} {
			for _, cash := range []string{"92233720368547758.07", "1e30"} {
				var accounts []string
				for j, p := range []string{"securities", "robo", "crypto", "roth_ira"} {
					at := []string{"1700-01-01T00:00:00.000001Z", "2199-12-31T23:59:59.999999Z"}[(i+j)%2]
					accounts = append(accounts, `{"product":"`+p+`","kyc_status":"approved","kyc_approved_at":"`+at+`","cash":"`+cash+`"}`)
				}
				r := a.Control(t, "POST", "/_sandbox/institutions/"+inst+"/users",
					`{"user_account_id":"`+uaid+cash+`","accounts":[`+strings.Join(accounts, ",")+`]}`)
				require.Equal(t, 201, r.Status, r.Body)
				ids = append(ids, r.JSON("platform_id").String())
			}
		}
		for _, order := range []string{"asc", "desc"} {
			r := a.Get(t, "/v1/users/?per_page=100&order="+order, key)
			require.Equal(t, 200, r.Status, "%v: %.300s", now, r.Body)
			require.True(t, json.Valid([]byte(r.Body)), "%v: the list is JSON", now)
			assert.Equal(t, int64(len(ids)), r.JSON("items.#").Int())
		}
		for _, id := range ids {
			r := a.Get(t, "/v1/users/"+id+"/?user_account_id_type=platform", key)
			require.Equal(t, 200, r.Status, "%v: %.300s", now, r.Body)
			require.True(t, json.Valid([]byte(r.Body)), "%v: the detail is JSON", now)
			assert.NotEmpty(t, r.JSON("historical_market_value.all_time").Array(), "%v: a funded user's history", now)
		}
	}
}
