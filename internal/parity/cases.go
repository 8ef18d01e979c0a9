package parity

import (
	"github.com/partnersim/partnersim/internal/sandboxtest"
)

// The default fixture set's keys (fixtures/default/keys.json), which the reference app reads too.
const (
	keyAll   = "x-api-key: sbx_harborAllScopes0000000000000000000000001"
	keyHooks = "x-api-key: sbx_harborWebhooks00000000000000000000000003"
)

// escapes are the percent-escapes the generated paths carry: reserved characters, a
// double-encoded one, invalid UTF-8 (a lone byte, a truncated sequence, a surrogate),
// invalid escapes, a newline, NUL and an encoded slash.
var escapes = []string{
	"%3F", "%25", "%23", "%2520", "%20", "%C3%A9", "%FF", "%FF%FE", "%E2%82", "%ED%A0%80",
	"%F0%9F%98", "%0A", "%0D", "%00", "%2F", "%5C", "%zz", "%", "%2", "%%41", "a%g0",
}

// Cases are the requests the harness sends to the reference app and to the sandbox.
func Cases() []sandboxtest.ParityCase {
	var out []sandboxtest.ParityCase
	add := func(name, method, target string, headers ...string) *sandboxtest.ParityCase {
		out = append(out, sandboxtest.ParityCase{Name: name, Request: sandboxtest.ParityRequest{Method: method, Target: target, Headers: headers}})
		return &out[len(out)-1]
	}
	post := func(name, target, body string, headers ...string) {
		add(name, "POST", target, headers...).Request.Body = body
	}

	// Generated: each escape in a path without its trailing slash (the 307's Location), as a
	// path parameter with and without a key, and in a query value.
	for _, e := range escapes {
		add("redirect "+e, "GET", "/v1/users/a"+e+"?x")
		add("redirect bare "+e, "GET", "/v1/users/"+e)
		add("parameter "+e, "GET", "/v1/transactions/"+e+"/", keyAll)
		add("parameter no key "+e, "GET", "/v1/transactions/"+e+"/")
		add("detail "+e, "GET", "/v1/users/"+e+"/?user_account_id_type=platform", keyAll)
		add("delete "+e, "DELETE", "/v1/webhooks/subscriptions/x"+e, keyHooks)
		add("unknown "+e, "GET", "/nope"+e)
		add("query "+e, "GET", "/v1/users/?per_page="+e, keyAll)
	}

	// The 307 (decisions D2, D19): every route without (or with extra) trailing slashes, the
	// query as sent, characters Starlette quotes in it, no Host header.
	for _, c := range [][2]string{
		{"GET", "/v1/users?per_page=2"}, {"GET", "/v1/users/usr_1"}, {"GET", "/v1/orders"}, {"GET", "/v1/orders//"},
		{"GET", "/v1/transactions/t"}, {"POST", "/v1/sessions/revoke"}, {"GET", "/v1/webhooks/subscriptions/"},
		{"POST", "/v1/webhooks/subscriptions//"}, {"DELETE", "/v1/webhooks/subscriptions/x/"},
		{"POST", "/v1/webhooks/subscriptions/x/test/"}, {"GET", "/health/"}, {"GET", "/v1/health/"},
		{"GET", "/openapi.json/"}, {"GET", "/docs/"}, {"GET", "/docs//"}, {"GET", "/docs///"}, {"POST", "/docs//"},
		{"GET", "/docs/swagger-ui.css/"}, {"GET", "/v1/users/?"}, {"GET", "/v1/users?"}, {"GET", `/v1/users?a|b"c<d>e^f{g}h` + "`"},
		{"GET", "/v1/users?a=%zz&b=%FF"}, {"GET", "/v1/users?q=a/b?c#d"}, {"GET", "//v1/users"}, {"GET", "/v1//users"},
	} {
		add("slash "+c[0]+" "+c[1], c[0], c[1])
	}
	out = append(out, sandboxtest.ParityCase{Name: "slash HTTP/1.0 no Host", Request: sandboxtest.ParityRequest{Method: "GET", Target: "/v1/users?x=1", Proto: "HTTP/1.0", NoHost: true}},
		sandboxtest.ParityCase{Name: "slash Host localhost", Request: sandboxtest.ParityRequest{Method: "GET", Target: "/v1/users", NoHost: true, Headers: []string{"Host: LocalHost"}}})
	// Hosts the sandbox answers (decisions D18) that Starlette's _HOST_RE reads, or does not read,
	// as host[:port]: the redirect keeps the one and puts the server's address for the other.
	for _, h := range []string{"localhost:8000", "localhost:", "[::1]:8000", "[::1]:", "[::1]", "my_app.localhost", "app.localhost.:80", "127.0.0.1:"} {
		out = append(out, sandboxtest.ParityCase{Name: "slash Host " + h, Request: sandboxtest.ParityRequest{Method: "GET", Target: "/v1/orders?x=1", NoHost: true, Headers: []string{"Host: " + h}}})
	}

	// Allow only with 405 (decisions D2, D19).
	for _, c := range [][2]string{
		{"POST", "/v1/users//"}, {"POST", "/docs//"}, {"POST", "/docs/x.js/"}, {"GET", "/docs/x.js/"},
		{"DELETE", "/v1/transactions//"}, {"POST", "/v1/users"}, {"DELETE", "/v1/users/"}, {"OPTIONS", "/v1/users/"},
		{"PUT", "/v1/webhooks/subscriptions"}, {"PUT", "/v1/webhooks/subscriptions/x"}, {"GET", "/v1/webhooks/subscriptions/x"},
		{"HEAD", "/health"}, {"HEAD", "/docs"}, {"POST", "/docs"}, {"POST", "/health"}, {"PATCH", "/v1/sessions/revoke/"},
	} {
		add("allow "+c[0]+" "+c[1], c[0], c[1])
	}

	// A final newline (decisions D19).
	for _, c := range []struct{ method, target, key string }{
		{"GET", "/v1/health%0A", ""}, {"GET", "/health%0A", ""}, {"GET", "/v1/users/%0A", keyAll}, {"GET", "/v1/users/%0A", ""},
		{"GET", "/v1/webhooks/subscriptions%0A", keyAll}, {"GET", "/v1/health%0A%0A", ""}, {"GET", "/v1/health/%0A", ""},
		{"GET", "/v1/health%0A/", ""}, {"DELETE", "/v1/health%0A", ""}, {"GET", "/v1/users/x/%0A?user_account_id_type=platform", keyAll},
		{"GET", "/v1/transactions/x%0A/", keyAll}, {"GET", "/docs%0A", ""}, {"GET", "/v1/health%0D%0A", ""}, {"GET", "/v1/users%0A", ""},
		{"GET", "/openapi.json%0A", ""}, {"POST", "/v1/sessions/revoke/%0A", ""}, {"GET", "/v1/orders/%0A?per_page=0", keyAll},
	} {
		var h []string
		if c.key != "" {
			h = []string{c.key}
		}
		add("newline "+c.method+" "+c.target+" "+c.key, c.method, c.target, h...)
	}

	// Authentication and scopes, then validation (decisions D3, D4).
	add("auth missing", "GET", "/v1/users/")
	add("auth empty", "GET", "/v1/users/", "x-api-key: ")
	add("auth unknown", "GET", "/v1/users/", "x-api-key: sbx_unknown000000000000000000000000000000000")
	add("auth live", "GET", "/v1/users/", "x-api-key: live_aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa")
	add("auth scope", "GET", "/v1/users/", keyHooks)
	add("auth before validation", "GET", "/v1/users/?per_page=0")
	add("validation list", "GET", "/v1/users/?per_page=0&sort_order=up&last_record_number=-1&created_at_start=2026-13-01", keyAll)
	add("validation orders", "GET", "/v1/orders/?status=bogus&side=hold&per_page=101&placed_at_end=x", keyAll)
	add("validation detail", "GET", "/v1/users/u/", keyAll)
	post("body missing fields", "/v1/sessions/revoke/", `{}`, keyAll)
	post("body not an object", "/v1/sessions/revoke/", `[1]`, keyAll)
	post("body malformed with key", "/v1/sessions/revoke/", `{"user_account_id": }`, keyAll)
	post("body malformed without key", "/v1/sessions/revoke/", `{"user_account_id": }`)

	// Callback URLs: IDNA, a lone surrogate, the userinfo (decisions D8, D19).
	for _, u := range []string{
		`https://93.184.216.34/`, `https://\u0345/`, `https://\u0661.com/`, `https://\u05d0.1/`, `https://a\u05d0.com/`,
		`https://\u05d0a.com/`, `https://\u0627\u0661.com/`, `https://a\u0661.com/`, `https://a\u200db.com/`, `https://a\u200cb.com/`,
		`https://\u2100.com/`, `https://\ufe16.com/`, `https://\ufe6b.com/`, `https://xn--uxa/`, `https://1.2.3.4/\ud800`,
		`https://\ud800.com/`, `https://a\u0003b@127.0.0.1:9/x`, `https://ab@127.0.0.1:9/x`, `https://a b@127.0.0.1:9/x`,
		`ftp://1.2.3.4/`, `not a url`, `https://`, `https://[::1`, `https://1.2.3.4:99999/`,
	} {
		post("callback "+u, "/v1/webhooks/subscriptions", `{"event_type":"kyc","url":"`+u+`"}`, keyHooks)
	}
	post("callback surrogate event type", "/v1/webhooks/subscriptions", `{"event_type":"\ud800","url":"https://1.2.3.4/"}`, keyHooks)
	post("callback NaN", "/v1/webhooks/subscriptions", `{"event_type":"kyc","url":NaN}`, keyHooks)
	post("callback 1e400", "/v1/webhooks/subscriptions", `{"event_type":1e400,"url":"https://1.2.3.4/"}`, keyHooks)
	post("callback long", "/v1/webhooks/subscriptions", `{"event_type":"kyc","url":"https://1.2.3.4/`+longPath(2083-len("https://1.2.3.4/"))+`"}`, keyHooks)
	post("callback too long", "/v1/webhooks/subscriptions", `{"event_type":"kyc","url":"https://1.2.3.4/`+longPath(2084-len("https://1.2.3.4/"))+`"}`, keyHooks)
	post("callback too long in bytes only", "/v1/webhooks/subscriptions", `{"event_type":"kyc","url":"https://1.2.3.4/`+longPath(2000)+`ééééééééééééééééééééééééééééééééééééééééééééééééééééééééééééééééééééééééééééééééééé"}`, keyHooks)
	return out
}

func longPath(n int) string {
	b := make([]byte, n)
	for i := range b {
		b[i] = 'a' + byte(i%26)
	}
	return string(b)
}
