package check

import (
	"context"
	"encoding/json"
	"net/http"
	"strconv"
	"testing"

	"github.com/partnersim/partnersim/simulator/openapi"
)

// mutants are body with each value, in turn, removed, set to null, to a number, to a string
// and to an object, and with an undocumented key added to each object: what a broken
// implementation sends.
func mutants(t *testing.T, body string) []string {
	t.Helper()
	var root any
	if err := json.Unmarshal([]byte(body), &root); err != nil {
		t.Fatal(err)
	}
	var out []string
	emit := func() {
		b, err := json.Marshal(root)
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, string(b))
	}
	var walk func(v any)
	walk = func(v any) {
		switch v := v.(type) {
		case map[string]any:
			v["undocumented"] = 1
			emit()
			delete(v, "undocumented")
			for k, child := range v {
				delete(v, k)
				emit()
				for _, r := range []any{nil, 7.5, "x", map[string]any{}} {
					v[k] = r
					emit()
				}
				v[k] = child
				walk(child)
			}
		case []any:
			for i, child := range v {
				for _, r := range []any{nil, "x"} {
					v[i] = r
					emit()
				}
				v[i] = child
				walk(child)
			}
		}
	}
	emit()
	walk(root)
	return out
}

// The shortcut (builtInBody) answers what kin-openapi's full path answers, problem for
// problem, for right and wrong bodies of several operations and statuses, and right and wrong
// headers.
func TestBuiltInBodyAnswersAsTheFullPath(t *testing.T) {
	doc, err := openapi.Partner([]string{"v1"})
	if err != nil {
		t.Fatal(err)
	}
	fast, err := New(context.Background(), Doc{Name: "partner", Data: doc})
	if err != nil {
		t.Fatal(err)
	}
	full, err := New(context.Background(), Doc{Name: "partner", Data: doc})
	if err != nil {
		t.Fatal(err)
	}
	full.everyBodyBy2020 = true
	cases := []struct {
		path   string
		status int
		body   string
	}{
		{"/v1/users/?per_page=25", 200, `{"items":[{"user_account_id":"u1","total_current_market_value":"10.00","accounts":[{"product":"crypto","current_market_value":"10.00","kyc_status":"approved","kyc_approved_at":"2026-01-02T03:04:05Z"},{"product":"robo","current_market_value":"0.00","kyc_status":"pending"}]}],"total_records":1,"last_record_number":1,"per_page":25}`},
		{"/v1/users/u1/?user_account_id_type=core", 404, `{"detail":"User not found"}`},
		{"/v1/users/?per_page=0", 422, `{"detail":[{"type":"greater_than_equal","loc":["query","per_page"],"msg":"Input should be greater than or equal to 1","input":"0","ctx":{"ge":1}}]}`},
		{"/v1/orders/", 200, `{"items":[{"order_id":"o1","user_account_id":"u1","product":"crypto","side":"buy","status":"filled","symbol":"BTC","quantity":"0.5","placed_at":"2026-01-02T03:04:05Z"}],"total_records":1,"last_record_number":1,"per_page":25}`},
		{"/v1/health", 200, `{"status":"ok"}`},
	}
	// The headers as sent, and broken: X-Request-Id empty, missing, repeated; one the
	// document does not name; WWW-Authenticate (a const) where a 401 would carry it.
	headers := []http.Header{
		{"Content-Type": {"application/json"}, "X-Request-Id": {"r1"}},
		{"Content-Type": {"application/json"}, "X-Request-Id": {""}},
		{"Content-Type": {"application/json"}},
		{"Content-Type": {"application/json"}, "X-Request-Id": {"r1", ""}},
		{"Content-Type": {"application/json"}, "X-Request-Id": {"r1"}, "X-Other": {"o"}},
		{"Content-Type": {"application/json"}, "X-Request-Id": {"r1"}, "Www-Authenticate": {"Basic"}},
	}
	shortcut, whole := 0, 0
	for _, tc := range cases {
		for i, body := range mutants(t, tc.body) {
			for k, h := range headers {
				if k > 0 && i > 0 {
					break // the broken headers with the right body only
				}
				req, _ := http.NewRequest(http.MethodGet, "http://sandbox.test"+tc.path, nil)
				res := &http.Response{StatusCode: tc.status, Header: h}
				if route, _, ok := fast.findRoute(withBody(req, nil), tc.status, &Failure{}); ok {
					if r, all := fast.builtInBody(route, res); r != nil {
						shortcut++
						if all {
							whole++
						}
					}
				}
				got, want := fast.Check(req, nil, res, []byte(body)), full.Check(req, nil, res, []byte(body))
				if errText(got) != errText(want) {
					t.Errorf("GET %s → %d %v %s:\n got  %s\n want %s", tc.path, tc.status, h, body, errText(got), errText(want))
				}
			}
		}
	}
	if shortcut == 0 || whole == 0 {
		t.Fatalf("%d exchanges took the shortcut, %d with their headers: the test compares nothing", shortcut, whole)
	}
	t.Logf("%d exchanges took the shortcut, %d of them with their headers", shortcut, whole)
}

func errText(err error) string {
	if err == nil {
		return "<nil>"
	}
	return strconv.Quote(err.Error())
}
