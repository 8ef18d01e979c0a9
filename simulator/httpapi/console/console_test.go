package console_test

import (
	"net/http"
	"net/http/cookiejar"
	"net/url"
	"regexp"
	"strings"
	"testing"

	"github.com/partnersim/partnersim/internal/sandboxtest"
	"github.com/partnersim/partnersim/simulator/sandbox"
)

func assert(tb testing.TB, ok bool, format string, args ...any) {
	tb.Helper()
	if !ok {
		tb.Errorf(format, args...)
	}
}

// client is a browser-like HTTP client of the console: a cookie jar, no redirects followed
// unless asked, and the page's CSRF token.
type client struct {
	sb   *sandboxtest.Sandbox
	http *http.Client
	csrf string
}

func newClient(sb *sandboxtest.Sandbox) *client {
	jar, _ := cookiejar.New(nil)
	return &client{sb: sb, http: &http.Client{Jar: jar, CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}}
}

var csrfRE = regexp.MustCompile(`name="csrf" value="([^"]+)"`)

func (c *client) do(tb testing.TB, method, path string, form url.Values, headers ...string) (sandboxtest.Response, string) {
	tb.Helper()
	res := sandboxtest.Do(tb, c.http, method, c.sb.URL+path, "application/x-www-form-urlencoded", form.Encode(), headers...)
	if m := csrfRE.FindStringSubmatch(res.Body); m != nil {
		c.csrf = m[1]
	}
	return res, res.Body
}

// get fetches a page and requires its status.
func (c *client) get(tb testing.TB, path string, status int) string {
	tb.Helper()
	res, body := c.do(tb, http.MethodGet, path, nil)
	if res.Status != status {
		tb.Fatalf("GET %s: status %d, want %d: %s", path, res.Status, status, body)
	}
	return body
}

// post submits a console form with the page's CSRF token (unless form sets one) and returns the
// response; headers are "Name: value".
func (c *client) post(tb testing.TB, path string, form url.Values, headers ...string) (sandboxtest.Response, string) {
	tb.Helper()
	if form == nil {
		form = url.Values{}
	}
	if _, ok := form["csrf"]; !ok {
		form.Set("csrf", c.csrf)
	}
	return c.do(tb, http.MethodPost, path, form, headers...)
}

// signedIn returns a client signed in to the sandbox's console.
func signedIn(tb testing.TB, sb *sandboxtest.Sandbox) *client {
	tb.Helper()
	c := newClient(sb)
	res, body := c.do(tb, http.MethodPost, "/_sandbox/ui/signin", url.Values{"token": {sb.SB.Token}})
	if res.Status != http.StatusSeeOther {
		tb.Fatalf("sign in: status %d: %s", res.Status, body)
	}
	c.get(tb, "/_sandbox/ui/", http.StatusOK)
	if c.csrf == "" {
		tb.Fatal("the console's page carries no CSRF token")
	}
	return c
}

func kycOf(tb testing.TB, sb *sandboxtest.Sandbox, pid, product string) string {
	tb.Helper()
	r := sb.MustControl(tb, http.MethodGet, "/_sandbox/users/"+pid, "")
	return r.JSON(`accounts.#(product=="` + product + `").kyc_status`).String()
}

// newUser creates a user of ins_harbor through the control plane and returns its platform id.
func newUser(tb testing.TB, sb *sandboxtest.Sandbox, accounts string) string {
	tb.Helper()
	r := sb.MustControl(tb, http.MethodPost, "/_sandbox/institutions/ins_harbor/users", `{"user_account_id":"qa-1","sessions":1,"accounts":`+accounts+`}`)
	return r.JSON("platform_id").String()
}

func TestSignInIsRequired(t *testing.T) {
	sb := sandboxtest.MustServe(t)
	c := newClient(sb)
	res, _ := c.do(t, http.MethodGet, "/_sandbox/ui/institutions/ins_harbor", nil)
	assert(t, res.Status == http.StatusSeeOther && res.Header.Get("Location") == "/_sandbox/ui/signin?next=%2F_sandbox%2Fui%2Finstitutions%2Fins_harbor",
		"a page without a session redirects to sign in: %d %s", res.Status, res.Header.Get("Location"))
	res, _ = c.do(t, http.MethodGet, "/_sandbox/ui/live/deliveries", nil)
	assert(t, res.Status == http.StatusUnauthorized, "a live fragment without a session: %d", res.Status)

	res, body := c.do(t, http.MethodPost, "/_sandbox/ui/signin", url.Values{"token": {"not-the-token"}})
	assert(t, res.Status == http.StatusUnauthorized, "a wrong token: status %d", res.Status)
	assert(t, strings.Contains(body, "That is not this sandbox&#39;s token"), "a wrong token says so: %s", body)
	assert(t, res.Header.Get("Set-Cookie") == "", "a wrong token sets no cookie: %q", res.Header.Get("Set-Cookie"))

	res, _ = c.do(t, http.MethodPost, "/_sandbox/ui/signin", url.Values{"token": {sb.SB.Token}, "next": {"/_sandbox/ui/clock"}})
	cookie := res.Header.Get("Set-Cookie")
	assert(t, res.Status == http.StatusSeeOther && res.Header.Get("Location") == "/_sandbox/ui/clock", "sign in goes to next: %d %s", res.Status, res.Header.Get("Location"))
	for _, attr := range []string{"HttpOnly", "SameSite=Strict", "Path=/_sandbox/ui/", "Max-Age=43200"} {
		assert(t, strings.Contains(cookie, attr), "the session cookie has %s: %s", attr, cookie)
	}
	body = c.get(t, "/_sandbox/ui/", http.StatusOK)
	assert(t, strings.Contains(body, "Harbor Federal Credit Union"), "signed in, the institutions show")

	// next never leaves the console.
	for _, next := range []string{"https://evil.example/", "//evil.example/", "/_sandbox/ui//evil.example", "/v1/users/"} {
		c2 := newClient(sb)
		res, _ := c2.do(t, http.MethodPost, "/_sandbox/ui/signin", url.Values{"token": {sb.SB.Token}, "next": {next}})
		assert(t, res.Header.Get("Location") == "/_sandbox/ui/", "next %q: redirected to %q", next, res.Header.Get("Location"))
	}

	res, _ = c.post(t, "/_sandbox/ui/signout", nil)
	assert(t, res.Status == http.StatusSeeOther, "sign out: %d", res.Status)
	res, _ = c.do(t, http.MethodGet, "/_sandbox/ui/", nil)
	assert(t, res.Status == http.StatusSeeOther, "signed out, pages redirect to sign in: %d", res.Status)
}

// A state-changing request without the session's CSRF token, or from another origin, or
// without a session, is refused and changes nothing.
func TestForgedActionsChangeNothing(t *testing.T) {
	sb := sandboxtest.MustServe(t)
	pid := newUser(t, sb, `[{"product":"crypto","kyc_status":"pending"}]`)
	c := signedIn(t, sb)
	kyc := url.Values{"product": {"crypto"}, "status": {"approved"}}
	with := func(extra map[string]string) url.Values {
		f := url.Values{}
		for k, v := range kyc {
			f[k] = v
		}
		for k, v := range extra {
			f.Set(k, v)
		}
		return f
	}
	cases := []struct {
		name    string
		c       *client
		form    url.Values
		headers []string
		status  int
	}{
		{"no CSRF token", c, with(map[string]string{"csrf": ""}), nil, http.StatusForbidden},
		{"a wrong CSRF token", c, with(map[string]string{"csrf": strings.Repeat("A", 43)}), nil, http.StatusForbidden},
		{"same-site page of another port", c, with(nil), []string{"Sec-Fetch-Site: same-site", "Origin: http://127.0.0.1:1"}, http.StatusForbidden},
		{"cross-site", c, with(nil), []string{"Sec-Fetch-Site: cross-site"}, http.StatusForbidden},
		{"an Origin that is not the console's", c, with(nil), []string{"Origin: http://evil.example"}, http.StatusForbidden},
		{"Origin null", c, with(nil), []string{"Origin: null"}, http.StatusForbidden},
		{"no session", newClient(sb), with(map[string]string{"csrf": c.csrf}), nil, http.StatusUnauthorized},
	}
	for _, tc := range cases {
		res, body := tc.c.post(t, "/_sandbox/ui/users/"+pid+"/kyc", tc.form, tc.headers...)
		assert(t, res.Status == tc.status, "%s: status %d, want %d", tc.name, res.Status, tc.status)
		assert(t, strings.Contains(body, "nothing was changed"), "%s: the page says nothing changed: %s", tc.name, body)
		assert(t, kycOf(t, sb, pid, "crypto") == "pending", "%s: the KYC status moved", tc.name)
	}
	res, _ := c.post(t, "/_sandbox/ui/users/"+pid+"/kyc", with(nil), "Sec-Fetch-Site: same-origin", "Origin: "+sb.URL)
	assert(t, res.Status == http.StatusSeeOther, "the console's own form: %d", res.Status)
	assert(t, kycOf(t, sb, pid, "crypto") == "approved", "the console's own form moves KYC")
}

func TestConsoleIsOffWithoutControlPlane(t *testing.T) {
	sb := sandboxtest.MustServe(t, func(c *sandbox.Config) { c.NoControl = true })
	for _, p := range []string{"/_sandbox/ui/", "/_sandbox/ui/signin", "/_sandbox/ui/static/console.css"} {
		r := sb.Call(t, http.MethodGet, p, "")
		assert(t, r.Status == http.StatusNotFound && r.Body == `{"detail":"Not Found"}`, "%s with --no-control: %d %s", p, r.Status, r.Body)
	}
	r := sb.Call(t, http.MethodPost, "/_sandbox/ui/signin", "token=x", "Content-Type: application/x-www-form-urlencoded")
	assert(t, r.Status == http.StatusNotFound, "POST sign in with --no-control: %d", r.Status)
}

// Every form field is bounded and a refusal says what to enter (decisions D17).
func TestFormsAreBoundedAndSayWhatToDo(t *testing.T) {
	sb := sandboxtest.MustServe(t)
	pid := newUser(t, sb, `[{"product":"securities","kyc_status":"approved","cash":"1000.00"}]`)
	c := signedIn(t, sb)
	cases := []struct {
		path string
		form url.Values
		want string
	}{
		{"/_sandbox/ui/clock/advance", url.Values{"seconds": {"315360001"}}, "The seconds must be a whole number from 0 to 315360000."},
		{"/_sandbox/ui/clock/advance", url.Values{"amount": {"1"}, "unit": {"weeks"}}, "The unit must be one of seconds, minutes, hours, days."},
		{"/_sandbox/ui/orders", url.Values{"platform_id": {pid}, "product": {"securities"}, "side": {"buy"}, "symbol": {"AAPL"}, "amount": {"1e400"}, "by": {"notional"}},
			"The amount must be a number greater than 0 and at most 1,000,000,000,000 with at most 8 decimals, like 100.00."},
		{"/_sandbox/ui/orders", url.Values{"platform_id": {pid}, "product": {"securities"}, "side": {"buy"}, "symbol": {"NOPE"}, "amount": {"10"}, "by": {"notional"}},
			"no price for symbol NOPE: set its price on the institution&#39;s page, then try again."},
		{"/_sandbox/ui/users/" + pid + "/kyc", url.Values{"product": {"securities"}, "status": {"pending"}},
			"kyc transition not allowed: approved -&gt; pending (allowed next states: closed, account_takeover)"},
		{"/_sandbox/ui/institutions", url.Values{"name": {strings.Repeat("n", 201)}}, "The name is too long: use at most 200 characters."},
		{"/_sandbox/ui/faults", url.Values{"path": {"/v1/orders/"}, "status": {"503"}, "probability": {"2"}}, "The probability is a number from 0 to 1, like 0.5."},
		{"/_sandbox/ui/snapshots", url.Values{"name": {"../x"}, "op": {"save"}}, "A snapshot name is 1 to 64 letters, digits, &#39;-&#39; or &#39;_&#39;, like before-test."},
		{"/_sandbox/ui/reset", url.Values{}, "Tick the box to confirm"},
		{"/_sandbox/ui/scenarios/nope/run", url.Values{}, "check the id, or pick it from the lists."},
	}
	for _, tc := range cases {
		tc.form.Set("back", "/_sandbox/ui/clock")
		res, _ := c.post(t, tc.path, tc.form)
		assert(t, res.Status == http.StatusSeeOther && res.Header.Get("Location") == "/_sandbox/ui/clock", "%s: %d %s", tc.path, res.Status, res.Header.Get("Location"))
		body := c.get(t, "/_sandbox/ui/clock", http.StatusOK)
		assert(t, strings.Contains(body, tc.want), "%s: the page should say %q", tc.path, tc.want)
	}
	res, body := c.post(t, "/_sandbox/ui/institutions", url.Values{"name": {strings.Repeat("x", 70<<10)}})
	assert(t, res.Status == http.StatusBadRequest && strings.Contains(body, "at most 64 KiB"), "a form over 64 KiB: %d", res.Status)
	assert(t, len(sb.MustControl(t, http.MethodGet, "/_sandbox/institutions", "").JSON("institutions").Array()) == 2, "no institution was created")

	// A bad filter on the users page shows the API's own validation, not a 500.
	body = c.get(t, "/_sandbox/ui/institutions/ins_harbor/users?per_page=500", http.StatusOK)
	assert(t, strings.Contains(body, "Check the form: per_page: Input should be less than or equal to 100"), "a bad filter says why: %s", body)
	c.get(t, "/_sandbox/ui/institutions/nope/users", http.StatusNotFound)
	c.get(t, "/_sandbox/ui/no/such/page", http.StatusNotFound)
}

// The console's reads are the control plane's: the endpoints added for it answer the same.
func TestControlPlaneReadsForTheConsole(t *testing.T) {
	sb := sandboxtest.MustServe(t)
	r := sb.MustControl(t, http.MethodGet, "/_sandbox/institutions/ins_harbor/keys", "")
	assert(t, r.JSON("keys.#").Int() > 0, "keys listed: %s", r.Body)
	assert(t, !strings.Contains(r.Body, "sbx_harborAllScopes0000000000000000000000001"), "no plaintext in the key list")
	assert(t, r.JSON(`keys.#(key_id=="key_harbor_allscopes").prefix`).String() != "", "a key shows its prefix: %s", r.Body)

	r = sb.MustControl(t, http.MethodGet, "/_sandbox/institutions/ins_harbor/users?per_page=2&sort_order=asc", "")
	assert(t, r.JSON("items.#").Int() == 2 && r.JSON("per_page").Int() == 2 && r.JSON("total_records").Int() > 2, "a users page: %s", r.Body)
	assert(t, r.JSON("items.0.platform_id").String() != "" && r.JSON("items.0.accounts.0.kyc_status").String() != "", "stored fields: %s", r.Body)
	r = sb.Control(t, http.MethodGet, "/_sandbox/institutions/ins_harbor/users?per_page=0", "")
	assert(t, r.Status == http.StatusUnprocessableEntity && r.JSON("detail.0.loc.1").String() == "per_page", "the API's own validation: %d %s", r.Status, r.Body)
	r = sb.Control(t, http.MethodGet, "/_sandbox/institutions/nope/users", "")
	assert(t, r.Status == http.StatusNotFound, "an unknown institution: %d %s", r.Status, r.Body)

	r = sb.MustControl(t, http.MethodGet, "/_sandbox/institutions/ins_harbor/orders?per_page=3", "")
	assert(t, r.JSON("items.#").Int() == 3 && r.JSON("items.0.transaction_id").String() != "", "an orders page: %s", r.Body)

	r = sb.MustControl(t, http.MethodGet, "/_sandbox/institutions/ins_harbor", "")
	assert(t, r.JSON("prices.AAPL").String() != "" && r.JSON("name").String() == "Harbor Federal Credit Union", "an institution: %s", r.Body)

	r = sb.MustControl(t, http.MethodGet, "/_sandbox/institutions/ins_harbor/subscriptions", "")
	assert(t, r.JSON("subscriptions").IsArray(), "subscriptions: %s", r.Body)

	r = sb.MustControl(t, http.MethodGet, "/_sandbox/clock", "")
	assert(t, r.JSON("now").String() != "" && r.JSON("virtual_now").String() != "" && r.JSON("next_due").IsArray(), "the clock: %s", r.Body)
	r = sb.Control(t, http.MethodGet, "/_sandbox/clock?limit=101", "")
	assert(t, r.Status == http.StatusUnprocessableEntity, "clock limit bounded: %d", r.Status)

	sb.MustControl(t, http.MethodPut, "/_sandbox/dns", `{"hooks.example":["127.0.0.1"]}`)
	r = sb.MustControl(t, http.MethodGet, "/_sandbox/dns", "")
	assert(t, r.Body == `{"overrides":{"hooks.example":["127.0.0.1"]}}`, "dns: %s", r.Body)

	sb.MustControl(t, http.MethodPut, "/_sandbox/rate-limit", `{"requests_per_second":5,"burst":10}`)
	r = sb.MustControl(t, http.MethodGet, "/_sandbox/rate-limit", "")
	assert(t, r.Body == `{"requests_per_second":5,"burst":10}`, "rate limit: %s", r.Body)

	r = sb.Call(t, http.MethodGet, "/_sandbox/institutions/ins_harbor/keys", "")
	assert(t, r.Status == http.StatusUnauthorized, "the reads need the token: %d", r.Status)
}

// flashOf returns the message the page after an action shows.
func flashOf(tb testing.TB, c *client, res sandboxtest.Response) string {
	tb.Helper()
	if res.Status != http.StatusSeeOther {
		tb.Fatalf("the action answered %d, want 303", res.Status)
	}
	body := c.get(tb, res.Header.Get("Location"), http.StatusOK)
	i := strings.Index(body, `id="flash"`)
	if i < 0 {
		tb.Fatalf("no message on %s", res.Header.Get("Location"))
	}
	return body[i:min(len(body), i+600)]
}

// Every control-plane action can be done from the console, and each lands in the sandbox as
// the control plane's own operation would (checked through the control plane).
func TestEveryActionThroughTheConsole(t *testing.T) {
	sb := sandboxtest.MustServe(t)
	c := signedIn(t, sb)
	post := func(path string, form url.Values) string {
		t.Helper()
		res, _ := c.post(t, path, form)
		return flashOf(t, c, res)
	}

	res, _ := c.post(t, "/_sandbox/ui/institutions", url.Values{"name": {"QA Credit Union"}, "core": {"symitar"}})
	inst := strings.TrimPrefix(res.Header.Get("Location"), "/_sandbox/ui/institutions/")
	assert(t, strings.HasPrefix(inst, "ins_"), "created an institution: %q", res.Header.Get("Location"))
	flashOf(t, c, res)
	got := sb.MustControl(t, http.MethodGet, "/_sandbox/institutions/"+inst, "")
	assert(t, got.JSON("name").String() == "QA Credit Union" && got.JSON("vendors.core").String() == "symitar", "the institution: %s", got.Body)

	f := post("/_sandbox/ui/institutions/"+inst+"/keys", url.Values{"scope": {"read:user", "read:orders"}})
	key := regexp.MustCompile(`value="(sbx_[A-Za-z0-9_-]+)"`).FindStringSubmatch(f)
	assert(t, key != nil && strings.Contains(f, "shown only this once"), "the key's plaintext is shown once: %s", f)
	if key != nil {
		assert(t, sb.Get(t, "/v1/users/", key[1]).Status == http.StatusOK, "the issued key works")
		page := c.get(t, "/_sandbox/ui/institutions/"+inst, http.StatusOK)
		assert(t, !strings.Contains(page, key[1]), "the plaintext is not shown again")
		keyID := sb.MustControl(t, http.MethodGet, "/_sandbox/institutions/"+inst+"/keys", "").JSON("keys.0.key_id").String()
		post("/_sandbox/ui/keys/"+keyID+"/revoke", url.Values{})
		assert(t, sb.Get(t, "/v1/users/", key[1]).Status == http.StatusUnauthorized, "the revoked key is refused")
	}

	post("/_sandbox/ui/institutions/"+inst+"/prices", url.Values{"symbol": {"qaco"}, "price": {"12.5"}})
	assert(t, sb.MustControl(t, http.MethodGet, "/_sandbox/institutions/"+inst, "").JSON("prices.QACO").String() == "12.50", "the price was set")

	f = post("/_sandbox/ui/institutions/"+inst+"/secret", url.Values{"overlap_seconds": {"60"}})
	assert(t, regexp.MustCompile(`value="whsec_[A-Za-z0-9_-]+"`).MatchString(f), "the new signing secret is shown once: %s", f)

	res, _ = c.post(t, "/_sandbox/ui/institutions/"+inst+"/users", url.Values{"user_account_id": {"qa-7"}, "sessions": {"2"},
		"product_securities": {"1"}, "kyc_securities": {"approved"}, "cash_securities": {"500.00"},
		"product_robo": {"1"}, "kyc_robo": {"approved"}, "cash_robo": {"1000.00"}, "portfolio": {"balanced"}})
	pid := strings.TrimPrefix(res.Header.Get("Location"), "/_sandbox/ui/users/")
	flashOf(t, c, res)
	u := sb.MustControl(t, http.MethodGet, "/_sandbox/users/"+pid, "")
	assert(t, u.JSON("user_account_id").String() == "qa-7" && u.JSON("live_sessions").Int() == 2 && u.JSON("accounts.#").Int() == 2, "the user: %s", u.Body)

	post("/_sandbox/ui/institutions/"+inst+"/members", url.Values{"core_id": {"M-7"}, "core_id_type": {"member_number"}, "user_ids": {pid}})

	post("/_sandbox/ui/orders", url.Values{"platform_id": {pid}, "product": {"securities"}, "side": {"buy"}, "symbol": {"QACO"}, "amount": {"2"}, "by": {"quantity"}})
	orders := sb.MustControl(t, http.MethodGet, "/_sandbox/institutions/"+inst+"/orders?status=pending", "")
	txn := orders.JSON("items.0.transaction_id").String()
	assert(t, orders.JSON("items.0.quantity").String() == "2" && txn != "", "a pending share order: %s", orders.Body)
	post("/_sandbox/ui/transactions/"+txn+"/cancel", url.Values{})
	assert(t, sb.MustControl(t, http.MethodGet, "/_sandbox/transactions/"+txn, "").JSON("status").String() == "canceled", "canceled")

	post("/_sandbox/ui/transactions", url.Values{"platform_id": {pid}, "type": {"deposit"}, "amount": {"300.00"}})
	robo := sb.MustControl(t, http.MethodGet, "/_sandbox/institutions/"+inst+"/orders?status=pending&product=robo", "").JSON("items.0.transaction_id").String()
	assert(t, robo != "", "a robo deposit was placed")
	post("/_sandbox/ui/transactions/"+robo+"/fail", url.Values{})
	assert(t, sb.MustControl(t, http.MethodGet, "/_sandbox/transactions/"+robo, "").JSON("status").String() == "failed", "failed")

	post("/_sandbox/ui/orders", url.Values{"platform_id": {pid}, "product": {"securities"}, "side": {"buy"}, "symbol": {"QACO"}, "amount": {"25.00"}, "by": {"notional"}})
	txn = sb.MustControl(t, http.MethodGet, "/_sandbox/institutions/"+inst+"/orders?status=pending", "").JSON("items.0.transaction_id").String()
	f = post("/_sandbox/ui/transactions/"+txn+"/fill", url.Values{"price_QACO": {"10.00"}})
	assert(t, strings.Contains(f, "completed"), "filled at a given price: %s", f)
	assert(t, sb.MustControl(t, http.MethodGet, "/_sandbox/institutions/"+inst+"/orders?status=completed", "").JSON("items.0.quantity").String() == "2.5", "filled at 10.00")

	post("/_sandbox/ui/faults", url.Values{"method": {"GET"}, "path": {"/v1/orders/"}, "status": {"503"}, "probability": {"1"}})
	assert(t, sb.MustControl(t, http.MethodGet, "/_sandbox/faults", "").JSON("rules.0.status").Int() == 503, "the fault rule was added")
	assert(t, sb.Get(t, "/v1/orders/", harborKey).Status == http.StatusServiceUnavailable, "the fault applies")
	post("/_sandbox/ui/faults/0/remove", url.Values{})
	assert(t, sb.MustControl(t, http.MethodGet, "/_sandbox/faults", "").JSON("rules.#").Int() == 0, "the fault rule was removed")
	post("/_sandbox/ui/faults", url.Values{"path": {"/v1/users/"}, "latency_ms": {"1"}})
	post("/_sandbox/ui/faults/clear", url.Values{})
	assert(t, sb.MustControl(t, http.MethodGet, "/_sandbox/faults", "").JSON("rules.#").Int() == 0, "the rules were cleared")

	post("/_sandbox/ui/rate-limit", url.Values{"requests_per_second": {"2.5"}, "burst": {"3"}})
	assert(t, sb.MustControl(t, http.MethodGet, "/_sandbox/rate-limit", "").Body == `{"requests_per_second":2.5,"burst":3}`, "the rate limit was set")
	post("/_sandbox/ui/rate-limit", url.Values{"requests_per_second": {"0"}, "burst": {"1"}})

	post("/_sandbox/ui/dns", url.Values{"host": {"hooks.qa.example"}, "ips": {"127.0.0.1, ::1"}})
	assert(t, sb.MustControl(t, http.MethodGet, "/_sandbox/dns", "").JSON(`overrides.hooks\.qa\.example.1`).String() == "::1", "the DNS override was set")

	post("/_sandbox/ui/snapshots", url.Values{"name": {"qa-snap"}, "op": {"save"}})
	post("/_sandbox/ui/reset", url.Values{"confirm": {"yes"}})
	assert(t, sb.Control(t, http.MethodGet, "/_sandbox/institutions/"+inst, "").Status == http.StatusNotFound, "the reset removed the institution")
	post("/_sandbox/ui/snapshots", url.Values{"name": {"qa-snap"}, "op": {"restore"}})
	assert(t, sb.MustControl(t, http.MethodGet, "/_sandbox/institutions/"+inst, "").JSON("name").String() == "QA Credit Union", "the snapshot brought it back")

	f = post("/_sandbox/ui/clock/advance", url.Values{"amount": {"2"}, "unit": {"hours"}})
	assert(t, strings.Contains(f, "Advanced the virtual clock by 2h0m0s"), "advanced: %s", f)

	for _, p := range []string{"", "institutions/" + inst, "institutions/" + inst + "/users", "institutions/" + inst + "/orders", "users/" + pid,
		"transactions/" + txn, "deliveries", "clock", "scenarios", "requests", "faults", "sandbox", "live/deliveries", "live/clock", "live/requests"} {
		c.get(t, "/_sandbox/ui/"+p, http.StatusOK)
	}
}

// Directory listings are never served (decisions D18): the static files are served one by one,
// and their folder, signed in or not, is 404 without a list of what it holds.
func TestNoDirectoryListings(t *testing.T) {
	sb := sandboxtest.MustServe(t)
	for _, c := range []*client{newClient(sb), signedIn(t, sb)} {
		for _, p := range []string{"/_sandbox/ui/static/", "/_sandbox/ui/static", "/_sandbox/ui/static/./", "/_sandbox/ui/static//"} {
			res, body := c.do(t, http.MethodGet, p, nil)
			assert(t, !strings.Contains(body, "console.js") && !strings.Contains(body, "console.css"), "GET %s lists the folder: %d %.200s", p, res.Status, body)
			assert(t, res.Status == http.StatusNotFound || res.Status/100 == 3, "GET %s: %d, want 404 (or a redirect)", p, res.Status)
		}
		res, _ := c.do(t, http.MethodGet, "/_sandbox/ui/static/console.css", nil)
		assert(t, res.Status == http.StatusOK, "a static file is served: %d", res.Status)
	}
}
