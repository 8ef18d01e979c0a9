package httpapi_test

import (
	"net/http"
	"net/url"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"github.com/tidwall/gjson"

	"github.com/partnersim/partnersim/internal/sandboxtest"
)

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
