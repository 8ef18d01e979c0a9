package httpapi_test

import (
	"bufio"
	"fmt"
	"io"
	"net"
	"net/http"
	"strconv"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// The edges where the sandbox answers as a FastAPI app on Starlette does (decisions D19). Each
// expectation was read off FastAPI 0.141.1 on Starlette 1.3.1 under uvicorn 0.35 (the parity
// harness in internal/parity records them all); the Starlette lines are cited beside each test.

// raw sends one request as written (Go's client refuses to send a path like /%zz) and reads
// the answer.
func raw(tb testing.TB, a *api, request string) (*http.Response, string) {
	tb.Helper()
	conn, err := net.Dial("tcp", a.Listener.Addr().String())
	require.NoError(tb, err)
	defer conn.Close()
	require.NoError(tb, conn.SetDeadline(time.Now().Add(10*time.Second)))
	_, err = io.WriteString(conn, request)
	require.NoError(tb, err)
	res, err := http.ReadResponse(bufio.NewReader(conn), nil)
	require.NoError(tb, err)
	defer res.Body.Close()
	b, err := io.ReadAll(res.Body)
	require.NoError(tb, err)
	return res, string(b)
}

// TestRedirectLocationIsStarlettes: the 307 for a missing or extra trailing slash carries the
// Location Starlette builds — Router.app (starlette/routing.py, "redirect_url =
// URL(scope=redirect_scope)") puts the decoded path and the query string into a URL, and
// RedirectResponse (starlette/responses.py) quotes it whole with
// quote(str(url), safe=":/%#?=@[]!$&'()*+,;"). uvicorn decodes the path with
// urllib.parse.unquote (uvicorn/protocols/http/h11_impl.py), which makes invalid UTF-8
// U+FFFD, one for each maximal ill-formed subpart.
func TestRedirectLocationIsStarlettes(t *testing.T) {
	a := MustServe(t)
	for _, c := range []struct{ path, location string }{
		{"/v1/users/a%3Fb?x", "/v1/users/a?b/?x"},
		{"/v1/users/a%25b", "/v1/users/a%b/"},
		{"/v1/users/a%23b", "/v1/users/a#b/"},
		{"/v1/users/a%2520b", "/v1/users/a%20b/"},
		{"/v1/users/%FF", "/v1/users/%EF%BF%BD/"},
		{"/v1/users/%E2%82", "/v1/users/%EF%BF%BD/"},
		{"/v1/users/%FF%FE", "/v1/users/%EF%BF%BD%EF%BF%BD/"},
		{"/v1/users/a%20b", "/v1/users/a%20b/"},
		{"/v1/users/%C3%A9", "/v1/users/%C3%A9/"},
		{`/v1/users?a|b"c`, "/v1/users/?a%7Cb%22c"},
		{"/v1/users?per_page=2", "/v1/users/?per_page=2"},
	} {
		res, _ := raw(t, a, "GET "+c.path+" HTTP/1.1\r\nHost: "+a.Listener.Addr().String()+"\r\nConnection: close\r\n\r\n")
		assert.Equal(t, 307, res.StatusCode, c.path)
		assert.Equal(t, a.URL+c.location, res.Header.Get("Location"), c.path)
	}
}

// TestAllowOnlyWith405: Starlette sends Allow only from Route.handle's 405 (starlette/routing.py,
// "if self.methods and scope["method"] not in self.methods: headers = {"Allow": …}"); the 404 of
// Router.not_found and the redirect carry none.
func TestAllowOnlyWith405(t *testing.T) {
	a := MustServe(t)
	for _, c := range []struct {
		method, path string
		status       int
	}{
		{"POST", "/v1/users//", 404},
		{"POST", "/docs//", 307},
		{"POST", "/docs/x.js/", 307},
		{"GET", "/docs/x.js/", 307},
		{"POST", "/v1/users", 307},
		{"DELETE", "/v1/transactions//", 404},
	} {
		r := a.Call(t, c.method, c.path, "")
		assert.Equal(t, c.status, r.Status, "%s %s", c.method, c.path)
		assert.Empty(t, r.Header.Values("Allow"), "%s %s", c.method, c.path)
	}
	r := a.Call(t, "POST", "/v1/users/", "")
	assert.Equal(t, 405, r.Status)
	assert.Equal(t, "GET", r.Header.Get("Allow"), "a 405 keeps its Allow")
}

// TestFinalNewlineMatches: Starlette matches a route's compiled pattern with re.match against
// "^…$" (starlette/routing.py, compile_path: path_regex += re.escape(path[idx:]) + "$"), and
// Python's "$" also matches before one final newline: /v1/health\n is /v1/health.
func TestFinalNewlineMatches(t *testing.T) {
	a := MustServe(t)
	r := a.Call(t, "GET", "/v1/health%0A", "")
	assert.Equal(t, 200, r.Status)
	assert.Equal(t, `{"status":"ok"}`, r.Body)
	r = a.Call(t, "GET", "/v1/users/%0A", "", "x-api-key: "+keyAll)
	assert.Equal(t, 200, r.Status, r.Body)
	assert.True(t, r.JSON("items").IsArray(), r.Body)
	r = a.Call(t, "GET", "/v1/webhooks/subscriptions%0A", "", "x-api-key: "+keyAll)
	assert.Equal(t, 200, r.Status, r.Body)
	assert.True(t, r.JSON("subscriptions").IsArray(), r.Body)
	r = a.Call(t, "GET", "/v1/users/%0A", "")
	assert.Equal(t, 401, r.Status, "the route's checks run as on /v1/users/")

	r = a.Call(t, "DELETE", "/v1/health%0A", "")
	assert.Equal(t, 405, r.Status, "a matched path with another method")
	assert.Equal(t, "GET", r.Header.Get("Allow"))
	r = a.Call(t, "GET", "/v1/health%0A%0A", "")
	assert.Equal(t, 404, r.Status, "one final newline only")
	r = a.Call(t, "GET", "/v1/health/%0A", "")
	assert.Equal(t, 404, r.Status)
	r = a.Call(t, "GET", "/v1/health%0A/", "")
	assert.Equal(t, 307, r.Status, "the redirect's stripped path matches before its newline")
	assert.Equal(t, a.URL+"/v1/health%0A", r.Header.Get("Location"))
}

// TestInvalidPercentEscapeIsRouted: uvicorn decodes the path with urllib.parse.unquote, which
// leaves an invalid escape as it is (uvicorn/protocols/http/h11_impl.py: path =
// unquote(raw_path.decode("ascii"))), so /v1/transactions/%zz/ is routed with transaction_id
// "%zz"; Go's net/http would refuse the request line with a plain-text 400.
func TestInvalidPercentEscapeIsRouted(t *testing.T) {
	a := MustServe(t)
	host := "Host: " + a.Listener.Addr().String() + "\r\n"
	for _, id := range []string{"%zz", "%", "%2", "%%41", "a%g0"} {
		res, body := raw(t, a, "GET /v1/transactions/"+id+"/ HTTP/1.1\r\n"+host+"x-api-key: "+keyAll+"\r\nConnection: close\r\n\r\n")
		assert.Equal(t, 404, res.StatusCode, id)
		assert.Equal(t, "application/json", res.Header.Get("Content-Type"), id)
		assert.Equal(t, `{"detail":"transaction not found"}`, body, id)
		res, body = raw(t, a, "GET /v1/transactions/"+id+"/ HTTP/1.1\r\n"+host+"Connection: close\r\n\r\n")
		assert.Equal(t, 401, res.StatusCode, id)
		assert.Equal(t, `{"detail":"Not authenticated"}`, body, id)
	}
	res, body := raw(t, a, "GET /v1/users/%zz HTTP/1.1\r\n"+host+"Connection: close\r\n\r\n")
	assert.Equal(t, 307, res.StatusCode, body)
	assert.Equal(t, a.URL+"/v1/users/%zz/", res.Header.Get("Location"), "the invalid escape kept as sent")
	res, body = raw(t, a, "GET /nope%zz HTTP/1.1\r\n"+host+"Connection: close\r\n\r\n")
	assert.Equal(t, 404, res.StatusCode)
	assert.Equal(t, `{"detail":"Not Found"}`, body)
}

// TestInvalidPercentEscapeKeepsTheConnection: the request after one with an invalid escape on the
// same connection, and bodies that hold such text, pass as sent.
func TestInvalidPercentEscapeKeepsTheConnection(t *testing.T) {
	a := MustServe(t)
	host := "Host: " + a.Listener.Addr().String() + "\r\n"
	conn, err := net.Dial("tcp", a.Listener.Addr().String())
	require.NoError(t, err)
	defer conn.Close()
	require.NoError(t, conn.SetDeadline(time.Now().Add(10*time.Second)))
	body := `{"user_account_id":"GET /%zz HTTP/1.1","user_account_id_type":"platform"}`
	chunked := fmt.Sprintf("%x\r\n%s\r\n%X;ext=1\r\n%s\r\n0\r\nX-Trailer: GET /%%zz HTTP/1.1\r\n\r\n", 31, body[:31], len(body)-31, body[31:])
	_, err = io.WriteString(conn, ""+
		"GET /v1/transactions/%zz/ HTTP/1.1\r\n"+host+"\r\n"+
		"POST /v1/sessions/revoke/ HTTP/1.1\r\n"+host+"x-api-key: "+keySessions+"\r\nContent-Length: "+strconv.Itoa(len(body))+"\r\n\r\n"+body+
		"GET /v1/health%2 HTTP/1.1\r\n"+host+"\r\n"+
		// Last: a chunked request closes its connection once answered (decisions D18).
		"POST /v1/sessions/revoke/ HTTP/1.1\r\n"+host+"x-api-key: "+keySessions+"\r\nTransfer-Encoding: chunked\r\n\r\n"+chunked)
	require.NoError(t, err)
	br := bufio.NewReader(conn)
	for i, want := range []struct {
		status int
		body   string
	}{
		{401, `{"detail":"Not authenticated"}`},
		{404, `{"detail":"no member matches user_account_id"}`},
		{404, `{"detail":"Not Found"}`},
		{404, `{"detail":"no member matches user_account_id"}`},
	} {
		res, err := http.ReadResponse(br, nil)
		require.NoError(t, err, "answer %d", i)
		b, _ := io.ReadAll(res.Body)
		res.Body.Close()
		assert.Equal(t, want.status, res.StatusCode, "answer %d: %s", i, b)
		assert.Equal(t, want.body, string(b), "answer %d", i)
	}
}

// TestDocsTrailingSlashes: FastAPI's /docs is a Starlette Route; /docs// strips every trailing
// slash (Router.app: redirect_scope["path"].rstrip("/")) and finds it: 307 to /docs.
func TestDocsTrailingSlashes(t *testing.T) {
	a := MustServe(t)
	for _, p := range []string{"/docs/", "/docs//", "/docs///"} {
		r := a.Call(t, "GET", p, "")
		assert.Equal(t, 307, r.Status, p)
		assert.Equal(t, a.URL+"/docs", r.Header.Get("Location"), p)
	}
}
