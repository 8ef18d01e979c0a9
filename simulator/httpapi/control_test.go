package httpapi_test

import (
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/shopspring/decimal"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"github.com/tidwall/gjson"

	"github.com/partnersim/partnersim/internal/sandboxtest"
	"github.com/partnersim/partnersim/simulator"
)

// hookRecorder is a webhook target that records every request.
type hookRecorder struct{ *sandboxtest.Callback }

// newHook starts a hookRecorder answering 200.
func newHook(tb testing.TB) *hookRecorder { return newHookAnswering(tb, http.StatusOK) }

// newHookAnswering starts a hookRecorder answering status.
func newHookAnswering(tb testing.TB, status int) *hookRecorder {
	return &hookRecorder{sandboxtest.NewCallback(tb, sandboxtest.Answering(status))}
}

func (h *hookRecorder) events() []gjson.Result {
	var out []gjson.Result
	for _, r := range h.Received() {
		out = append(out, gjson.ParseBytes(r.Body))
	}
	return out
}

// waitEvents polls until the hook has n events, then checks no more arrive for a moment.
func (h *hookRecorder) waitEvents(tb testing.TB, n int) []gjson.Result {
	tb.Helper()
	sandboxtest.Eventually(tb, func() bool { return len(h.events()) >= n }, "%d events delivered", n)
	time.Sleep(100 * time.Millisecond) // a quiet period: nothing extra is delivered
	evs := h.events()
	require.Len(tb, evs, n, "events delivered")
	return evs
}

// subscribedTenant makes an isolated institution subscribed to both event types.
func (a *api) subscribedTenant(tb testing.TB) (inst, key string, hook *hookRecorder) {
	inst, key = a.tenant(tb, "symitar", "q2")
	hook = newHook(tb)
	for _, typ := range []string{"kyc", "transaction"} {
		r := a.Call(tb, "POST", "/v1/webhooks/subscriptions", `{"event_type":"`+typ+`","url":"`+hook.URL+`"}`, "x-api-key: "+key)
		require.Equal(tb, 201, r.Status, r.Body)
	}
	return inst, key, hook
}

func (a *api) user(tb testing.TB, inst, body string) string {
	return a.MustControl(tb, "POST", "/_sandbox/institutions/"+inst+"/users", body).JSON("platform_id").String()
}

// TestKYCTransitionsOverHTTP walks the whole transition table through the control plane and
// checks the answers and the kyc events: one per delivered state, none for pending or refusals.
func TestKYCTransitionsOverHTTP(t *testing.T) {
	a := MustServe(t)
	inst, key, hook := a.subscribedTenant(t)
	// The table itself is the domain's, checked against decisions D9 in simulator_test.go: here
	// every move answers as the domain's rule says, its refusal's message included.
	want := 0
	for i, from := range simulator.KYCStatuses {
		for j, to := range simulator.KYCStatuses {
			pid := a.user(t, inst, fmt.Sprintf(`{"user_account_id":"kyc-%d-%d","accounts":[{"product":"crypto","kyc_status":"%s"}]}`, i, j, from))
			r := a.Control(t, "POST", "/_sandbox/users/"+pid+"/kyc", `{"product":"crypto","status":"`+string(to)+`"}`)
			if err := simulator.CheckKYCMove(from, to); err != nil {
				assert.Equal(t, 409, r.Status, "%s -> %s", from, to)
				assert.Equal(t, err.(*simulator.Error).Message, r.JSON("detail").String())
				continue
			}
			require.Equal(t, 200, r.Status, "%s -> %s: %s", from, to, r.Body)
			assert.Equal(t, string(to), r.JSON("kyc_status").String())
			if to == simulator.KYCPending {
				assert.False(t, r.JSON("event_id").Exists(), "no event into pending")
			} else {
				want++
				assert.True(t, r.JSON("event_id").Exists())
			}
			detail := a.Get(t, "/v1/users/"+pid+"/?user_account_id_type=platform", key)
			assert.Equal(t, string(to), detail.JSON("accounts.0.kyc_status").String(), "read after write")
			if to == simulator.KYCApproved {
				assert.True(t, detail.JSON("accounts.0.kyc_approved_at").Exists())
			}
		}
	}
	evs := hook.waitEvents(t, want)
	for _, e := range evs {
		assert.Equal(t, "kyc", e.Get("event_type").String())
		assert.NotEqual(t, "pending", e.Get("data.kyc_status").String())
		assert.False(t, e.Get("is_test").Bool())
		assert.True(t, strings.HasPrefix(e.Get("links.self").String(), "/v1/users/"))
	}
	self := evs[0].Get("links.self").String()
	assert.Equal(t, 200, a.Get(t, self, key).Status, "links.self resolves")
}

func TestFillsMoveValuesAndEmitOneEvent(t *testing.T) {
	a := MustServe(t)
	inst, key, hook := a.subscribedTenant(t)
	a.MustControl(t, "PUT", "/_sandbox/institutions/"+inst+"/prices", `{"AAPL":"200.00","VTI":"250.00","BND":"72.40"}`)
	pid := a.user(t, inst, `{"user_account_id":"trader","accounts":[{"product":"securities","kyc_status":"approved","cash":"1000.00"},{"product":"robo","kyc_status":"approved","cash":"0.00","portfolio":"balanced"}]}`)
	value := func(product string) decimal.Decimal {
		r := a.Get(t, "/v1/users/"+pid+"/?user_account_id_type=platform", key)
		for _, acc := range r.JSON("accounts").Array() {
			if acc.Get("product").String() == product {
				return decimal.RequireFromString(acc.Get("current_market_value").String())
			}
		}
		t.Fatalf("no %s account", product)
		return decimal.Zero
	}
	assert.Equal(t, "1000", value("securities").String())

	order := a.MustControl(t, "POST", "/_sandbox/orders", `{"platform_id":"`+pid+`","product":"securities","side":"buy","symbol":"AAPL","quantity":"2"}`)
	txn := order.JSON("transaction_id").String()
	pending := a.Get(t, "/v1/orders/?user_account_id=trader&status=pending", key).JSON("items.0")
	assert.Equal(t, "2", pending.Get("quantity").String())
	assert.Equal(t, "0.00", pending.Get("notional").String(), "a pending share order shows notional 0.00")
	fill := a.MustControl(t, "POST", "/_sandbox/transactions/"+txn+"/fill", `{"price":"190.12"}`)
	assert.Equal(t, "completed", fill.JSON("status").String())
	assert.Equal(t, "380.24", fill.JSON("orders.0.notional").String())
	// cash 1000 - 380.24 = 619.76; 2 AAPL now priced 200.00 = 400.00; total 1019.76
	assert.Equal(t, "1019.76", value("securities").StringFixed(2))
	a.MustControl(t, "PUT", "/_sandbox/institutions/"+inst+"/prices", `{"AAPL":"210.00"}`)
	assert.Equal(t, "1039.76", value("securities").StringFixed(2), "price moves change the value exactly")

	// A robo deposit: several legs, one event for the whole transaction.
	robo := a.MustControl(t, "POST", "/_sandbox/transactions", `{"platform_id":"`+pid+`","product":"robo","type":"deposit","amount":"1000.00"}`)
	legs := robo.JSON("orders").Array()
	require.Greater(t, len(legs), 1)
	a.MustControl(t, "POST", "/_sandbox/transactions/"+robo.JSON("transaction_id").String()+"/fill", "")
	assert.True(t, value("robo").GreaterThan(decimal.NewFromInt(990)), "deposit invested")

	// Cancel and fail emit nothing.
	for _, end := range []string{"cancel", "fail"} {
		o := a.MustControl(t, "POST", "/_sandbox/orders", `{"platform_id":"`+pid+`","product":"securities","side":"buy","symbol":"AAPL","notional":"10.00"}`)
		r := a.MustControl(t, "POST", "/_sandbox/transactions/"+o.JSON("transaction_id").String()+"/"+end, "")
		assert.Equal(t, map[string]string{"cancel": "canceled", "fail": "failed"}[end], r.JSON("status").String())
		assert.False(t, r.JSON("event_id").Exists())
		assert.Equal(t, 409, a.Control(t, "POST", "/_sandbox/transactions/"+o.JSON("transaction_id").String()+"/fill", "").Status, "an ended transaction cannot fill")
	}

	evs := hook.waitEvents(t, 2)
	ids := map[string]bool{}
	for _, e := range evs {
		assert.Equal(t, "transaction", e.Get("event_type").String())
		assert.Equal(t, "completed", e.Get("data.status").String())
		ids[e.Get("data.transaction_id").String()] = true
		assert.False(t, e.Get("data.amount").Exists(), "no amounts in the payload")
		r := a.Get(t, e.Get("links.self").String(), key)
		assert.Equal(t, 200, r.Status, "links.self resolves")
		assert.Equal(t, "completed", r.JSON("status").String())
	}
	assert.True(t, ids[txn] && ids[robo.JSON("transaction_id").String()], "one event per transaction, robo legs included")
}

func TestTenantsAreIsolated(t *testing.T) {
	a := MustServe(t)
	instA, keyA := a.tenant(t, "", "")
	instB, keyB := a.tenant(t, "", "")
	a.user(t, instA, `{"user_account_id":"same-id","accounts":[]}`)
	pidB := a.user(t, instB, `{"user_account_id":"same-id","accounts":[]}`)
	r := a.Control(t, "POST", "/_sandbox/institutions/"+instA+"/users", `{"user_account_id":"same-id","accounts":[]}`)
	assert.Equal(t, 409, r.Status, "duplicate user_account_id within an institution")
	assert.Equal(t, 1, int(a.Get(t, "/v1/users/", keyA).JSON("total_records").Int()))
	assert.Equal(t, 404, a.Get(t, "/v1/users/"+pidB+"/?user_account_id_type=platform", keyA).Status)
	assert.Equal(t, 200, a.Get(t, "/v1/users/"+pidB+"/?user_account_id_type=platform", keyB).Status)
	a.MustControl(t, "PUT", "/_sandbox/institutions/"+instA+"/prices", `{"AAPL":"1.00"}`)
	// B's prices are still the fixtures' defaults.
	pid := a.user(t, instB, `{"user_account_id":"holder","accounts":[{"product":"securities","kyc_status":"approved","holdings":[{"symbol":"AAPL","quantity":"1"}]}]}`)
	v := a.Get(t, "/v1/users/"+pid+"/?user_account_id_type=platform", keyB).JSON("total_current_market_value").String()
	assert.NotEqual(t, "1.00", v)
}

func TestControlPlaneValidationAndErrors(t *testing.T) {
	a := MustServe(t)
	inst, _ := a.tenant(t, "", "")
	r := a.Control(t, "POST", "/_sandbox/institutions", `{"vendors":{"core":5}}`)
	assert.Equal(t, 422, r.Status)
	assert.Equal(t, `{"detail":[{"type":"missing","loc":["body","name"],"msg":"Field required","input":{"vendors":{"core":5}}},{"type":"string_type","loc":["body","vendors","core"],"msg":"Input should be a valid string","input":5},{"type":"missing","loc":["body","vendors","dbp"],"msg":"Field required","input":{"core":5}}]}`, r.Body)
	r = a.Control(t, "POST", "/_sandbox/institutions/"+inst+"/users", `{"user_account_id":"u","accounts":[{"product":"gold"}]}`)
	assert.Equal(t, `{"detail":[{"type":"enum","loc":["body","accounts",0,"product"],"msg":"Input should be 'securities', 'robo', 'crypto' or 'roth_ira'","input":"gold","ctx":{"expected":"'securities', 'robo', 'crypto' or 'roth_ira'"}}]}`, r.Body)
	r = a.Control(t, "POST", "/_sandbox/orders", `{"platform_id":"usr_x","product":"securities","side":"buy","symbol":"AAPL"}`)
	assert.Equal(t, 422, r.Status, "neither notional nor quantity")
	assert.Equal(t, "value_error", r.JSON("detail.0.type").String())
	r = a.Control(t, "POST", "/_sandbox/users/usr_missing/kyc", `{"product":"crypto","status":"approved"}`)
	assert.Equal(t, 404, r.Status)
	pid := a.user(t, inst, `{"user_account_id":"p","accounts":[{"product":"securities","kyc_status":"pending","cash":"5.00"}]}`)
	r = a.Control(t, "POST", "/_sandbox/orders", `{"platform_id":"`+pid+`","product":"securities","side":"buy","symbol":"AAPL","notional":"1.00"}`)
	assert.Equal(t, 409, r.Status, "only an approved account trades")
	r = a.Control(t, "POST", "/_sandbox/clock/advance", `{"seconds":-1}`)
	assert.Equal(t, 422, r.Status)
}

func TestScenarioOnVirtualClock(t *testing.T) {
	a := MustServe(t)
	inst, key, hook := a.subscribedTenant(t)
	r := a.MustControl(t, "POST", "/_sandbox/scenarios/onboarding-approved/run", `{"institution_id":"`+inst+`"}`)
	assert.Equal(t, "running", r.JSON("status").String(), "later steps wait on the virtual clock")
	pid := r.JSON("bound.u").String()
	require.NotEmpty(t, pid)
	a.MustControl(t, "POST", "/_sandbox/clock/advance", `{"seconds":600}`)
	evs := hook.waitEvents(t, 2)
	assert.Equal(t, "document_requested", evs[0].Get("data.kyc_status").String())
	assert.Equal(t, "approved", evs[1].Get("data.kyc_status").String())
	run := a.MustControl(t, "GET", "/_sandbox/scenarios/runs/"+r.JSON("run_id").String(), "")
	assert.Equal(t, "completed", run.JSON("status").String())
	d := a.Get(t, "/v1/users/"+pid+"/?user_account_id_type=platform", key)
	assert.Equal(t, "approved", d.JSON("accounts.0.kyc_status").String())
	r = a.Control(t, "POST", "/_sandbox/scenarios/nope/run", "")
	assert.Equal(t, 404, r.Status)
	assert.Contains(t, r.JSON("detail").String(), "onboarding-approved", "names the known scenarios")
	list := a.MustControl(t, "GET", "/_sandbox/scenarios", "")
	names := []string{}
	for _, s := range list.JSON("scenarios").Array() {
		names = append(names, s.Get("name").String())
	}
	for _, want := range []string{"onboarding-approved", "onboarding-rejected", "robo-deposit", "account-takeover"} {
		assert.Contains(t, names, want)
	}
}

func TestEveryDefaultScenarioCompletes(t *testing.T) {
	a := MustServe(t)
	inst, _, _ := a.subscribedTenant(t)
	for _, s := range a.MustControl(t, "GET", "/_sandbox/scenarios", "").JSON("scenarios").Array() {
		r := a.MustControl(t, "POST", "/_sandbox/scenarios/"+s.Get("name").String()+"/run", `{"institution_id":"`+inst+`"}`)
		a.MustControl(t, "POST", "/_sandbox/clock/advance", `{"seconds":86400}`)
		id := r.JSON("run_id").String()
		var run sandboxtest.Response
		sandboxtest.Eventually(t, func() bool {
			run = a.MustControl(t, "GET", "/_sandbox/scenarios/runs/"+id, "")
			return run.JSON("status").String() != "running"
		}, "%s never ended", s.Get("name"))
		assert.Equal(t, "completed", run.JSON("status").String(), "%s: %s", s.Get("name"), run.Body)
	}
}

func TestRetriesDeliveriesAndRedeliver(t *testing.T) {
	a := MustServe(t)
	inst, key := a.tenant(t, "", "")
	hook := sandboxtest.NewCallback(t, func(n int) int { // the first attempt fails, the retry succeeds
		if n == 0 {
			return 503
		}
		return 200
	})
	require.Equal(t, 201, a.Call(t, "POST", "/v1/webhooks/subscriptions", `{"event_type":"kyc","url":"`+hook.URL+`"}`, "x-api-key: "+key).Status)
	pid := a.user(t, inst, `{"user_account_id":"r","accounts":[{"product":"crypto","kyc_status":"pending"}]}`)
	ev := a.MustControl(t, "POST", "/_sandbox/users/"+pid+"/kyc", `{"product":"crypto","status":"approved"}`).JSON("event_id").String()
	deliveries := func() gjson.Result {
		return a.MustControl(t, "GET", "/_sandbox/deliveries?event_id="+ev, "").JSON("deliveries")
	}
	sandboxtest.Eventually(t, func() bool { return len(deliveries().Get("0.attempts").Array()) >= 1 }, "the first attempt")
	d := deliveries().Get("0")
	assert.Equal(t, "pending", d.Get("status").String())
	assert.Equal(t, 503, int(d.Get("attempts.0.status_code").Int()))
	assert.True(t, d.Get("next_attempt_at").Exists())
	a.MustControl(t, "POST", "/_sandbox/clock/advance", `{"seconds":5}`)
	sandboxtest.Eventually(t, func() bool { return deliveries().Get("0.status").String() == "delivered" }, "delivered once the clock moved")
	re := a.MustControl(t, "POST", "/_sandbox/events/"+ev+"/redeliver", "")
	assert.Equal(t, ev, re.JSON("deliveries.0.event_id").String())
	assert.NotEqual(t, d.Get("delivery_id").String(), re.JSON("deliveries.0.delivery_id").String(), "a new delivery")
	assert.Equal(t, 404, a.Control(t, "POST", "/_sandbox/events/evt_nope/redeliver", "").Status)
}

func TestJournalFaultsRateLimitSnapshotsReset(t *testing.T) {
	a := MustServe(t)
	a.Get(t, "/v1/users/?per_page=1", keyAll)
	j := a.MustControl(t, "GET", "/_sandbox/requests?limit=5", "")
	assert.Equal(t, "/v1/users/", j.JSON("requests.0.path").String())
	assert.Equal(t, 200, int(j.JSON("requests.0.status").Int()))
	assert.Equal(t, "sbx_harbo", j.JSON("requests.0.key_prefix").String(), "only a key prefix is journaled")

	a.MustControl(t, "PUT", "/_sandbox/faults", `{"rules":[{"method":"GET","path":"/v1/orders/","status":503,"probability":1}]}`)
	r := a.Get(t, "/v1/orders/", keyAll)
	assert.Equal(t, 503, r.Status)
	assert.Equal(t, 200, a.Get(t, "/v1/users/", keyAll).Status, "other routes untouched")
	a.MustControl(t, "PUT", "/_sandbox/faults", `{"rules":[]}`)
	assert.Equal(t, 200, a.Get(t, "/v1/orders/", keyAll).Status)

	a.MustControl(t, "PUT", "/_sandbox/rate-limit", `{"requests_per_second":1,"burst":2}`)
	codes := []int{}
	for range 4 {
		codes = append(codes, a.Get(t, "/v1/users/", keyAll).Status)
	}
	assert.Contains(t, codes, 429)
	r = a.Get(t, "/v1/users/", keyAll)
	if r.Status == 429 {
		assert.NotEmpty(t, r.Header.Get("Retry-After"))
		assert.Contains(t, r.JSON("detail").String(), "Rate limit")
	}
	assert.Equal(t, 200, a.Get(t, "/v1/users/", keyRead).Status, "the limit is per key")
	a.MustControl(t, "PUT", "/_sandbox/rate-limit", `{"requests_per_second":0}`)

	a.MustControl(t, "POST", "/_sandbox/snapshots/before", "")
	inst, _ := a.tenant(t, "", "")
	assert.Len(t, a.MustControl(t, "GET", "/_sandbox/institutions", "").JSON("institutions").Array(), 3)
	a.MustControl(t, "POST", "/_sandbox/snapshots/before/restore", "")
	assert.Len(t, a.MustControl(t, "GET", "/_sandbox/institutions", "").JSON("institutions").Array(), 2)
	assert.Equal(t, 404, a.Control(t, "POST", "/_sandbox/snapshots/never/restore", "").Status)
	assert.Equal(t, 404, a.Control(t, "POST", "/_sandbox/snapshots/..%2Fescape", "").Status, "an encoded slash is a path separator: no route")
	assert.Equal(t, 400, a.Control(t, "POST", "/_sandbox/snapshots/bad.name", "").Status)
	_ = inst
	a.tenant(t, "", "")
	assert.Equal(t, 204, a.Control(t, "POST", "/_sandbox/reset", "").Status)
	assert.Len(t, a.MustControl(t, "GET", "/_sandbox/institutions", "").JSON("institutions").Array(), 2, "reset to the fixtures")
}

// A symbol without a price: the domain names the symbol, the control plane says how to set its
// price (for a user's holdings and for an order); a fill says only which symbol.
func TestNoPriceNamesTheSymbolAndTheFix(t *testing.T) {
	a := MustServe(t)
	inst, _ := a.tenant(t, "", "")
	want := `{"detail":"no price for symbol ZZZZ: set it with PUT /_sandbox/institutions/` + inst + `/prices"}`
	r := a.Control(t, "POST", "/_sandbox/institutions/"+inst+"/users",
		`{"user_account_id":"np","accounts":[{"product":"securities","kyc_status":"approved","cash":"100.00","holdings":[{"symbol":"ZZZZ","quantity":"1"}]}]}`)
	assert.Equal(t, 400, r.Status)
	assert.Equal(t, want, r.Body)
	pid := a.user(t, inst, `{"user_account_id":"np2","accounts":[{"product":"securities","kyc_status":"approved","cash":"100.00"}]}`)
	r = a.Control(t, "POST", "/_sandbox/orders", `{"platform_id":"`+pid+`","product":"securities","side":"buy","symbol":"ZZZZ","notional":"10.00"}`)
	assert.Equal(t, 400, r.Status)
	assert.Equal(t, want, r.Body)
}

// An institution's own clock (decisions D9): advancing it makes its retries due, and leaves
// another institution's schedule as it was; the process-wide clock does not move.
func TestAdvancingOneInstitutionsClockLeavesTheOthers(t *testing.T) {
	a := MustServe(t)
	failing := newHookAnswering(t, 503)
	type tenant struct{ inst, event string }
	pending := func(tn tenant) gjson.Result {
		return a.MustControl(t, "GET", "/_sandbox/deliveries?event_id="+tn.event, "").JSON("deliveries.0")
	}
	var tenants []tenant
	for range 2 {
		inst, key := a.tenant(t, "", "")
		require.Equal(t, 201, a.Call(t, "POST", "/v1/webhooks/subscriptions", `{"event_type":"kyc","url":"`+failing.URL+`"}`, "x-api-key: "+key).Status)
		pid := a.user(t, inst, `{"user_account_id":"c","accounts":[{"product":"crypto","kyc_status":"pending"}]}`)
		ev := a.MustControl(t, "POST", "/_sandbox/users/"+pid+"/kyc", `{"product":"crypto","status":"approved"}`).JSON("event_id").String()
		tenants = append(tenants, tenant{inst, ev})
	}
	for _, tn := range tenants {
		sandboxtest.Eventually(t, func() bool { return len(pending(tn).Get("attempts").Array()) == 1 }, "the first attempt of %s", tn.inst)
	}
	mine, other := tenants[0], tenants[1]
	otherBefore := pending(other)
	virtualBefore := a.MustControl(t, "GET", "/_sandbox/clock", "").JSON("virtual_now").String()

	r := a.MustControl(t, "POST", "/_sandbox/clock/advance", `{"seconds":5,"institution_id":"`+mine.inst+`"}`)
	assert.True(t, r.JSON("now").Time().After(time.Now().Add(4*time.Second)), "now is the institution's virtual time: %s", r.Body)
	sandboxtest.Eventually(t, func() bool { return len(pending(mine).Get("attempts").Array()) == 2 }, "the advanced institution's retry")
	time.Sleep(200 * time.Millisecond) // a moment in which the other's retry must not happen
	assert.Equal(t, otherBefore.Raw, pending(other).Raw, "the other institution's delivery and schedule are unchanged")
	virtualAfter := a.MustControl(t, "GET", "/_sandbox/clock", "").JSON("virtual_now").Time()
	assert.WithinDuration(t, gjson.Parse(`"`+virtualBefore+`"`).Time(), virtualAfter, 3*time.Second, "the process-wide clock did not move")
	// The next retry counts on the institution's clock: 5 minutes more of it, not of the process's.
	next := pending(mine).Get("next_attempt_at").Time()
	last := pending(mine).Get("attempts.1.at").Time()
	assert.WithinDuration(t, last.Add(5*time.Second+5*time.Minute), next, 2*time.Second, "the retry is scheduled on the institution's clock")

	// A new event of the institution that is ahead is delivered at once too: its delivery is
	// due on the institution's clock, later than the process-wide one.
	pid := a.user(t, mine.inst, `{"user_account_id":"c2","accounts":[{"product":"crypto","kyc_status":"pending"}]}`)
	ev := a.MustControl(t, "POST", "/_sandbox/users/"+pid+"/kyc", `{"product":"crypto","status":"approved"}`).JSON("event_id").String()
	sandboxtest.Eventually(t, func() bool { return len(pending(tenant{mine.inst, ev}).Get("attempts").Array()) == 1 }, "the first attempt of a new event")

	assert.Equal(t, 404, a.Control(t, "POST", "/_sandbox/clock/advance", `{"seconds":5,"institution_id":"ins_nope"}`).Status)
}

// DELETE /_sandbox/institutions/{id} removes the tenant: its keys stop working, it is no longer
// listed, its deliveries are gone, and deleting it again is 404.
func TestDeleteInstitutionOverHTTP(t *testing.T) {
	a := MustServe(t)
	inst, key, hook := a.subscribedTenant(t)
	pid := a.user(t, inst, `{"user_account_id":"d","accounts":[{"product":"crypto","kyc_status":"pending"}]}`)
	ev := a.MustControl(t, "POST", "/_sandbox/users/"+pid+"/kyc", `{"product":"crypto","status":"approved"}`).JSON("event_id").String()
	hook.waitEvents(t, 1)
	before := len(a.MustControl(t, "GET", "/_sandbox/institutions", "").JSON("institutions").Array())

	assert.Equal(t, 204, a.Control(t, "DELETE", "/_sandbox/institutions/"+inst, "").Status)
	assert.Equal(t, 401, a.Get(t, "/v1/users/", key).Status, "the tenant's keys are gone")
	assert.Len(t, a.MustControl(t, "GET", "/_sandbox/institutions", "").JSON("institutions").Array(), before-1)
	assert.Equal(t, 404, a.Control(t, "GET", "/_sandbox/users/"+pid, "").Status)
	assert.Empty(t, a.MustControl(t, "GET", "/_sandbox/deliveries?event_id="+ev, "").JSON("deliveries").Array())
	assert.Equal(t, 404, a.Control(t, "DELETE", "/_sandbox/institutions/"+inst, "").Status)
	assert.Equal(t, 401, a.Call(t, "DELETE", "/_sandbox/institutions/"+inst, "").Status, "the token is required")
}

// Redelivering one delivery sends its event again to that delivery's subscription only; resending
// the event (POST /_sandbox/events/{id}/redeliver) goes to every enabled subscription of its type.
func TestRedeliverOneDeliveryGoesToItsSubscriptionOnly(t *testing.T) {
	a := MustServe(t)
	inst, key := a.tenant(t, "", "")
	fail, ack := newHookAnswering(t, 503), newHook(t)
	failing := func() int { return len(fail.Received()) }
	acking := func() int { return len(ack.Received()) }
	for _, u := range []string{fail.URL, ack.URL} {
		require.Equal(t, 201, a.Call(t, "POST", "/v1/webhooks/subscriptions", `{"event_type":"kyc","url":"`+u+`"}`, "x-api-key: "+key).Status)
	}
	pid := a.user(t, inst, `{"user_account_id":"one","accounts":[{"product":"crypto","kyc_status":"pending"}]}`)
	ev := a.MustControl(t, "POST", "/_sandbox/users/"+pid+"/kyc", `{"product":"crypto","status":"approved"}`).JSON("event_id").String()
	sandboxtest.Eventually(t, func() bool { return failing() == 1 && acking() == 1 }, "both subscriptions got the event once")

	var failed gjson.Result
	sandboxtest.Eventually(t, func() bool {
		for _, d := range a.MustControl(t, "GET", "/_sandbox/deliveries?event_id="+ev, "").JSON("deliveries").Array() {
			if d.Get("url").String() == fail.URL && d.Get("attempts.#").Int() == 1 {
				failed = d
			}
		}
		return failed.Exists()
	}, "the failing subscription's delivery records its attempt")
	re := a.MustControl(t, "POST", "/_sandbox/deliveries/"+failed.Get("delivery_id").String()+"/redeliver", "")
	assert.Equal(t, ev, re.JSON("event_id").String(), "the same event")
	assert.Equal(t, failed.Get("subscription_id").String(), re.JSON("subscription_id").String(), "to the same subscription")
	assert.NotEqual(t, failed.Get("delivery_id").String(), re.JSON("delivery_id").String(), "a new delivery")
	sandboxtest.Eventually(t, func() bool { return failing() == 2 }, "the failing subscription got the event again")
	assert.Equal(t, 1, acking(), "the subscription that acknowledged got no duplicate")
	assert.Len(t, a.MustControl(t, "GET", "/_sandbox/deliveries?event_id="+ev, "").JSON("deliveries").Array(), 3)

	assert.Equal(t, 404, a.Control(t, "POST", "/_sandbox/deliveries/dlv_nope/redeliver", "").Status)
	// Once its subscription is deleted, a delivery cannot be sent again: 404 says why.
	require.Equal(t, 204, a.Call(t, "DELETE", "/v1/webhooks/subscriptions/"+failed.Get("subscription_id").String(), "", "x-api-key: "+key).Status)
	gone := a.Control(t, "POST", "/_sandbox/deliveries/"+failed.Get("delivery_id").String()+"/redeliver", "")
	assert.Equal(t, 404, gone.Status, gone.Body)
	assert.Contains(t, gone.Body, "no longer enabled")
}

// A contract proxy reports to the control plane; the sandbox keeps the latest report, bounded,
// with keys and secrets masked, and answers it to the token only.
func TestProxyReportIsKeptBoundedAndMasked(t *testing.T) {
	a := MustServe(t)
	assert.Equal(t, http.StatusNotFound, a.Control(t, "GET", "/_sandbox/proxy-report", "").Status, "no report yet")

	var findings, recent []string
	for i := range 12 {
		findings = append(findings, fmt.Sprintf(`{"exchange":"GET /v1/users/ → 200","detail":"finding %d with %s"}`, i, keyAll))
	}
	for i := range 150 {
		recent = append(recent, fmt.Sprintf(`{"at":"2026-11-28T18:00:%02dZ","exchange":"GET /v1/users/?n=%d → 200","findings":[]}`, i%60, i))
	}
	long := strings.Repeat("é", 2000)
	body := `{"proxy":"http://127.0.0.1:8081","final":false,"unchecked_exchanges":3,"exchanges_unchecked_against_the_document":5,
		"rules":[{"id":"openapi","kind":"violation","says":"` + long + `","status":"failed","observed":7,"failed":2,
		"findings":[` + strings.Join(findings, ",") + `]},
		{"id":"lint.app-422","kind":"lint","says":"s","status":"not observed","observed":0,"failed":0,"findings":[{"exchange":"POST /hooks → 200","detail":"signed with whsec_abcdefghijklmnop"}]}],
		"recent":[` + strings.Join(recent, ",") + `]}`
	a.MustControl(t, "PUT", "/_sandbox/proxy-report", body)

	got := a.MustControl(t, "GET", "/_sandbox/proxy-report", "")
	assert.NotContains(t, got.Body, keyAll, "an API key kept in clear")
	assert.NotContains(t, got.Body, "whsec_abcdefghijklmnop", "a signing secret kept in clear")
	assert.Contains(t, got.Body, `GET /v1/users/ → 200: finding 0 with sbx_…`)
	assert.Equal(t, int64(8), got.JSON("rules.0.findings.#").Int(), "findings kept of a rule")
	assert.Equal(t, int64(100), got.JSON("recent.#").Int(), "recent exchanges kept")
	assert.LessOrEqual(t, len(got.JSON("rules.0.says").String()), 1024+len("…"), "a text cut to its bound")
	assert.True(t, strings.HasSuffix(got.JSON("rules.0.says").String(), "é…"), "cut on a character's edge")
	assert.Equal(t, int64(5), got.JSON("exchanges_unchecked_against_the_document").Int())
	assert.NotEmpty(t, got.JSON("reported_at").String())

	// The next report replaces it; a bad one changes nothing; the token is required.
	a.MustControl(t, "PUT", "/_sandbox/proxy-report", `{"proxy":"p2","final":true,"unchecked_exchanges":0,"exchanges_unchecked_against_the_document":0,"rules":[],"started":"2026-11-28T18:00:00Z"}`)
	bad := a.Control(t, "PUT", "/_sandbox/proxy-report", `{"proxy":"p3","final":true,"unchecked_exchanges":-1,"exchanges_unchecked_against_the_document":0,"rules":[{"id":"x","kind":"other"}]}`)
	require.Equal(t, http.StatusUnprocessableEntity, bad.Status, bad.Body)
	got = a.MustControl(t, "GET", "/_sandbox/proxy-report", "")
	assert.Equal(t, "p2", got.JSON("proxy").String())
	assert.True(t, got.JSON("final").Bool())
	assert.Equal(t, http.StatusUnauthorized, a.Call(t, "GET", "/_sandbox/proxy-report", "").Status, "without the token")
	assert.Equal(t, http.StatusUnauthorized, a.Call(t, "PUT", "/_sandbox/proxy-report", `{}`, "Content-Type: application/json").Status, "without the token")
}

// deliveryIDs lists the delivery_id of each delivery of a GET /_sandbox/deliveries answer.
func deliveryIDs(r gjson.Result) []string {
	var out []string
	for _, d := range r.Get("deliveries").Array() {
		out = append(out, d.Get("delivery_id").String())
	}
	return out
}

// The delivery log filters by status, event type, institution, user and time, newest first, a
// bounded page at a time with a cursor; a filter it does not know is refused, not ignored.
func TestDeliveryLogFiltersAndPages(t *testing.T) {
	a := MustServe(t)
	instA, keyA, _ := a.subscribedTenant(t) // kyc and transaction to a hook answering 200
	instB, _, _ := a.subscribedTenant(t)
	failing := newHookAnswering(t, http.StatusServiceUnavailable)
	r := a.Call(t, "POST", "/v1/webhooks/subscriptions", `{"event_type":"kyc","url":"`+failing.URL+`/x"}`, "x-api-key: "+keyA)
	require.Equal(t, 201, r.Status, r.Body)
	failingSub := r.JSON("subscription_id").String()

	alice := a.user(t, instA, `{"user_account_id":"alice","accounts":[{"product":"crypto","kyc_status":"pending"},{"product":"securities","kyc_status":"approved","cash":"1000.00"}]}`)
	bob := a.user(t, instB, `{"user_account_id":"bob","accounts":[{"product":"crypto","kyc_status":"pending"}]}`)
	// Alice: one kyc event (two deliveries: one delivered, one to the failing hook) and one
	// transaction event (one delivery); Bob: one kyc event in the other institution.
	kycEvent := a.MustControl(t, "POST", "/_sandbox/users/"+alice+"/kyc", `{"product":"crypto","status":"approved"}`).JSON("event_id").String()
	txn := a.MustControl(t, "POST", "/_sandbox/orders", `{"platform_id":"`+alice+`","product":"securities","side":"buy","symbol":"AAPL","notional":"10.00"}`).JSON("transaction_id").String()
	txnEvent := a.MustControl(t, "POST", "/_sandbox/transactions/"+txn+"/fill", "").JSON("event_id").String()
	a.MustControl(t, "POST", "/_sandbox/users/"+bob+"/kyc", `{"product":"crypto","status":"approved"}`)

	list := func(q string) gjson.Result {
		t.Helper()
		return gjson.Parse(a.MustControl(t, "GET", "/_sandbox/deliveries?"+q, "").Body)
	}
	// Wait until every first attempt was made: three delivered, the failing one pending.
	sandboxtest.Eventually(t, func() bool {
		return list("institution_id="+instA+"&status=delivered").Get("deliveries.#").Int() >= 2 &&
			list("institution_id="+instB+"&status=delivered").Get("deliveries.#").Int() >= 1 &&
			list("subscription_id="+failingSub).Get("deliveries.0.attempts.#").Int() >= 1
	}, "the first attempts: two delivered in A, one in B, the failing hook's tried")
	// Deleting the failing subscription ends its pending delivery as failed.
	require.Equal(t, 204, a.Call(t, "DELETE", "/v1/webhooks/subscriptions/"+failingSub, "", "x-api-key: "+keyA).Status)

	failed := list("status=failed&institution_id=" + instA)
	require.Len(t, failed.Get("deliveries").Array(), 1, failed.Raw)
	assert.Equal(t, failingSub, failed.Get("deliveries.0.subscription_id").String())
	assert.Equal(t, "failed", failed.Get("deliveries.0.status").String())
	for _, st := range []string{"pending", "delivered", "failed"} {
		for _, d := range list("status=" + st).Get("deliveries").Array() {
			assert.Equal(t, st, d.Get("status").String(), "status=%s", st)
		}
	}

	all := list("institution_id=" + instA)
	require.Len(t, all.Get("deliveries").Array(), 3, all.Raw)
	for _, d := range all.Get("deliveries").Array() {
		assert.Equal(t, instA, d.Get("institution_id").String())
		assert.Equal(t, alice, d.Get("platform_id").String())
		assert.Equal(t, gjson.Get(d.Get("body").String(), "event_type").String(), d.Get("event_type").String())
	}
	assert.False(t, all.Get("next_cursor").Exists() && all.Get("next_cursor").Type != gjson.Null, "one page holds all: %s", all.Get("next_cursor"))
	// Newest first.
	times := all.Get("deliveries.#.created_at").Array()
	for i := 1; i < len(times); i++ {
		assert.GreaterOrEqual(t, times[i-1].String(), times[i].String(), "newest first")
	}
	assert.Equal(t, txnEvent, all.Get("deliveries.0.event_id").String(), "the newest delivery is the fill's")

	txns := list("institution_id=" + instA + "&event_type=transaction")
	require.Len(t, txns.Get("deliveries").Array(), 1, txns.Raw)
	assert.Equal(t, txnEvent, txns.Get("deliveries.0.event_id").String())
	assert.Len(t, list("institution_id="+instA+"&event_type=kyc&event_id="+kycEvent).Get("deliveries").Array(), 2)
	assert.Len(t, list("institution_id="+instB).Get("deliveries").Array(), 1)
	assert.Len(t, list("platform_id="+bob).Get("deliveries").Array(), 1)
	assert.Len(t, list("platform_id="+alice+"&status=delivered").Get("deliveries").Array(), 2)

	// Time range, on created_at (inclusive both ends).
	newest := all.Get("deliveries.0.created_at").String()
	oldest := all.Get("deliveries.2.created_at").String() // the start is inclusive
	assert.Len(t, list("institution_id="+instA+"&created_at_start="+url.QueryEscape(newest)).Get("deliveries").Array(),
		countAtOrAfter(times, newest))
	assert.Len(t, list("institution_id="+instA+"&created_at_end="+url.QueryEscape(newest)).Get("deliveries").Array(),
		len(times)-countAtOrAfter(times, newest), "the end is exclusive")
	assert.Len(t, list("institution_id="+instA+"&created_at_start="+url.QueryEscape(oldest)).Get("deliveries").Array(), len(times))
	assert.Empty(t, list("institution_id="+instA+"&created_at_end=2000-01-01T00:00:00Z").Get("deliveries").Array())

	// Pages of one, through the cursor, give the same deliveries in the same order.
	var paged []string
	q := "institution_id=" + instA + "&limit=1"
	for range 10 {
		page := list(q)
		require.LessOrEqual(t, page.Get("deliveries.#").Int(), int64(1))
		paged = append(paged, deliveryIDs(page)...)
		next := page.Get("next_cursor")
		if !next.Exists() || next.Type == gjson.Null {
			break
		}
		q = "institution_id=" + instA + "&limit=1&cursor=" + url.QueryEscape(next.String())
	}
	assert.Equal(t, deliveryIDs(all), paged)

	for _, bad := range []string{"status=lost", "event_type=order", "limit=0", "limit=1001", "cursor=nonsense", "created_at_start=yesterday"} {
		r := a.Control(t, "GET", "/_sandbox/deliveries?"+bad, "")
		assert.Equal(t, 422, r.Status, "%s: %s", bad, r.Body)
	}
}

func countAtOrAfter(ts []gjson.Result, t string) int {
	n := 0
	for _, x := range ts {
		if x.String() >= t {
			n++
		}
	}
	return n
}

// GET /_sandbox/scenarios/runs lists the runs by status: a run with steps waiting on the
// virtual clock is running until the clock reaches them.
func TestScenarioRunsList(t *testing.T) {
	a := MustServe(t)
	run := a.MustControl(t, "POST", "/_sandbox/scenarios/onboarding-approved/run", "").JSON("run_id").String()
	running := gjson.Parse(a.MustControl(t, "GET", "/_sandbox/scenarios/runs?status=running", "").Body)
	assert.Contains(t, running.Get("runs.#.run_id").Value(), run)
	a.MustControl(t, "POST", "/_sandbox/clock/advance", `{"seconds":86400}`)
	sandboxtest.Eventually(t, func() bool {
		return a.MustControl(t, "GET", "/_sandbox/scenarios/runs/"+run, "").JSON("status").String() != "running"
	}, "the run never ended")
	running = gjson.Parse(a.MustControl(t, "GET", "/_sandbox/scenarios/runs?status=running", "").Body)
	assert.NotContains(t, running.Get("runs.#.run_id").Value(), run)
	done := gjson.Parse(a.MustControl(t, "GET", "/_sandbox/scenarios/runs?status=completed&limit=1000", "").Body)
	assert.Contains(t, done.Get("runs.#.run_id").Value(), run)
	assert.Equal(t, 422, a.Control(t, "GET", "/_sandbox/scenarios/runs?status=lost", "").Status)
}

// An issued key keeps its description and its last four characters, which the keys read
// shows (never the plaintext); a description beyond the bound is refused.
func TestIssuedKeyDescriptionAndLastFour(t *testing.T) {
	a := MustServe(t)
	inst, _ := a.tenant(t, "", "")
	r := a.MustControl(t, "POST", "/_sandbox/institutions/"+inst+"/keys", `{"scopes":["read:user"],"description":"nightly CI"}`)
	plain := r.JSON("key").String()
	keys := gjson.Parse(a.MustControl(t, "GET", "/_sandbox/institutions/"+inst+"/keys", "").Body)
	k := keys.Get(`keys.#(key_id=="` + r.JSON("key_id").String() + `")`)
	assert.Equal(t, "nightly CI", k.Get("description").String())
	assert.Equal(t, plain[len(plain)-4:], k.Get("last4").String())
	assert.NotContains(t, keys.Raw, plain)
	long := strings.Repeat("x", 201)
	assert.Equal(t, 422, a.Control(t, "POST", "/_sandbox/institutions/"+inst+"/keys", `{"scopes":["read:user"],"description":"`+long+`"}`).Status)
}
