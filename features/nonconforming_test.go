package features_test

import (
	"bytes"
	"context"
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"math/big"
	"net/http"
	"net/http/httptest"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/partnersim/partnersim/features"
)

// The suite is itself tested: each case serves a small implementation of the API that honours
// the rules one scenario checks — except for one deliberate defect. The scenario must pass
// against the healthy server (so the server is good enough to judge by) and fail against the
// broken one, with a message naming the broken rule.

// defect is one deliberate non-conformance.
type defect string

const (
	healthy            defect = ""
	notFoundForScope   defect = "404 instead of 403 for a missing scope"
	signatureNoT       defect = "signature over the body without t."
	perPageUnbounded   defect = "per_page above 100 accepted"
	deletedStillListed defect = "a deleted subscription still listed"
	validationNoLoc    defect = "a validation error without loc"
	idempotencyKeyLost defect = "X-Partner-Webhook-Id differs from event_id"
	testEventNotMarked defect = "a test event without is_test"
	keyBeforeRoute     defect = "the key checked before the route"
	cursorInt64        defect = "a cursor beyond 64 bits refused"
)

func TestNonConformingServersFail(t *testing.T) {
	t.Parallel()
	cases := []struct {
		defect   defect
		feature  string
		scenario string
		because  string // the failure message must contain this
	}{
		{notFoundForScope, "auth.feature", "A key without the endpoint's scope is 403 naming the scope", "expected status 403, got"},
		{signatureNoT, "webhook_test_events.feature", "A test event is signed over t.body with the signing secret", "HMAC over the body alone (without \"t.\")"},
		{perPageUnbounded, "pagination.feature", "per_page outside 1..100 is refused", "expected a 4xx status"},
		{deletedStillListed, "subscriptions.feature", "A deleted subscription is not listed", "to contain no element with subscription_id"},
		{validationNoLoc, "user_detail.feature", "A missing user_account_id_type is a validation error", "loc to be an array of strings, got absent"},
		{idempotencyKeyLost, "webhook_test_events.feature", "A test event reports its outcome and carries is_test", "expected header X-Partner-Webhook-Id to equal the body's event_id"},
		{testEventNotMarked, "webhook_test_events.feature", "A test event reports its outcome and carries is_test", "expected is_test to be true"},
		{keyBeforeRoute, "auth.feature", "When several checks would fail, the first of route, key, scope, validation answers", "expected status 404, got"},
		{keyBeforeRoute, "auth.feature", "A wrong method is 405 whatever the key", "expected status 405, got"},
		{cursorInt64, "pagination.feature", "A cursor beyond 64 bits is an integer like any other: an empty page echoing it", "expected status 200, got"},
	}
	for _, c := range cases {
		t.Run(string(c.defect), func(t *testing.T) {
			t.Parallel()
			good := runAgainst(t, healthy, c.feature, c.scenario)
			if r, ok := good.Result(c.scenario); !ok || r.Status != features.Passed {
				t.Fatalf("against the healthy server, expected %q to pass, got %s: %s", c.scenario, r.Status, r.Err)
			}
			bad := runAgainst(t, c.defect, c.feature, c.scenario)
			r, ok := bad.Result(c.scenario)
			if !ok || r.Status != features.Failed {
				t.Fatalf("against a server with %s, expected %q to fail, got %s", c.defect, c.scenario, r.Status)
			}
			if !strings.Contains(r.Err, c.because) {
				t.Errorf("expected the failure to name the broken rule (%q), got: %s", c.because, r.Err)
			}
			if bad.OK() {
				t.Errorf("expected the run to report failure, got ok")
			}
		})
	}
}

// runAgainst serves a fake implementation with the defect and runs one scenario against it, as
// `partnersim contract` runs against a deployment without a control plane.
func runAgainst(t *testing.T, d defect, feature, scenario string) *features.Report {
	t.Helper()
	f := &fakeAPI{defect: d, subs: map[string]*fakeSub{}}
	srv := httptest.NewServer(f)
	t.Cleanup(srv.Close)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	without := map[string]string{}
	for _, s := range features.AllScopes {
		without[s] = "sbx_without_" + s
	}
	rep, err := features.Run(ctx, features.Options{BaseURL: srv.URL + "/v1", APIKey: "sbx_full", KeysWithout: without,
		Paths: []string{feature}, Name: "^" + regexpQuote(scenario) + "$", Concurrency: 4, Wait: 3 * time.Second})
	if err != nil {
		t.Fatalf("run: %v", err)
	}
	return rep
}

func regexpQuote(s string) string {
	var b strings.Builder
	for _, r := range s {
		if strings.ContainsRune(`\.+*?()|[]{}^$`, r) {
			b.WriteByte('\\')
		}
		b.WriteRune(r)
	}
	return b.String()
}

// fakeAPI is the smallest implementation of the partner API that the targeted scenarios can
// judge: keys sbx_full (every scope) and sbx_without_<scope>, empty lists, no users,
// subscriptions with test deliveries.
type fakeAPI struct {
	defect defect

	mu     sync.Mutex
	subs   map[string]*fakeSub
	order  []string
	secret string
}

type fakeSub struct {
	ID, EventType, URL string
	Deleted            bool
}

var routeScopes = []struct{ method, prefix, scope string }{
	{"GET", "/v1/users/", "read:user"},
	{"GET", "/v1/orders/", "read:orders"},
	{"GET", "/v1/transactions/", "read:orders"},
	{"POST", "/v1/sessions/revoke/", "manage:sessions"},
	{"", "/v1/webhooks/subscriptions", "manage:webhooks"},
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(v)
}

func (f *fakeAPI) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	p := r.URL.Path
	if p == "/v1/health" || p == "/health" {
		writeJSON(w, 200, map[string]string{"status": "ok"})
		return
	}
	if f.defect != keyBeforeRoute && f.misrouted(w, r) {
		return
	}
	key := r.Header.Get("x-api-key")
	if key == "" {
		writeJSON(w, 401, map[string]string{"detail": "Not authenticated"})
		return
	}
	if key != "sbx_full" && !strings.HasPrefix(key, "sbx_without_") {
		writeJSON(w, 401, map[string]string{"detail": "Invalid API key"})
		return
	}
	if f.defect == keyBeforeRoute && f.misrouted(w, r) {
		return
	}
	for _, rs := range routeScopes {
		if (rs.method == "" || rs.method == r.Method) && strings.HasPrefix(p, rs.prefix) && key == "sbx_without_"+rs.scope {
			if f.defect == notFoundForScope {
				writeJSON(w, 404, map[string]string{"detail": "Not Found"})
				return
			}
			writeJSON(w, 403, map[string]string{"detail": "key does not have the required scope: " + rs.scope})
			return
		}
	}
	switch {
	case r.Method == "GET" && (p == "/v1/users/" || p == "/v1/orders/"):
		f.list(w, r)
	case r.Method == "GET" && strings.HasPrefix(p, "/v1/users/"):
		if r.URL.Query().Get("user_account_id_type") == "" {
			f.invalid(w, "missing", []string{"query", "user_account_id_type"}, "Field required", nil, nil)
			return
		}
		writeJSON(w, 404, map[string]string{"detail": "user not found"})
	case p == "/v1/webhooks/subscriptions" && r.Method == "GET":
		f.listSubs(w)
	case p == "/v1/webhooks/subscriptions" && r.Method == "POST":
		f.createSub(w, r)
	case strings.HasPrefix(p, "/v1/webhooks/subscriptions/") && strings.HasSuffix(p, "/test") && r.Method == "POST":
		f.testSub(w, strings.TrimSuffix(strings.TrimPrefix(p, "/v1/webhooks/subscriptions/"), "/test"))
	case strings.HasPrefix(p, "/v1/webhooks/subscriptions/") && r.Method == "DELETE":
		f.deleteSub(w, strings.TrimPrefix(p, "/v1/webhooks/subscriptions/"))
	default:
		writeJSON(w, 404, map[string]string{"detail": "Not Found"})
	}
}

// routes are the fake's paths (patterns) and their methods; the route is checked before the key
// (decisions D3): an unknown path is 404 and a wrong method 405 whatever the key.
var routes = []struct {
	path    *regexp.Regexp
	methods []string
}{
	{regexp.MustCompile(`^/v1/(users|orders)/$`), []string{"GET"}},
	{regexp.MustCompile(`^/v1/(users|transactions)/[^/]+/$`), []string{"GET"}},
	{regexp.MustCompile(`^/v1/sessions/revoke/$`), []string{"POST"}},
	{regexp.MustCompile(`^/v1/webhooks/subscriptions$`), []string{"GET", "POST"}},
	{regexp.MustCompile(`^/v1/webhooks/subscriptions/[^/]+$`), []string{"DELETE"}},
	{regexp.MustCompile(`^/v1/webhooks/subscriptions/[^/]+/test$`), []string{"POST"}},
}

// misrouted answers 404 or 405 for a request no route takes, and reports whether it did.
func (f *fakeAPI) misrouted(w http.ResponseWriter, r *http.Request) bool {
	for _, rt := range routes {
		if rt.path.MatchString(r.URL.Path) {
			if slices.Contains(rt.methods, r.Method) {
				return false
			}
			w.Header().Set("Allow", strings.Join(rt.methods, ", "))
			writeJSON(w, 405, map[string]string{"detail": "Method Not Allowed"})
			return true
		}
	}
	writeJSON(w, 404, map[string]string{"detail": "Not Found"})
	return true
}

func (f *fakeAPI) invalid(w http.ResponseWriter, typ string, loc []string, msg string, input any, ctx map[string]any) {
	item := map[string]any{"type": typ, "loc": loc, "msg": msg, "input": input}
	if ctx != nil {
		item["ctx"] = ctx
	}
	if f.defect == validationNoLoc {
		delete(item, "loc")
	}
	writeJSON(w, 422, map[string]any{"detail": []any{item}})
}

func (f *fakeAPI) list(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	perPage, last := 25, json.RawMessage("0")
	if s := q.Get("per_page"); s != "" {
		n, err := strconv.Atoi(s)
		switch {
		case err != nil:
			f.invalid(w, "int_parsing", []string{"query", "per_page"}, "Input should be a valid integer, unable to parse string as an integer", s, nil)
			return
		case n < 1:
			f.invalid(w, "greater_than_equal", []string{"query", "per_page"}, "Input should be greater than or equal to 1", s, map[string]any{"ge": 1})
			return
		case n > 100 && f.defect != perPageUnbounded:
			f.invalid(w, "less_than_equal", []string{"query", "per_page"}, "Input should be less than or equal to 100", s, map[string]any{"le": 100})
			return
		}
		perPage = n
	}
	if s := q.Get("last_record_number"); s != "" {
		// An unbounded integer, as Python's (decisions D6); the defect parses 64 bits only.
		n, ok := new(big.Int).SetString(s, 10)
		if _, err := strconv.ParseInt(s, 10, 64); f.defect == cursorInt64 && err != nil && ok {
			f.invalid(w, "int_parsing", []string{"query", "last_record_number"}, "Input should be a valid integer, unable to parse string as an integer", s, nil)
			return
		}
		if !ok || n.Sign() < 0 {
			f.invalid(w, "greater_than_equal", []string{"query", "last_record_number"}, "Input should be greater than or equal to 0", s, map[string]any{"ge": 0})
			return
		}
		last = json.RawMessage(n.String())
	}
	writeJSON(w, 200, map[string]any{"items": []any{}, "total_records": 0, "last_record_number": last, "per_page": perPage})
}

func (f *fakeAPI) render(s *fakeSub) map[string]any {
	return map[string]any{"subscription_id": s.ID, "event_type": s.EventType, "url": s.URL, "api_version": "v1", "enabled": true,
		"created_at": "2026-01-01T00:00:00Z"}
}

func (f *fakeAPI) listSubs(w http.ResponseWriter) {
	f.mu.Lock()
	defer f.mu.Unlock()
	out := []any{}
	for _, id := range f.order {
		if s := f.subs[id]; !s.Deleted || f.defect == deletedStillListed {
			out = append(out, f.render(s))
		}
	}
	writeJSON(w, 200, map[string]any{"subscriptions": out})
}

func (f *fakeAPI) createSub(w http.ResponseWriter, r *http.Request) {
	var body struct {
		EventType string `json:"event_type"`
		URL       string `json:"url"`
	}
	if err := json.NewDecoder(r.Body).Decode(&body); err != nil || body.URL == "" {
		f.invalid(w, "missing", []string{"body", "url"}, "Field required", map[string]any{}, nil)
		return
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	s := &fakeSub{ID: "sub_" + token(), EventType: body.EventType, URL: body.URL}
	f.subs[s.ID] = s
	f.order = append(f.order, s.ID)
	out := f.render(s)
	if f.secret == "" {
		f.secret = "whsec_" + token()
		out["signing_secret"] = f.secret
	}
	writeJSON(w, 201, out)
}

func (f *fakeAPI) deleteSub(w http.ResponseWriter, id string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	s, ok := f.subs[id]
	if !ok || s.Deleted {
		writeJSON(w, 404, map[string]string{"detail": "subscription not found"})
		return
	}
	s.Deleted = true
	w.WriteHeader(204)
}

func (f *fakeAPI) testSub(w http.ResponseWriter, id string) {
	f.mu.Lock()
	s, ok := f.subs[id]
	secret := f.secret
	f.mu.Unlock()
	if !ok || s.Deleted {
		writeJSON(w, 404, map[string]string{"detail": "subscription not found"})
		return
	}
	eventID := "evt_" + token()
	body, _ := json.Marshal(map[string]any{"event_id": eventID, "event_type": s.EventType, "api_version": "v1",
		"created_at": time.Now().UTC().Format(time.RFC3339), "is_test": f.defect != testEventNotMarked,
		"data":  map[string]any{"user_account_id": "test_user", "product": "crypto", "kyc_status": "approved"},
		"links": map[string]any{"self": "/v1/users/usr_test_1/?user_account_id_type=platform"}})
	t := strconv.FormatInt(time.Now().Unix(), 10)
	signed := append([]byte(t+"."), body...)
	if f.defect == signatureNoT {
		signed = body
	}
	m := hmac.New(sha256.New, []byte(secret))
	m.Write(signed)
	req, _ := http.NewRequest(http.MethodPost, s.URL, bytes.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("X-Partner-Webhook-Id", eventID)
	if f.defect == idempotencyKeyLost {
		req.Header.Set("X-Partner-Webhook-Id", "dlv_"+token())
	}
	req.Header.Set("X-Partner-Webhook-Signature", fmt.Sprintf("t=%s,v1=%s", t, hex.EncodeToString(m.Sum(nil))))
	out := map[string]any{"delivered": false, "event_id": eventID}
	res, err := (&http.Client{Timeout: 5 * time.Second}).Do(req)
	if err == nil {
		res.Body.Close()
		out["delivered"] = res.StatusCode/100 == 2
		out["response_status_code"] = res.StatusCode
	}
	writeJSON(w, 200, out)
}

func token() string {
	b := make([]byte, 8)
	_, _ = rand.Read(b)
	return hex.EncodeToString(b)
}
