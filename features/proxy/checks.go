package proxy

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"net/http"
	"regexp"
	"strings"

	"github.com/partnersim/partnersim/features/laws"
	"github.com/partnersim/partnersim/simulator/openapi"
	"github.com/tidwall/gjson"
)

// route is what an API path names, its version prefix (/v1) aside.
type route int

const (
	other route = iota
	userList
	userDetail
	orderList
	subscriptions   // GET list, POST create
	subscription    // DELETE
	subscriptionTry // POST …/test
	health
)

var (
	versioned  = regexp.MustCompile(`^/v[0-9]+(/.*)$`)
	detailPath = regexp.MustCompile(`^/users/([^/]+)/?$`)
	subPath    = regexp.MustCompile(`^/webhooks/subscriptions/([^/]+)/?$`)
	testPath   = regexp.MustCompile(`^/webhooks/subscriptions/([^/]+)/test/?$`)
)

// routeOf names the API route of a path and the id it carries.
func routeOf(path string) (route, string) {
	if m := versioned.FindStringSubmatch(path); m != nil {
		path = m[1]
	}
	switch {
	case path == "/users/":
		return userList, ""
	case path == "/orders/":
		return orderList, ""
	case path == "/webhooks/subscriptions" || path == "/webhooks/subscriptions/":
		return subscriptions, ""
	case path == "/health" || path == "/health/":
		return health, ""
	}
	if m := testPath.FindStringSubmatch(path); m != nil {
		return subscriptionTry, m[1]
	}
	if m := subPath.FindStringSubmatch(path); m != nil {
		return subscription, m[1]
	}
	if m := detailPath.FindStringSubmatch(path); m != nil {
		return userDetail, m[1]
	}
	return other, ""
}

// apiPath says whether a path is the partner API's (not the control plane's, documents or
// console).
func apiPath(path string) bool {
	return !strings.HasPrefix(path, "/_sandbox/") && !openapi.Undocumented(path)
}

func (p *Proxy) checkExchange(x *exchange) {
	at, ex := x.end, x.String()
	b := p.book
	b.check(Reachable, ex, x.err, at)
	if x.err != nil {
		return
	}
	slow := error(nil)
	if d := x.end.Sub(x.start); d > p.cfg.Slow {
		slow = fmt.Errorf("expected an answer within %s, got one after %s", p.cfg.Slow, d.Round(1e6))
	}
	b.check(Timely, ex, slow, at)
	if !apiPath(x.url.Path) {
		p.state.write(x) // the control plane changes data: cross-call laws restart
		return
	}
	if x.resHdr.Get("X-Request-Id") == "" {
		b.observe(RequestID, ex, "expected an X-Request-Id header, got none", at)
	} else {
		b.observe(RequestID, ex, "", at)
	}
	if p.cfg.Checker != nil && p.cfg.WhenBehind == Shed && len(p.queue) > cap(p.queue)/2 {
		b.docShed.Add(1) // behind: the document's check, the costliest, is skipped
	} else if p.cfg.Checker != nil && x.whole && !x.unread && !openapi.InjectedFault(x.body) && !openapi.Misdirected(x.status, x.body) {
		// The exchange's own URL and headers, which only the worker reads now (the checker
		// copies what it changes).
		req := &http.Request{Method: x.method, URL: x.url, Header: x.header, Proto: "HTTP/1.1", ProtoMajor: 1, ProtoMinor: 1,
			Body: io.NopCloser(bytes.NewReader(x.reqBody)), ContentLength: int64(len(x.reqBody))}
		res := &http.Response{StatusCode: x.status, Header: x.resHdr, Request: req}
		b.check(OpenAPI, ex, p.cfg.Checker.Check(req, x.reqBody, res, x.body), at)
	}
	hasBody := len(x.body) > 0 && x.method != http.MethodHead
	var j gjson.Result
	if hasBody && x.whole {
		if !gjson.ValidBytes(x.body) { // encoding/json's Valid takes five times as long
			b.observe(JSONBody, ex, fmt.Sprintf("expected a JSON body, got %q (Content-Type %q)", clip(x.body), x.resHdr.Get("Content-Type")), at)
			return
		}
		b.observe(JSONBody, ex, "", at)
		j = gjson.ParseBytes(x.body)
	}
	if x.status >= 300 && !openapi.InjectedFault(x.body) {
		b.check(ErrorShape, ex, errorShape(x, j), at)
	}
	p.lint(x, j)
	if x.status/100 != 2 {
		p.state.failed(p, x)
		return
	}
	p.state.answered(p, x, j)
}

// errorShape checks an error answer against decisions D2–D4.
func errorShape(x *exchange, j gjson.Result) error {
	switch x.status {
	case http.StatusTemporaryRedirect:
		if x.resHdr.Get("Location") == "" {
			return errors.New("expected a 307 to carry Location, got none")
		}
		return nil
	case http.StatusNotModified:
		return nil
	}
	if x.method == http.MethodHead {
		return nil
	}
	d := j.Get("detail")
	if !j.IsObject() || !d.Exists() {
		return fmt.Errorf("expected an error body {\"detail\": …}, got %s", clip(x.body))
	}
	switch x.status {
	case http.StatusUnauthorized:
		if d.Str == "Not authenticated" && x.resHdr.Get("WWW-Authenticate") != "APIKey" {
			return fmt.Errorf("expected a 401 for a missing key to carry WWW-Authenticate: APIKey, got %q", x.resHdr.Get("WWW-Authenticate"))
		}
		if d.Type != gjson.String {
			return fmt.Errorf("expected a 401's detail to be a sentence, got %s", d.Raw)
		}
	case http.StatusForbidden:
		if d.Type != gjson.String {
			return fmt.Errorf("expected a 403's detail to be a sentence, got %s", d.Raw)
		}
	case http.StatusUnprocessableEntity:
		return validationShape(j)
	case http.StatusTooManyRequests:
		if x.resHdr.Get("Retry-After") == "" {
			return errors.New("expected a 429 to carry Retry-After, got none")
		}
	}
	if x.status != http.StatusUnprocessableEntity && d.Type != gjson.String {
		return fmt.Errorf("expected detail to be a sentence, got %s", clip([]byte(d.Raw)))
	}
	return nil
}

// validationShape: a 422 is pydantic's array of {type, loc, msg, input[, ctx]}, keys in that
// order, loc an array of strings and integers (decisions D4).
func validationShape(j gjson.Result) error {
	d := j.Get("detail")
	if !d.IsArray() || len(d.Array()) == 0 {
		return fmt.Errorf("expected a 422's detail to be a non-empty array of validation items, got %s", clip([]byte(d.Raw)))
	}
	order := []string{"type", "loc", "msg", "input", "ctx"}
	for i, it := range d.Array() {
		if !it.IsObject() {
			return fmt.Errorf("expected detail[%d] to be an object, got %s", i, clip([]byte(it.Raw)))
		}
		var keys []string
		it.ForEach(func(k, _ gjson.Result) bool { keys = append(keys, k.Str); return true })
		want := order[:4]
		if len(keys) == 5 {
			want = order
		}
		if strings.Join(keys, ",") != strings.Join(want, ",") {
			return fmt.Errorf("expected detail[%d]'s keys to be %s, got %s", i, strings.Join(want, ", "), strings.Join(keys, ", "))
		}
		if it.Get("type").Type != gjson.String || it.Get("msg").Type != gjson.String || !it.Get("loc").IsArray() {
			return fmt.Errorf("expected detail[%d] to have a string type and msg and an array loc, got %s", i, clip([]byte(it.Raw)))
		}
		for _, l := range it.Get("loc").Array() {
			if l.Type != gjson.String && l.Type != gjson.Number {
				return fmt.Errorf("expected detail[%d].loc to hold strings and integers, got %s", i, it.Get("loc").Raw)
			}
		}
	}
	return nil
}

func clip(b []byte) string {
	b = bytes.TrimSpace(b)
	if len(b) > 200 {
		return string(b[:200]) + "…"
	}
	return string(b)
}

// users returns the users an answer shows: a list page's items or a detail.
func users(r route, j gjson.Result) []gjson.Result {
	switch r {
	case userList:
		return j.Get("items").Array()
	case userDetail:
		return []gjson.Result{j}
	}
	return nil
}

var _ = laws.UserTotal
