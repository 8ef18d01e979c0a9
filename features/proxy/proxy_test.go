package proxy_test

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/partnersim/partnersim/features/laws"
	"github.com/partnersim/partnersim/features/proxy"
	"github.com/partnersim/partnersim/fixtures"
	"github.com/partnersim/partnersim/internal/sandboxtest"
	"github.com/partnersim/partnersim/simulator/openapi/check"
	"github.com/partnersim/partnersim/simulator/sandbox"
	"github.com/tidwall/gjson"
)

const (
	harborKey  = "sbx_harborAllScopes0000000000000000000000001"
	prairieKey = "sbx_prairieAllScopes000000000000000000000005"
)

// documents loads the documents a sandbox serves.
func documents(t testing.TB, base string) *check.Checker {
	t.Helper()
	var docs []check.Doc
	for _, p := range []string{"/openapi.json", "/_sandbox/openapi.json"} {
		res, err := http.Get(base + p)
		if err != nil {
			t.Fatal(err)
		}
		b, _ := io.ReadAll(res.Body)
		res.Body.Close()
		if res.StatusCode != 200 {
			t.Fatalf("GET %s: %d", p, res.StatusCode)
		}
		docs = append(docs, check.Doc{Name: p, Data: b})
	}
	c, err := check.New(context.Background(), docs...)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// front starts a proxy in front of upstream (and of receiver, when given).
func front(t testing.TB, upstream string, checker *check.Checker, receiver string, secrets ...string) (*proxy.Proxy, *httptest.Server, *httptest.Server, *bytes.Buffer) {
	t.Helper()
	u, _ := url.Parse(upstream)
	live := &syncBuffer{}
	cfg := proxy.Config{Upstream: u, Checker: checker, Loopback: true, Live: live, SigningSecrets: secrets}
	if receiver != "" {
		cfg.Receiver, _ = url.Parse(receiver)
	}
	p, err := proxy.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	api := httptest.NewServer(p.API())
	t.Cleanup(api.Close)
	var hooks *httptest.Server
	if receiver != "" {
		hooks = httptest.NewServer(p.Receiver())
		t.Cleanup(hooks.Close)
	}
	return p, api, hooks, &live.Buffer
}

// app is a partner's app: it walks the user list both ways, a filtered list and the orders,
// reads a listed user's detail, subscribes, lists and unsubscribes, and makes a request the
// API refuses (422).
func app(t testing.TB, base string) {
	t.Helper()
	get := func(path string) gjson.Result {
		r := sandboxtest.Do(t, http.DefaultClient, http.MethodGet, base+path, "", "", "x-api-key: "+harborKey)
		return gjson.Parse(r.Body)
	}
	walk := func(path string) {
		cursor := int64(0)
		for range 100 {
			sep := "?"
			if strings.Contains(path, "?") {
				sep = "&"
			}
			j := get(path + sep + "per_page=7&last_record_number=" + strconv.FormatInt(cursor, 10))
			if len(j.Get("items").Array()) < 7 {
				return
			}
			cursor = j.Get("last_record_number").Int()
		}
	}
	walk("/v1/users/")
	walk("/v1/users/?sort_order=asc")
	walk("/v1/users/?product=crypto")
	walk("/v1/orders/")
	get("/v1/users/usr_hfcu_0001/?user_account_id_type=platform")
	r := sandboxtest.Do(t, http.DefaultClient, http.MethodPost, base+"/v1/webhooks/subscriptions", "application/json",
		`{"event_type":"kyc","url":"http://127.0.0.1:1/hooks"}`, "x-api-key: "+harborKey)
	sub := gjson.Get(r.Body, "subscription_id").String()
	if r.Status != http.StatusCreated {
		t.Fatalf("subscribe: %d %s", r.Status, r.Body)
	}
	get("/v1/webhooks/subscriptions")
	// Another institution lists its own subscriptions, then names this one's.
	sandboxtest.Do(t, http.DefaultClient, http.MethodGet, base+"/v1/webhooks/subscriptions", "", "", "x-api-key: "+prairieKey)
	sandboxtest.Do(t, http.DefaultClient, http.MethodPost, base+"/v1/webhooks/subscriptions/"+sub+"/test", "", "", "x-api-key: "+prairieKey)
	sandboxtest.Do(t, http.DefaultClient, http.MethodDelete, base+"/v1/webhooks/subscriptions/"+sub, "", "", "x-api-key: "+harborKey)
	get("/v1/users/?per_page=0")
}

// violations are the rules a proxy saw broken, by kind.
func broken(p *proxy.Proxy, kind proxy.Kind) []string {
	var out []string
	for _, r := range p.Book().Results() {
		if r.Kind == kind && r.Failed > 0 {
			out = append(out, r.ID)
		}
	}
	return out
}

func TestAConformingDeploymentBreaksNoRule(t *testing.T) {
	sb := sandboxtest.MustServe(t)
	p, api, _, live := front(t, sb.URL, documents(t, sb.URL), "")
	app(t, api.URL)
	p.Close()
	if v := broken(p, proxy.Violation); len(v) != 0 {
		t.Errorf("expected no violation, got %v:\n%s", v, live)
	}
	// The app's own 422 is its lint, and only that.
	if l := broken(p, proxy.Lint); !slices.Equal(l, []string{proxy.App422}) {
		t.Errorf("expected the lint to be the app's 422 alone, got %v:\n%s", l, live)
	}
	observed := map[string]bool{}
	for _, r := range p.Book().Results() {
		observed[r.ID] = r.Observed > 0
	}
	for _, l := range []string{laws.TotalIsSum, laws.PageFilters, laws.PageSort, laws.PagesConsecutive, laws.DescReversesAsc, laws.DetailMatchesList, laws.SubscriptionKept, laws.ForeignID404, proxy.OpenAPI, proxy.ErrorShape} {
		if !observed[l] {
			t.Errorf("expected the app's traffic to exercise %s, it did not", l)
		}
	}
}

// mutate is a deployment that breaks one rule: the sandbox behind a rewriting of its answers.
func mutate(t testing.TB, sb string, req func(*http.Request), body func(r *http.Request, b []byte) []byte) string {
	t.Helper()
	u, _ := url.Parse(sb)
	rp := &httputil.ReverseProxy{
		Rewrite: func(r *httputil.ProxyRequest) {
			r.SetURL(u)
			if req != nil {
				req(r.Out)
			}
		},
		ModifyResponse: func(res *http.Response) error {
			if body == nil {
				return nil
			}
			b, err := io.ReadAll(res.Body)
			if err != nil {
				return err
			}
			res.Body.Close()
			b = body(res.Request, b)
			res.Body = io.NopCloser(bytes.NewReader(b))
			res.ContentLength = int64(len(b))
			res.Header.Set("Content-Length", strconv.Itoa(len(b)))
			return nil
		},
	}
	srv := httptest.NewServer(rp)
	t.Cleanup(srv.Close)
	return srv.URL
}

var totalRe = regexp.MustCompile(`"total_current_market_value":"(-?[0-9]+\.[0-9]{2})"`)

func TestEachBrokenRuleIsReportedAloneWithItsName(t *testing.T) {
	sb := sandboxtest.MustServe(t)
	checker := documents(t, sb.URL)
	for _, c := range []struct {
		name string
		rule string
		req  func(*http.Request)
		body func(r *http.Request, b []byte) []byte
	}{
		{"a total off by one cent", laws.TotalIsSum, nil, func(_ *http.Request, b []byte) []byte {
			return totalRe.ReplaceAllFunc(b, func(m []byte) []byte {
				c, _ := laws.MoneyCents(string(totalRe.FindSubmatch(m)[1]))
				return []byte(`"total_current_market_value":"` + laws.CentsString(c+1) + `"`)
			})
		}},
		{"a record repeated across pages", laws.PagesConsecutive, func(r *http.Request) {
			// A page after the first starts one record early; its cursor still counts its items.
			q := r.URL.Query()
			if n, _ := strconv.Atoi(q.Get("last_record_number")); n > 0 && r.URL.Path == "/v1/users/" && q.Get("sort_order") == "" {
				q.Set("last_record_number", strconv.Itoa(n-1))
				r.URL.RawQuery = q.Encode()
				r.Header.Set("X-Shifted", "1")
			}
		}, func(r *http.Request, b []byte) []byte {
			if r.Header.Get("X-Shifted") == "" {
				return b
			}
			j := gjson.ParseBytes(b)
			next := j.Get("last_record_number").Int() + 1
			return []byte(strings.Replace(string(b), `"last_record_number":`+j.Get("last_record_number").Raw, `"last_record_number":`+strconv.FormatInt(next, 10), 1))
		}},
		{"a filter ignored", laws.PageFilters, func(r *http.Request) {
			q := r.URL.Query()
			q.Del("product")
			r.URL.RawQuery = q.Encode()
		}, nil},
		{"a 422 in another shape (pydantic v1's key order)", proxy.ErrorShape, nil, func(r *http.Request, b []byte) []byte {
			j := gjson.ParseBytes(b)
			if !j.Get("detail").IsArray() {
				return b
			}
			var items []string
			for _, it := range j.Get("detail").Array() {
				items = append(items, fmt.Sprintf(`{"loc":%s,"msg":%s,"type":%s,"input":%s}`, it.Get("loc").Raw, it.Get("msg").Raw, it.Get("type").Raw, it.Get("input").Raw))
			}
			return []byte(`{"detail":[` + strings.Join(items, ",") + `]}`)
		}},
	} {
		t.Run(c.name, func(t *testing.T) {
			p, api, _, live := front(t, mutate(t, sb.URL, c.req, c.body), checker, "")
			app(t, api.URL)
			p.Close()
			if v := broken(p, proxy.Violation); !slices.Equal(v, []string{c.rule}) {
				t.Errorf("expected exactly %s broken, got %v:\n%s", c.rule, v, live)
			}
			if !strings.Contains(live.String(), "violation "+c.rule+": ") {
				t.Errorf("expected a live line for %s, got:\n%s", c.rule, live)
			}
		})
	}
}

// A delivery signed with another secret is the signature rule alone; one signed with either
// secret of a rotation passes; a redelivery the receiver refuses is the receiver's lint.
func TestDeliveriesThroughTheReceiverSide(t *testing.T) {
	sb := sandboxtest.MustServe(t)
	n := 0
	rcv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		n++
		if n == 3 {
			w.WriteHeader(http.StatusInternalServerError)
			return
		}
		w.WriteHeader(http.StatusNoContent)
	}))
	t.Cleanup(rcv.Close)
	p, _, hooks, live := front(t, sb.URL, nil, rcv.URL, "whsec_old", "whsec_new")
	body := []byte(`{"event_id":"evt_1","event_type":"kyc"}`)
	send := func(secret, id string) {
		ts := "1700000000"
		req, _ := http.NewRequest(http.MethodPost, hooks.URL+"/hooks", bytes.NewReader(body))
		req.Header.Set("X-Partner-Webhook-Id", id)
		req.Header.Set("X-Partner-Webhook-Signature", "t="+ts+",v1="+laws.HMACHex(secret, laws.SignedPayload(ts, body)))
		req.Header.Set("Content-Type", "application/json")
		res, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		res.Body.Close()
	}
	send("whsec_new", "evt_1")
	send("whsec_old", "evt_1")   // a redelivery under the older secret of the overlap
	send("whsec_old", "evt_1")   // refused by the receiver this time
	send("whsec_other", "evt_2") // signed with a secret that is not the institution's
	p.Close()
	var sig proxy.RuleResult
	for _, r := range p.Book().Results() {
		if r.ID == proxy.HookSignature {
			sig = r
		}
	}
	if sig.Observed != 4 || sig.Failed != 1 || !strings.Contains(sig.Findings[0].Exchange, "evt_2") {
		t.Errorf("expected the signature rule broken once in 4, by evt_2, got %+v\n%s", sig, live)
	}
	if l := broken(p, proxy.Lint); !slices.Equal(l, []string{proxy.HookRedelivery}) {
		t.Errorf("expected the refused redelivery as the receiver's lint, got %v", l)
	}
	if strings.Contains(live.String(), "whsec_") {
		t.Errorf("a secret reached the live lines:\n%s", live)
	}
}

// --record writes what the app was answered as a fixture set the sandbox loads: the recorded
// key's users come back with their ids and values under the set's own fresh key, and the
// recorded key appears nowhere in it.
func TestRecordWritesASetTheSandboxLoads(t *testing.T) {
	sb := sandboxtest.MustServe(t)
	u, _ := url.Parse(sb.URL)
	p, err := proxy.New(proxy.Config{Upstream: u, Loopback: true, Record: true})
	if err != nil {
		t.Fatal(err)
	}
	api := httptest.NewServer(p.API())
	t.Cleanup(api.Close)
	app(t, api.URL)
	p.Close()
	dir := t.TempDir()
	if err := p.WriteRecord(dir); err != nil {
		t.Fatal(err)
	}
	for _, f := range []string{"institutions.json", "keys.json", "users.json", "transactions.json"} {
		b, err := os.ReadFile(filepath.Join(dir, f))
		if err != nil {
			t.Fatal(err)
		}
		if strings.Contains(string(b), harborKey) || strings.Contains(string(b), prairieKey) {
			t.Errorf("%s holds a recorded key", f)
		}
	}
	if _, err := fixtures.Open(os.DirFS(dir)); err != nil {
		t.Fatalf("the recorded set does not open: %v", err)
	}
	rec := sandboxtest.MustServe(t, func(c *sandbox.Config) { c.Fixtures = os.DirFS(dir) })
	keys := gjson.Parse(mustRead(t, filepath.Join(dir, "keys.json")))
	got := map[string]string{}
	for _, k := range keys.Array() {
		r := sandboxtest.Do(t, http.DefaultClient, http.MethodGet, rec.URL+"/v1/users/?per_page=100", "", "", "x-api-key: "+k.Get("key").String())
		for _, it := range gjson.Get(r.Body, "items").Array() {
			got[it.Get("user_account_id").String()] = it.Get("total_current_market_value").String()
		}
	}
	want := map[string]string{}
	r := sandboxtest.Do(t, http.DefaultClient, http.MethodGet, sb.URL+"/v1/users/?per_page=100", "", "", "x-api-key: "+harborKey)
	for _, it := range gjson.Get(r.Body, "items").Array() {
		want[it.Get("user_account_id").String()] = it.Get("total_current_market_value").String()
	}
	for id, total := range want {
		if got[id] != total {
			t.Errorf("user %s: recorded total %q, the deployment's %q", id, got[id], total)
		}
	}
	d := sandboxtest.Do(t, http.DefaultClient, http.MethodGet, rec.URL+"/v1/users/usr_hfcu_0001/?user_account_id_type=platform", "", "", "x-api-key: "+keys.Get("0.key").String())
	if d.Status != http.StatusOK {
		t.Errorf("the user whose detail was read keeps its platform id: %d %s", d.Status, d.Body)
	}
	o := sandboxtest.Do(t, http.DefaultClient, http.MethodGet, rec.URL+"/v1/orders/?per_page=5", "", "", "x-api-key: "+keys.Get("0.key").String())
	if n := gjson.Get(o.Body, "total_records").Int(); n == 0 {
		t.Errorf("expected the recorded orders, got %s", o.Body)
	}
}

func mustRead(t *testing.T, path string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// The proxy's own page lists its rules and the recent exchanges with their findings, and says
// nothing of the keys.
func TestThePageListsRulesAndRecentExchanges(t *testing.T) {
	sb := sandboxtest.MustServe(t)
	p, api, _, _ := front(t, sb.URL, nil, "")
	app(t, api.URL)
	sandboxtest.Eventually(t, func() bool {
		r := sandboxtest.Do(t, http.DefaultClient, http.MethodGet, api.URL+"/_proxy/", "", "")
		return strings.Contains(r.Body, "per_page=0 → 422")
	}, "the page never showed the app's 422")
	r := sandboxtest.Do(t, http.DefaultClient, http.MethodGet, api.URL+"/_proxy/", "", "")
	for _, want := range []string{"law.total-is-sum", "lint.app-422: expected a request the API accepts", "GET /v1/users/usr_hfcu_0001/?user_account_id_type=platform → 200"} {
		if !strings.Contains(r.Body, want) {
			t.Errorf("the page lacks %q", want)
		}
	}
	if strings.Contains(r.Body, harborKey) || r.Header.Get("X-Frame-Options") != "DENY" {
		t.Errorf("the page shows a key or may be framed")
	}
	p.Close()
}

// After Close the proxy still forwards (the server may answer a last request while it shuts
// down) and checks nothing: no panic, no finding, no exchange in the book.
func TestAnExchangeAfterCloseIsForwardedUnchecked(t *testing.T) {
	up := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html")
		io.WriteString(w, "<html>not JSON</html>")
	}))
	t.Cleanup(up.Close)
	p, api, _, live := front(t, up.URL, nil, "")
	p.Close()
	r := sandboxtest.Do(t, http.DefaultClient, http.MethodGet, api.URL+"/v1/users/", "", "", "x-api-key: "+harborKey)
	if r.Status != http.StatusOK || r.Body != "<html>not JSON</html>" {
		t.Errorf("expected the upstream's answer forwarded after Close, got %d %q", r.Status, r.Body)
	}
	if v := broken(p, proxy.Violation); len(v) != 0 || live.Len() != 0 {
		t.Errorf("expected nothing checked after Close, got %v:\n%s", v, live)
	}
}

// An answer of unknown length streams through as the upstream writes it: the app reads the
// first part before the upstream writes the second (the upstream waits for that).
func TestAnAnswerStreamsThrough(t *testing.T) {
	read := make(chan struct{})
	up := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		io.WriteString(w, `{"items":[`)
		w.(http.Flusher).Flush()
		select {
		case <-read:
		case <-r.Context().Done():
			return
		}
		io.WriteString(w, `]}`)
	}))
	t.Cleanup(up.Close)
	_, api, _, _ := front(t, up.URL, nil, "")
	res, err := http.Get(api.URL + "/v1/users/")
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	first := make([]byte, len(`{"items":[`))
	if _, err := io.ReadFull(res.Body, first); err != nil || string(first) != `{"items":[` {
		t.Fatalf("expected the first part before the upstream wrote the rest, got %q, %v", first, err)
	}
	close(read)
	if rest, err := io.ReadAll(res.Body); err != nil || string(rest) != `]}` {
		t.Errorf("expected the rest after, got %q, %v", rest, err)
	}
}
