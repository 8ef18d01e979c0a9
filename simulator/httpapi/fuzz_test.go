package httpapi_test

import (
	"bytes"
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"strings"
	"testing"

	"github.com/tidwall/gjson"

	"github.com/partnersim/partnersim/simulator/httpapi"
	"github.com/partnersim/partnersim/simulator/netguard"
)

// The fuzz targets send arbitrary query strings, path ids and JSON bodies to the real handler
// of a sandbox built once per target (MustServe), in-process, so a panic fails the input with
// its stack. Every answer must be below 500 and, when an error, decisions D4's shape: 422 with
// FastAPI's detail array, any other error {"detail": "<sentence>"}. Seed corpora live in
// testdata/fuzz/<Name>/ (the tables' cases, FastAPI edge cases, malformed JSON in every
// encoding trap, each body with several content types) and run as ordinary tests; `make fuzz`
// explores beyond them.

// rawRequest is a fuzz target's request: the decoded path and the raw query exactly as given.
func rawRequest(method, path, rawQuery, contentType string, body []byte, headers ...string) *http.Request {
	req := httptest.NewRequest(method, "/", bytes.NewReader(body))
	req.Host = "127.0.0.1" // a loopback-bound sandbox answers loopback Hosts only (decisions D18)
	req.URL.Path, req.URL.RawPath, req.URL.RawQuery = path, "", rawQuery
	req.RequestURI = ""
	if contentType != "" {
		req.Header.Set("Content-Type", contentType)
	}
	for _, h := range headers {
		k, v, _ := strings.Cut(h, ": ")
		req.Header.Set(k, v)
	}
	return req
}

// checkD4 fails t unless rec is below 500 and, when an error, in decisions D4's shape.
func checkD4(t *testing.T, what string, rec *httptest.ResponseRecorder) {
	t.Helper()
	status, body := rec.Code, rec.Body.String()
	if status >= 500 {
		t.Fatalf("%s: status %d: %s", what, status, body)
	}
	if status < 400 {
		if body != "" && !gjson.Valid(body) {
			t.Fatalf("%s: status %d with a body that is not JSON: %q", what, status, body)
		}
		return
	}
	if ct := rec.Header().Get("Content-Type"); ct != "application/json" {
		t.Fatalf("%s: status %d with Content-Type %q", what, status, ct)
	}
	if !gjson.Valid(body) {
		t.Fatalf("%s: status %d, body not JSON: %q", what, status, body)
	}
	top := gjson.Parse(body)
	if keys := objectKeys(top); len(keys) != 1 || keys[0] != "detail" {
		t.Fatalf("%s: status %d, want exactly {\"detail\":…}, got keys %v: %s", what, status, keys, body)
	}
	d := top.Get("detail")
	if status != http.StatusUnprocessableEntity {
		if d.Type != gjson.String || d.String() == "" {
			t.Fatalf("%s: status %d, detail must be a non-empty string: %s", what, status, body)
		}
		return
	}
	if !d.IsArray() || len(d.Array()) == 0 {
		t.Fatalf("%s: 422, detail must be a non-empty array: %s", what, body)
	}
	for i, it := range d.Array() {
		keys := objectKeys(it)
		want := []string{"type", "loc", "msg", "input"}
		if it.Get("ctx").Exists() {
			want = append(want, "ctx")
		}
		if strings.Join(keys, ",") != strings.Join(want, ",") {
			t.Fatalf("%s: 422 item %d: keys %v, want %v in that order: %s", what, i, keys, want, body)
		}
		if it.Get("type").Type != gjson.String || it.Get("type").String() == "" || it.Get("msg").Type != gjson.String {
			t.Fatalf("%s: 422 item %d: type and msg must be strings: %s", what, i, it.Raw)
		}
		loc := it.Get("loc").Array()
		if !it.Get("loc").IsArray() || len(loc) == 0 {
			t.Fatalf("%s: 422 item %d: loc must be a non-empty array: %s", what, i, it.Raw)
		}
		if first := loc[0].String(); loc[0].Type != gjson.String || first != "query" && first != "path" && first != "body" {
			t.Fatalf("%s: 422 item %d: loc must start with query, path or body: %s", what, i, it.Raw)
		}
		for _, l := range loc[1:] {
			if l.Type != gjson.String && l.Type != gjson.Number {
				t.Fatalf("%s: 422 item %d: loc elements are strings (or list indexes): %s", what, i, it.Raw)
			}
		}
		if c := it.Get("ctx"); c.Exists() && !c.IsObject() {
			t.Fatalf("%s: 422 item %d: ctx must be an object: %s", what, i, it.Raw)
		}
	}
}

// objectKeys lists an object's keys in document order (nil when r is not an object).
func objectKeys(r gjson.Result) []string {
	if !r.IsObject() {
		return nil
	}
	var keys []string
	r.ForEach(func(k, _ gjson.Result) bool { keys = append(keys, k.String()); return true })
	return keys
}

// FuzzUserListQuery fuzzes the raw query string of Get User List (every filter, the time
// bounds, pagination, sorting, repeated and malformed pairs).
func FuzzUserListQuery(f *testing.F) {
	a := MustServe(f)
	f.Fuzz(func(t *testing.T, q string) {
		checkD4(t, "GET /v1/users/?"+q, a.serveChecked(t, a.SB.Server, "GET", "/v1/users/", q, "", nil, "x-api-key: "+keyAll))
	})
}

// FuzzOrderListQuery fuzzes the raw query string of Get Order List.
func FuzzOrderListQuery(f *testing.F) {
	a := MustServe(f)
	f.Fuzz(func(t *testing.T, q string) {
		checkD4(t, "GET /v1/orders/?"+q, a.serveChecked(t, a.SB.Server, "GET", "/v1/orders/", q, "", nil, "x-api-key: "+keyAll))
	})
}

// FuzzUserDetail fuzzes Get User Detail's decoded path id (slashes, dots and all) and its
// raw query string.
func FuzzUserDetail(f *testing.F) {
	a := MustServe(f)
	f.Fuzz(func(t *testing.T, id, q string) {
		path := "/v1/users/" + id + "/"
		checkD4(t, "GET "+path+"?"+q, a.serveChecked(t, a.SB.Server, "GET", path, q, "", nil, "x-api-key: "+keyAll))
	})
}

// FuzzRevokeBody fuzzes Revoke Member Sessions' body and Content-Type.
func FuzzRevokeBody(f *testing.F) {
	a := MustServe(f)
	f.Fuzz(func(t *testing.T, body []byte, ct string) {
		checkD4(t, "POST /v1/sessions/revoke/ "+ct, a.serveChecked(t, a.SB.Server, "POST", "/v1/sessions/revoke/", "", ct, body, "x-api-key: "+keyAll))
	})
}

// fakeResolver answers DNS without the network: names under example.com are one public
// address, localhost is loopback, anything else does not exist.
type fakeResolver struct{}

func (fakeResolver) LookupNetIP(_ context.Context, _, host string) ([]netip.Addr, error) {
	switch {
	case host == "localhost":
		return []netip.Addr{netip.MustParseAddr("127.0.0.1")}, nil
	case host == "example.com" || strings.HasSuffix(host, ".example.com"):
		return []netip.Addr{netip.MustParseAddr("93.184.216.34")}, nil
	}
	return nil, errors.New("no such host")
}

// FuzzSubscriptionBody fuzzes Create Webhook Subscription's body and Content-Type: the
// event type and the URL through parsing, the scheme rule, the address guard and the 409.
func FuzzSubscriptionBody(f *testing.F) {
	a := MustServe(f)
	// The sandbox's own guard asks the system resolver; this server, over the same store,
	// resolves offline so that fuzzed host names never reach a DNS server.
	sb := a.SB
	srv := httpapi.NewServer(httpapi.Config{SandboxToken: sb.Token}, httpapi.Deps{Store: sb.DB, Webhooks: sb.DB,
		Guard: netguard.New(netguard.Options{AllowLoopback: true, Resolver: fakeResolver{}})}, nil)
	f.Fuzz(func(t *testing.T, body []byte, ct string) {
		checkD4(t, "POST /v1/webhooks/subscriptions "+ct, a.serveChecked(t, srv, "POST", "/v1/webhooks/subscriptions", "", ct, body, "x-api-key: "+keyAll))
	})
}

// controlRoutes are the control-plane bodies FuzzControlBodies covers, chosen by its first
// argument.
var controlRoutes = []string{"/_sandbox/institutions/ins_harbor/users", "/_sandbox/orders", "/_sandbox/transactions", "/_sandbox/users/usr_hfcu_0001/kyc"}

// FuzzControlBodies fuzzes the control plane's bodies that build data: users, orders, robo
// transactions and KYC moves (which one is the first argument modulo 4).
func FuzzControlBodies(f *testing.F) {
	a := MustServe(f)
	f.Fuzz(func(t *testing.T, which uint8, body []byte, ct string) {
		path := controlRoutes[int(which)%len(controlRoutes)]
		checkD4(t, "POST "+path+" "+ct, a.serveChecked(t, a.SB.Server, "POST", path, "", ct, body, "x-sandbox-token: "+token))
	})
}
