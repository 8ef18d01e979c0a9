package httpapi_test

import (
	"fmt"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"github.com/tidwall/gjson"

	"github.com/partnersim/partnersim/simulator/sandbox"
)

func TestHealthAndRouting(t *testing.T) {
	a := MustServe(t)
	for _, p := range []string{"/health", "/v1/health"} {
		r := a.Call(t, "GET", p, "")
		assert.Equal(t, 200, r.Status)
		assert.Equal(t, `{"status":"ok"}`, r.Body)
		assert.Equal(t, "application/json", r.Header.Get("Content-Type"))
	}
	r := a.Call(t, "GET", "/v1/nope", "")
	assert.Equal(t, 404, r.Status)
	assert.Equal(t, `{"detail":"Not Found"}`, r.Body)

	r = a.Call(t, "GET", "/v1/users?per_page=2", "")
	assert.Equal(t, 307, r.Status, "missing trailing slash redirects before auth")
	assert.Equal(t, a.URL+"/v1/users/?per_page=2", r.Header.Get("Location"))
	r = a.Call(t, "GET", "/v1/users/usr_1", "")
	assert.Equal(t, 307, r.Status)
	assert.Equal(t, a.URL+"/v1/users/usr_1/", r.Header.Get("Location"))
	r = a.Call(t, "GET", "/v1/webhooks/subscriptions/", "")
	assert.Equal(t, 307, r.Status, "an extra trailing slash redirects too")
	assert.Equal(t, a.URL+"/v1/webhooks/subscriptions", r.Header.Get("Location"))

	r = a.Call(t, "DELETE", "/v1/users/", "")
	assert.Equal(t, 405, r.Status)
	assert.Equal(t, `{"detail":"Method Not Allowed"}`, r.Body)
	assert.Equal(t, "GET", r.Header.Get("Allow"))
	r = a.Call(t, "PUT", "/v1/webhooks/subscriptions", "")
	assert.Equal(t, 405, r.Status)
	assert.Equal(t, "GET, POST", r.Header.Get("Allow"), "every method of the path")
	r = a.Call(t, "HEAD", "/health", "")
	assert.Equal(t, 405, r.Status, "FastAPI routes do not add HEAD")

	r = a.Call(t, "GET", "/health", "", "X-Request-Id: my-trace-1")
	assert.Equal(t, "my-trace-1", r.Header.Get("X-Request-Id"))
	r = a.Call(t, "GET", "/v1/nope", "")
	assert.Regexp(t, `^req_[0-9a-f]{32}$`, r.Header.Get("X-Request-Id"), "generated on every response, errors too")
	assert.Empty(t, r.Header.Get("Access-Control-Allow-Origin"), "no CORS")
}

// TestEmptyPathParameter holds Starlette's routing: a path parameter matches one or more
// characters, so an empty segment matches no route (404 before any key is asked for), and the
// trailing-slash redirect strips every trailing slash, not just one. Found by FuzzUserDetail
// once its exchanges were checked against the OpenAPI document.
func TestEmptyPathParameter(t *testing.T) {
	a := MustServe(t)
	for _, c := range []struct{ method, path string }{
		{"GET", "/v1/users//"},
		{"GET", "/v1/users//?user_account_id_type=platform"},
		{"GET", "/v1/transactions//"},
		{"POST", "/v1/webhooks/subscriptions//test"},
		{"GET", "/v1/orders//"},
		{"GET", "/v1/users///"},
	} {
		for _, key := range [][]string{nil, {"x-api-key: " + keyAll}} {
			r := a.Call(t, c.method, c.path, "", key...)
			assert.Equal(t, 404, r.Status, "%s %s (%q)", c.method, c.path, key)
			assert.Equal(t, `{"detail":"Not Found"}`, r.Body, "%s %s", c.method, c.path)
			assert.Empty(t, r.Header.Get("Location"), "%s %s", c.method, c.path)
		}
	}
}

func TestAuthentication(t *testing.T) {
	a := MustServe(t)
	r := a.Call(t, "GET", "/v1/users/", "")
	assert.Equal(t, 401, r.Status)
	assert.Equal(t, `{"detail":"Not authenticated"}`, r.Body)
	assert.Equal(t, "APIKey", r.Header.Get("WWW-Authenticate"))
	r = a.Call(t, "GET", "/v1/users/", "", "x-api-key: ")
	assert.Equal(t, 401, r.Status, "empty key counts as missing")
	assert.Equal(t, `{"detail":"Not authenticated"}`, r.Body)
	r = a.Get(t, "/v1/users/", "sbx_unknown000000000000000000000000000000000")
	assert.Equal(t, 401, r.Status)
	assert.Equal(t, `{"detail":"Invalid API key"}`, r.Body)
	assert.Empty(t, r.Header.Get("WWW-Authenticate"))
	r = a.Get(t, "/v1/users/", "live_"+strings.Repeat("a", 40))
	assert.Equal(t, `{"detail":"Invalid API key: live keys cannot be used in the sandbox"}`, r.Body)

	// 401 comes before validation; 403 before validation too.
	r = a.Call(t, "GET", "/v1/users/?per_page=0", "")
	assert.Equal(t, 401, r.Status)
	r = a.Get(t, "/v1/users/?per_page=0", keyHooks)
	assert.Equal(t, 403, r.Status)

	// A revoked key answers 401 from then on.
	inst, key := a.tenant(t, "", "")
	keys := a.MustControl(t, "POST", "/_sandbox/institutions/"+inst+"/keys", `{"scopes":["read:user"]}`)
	assert.Equal(t, 200, a.Get(t, "/v1/users/", keys.JSON("key").String()).Status)
	a.MustControl(t, "DELETE", "/_sandbox/keys/"+keys.JSON("key_id").String(), "")
	assert.Equal(t, 401, a.Get(t, "/v1/users/", keys.JSON("key").String()).Status)
	assert.Equal(t, 200, a.Get(t, "/v1/users/", key).Status, "other keys unaffected")
}

func TestScopes(t *testing.T) {
	a := MustServe(t)
	cases := []struct {
		method, path, body, scope string
	}{
		{"GET", "/v1/users/usr_hfcu_0001/?user_account_id_type=platform", "", "read:user"},
		{"GET", "/v1/users/", "", "read:user"},
		{"GET", "/v1/orders/", "", "read:orders"},
		{"GET", "/v1/transactions/txn_x/", "", "read:orders"},
		{"POST", "/v1/sessions/revoke/", `{}`, "manage:sessions"},
		{"GET", "/v1/webhooks/subscriptions", "", "manage:webhooks"},
		{"POST", "/v1/webhooks/subscriptions", `{}`, "manage:webhooks"},
		{"DELETE", "/v1/webhooks/subscriptions/sub_x", "", "manage:webhooks"},
		{"POST", "/v1/webhooks/subscriptions/sub_x/test", "", "manage:webhooks"},
	}
	for _, c := range cases {
		for _, key := range []string{keyRead, keyHooks, keySessions} {
			r := a.Call(t, c.method, c.path, c.body, "x-api-key: "+key)
			has := map[string][]string{keyRead: {"read:user", "read:orders"}, keyHooks: {"manage:webhooks"}, keySessions: {"manage:sessions"}}[key]
			allowed := false
			for _, s := range has {
				allowed = allowed || s == c.scope
			}
			if allowed {
				assert.NotEqual(t, 403, r.Status, "%s %s with %s", c.method, c.path, key)
			} else {
				assert.Equal(t, 403, r.Status, "%s %s with %s", c.method, c.path, key)
				assert.Equal(t, `{"detail":"key does not have the required scope: `+c.scope+`"}`, r.Body)
			}
		}
	}
}

func TestUserDetail(t *testing.T) {
	a := MustServe(t)
	r := a.Get(t, "/v1/users/usr_hfcu_0001/?user_account_id_type=platform", keyAll)
	require.Equal(t, 200, r.Status, r.Body)
	keys := []string{}
	gjson.Parse(r.Body).ForEach(func(k, _ gjson.Result) bool { keys = append(keys, k.String()); return true })
	assert.Equal(t, []string{"user_account_id", "total_current_market_value", "accounts", "historical_market_value", "identities", "terms_and_conditions"}, keys)
	assert.Equal(t, "HFCU-139745", r.JSON("user_account_id").String(), "the user's own id, not the one looked up")
	assert.Equal(t, "usr_hfcu_0001", r.JSON("identities.platform_user_identifier").String())
	assert.Regexp(t, `^\d+\.\d\d$`, r.JSON("total_current_market_value").String())
	for _, k := range []string{"all_time", "past_day", "past_week", "past_month", "past_year"} {
		assert.True(t, r.JSON("historical_market_value."+k).IsArray(), k)
	}
	assert.Len(t, r.JSON("historical_market_value.past_day").Array(), 24)
	core := r.JSON("identities.core_ids").Array()
	require.NotEmpty(t, core)
	assert.Equal(t, "100231", core[0].Get("id").String())
	assert.Equal(t, "member_number", core[0].Get("type").String())
	assert.Equal(t, "q2", r.JSON("identities.dbp_ids.0.type").String(), "dbp vendor name")

	byCore := a.Get(t, "/v1/users/100231/?user_account_id_type=core", keyAll)
	assert.Equal(t, 200, byCore.Status)
	assert.Equal(t, "HFCU-139745", byCore.JSON("user_account_id").String())
	byDBP := a.Get(t, "/v1/users/q2-7f3a9c03/?user_account_id_type=dbp", keyAll)
	assert.Equal(t, 200, byDBP.Status)
	assert.Equal(t, "usr_hfcu_0003", byDBP.JSON("identities.platform_user_identifier").String(), "first account with a user record")

	for _, c := range []struct {
		path, key string
		status    int
		body      string
	}{
		{"/v1/users/usr_pcb_0001/?user_account_id_type=core", keyPrairie, 400, `{"detail":"no vendor configured for user_account_id_type: core"}`},
		{"/v1/users/x/?user_account_id_type=dbp", keyPrairie, 400, `{"detail":"no vendor configured for user_account_id_type: dbp"}`},
		{"/v1/users/usr_nobody/?user_account_id_type=platform", keyAll, 404, `{"detail":"no user matches user_account_id"}`},
		{"/v1/users/usr_pcb_0001/?user_account_id_type=platform", keyAll, 404, `{"detail":"no user matches user_account_id"}`},
		{"/v1/users/100299/?user_account_id_type=core", keyAll, 404, `{"detail":"no user matches user_account_id"}`},
		{"/v1/users/x/", keyAll, 422, `{"detail":[{"type":"missing","loc":["query","user_account_id_type"],"msg":"Field required","input":null}]}`},
		{"/v1/users/x/?user_account_id_type=email", keyAll, 422, `{"detail":[{"type":"enum","loc":["query","user_account_id_type"],"msg":"Input should be 'platform', 'core' or 'dbp'","input":"email","ctx":{"expected":"'platform', 'core' or 'dbp'"}}]}`},
		// The type is the query's last, its name and value unquoted as Starlette does.
		{"/v1/users/x/?user_account_id_type=platform&user_account_id_type=core2", keyAll, 422, `{"detail":[{"type":"enum","loc":["query","user_account_id_type"],"msg":"Input should be 'platform', 'core' or 'dbp'","input":"core2","ctx":{"expected":"'platform', 'core' or 'dbp'"}}]}`},
		{"/v1/users/x/?user_account_id_type=&a=1", keyAll, 422, `{"detail":[{"type":"enum","loc":["query","user_account_id_type"],"msg":"Input should be 'platform', 'core' or 'dbp'","input":"","ctx":{"expected":"'platform', 'core' or 'dbp'"}}]}`},
		{"/v1/users/x/?user_account_id_type=pl%C3%A9", keyAll, 422, `{"detail":[{"type":"enum","loc":["query","user_account_id_type"],"msg":"Input should be 'platform', 'core' or 'dbp'","input":"plé","ctx":{"expected":"'platform', 'core' or 'dbp'"}}]}`},
		{"/v1/users/x/?user_account_id_typ=platform", keyAll, 422, `{"detail":[{"type":"missing","loc":["query","user_account_id_type"],"msg":"Field required","input":null}]}`},
	} {
		r := a.Get(t, c.path, c.key)
		assert.Equal(t, c.status, r.Status, c.path)
		assert.Equal(t, c.body, r.Body, c.path)
	}
	plain := a.Get(t, "/v1/users/usr_hfcu_0009/?user_account_id_type=platform", keyAll)
	require.Equal(t, 200, plain.Status, plain.Body)
	for _, q := range []string{"user_account_id_type=email&user%5Faccount_id_type=platf%6Frm", "&&user_account_id_type=core&x=%zz&user_account_id_type=platform&"} {
		r := a.Get(t, "/v1/users/usr_hfcu_0009/?"+q, keyAll)
		assert.Equal(t, 200, r.Status, q)
		assert.Equal(t, plain.Body, r.Body, q)
	}
}

// TestListValidation checks the 422 bodies of the list endpoints against the reference table
// (docs/reference/pydantic-errors.md): exact type, loc, msg, input and ctx, in the spec
// table's parameter order.
func TestListValidation(t *testing.T) {
	a := MustServe(t)
	ge := func(name, in string, n int) string {
		return fmt.Sprintf(`{"type":"greater_than_equal","loc":["query","%s"],"msg":"Input should be greater than or equal to %d","input":"%s","ctx":{"ge":%d}}`, name, n, in, n)
	}
	cases := []struct{ query, items string }{
		{"per_page=0", ge("per_page", "0", 1)},
		{"per_page=101", `{"type":"less_than_equal","loc":["query","per_page"],"msg":"Input should be less than or equal to 100","input":"101","ctx":{"le":100}}`},
		{"per_page=abc", `{"type":"int_parsing","loc":["query","per_page"],"msg":"Input should be a valid integer, unable to parse string as an integer","input":"abc"}`},
		{"per_page=2.5", `{"type":"int_parsing","loc":["query","per_page"],"msg":"Input should be a valid integer, unable to parse string as an integer","input":"2.5"}`},
		{"per_page=", `{"type":"int_parsing","loc":["query","per_page"],"msg":"Input should be a valid integer, unable to parse string as an integer","input":""}`},
		{"last_record_number=-1", ge("last_record_number", "-1", 0)},
		{"sort_order=up", `{"type":"enum","loc":["query","sort_order"],"msg":"Input should be 'asc' or 'desc'","input":"up","ctx":{"expected":"'asc' or 'desc'"}}`},
		{"product=stocks", `{"type":"enum","loc":["query","product"],"msg":"Input should be 'securities', 'robo', 'crypto' or 'roth_ira'","input":"stocks","ctx":{"expected":"'securities', 'robo', 'crypto' or 'roth_ira'"}}`},
		{"created_at_start=not%20a%20date", `{"type":"datetime_from_date_parsing","loc":["query","created_at_start"],"msg":"Input should be a valid datetime or date, invalid character in year","input":"not a date","ctx":{"error":"invalid character in year"}}`},
		{"created_at_end=2024-13-01", `{"type":"datetime_from_date_parsing","loc":["query","created_at_end"],"msg":"Input should be a valid datetime or date, month value is outside expected range of 1-12","input":"2024-13-01","ctx":{"error":"month value is outside expected range of 1-12"}}`},
		{"created_at_start=2024-02-30T00:00:00Z", `{"type":"datetime_from_date_parsing","loc":["query","created_at_start"],"msg":"Input should be a valid datetime or date, day value is outside expected range","input":"2024-02-30T00:00:00Z","ctx":{"error":"day value is outside expected range"}}`},
		{"sort_key=name", `{"type":"enum","loc":["query","sort_key"],"msg":"Input should be 'created_at' or 'user_account_id'","input":"name","ctx":{"expected":"'created_at' or 'user_account_id'"}}`},
		// Several at once, in the spec table's order whatever the query's order.
		{"sort_order=x&per_page=0&crypto_kyc_status=ok", `{"type":"enum","loc":["query","crypto_kyc_status"],"msg":"Input should be 'pending', 'document_requested', 'approved', 'rejected', 'closed' or 'account_takeover'","input":"ok","ctx":{"expected":"'pending', 'document_requested', 'approved', 'rejected', 'closed' or 'account_takeover'"}},` +
			ge("per_page", "0", 1) + `,{"type":"enum","loc":["query","sort_order"],"msg":"Input should be 'asc' or 'desc'","input":"x","ctx":{"expected":"'asc' or 'desc'"}}`},
	}
	for _, c := range cases {
		r := a.Get(t, "/v1/users/?"+c.query, keyAll)
		assert.Equal(t, 422, r.Status, c.query)
		assert.Equal(t, `{"detail":[`+c.items+`]}`, r.Body, c.query)
	}
	for _, q := range []string{"per_page=5.0", "per_page=%205%20", "per_page=+5", "created_at_start=2024-01-01%2010:00", "created_at_start=2026-01-31", "unknown=1", "per_page=0&per_page=5"} {
		r := a.Get(t, "/v1/users/?"+q, keyAll)
		assert.Equal(t, 200, r.Status, "%s: %s", q, r.Body)
	}
	r := a.Get(t, "/v1/orders/?status=filled&side=hold&per_page=1000", keyAll)
	assert.Equal(t, 422, r.Status)
	locs := []string{}
	for _, it := range r.JSON("detail").Array() {
		locs = append(locs, it.Get("loc.1").String())
	}
	assert.Equal(t, []string{"side", "status", "per_page"}, locs, "order list items in the spec table's order")
}

// TestPaginationLaws pages through every list and checks D6: offsets, counts, no repeats or
// gaps, desc the exact reverse of asc.
func TestPaginationLaws(t *testing.T) {
	a := MustServe(t)
	for _, base := range []string{"/v1/users/?", "/v1/users/?sort_key=user_account_id&", "/v1/users/?product=crypto&", "/v1/orders/?", "/v1/orders/?status=completed&side=buy&"} {
		idPath := "user_account_id"
		if strings.HasPrefix(base, "/v1/orders") {
			idPath = "order_id"
		}
		pages := func(order string) []string {
			var ids []string
			last, total := 0, -1
			for {
				r := a.Get(t, fmt.Sprintf("%ssort_order=%s&per_page=7&last_record_number=%d", base, order, last), keyAll)
				require.Equal(t, 200, r.Status, r.Body)
				items := r.JSON("items").Array()
				if total >= 0 {
					assert.Equal(t, total, int(r.JSON("total_records").Int()), "total stable across pages")
				}
				total = int(r.JSON("total_records").Int())
				assert.Equal(t, last+len(items), int(r.JSON("last_record_number").Int()))
				assert.Equal(t, 7, int(r.JSON("per_page").Int()))
				if len(items) == 0 {
					assert.Equal(t, total, len(ids), "pages cover every match exactly once")
					return ids
				}
				for _, it := range items {
					ids = append(ids, it.Get(idPath).String())
				}
				last += len(items)
			}
		}
		asc, desc := pages("asc"), pages("desc")
		require.NotEmpty(t, asc, base)
		seen := map[string]bool{}
		for _, id := range asc {
			assert.False(t, seen[id], "%s repeated %s", base, id)
			seen[id] = true
		}
		for i := range desc {
			assert.Equal(t, asc[len(asc)-1-i], desc[i], "%s desc is the exact reverse of asc", base)
		}
	}
	r := a.Get(t, "/v1/users/", keyAll)
	assert.Equal(t, 25, int(r.JSON("per_page").Int()), "default page size")
	r = a.Get(t, "/v1/users/?created_at_start=2026-01-01&created_at_end=2026-01-01", keyAll)
	assert.Equal(t, `{"items":[],"total_records":0,"last_record_number":0,"per_page":25}`, r.Body, "start >= end is empty")
	r = a.Get(t, "/v1/users/?last_record_number=100000", keyAll)
	assert.Equal(t, 0, len(r.JSON("items").Array()))
	assert.Equal(t, 100000, int(r.JSON("last_record_number").Int()))
}

func TestListFiltersAndTenancy(t *testing.T) {
	a := MustServe(t)
	r := a.Get(t, "/v1/users/?per_page=100", keyAll)
	for _, it := range r.JSON("items").Array() {
		assert.True(t, strings.HasPrefix(it.Get("user_account_id").String(), "HFCU"), "only the key's institution")
	}
	r = a.Get(t, "/v1/users/?crypto_kyc_status=approved&per_page=100", keyAll)
	require.Greater(t, len(r.JSON("items").Array()), 0)
	for _, it := range r.JSON("items").Array() {
		ok := false
		for _, acc := range it.Get("accounts").Array() {
			ok = ok || acc.Get("product").String() == "crypto" && acc.Get("kyc_status").String() == "approved"
		}
		assert.True(t, ok, "every item matches the filter")
	}
	r = a.Get(t, "/v1/users/?user_account_id=HFCU-139745", keyAll)
	assert.Equal(t, 1, int(r.JSON("total_records").Int()))
	r = a.Get(t, "/v1/users/?user_account_id=HFCU-139745", keyPrairie)
	assert.Equal(t, 0, int(r.JSON("total_records").Int()), "another institution's user is absent")
	r = a.Get(t, "/v1/orders/?per_page=100&placed_at_start=2026-06-01T00:00:00%2B02:00", keyAll)
	for _, it := range r.JSON("items").Array() {
		assert.GreaterOrEqual(t, it.Get("placed_at").String(), "2026-05-31T22:00:00Z", "offset honoured")
		assert.True(t, strings.HasPrefix(it.Get("user_account_id").String(), "HFCU"))
	}
	for _, it := range a.Get(t, "/v1/orders/?per_page=100&status=pending", keyAll).JSON("items").Array() {
		assert.False(t, it.Get("completed_at").Exists(), "completed_at absent unless completed")
	}
	for _, it := range a.Get(t, "/v1/orders/?per_page=100", keyAll).JSON("items").Array() {
		assert.Equal(t, it.Get("is_recurring_order").Bool(), it.Get("recurring_order_id").Exists(), "recurring_order_id only when recurring")
	}
}

func TestTransactionsAndTenancy(t *testing.T) {
	a := MustServe(t)
	o := a.Get(t, "/v1/orders/?per_page=1&status=completed", keyAll).JSON("items.0")
	require.True(t, o.Exists())
	// the order list does not show transaction ids; find it through the control plane's view
	_ = o
	r := a.Get(t, "/v1/transactions/txn_IJzsBxjONQDhIPbRP15FESYe/", keyPrairie)
	require.Equal(t, 200, r.Status, r.Body)
	assert.Equal(t, "txn_IJzsBxjONQDhIPbRP15FESYe", r.JSON("transaction_id").String())
	assert.True(t, r.JSON("orders").IsArray())
	r = a.Get(t, "/v1/transactions/txn_IJzsBxjONQDhIPbRP15FESYe/", keyAll)
	assert.Equal(t, 404, r.Status, "another institution's transaction")
	assert.Equal(t, `{"detail":"transaction not found"}`, r.Body)
}

func TestRevokeSessions(t *testing.T) {
	a := MustServe(t)
	post := func(key, body string, headers ...string) resp {
		return a.Call(t, "POST", "/v1/sessions/revoke/", body, append([]string{"x-api-key: " + key}, headers...)...)
	}
	u := a.MustControl(t, "GET", "/_sandbox/users/usr_hfcu_0004", "")
	require.Greater(t, int(u.JSON("live_sessions").Int())+int(a.MustControl(t, "GET", "/_sandbox/users/usr_hfcu_0005", "").JSON("live_sessions").Int()), 0, "fixture has live sessions")
	r := post(keyAll, `{"user_account_id":"CIF00048214","user_account_id_type":"core"}`)
	assert.Equal(t, 204, r.Status, r.Body)
	assert.Empty(t, r.Body)
	for _, id := range []string{"usr_hfcu_0004", "usr_hfcu_0005", "usr_hfcu_0006"} {
		assert.Zero(t, a.MustControl(t, "GET", "/_sandbox/users/"+id, "").JSON("live_sessions").Int(), "%s sessions ended", id)
	}
	assert.Equal(t, 204, post(keyAll, `{"user_account_id":"CIF00048214","user_account_id_type":"core"}`).Status, "none live still 204")
	assert.Equal(t, 204, post(keyAll, `{"user_account_id":"q2-7f3a9c01","user_account_id_type":"dbp"}`).Status)
	assert.Equal(t, 204, post(keyAll, `{"user_account_id":"usr_hfcu_0002","user_account_id_type":"platform"}`).Status)

	for _, c := range []struct {
		key, body string
		status    int
		want      string
	}{
		{keyPrairie, `{"user_account_id":"usr_pcb_0001","user_account_id_type":"platform"}`, 400, `{"detail":"no digital banking platform configured"}`},
		{keyAll, `{"user_account_id":"999","user_account_id_type":"core"}`, 404, `{"detail":"no member matches user_account_id"}`},
		{keyAll, `{"user_account_id":"100299","user_account_id_type":"core"}`, 404, `{"detail":"no user record for this member"}`},
		{keyAll, `{"user_account_id":"usr_pcb_0001","user_account_id_type":"platform"}`, 404, `{"detail":"no member matches user_account_id"}`},
		{keyAll, `{}`, 422, `{"detail":[{"type":"missing","loc":["body","user_account_id"],"msg":"Field required","input":{}},{"type":"missing","loc":["body","user_account_id_type"],"msg":"Field required","input":{}}]}`},
		{keyAll, `{"user_account_id":5,"user_account_id_type":"x"}`, 422, `{"detail":[{"type":"string_type","loc":["body","user_account_id"],"msg":"Input should be a valid string","input":5},{"type":"enum","loc":["body","user_account_id_type"],"msg":"Input should be 'platform', 'core' or 'dbp'","input":"x","ctx":{"expected":"'platform', 'core' or 'dbp'"}}]}`},
		{keyAll, `{"user_account_id": 5`, 422, `{"detail":[{"type":"json_invalid","loc":["body"],"msg":"JSON decode error","input":{},"ctx":{"error":"Expecting ',' delimiter"}}]}`},
		{keyAll, `hello`, 422, `{"detail":[{"type":"json_invalid","loc":["body"],"msg":"JSON decode error","input":{},"ctx":{"error":"Expecting value"}}]}`},
		{keyAll, `[1]`, 422, `{"detail":[{"type":"model_attributes_type","loc":["body"],"msg":"Input should be a valid dictionary or object to extract fields from","input":[1]}]}`},
		{keyAll, `null`, 422, `{"detail":[{"type":"missing","loc":["body"],"msg":"Field required","input":null}]}`},
	} {
		r := post(c.key, c.body)
		assert.Equal(t, c.status, r.Status, c.body)
		assert.Equal(t, c.want, r.Body, c.body)
	}
	r = a.Call(t, "POST", "/v1/sessions/revoke/", "", "x-api-key: "+keyAll)
	assert.Equal(t, `{"detail":[{"type":"missing","loc":["body"],"msg":"Field required","input":null}]}`, r.Body, "no body")
	r = post(keyAll, `{"user_account_id":"x"}`, "Content-Type: text/plain")
	assert.Equal(t, `{"detail":[{"type":"model_attributes_type","loc":["body"],"msg":"Input should be a valid dictionary or object to extract fields from","input":"{\"user_account_id\":\"x\"}"}]}`, r.Body, "non-JSON content type: the raw text is the body")
	r = post(keyAll, "\xff\xfe\xfd", "Content-Type: application/json")
	assert.Equal(t, 400, r.Status)
	assert.Equal(t, `{"detail":"There was an error parsing the body"}`, r.Body)
}

// TestCallbackWithControlCharacter: a control character in the userinfo is what pydantic
// percent-encodes, so the URL is accepted, echoed as sent, and sent to (decisions D19).
func TestCallbackWithControlCharacter(t *testing.T) {
	a := MustServe(t)
	_, key := a.tenant(t, "", "")
	hook := newHookAnswering(t, 204)
	raw := `http://a\u0003b@` + strings.TrimPrefix(hook.URL, "http://") + "/x"
	r := a.Call(t, "POST", "/v1/webhooks/subscriptions", `{"event_type":"kyc","url":"`+raw+`"}`, "x-api-key: "+key)
	require.Equal(t, 201, r.Status, r.Body)
	assert.Equal(t, "http://a\x03b@"+strings.TrimPrefix(hook.URL, "http://")+"/x", r.JSON("url").String(), "echoed as sent")
	r = a.Call(t, "POST", "/v1/webhooks/subscriptions/"+r.JSON("subscription_id").String()+"/test", "", "x-api-key: "+key)
	require.Equal(t, 200, r.Status, r.Body)
	assert.True(t, r.JSON("delivered").Bool(), r.Body)
}

func TestWebhookSubscriptions(t *testing.T) {
	a := MustServe(t)
	inst, key := a.tenant(t, "", "")
	_ = inst
	hook := newHookAnswering(t, 204)
	sub := func(body string) resp {
		return a.Call(t, "POST", "/v1/webhooks/subscriptions", body, "x-api-key: "+key)
	}
	r := sub(`{"event_type":"kyc","url":"` + hook.URL + `/k"}`)
	require.Equal(t, 201, r.Status, r.Body)
	secret := r.JSON("signing_secret").String()
	assert.Regexp(t, `^whsec_[A-Za-z0-9_-]{43}$`, secret)
	assert.Equal(t, "v1", r.JSON("api_version").String())
	assert.True(t, r.JSON("enabled").Bool())
	first := r.JSON("subscription_id").String()
	r = sub(`{"event_type":"transaction","url":"` + hook.URL + `/t"}`)
	require.Equal(t, 201, r.Status)
	assert.False(t, r.JSON("signing_secret").Exists(), "secret only on the issuing call")
	second := r.JSON("subscription_id").String()
	r = sub(`{"event_type":"kyc","url":"` + hook.URL + `/k"}`)
	assert.Equal(t, 409, r.Status)

	for _, c := range []struct {
		body   string
		status int
		want   string
	}{
		{`{"event_type":"kyc","url":"http://93.184.216.34/hook"}`, 400, `{"detail":"callback URL must use https"}`},
		{`{"event_type":"kyc","url":"https://10.0.0.1/hook"}`, 400, `{"detail":"callback URL does not resolve to a public address"}`},
		{`{"event_type":"kyc","url":"https://[::1]/hook"}`, 201, ``},
		// pydantic percent-encodes a control character in the userinfo and accepts the URL
		{`{"event_type":"kyc","url":"https://a\u0003b@127.0.0.1:` + hook.URL[len("http://127.0.0.1:"):] + `/x"}`, 201, ``},
		{`{"event_type":"kyc","url":"https://nx.partnersim.invalid/hook"}`, 400, `{"detail":"callback URL host does not resolve"}`},
		// a lone surrogate: pydantic refuses it (string_unicode); FastAPI could not render the
		// input (500), the sandbox renders it null
		{`{"event_type":"kyc","url":"https://1.2.3.4/\ud800"}`, 422, `{"detail":[{"type":"string_unicode","loc":["body","url"],"msg":"Input should be a valid string, unable to parse raw data as a unicode string","input":null}]}`},
		{`{"event_type":"kyc","url":"ftp://example.com/x"}`, 422, `{"detail":[{"type":"url_scheme","loc":["body","url"],"msg":"URL scheme should be 'http' or 'https'","input":"ftp://example.com/x","ctx":{"expected_schemes":"'http' or 'https'"}}]}`},
		{`{"event_type":"kyc","url":"not a url"}`, 422, `{"detail":[{"type":"url_parsing","loc":["body","url"],"msg":"Input should be a valid URL, relative URL without a base","input":"not a url","ctx":{"error":"relative URL without a base"}}]}`},
		{`{"event_type":"sms"}`, 422, `{"detail":[{"type":"enum","loc":["body","event_type"],"msg":"Input should be 'kyc' or 'transaction'","input":"sms","ctx":{"expected":"'kyc' or 'transaction'"}},{"type":"missing","loc":["body","url"],"msg":"Field required","input":{"event_type":"sms"}}]}`},
	} {
		r := sub(c.body)
		assert.Equal(t, c.status, r.Status, c.body)
		if c.want != "" {
			assert.Equal(t, c.want, r.Body, c.body)
		}
	}

	list := a.Get(t, "/v1/webhooks/subscriptions", key)
	require.Equal(t, 200, list.Status)
	assert.Len(t, list.JSON("subscriptions").Array(), 4)
	assert.Equal(t, first, list.JSON("subscriptions.0.subscription_id").String())
	assert.False(t, list.JSON("subscriptions.0.signing_secret").Exists())
	assert.Empty(t, a.Get(t, "/v1/webhooks/subscriptions", keyHooks).JSON("subscriptions").Array(), "another institution sees none")

	r = a.Call(t, "POST", "/v1/webhooks/subscriptions/"+first+"/test", "", "x-api-key: "+key)
	require.Equal(t, 200, r.Status, r.Body)
	assert.True(t, r.JSON("delivered").Bool())
	assert.Equal(t, 204, int(r.JSON("response_status_code").Int()))
	assert.Regexp(t, `^evt_`, r.JSON("event_id").String())
	r = a.Call(t, "POST", "/v1/webhooks/subscriptions/"+first+"/test", "", "x-api-key: "+keyHooks)
	assert.Equal(t, 404, r.Status, "another institution's subscription")

	assert.Equal(t, 204, a.Call(t, "DELETE", "/v1/webhooks/subscriptions/"+second, "", "x-api-key: "+key).Status)
	r = a.Call(t, "DELETE", "/v1/webhooks/subscriptions/"+second, "", "x-api-key: "+key)
	assert.Equal(t, 404, r.Status)
	assert.Equal(t, `{"detail":"no enabled subscription with that id"}`, r.Body)
	assert.Equal(t, 404, a.Call(t, "POST", "/v1/webhooks/subscriptions/"+second+"/test", "", "x-api-key: "+key).Status)
	assert.Len(t, a.Get(t, "/v1/webhooks/subscriptions", key).JSON("subscriptions").Array(), 3, "deleted never reappears")
}

func TestSendTestOutcomes(t *testing.T) {
	a := MustServe(t)
	_, key := a.tenant(t, "", "")
	hook := newHookAnswering(t, 500)
	// A name that resolves (through an override) to loopback counts as loopback.
	a.MustControl(t, "PUT", "/_sandbox/dns", `{"hooks.partner.example":["127.0.0.1"]}`)
	port := hook.URL[strings.LastIndex(hook.URL, ":")+1:]
	r := a.Call(t, "POST", "/v1/webhooks/subscriptions", `{"event_type":"transaction","url":"http://hooks.partner.example:`+port+`/x"}`, "x-api-key: "+key)
	require.Equal(t, 201, r.Status, r.Body)
	id := r.JSON("subscription_id").String()
	r = a.Call(t, "POST", "/v1/webhooks/subscriptions/"+id+"/test", "", "x-api-key: "+key)
	require.Equal(t, 200, r.Status)
	assert.False(t, r.JSON("delivered").Bool())
	assert.Equal(t, 500, int(r.JSON("response_status_code").Int()))
	require.Len(t, hook.Received(), 1)
	got := hook.Received()[0].Header
	assert.NotEmpty(t, got.Get("X-Partner-Webhook-Signature"))
	assert.Equal(t, r.JSON("event_id").String(), got.Get("X-Partner-Webhook-Id"))
	// The name now rebinds to a private address: test refuses before sending.
	a.MustControl(t, "PUT", "/_sandbox/dns", `{"hooks.partner.example":["10.1.2.3"]}`)
	r = a.Call(t, "POST", "/v1/webhooks/subscriptions/"+id+"/test", "", "x-api-key: "+key)
	assert.Equal(t, 400, r.Status)
	assert.Equal(t, `{"detail":"callback URL no longer resolves to a public address"}`, r.Body)
	// A callback that never answers: no response_status_code.
	hook.Close()
	a.MustControl(t, "PUT", "/_sandbox/dns", `{"hooks.partner.example":["127.0.0.1"]}`)
	r = a.Call(t, "POST", "/v1/webhooks/subscriptions/"+id+"/test", "", "x-api-key: "+key)
	require.Equal(t, 200, r.Status)
	assert.False(t, r.JSON("delivered").Bool())
	assert.False(t, r.JSON("response_status_code").Exists(), "absent when the callback never answered")
}

func TestVersionPinning(t *testing.T) {
	a := MustServe(t, func(c *sandbox.Config) { c.APIVersions = []string{"v1", "v2"} })
	_, key := a.tenant(t, "", "")
	hook := newHook(t)
	r := a.Call(t, "POST", "/v2/webhooks/subscriptions", `{"event_type":"kyc","url":"`+hook.URL+`"}`, "x-api-key: "+key)
	require.Equal(t, 201, r.Status)
	assert.Equal(t, "v2", r.JSON("api_version").String())
	assert.Equal(t, 200, a.Get(t, "/v2/health", "").Status)
	one := MustServe(t)
	assert.Equal(t, 404, one.Get(t, "/v2/users/", keyAll).Status, "v2 only when mounted")
}

func TestControlPlaneToken(t *testing.T) {
	a := MustServe(t)
	r := a.Call(t, "GET", "/_sandbox/institutions", "")
	assert.Equal(t, 401, r.Status)
	assert.Equal(t, `{"detail":"Not authenticated"}`, r.Body)
	r = a.Call(t, "GET", "/_sandbox/institutions", "", "x-sandbox-token: wrong")
	assert.Equal(t, `{"detail":"Invalid sandbox token"}`, r.Body)
	r = a.MustControl(t, "GET", "/_sandbox/institutions", "")
	assert.Len(t, r.JSON("institutions").Array(), 2)
	off := MustServe(t, func(c *sandbox.Config) { c.NoControl = true })
	r = off.Control(t, "GET", "/_sandbox/institutions", "")
	assert.Equal(t, 404, r.Status, "switched off answers like any unknown path")
	assert.Equal(t, `{"detail":"Not Found"}`, r.Body)
}

// Every JSON answer carries Content-Length, as FastAPI's JSONResponse does, however large: Go
// would send a body over its 2 KB buffer chunked instead.
func TestJSONAnswersCarryContentLength(t *testing.T) {
	a := MustServe(t)
	for _, path := range []string{
		"/v1/users/usr_hfcu_0001/?user_account_id_type=platform", // ~11 KB
		"/v1/users/?per_page=100",
		"/v1/orders/?per_page=100",
		"/v1/users/x/",                                        // 422
		"/v1/users/usr_nobody/?user_account_id_type=platform", // 404
	} {
		r := a.Get(t, path, keyAll)
		assert.Equal(t, strconv.Itoa(len(r.Body)), r.Header.Get("Content-Length"), path)
	}
	assert.Greater(t, len(a.Get(t, "/v1/users/?per_page=100", keyAll).Body), 4096, "a body past net/http's buffer")
}
