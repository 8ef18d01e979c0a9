package httpapi_test

import (
	"io"
	"net/http"
	"net/netip"
	"net/url"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"github.com/tidwall/gjson"

	"github.com/partnersim/partnersim/internal/sandboxtest"
	"github.com/partnersim/partnersim/simulator/sandbox"
)

// hostCall sends one request with the given Host header, as a page whose name re-resolves to
// the sandbox's address would, and returns the status and body.
func hostCall(t *testing.T, a *api, method, path, host string, headers ...string) (int, string) {
	t.Helper()
	req, err := http.NewRequest(method, a.URL+path, strings.NewReader(""))
	require.NoError(t, err)
	req.Host = host
	for _, h := range headers {
		k, v, ok := strings.Cut(h, ": ")
		if !ok {
			continue
		}
		req.Header.Set(k, v)
	}
	res, err := http.DefaultTransport.RoundTrip(req)
	require.NoError(t, err)
	defer res.Body.Close()
	b, err := io.ReadAll(res.Body)
	require.NoError(t, err)
	return res.StatusCode, string(b)
}

// A loopback-bound sandbox answers only loopback Host names and addresses (and --allowed-host):
// any other Host is a page that re-resolved its name to 127.0.0.1 (DNS rebinding), refused with
// 421 before routing, whatever it asks for (decisions D18).
func TestLoopbackSandboxRefusesForeignHosts(t *testing.T) {
	a := MustServe(t)
	for _, host := range []string{"localhost", "localhost:8080", "LocalHost.:8080", "app.localhost:3000", "127.0.0.1", "127.0.0.1:8080",
		"127.9.9.9:1", "[::1]:8080", "[::1]"} {
		status, body := hostCall(t, a, "GET", "/health", host)
		assert.Equal(t, http.StatusOK, status, "Host %q: %s", host, body)
	}
	for _, host := range []string{"rebind.attacker.example", "rebind.attacker.example:8080", "localhost.attacker.example",
		"127.0.0.1.nip.io", "10.0.0.5:8080", "[::ffff:7f00:1]:8080x", "[::2]:80", "evil.com:8080@localhost"} {
		for _, call := range [][3]string{
			{"GET", "/health", ""},
			{"GET", "/_sandbox/institutions", "x-sandbox-token: " + token},
			{"POST", "/_sandbox/ui/signin", "Content-Type: application/x-www-form-urlencoded"},
			{"GET", "/v1/users/", "x-api-key: " + keyAll},
			{"GET", "/docs", ""},
			{"GET", "/no/such/path", ""},
		} {
			status, body := hostCall(t, a, call[0], call[1], host, call[2])
			assert.Equal(t, http.StatusMisdirectedRequest, status, "Host %q %s %s", host, call[0], call[1])
			assert.JSONEq(t, `{"detail":"Misdirected Request"}`, body, "Host %q %s %s", host, call[0], call[1])
		}
	}

	allowed := MustServe(t, func(c *sandbox.Config) { c.AllowedHosts = []string{"sandbox.test", ".dev.internal"} })
	for host, want := range map[string]int{
		"sandbox.test": 200, "SANDBOX.test.:8080": 200, "a.dev.internal": 200, "dev.internal": 200, "localhost": 200,
		"other.test": 421, "xsandbox.test": 421, "sandbox.test.evil": 421, "adev.internal": 421,
	} {
		status, _ := hostCall(t, allowed, "GET", "/health", host)
		assert.Equal(t, want, status, "allowed hosts, Host %q", host)
	}
}

// Beyond loopback any Host is answered (a container's published port is reached by whatever
// name the network gives it), unless --allowed-host narrows it (decisions D18).
func TestExposedSandboxHosts(t *testing.T) {
	own := "an-operator-secret-of-24+chars"
	open := MustServe(t, func(c *sandbox.Config) { c.Exposed, c.SandboxToken = true, own })
	for _, host := range []string{"sandbox.ci.internal:8080", "10.0.0.5:8080", "localhost"} {
		status, _ := hostCall(t, open, "GET", "/health", host)
		assert.Equal(t, http.StatusOK, status, "Host %q", host)
	}
	narrow := MustServe(t, func(c *sandbox.Config) {
		c.Exposed, c.SandboxToken, c.AllowedHosts = true, own, []string{"sandbox.ci.internal"}
	})
	for host, want := range map[string]int{"sandbox.ci.internal:8080": 200, "127.0.0.1:8080": 200, "10.0.0.5:8080": 421, "evil.example": 421} {
		status, _ := hostCall(t, narrow, "GET", "/health", host)
		assert.Equal(t, want, status, "Host %q", host)
	}
}

// An exposed sandbox refuses callbacks whose IPv6 address embeds a loopback or private IPv4
// address (decisions D18), as it refuses the IPv4 address itself.
func TestSubscribeRefusesEmbeddedPrivateIPv4(t *testing.T) {
	a := MustServe(t, func(c *sandbox.Config) { c.Exposed, c.SandboxToken = true, "an-operator-secret-of-24+chars" })
	for _, u := range []string{"https://[2002:7f00:1::]/h", "https://[::127.0.0.1]/h", "https://[2002:c0a8:101::]/h",
		"https://[64:ff9b::a9fe:a9fe]/h", "https://[2001:0:4136:e378:8000:63bf:80ff:fffe]/h"} {
		r := a.Call(t, "POST", "/v1/webhooks/subscriptions", `{"event_type":"kyc","url":"`+u+`"}`, "x-api-key: "+keyHooks)
		assert.Equal(t, http.StatusBadRequest, r.Status, "%s: %s", u, r.Body)
		assert.Contains(t, r.JSON("detail").String(), "public address", u)
	}
}

// --no-published-keys (decisions D18): the fixture set's published keys answer as unknown keys
// do — anyone who reaches an exposed sandbox knows them — while keys made through the control
// plane work; after a reset they stay refused.
func TestNoPublishedKeys(t *testing.T) {
	a := MustServe(t, func(c *sandbox.Config) { c.NoPublishedKeys = true })
	r := a.Call(t, http.MethodGet, "/v1/users/?per_page=1", "", "x-api-key: "+keyAll)
	assert.Equal(t, http.StatusUnauthorized, r.Status, "a published key: %s", r.Body)
	assert.Equal(t, `{"detail":"Invalid API key"}`, r.Body)
	_, key := a.tenant(t, "", "")
	r = a.Call(t, http.MethodGet, "/v1/users/?per_page=1", "", "x-api-key: "+key)
	assert.Equal(t, http.StatusOK, r.Status, "a key of the operator's: %s", r.Body)
	a.MustControl(t, http.MethodPost, "/_sandbox/reset", "")
	r = a.Call(t, http.MethodGet, "/v1/users/?per_page=1", "", "x-api-key: "+keyAll)
	assert.Equal(t, http.StatusUnauthorized, r.Status, "a published key after a reset: %s", r.Body)

	r = MustServe(t).Call(t, http.MethodGet, "/v1/users/?per_page=1", "", "x-api-key: "+keyAll)
	assert.Equal(t, http.StatusOK, r.Status, "without the flag the published keys work: %s", r.Body)
}

var clientFrom = sandboxtest.ClientFrom

func send(t *testing.T, c *http.Client, req *http.Request) (int, http.Header, string) {
	t.Helper()
	res, err := c.Do(req)
	require.NoError(t, err)
	defer res.Body.Close()
	b, err := io.ReadAll(res.Body)
	require.NoError(t, err)
	return res.StatusCode, res.Header, string(b)
}

func tokenCall(t *testing.T, a *api, c *http.Client, tok string) (int, http.Header, string) {
	t.Helper()
	req, err := http.NewRequest("GET", a.URL+"/_sandbox/institutions", nil)
	require.NoError(t, err)
	req.Header.Set("x-sandbox-token", tok)
	return send(t, c, req)
}

func signIn(t *testing.T, a *api, c *http.Client, tok string) (int, http.Header, string) {
	t.Helper()
	req, err := http.NewRequest("POST", a.URL+"/_sandbox/ui/signin", strings.NewReader(url.Values{"token": {tok}, "next": {"/_sandbox/ui/"}}.Encode()))
	require.NoError(t, err)
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	return send(t, c, req)
}

// assertThrottled checks a 429 with a Retry-After of at most the one-minute window.
func assertThrottled(t *testing.T, status int, h http.Header, what string) {
	t.Helper()
	assert.Equal(t, http.StatusTooManyRequests, status, what)
	secs, err := strconv.Atoi(h.Get("Retry-After"))
	require.NoError(t, err, "%s: Retry-After %q", what, h.Get("Retry-After"))
	assert.True(t, secs >= 1 && secs <= 60, "%s: Retry-After %d, want 1..60", what, secs)
}

// answer is one token check's status, headers and body.
type answer struct {
	status int
	header http.Header
	body   string
}

// guessedOut makes 20 failed token checks from c on a fresh sandbox (guess makes the i-th,
// from 0), then checks a 21st wrong token and the right one with check, and returns the sandbox
// and those two answers — made again on a fresh sandbox when a run straddles a minute's end
// (sandboxtest.InOneTokenWindow).
func guessedOut(t *testing.T, guess func(a *api, i int), check func(a *api, tok string) (int, http.Header, string)) (a *api, wrong, right answer) {
	sandboxtest.InOneTokenWindow(func(int) bool {
		a = MustServe(t)
		for i := range 20 {
			guess(a, i)
		}
		wrong.status, wrong.header, wrong.body = check(a, "guess-21")
		right.status, right.header, right.body = check(a, token)
		return wrong.status == http.StatusTooManyRequests && right.status == http.StatusTooManyRequests
	})
	return a, wrong, right
}

// Failed x-sandbox-token checks are throttled per client address (decisions D18): after 20 in
// a minute every token check from that address is answered 429 with Retry-After — the right
// token too, or a guesser would learn it from the first non-429 — while other addresses and
// the partner API go on.
func TestWrongSandboxTokensAreThrottledPerAddress(t *testing.T) {
	guesser, other := clientFrom("127.0.0.1"), clientFrom("127.0.0.2")
	a, wrong, right := guessedOut(t, func(a *api, i int) {
		status, _, body := tokenCall(t, a, guesser, "guess-"+strconv.Itoa(i))
		require.Equal(t, http.StatusUnauthorized, status, "guess %d: %s", i+1, body)
	}, func(a *api, tok string) (int, http.Header, string) { return tokenCall(t, a, guesser, tok) })
	assertThrottled(t, wrong.status, wrong.header, "the 21st wrong token")
	assert.Contains(t, gjson.Get(wrong.body, "detail").String(), "Retry-After")
	assertThrottled(t, right.status, right.header, "the right token from the throttled address")

	status, _, body := tokenCall(t, a, other, token)
	assert.Equal(t, http.StatusOK, status, "another address: %s", body)
	req, err := http.NewRequest("GET", a.URL+"/v1/users/?per_page=1", nil)
	require.NoError(t, err)
	req.Header.Set("x-api-key", keyAll)
	status, _, body = send(t, guesser, req)
	assert.Equal(t, http.StatusOK, status, "the partner API is not the token's: %s", body)

	// A missing token is no guess.
	b := MustServe(t)
	for range 30 {
		status, _, _ = tokenCall(t, b, guesser, "")
		require.Equal(t, http.StatusUnauthorized, status)
	}
	status, _, _ = tokenCall(t, b, guesser, token)
	assert.Equal(t, http.StatusOK, status)
}

// The console's sign-in is the same token check, counted in the same table (decisions D18).
func TestWrongConsoleSignInsAreThrottled(t *testing.T) {
	c := clientFrom("127.0.0.1")
	a, wrong, right := guessedOut(t, func(a *api, i int) {
		if i < 15 {
			status, _, body := signIn(t, a, c, "guess-"+strconv.Itoa(i))
			require.Equal(t, http.StatusUnauthorized, status, "sign-in %d: %.200s", i+1, body)
			return
		}
		status, _, _ := tokenCall(t, a, c, "header-guess-"+strconv.Itoa(i))
		require.Equal(t, http.StatusUnauthorized, status)
	}, func(a *api, tok string) (int, http.Header, string) { return signIn(t, a, c, tok) })
	assertThrottled(t, wrong.status, wrong.header, "the 21st wrong check, a sign-in")
	assert.Contains(t, wrong.body, "Too many")
	assertThrottled(t, right.status, right.header, "the right token from the throttled address")
	assert.Empty(t, right.header.Values("Set-Cookie"), "no session for a throttled sign-in")
	status, _, _ := signIn(t, a, clientFrom("127.0.0.3"), token)
	assert.Equal(t, http.StatusSeeOther, status, "another address signs in")
}

// Behind a reverse proxy every client shares the proxy's address (decisions D18): with the
// proxy's range given as a trusted proxy, the client counted is the right-most address of
// X-Forwarded-For that is not a trusted proxy, so 20 wrong tokens from one client throttle that
// client only; from any other peer the header is ignored.
func TestTrustedProxyThrottlesTheClient(t *testing.T) {
	var a *api
	proxy := clientFrom("127.0.0.1")
	via := func(c *http.Client, xff, tok string) (int, http.Header) {
		req, err := http.NewRequest("GET", a.URL+"/_sandbox/institutions", nil)
		require.NoError(t, err)
		req.Header.Set("x-sandbox-token", tok)
		if xff != "" {
			req.Header.Set("X-Forwarded-For", xff)
		}
		status, h, _ := send(t, c, req)
		return status, h
	}
	var status int
	var h http.Header
	sandboxtest.InOneTokenWindow(func(int) bool {
		a = MustServe(t, func(c *sandbox.Config) { c.TrustedProxies = []netip.Prefix{netip.MustParsePrefix("127.0.0.1/32")} })
		for i := range 20 {
			status, _ := via(proxy, "198.51.100.1, 203.0.113.5", "guess-"+strconv.Itoa(i))
			require.Equal(t, http.StatusUnauthorized, status, "guess %d", i+1)
		}
		status, h = via(proxy, "203.0.113.5", token)
		return status == http.StatusTooManyRequests
	})
	assertThrottled(t, status, h, "the guessing client, through the proxy")
	status, _ = via(proxy, "203.0.113.6", token)
	assert.Equal(t, http.StatusOK, status, "another client through the same proxy")
	status, _ = via(proxy, "", token)
	assert.Equal(t, http.StatusOK, status, "the proxy itself")

	// From a peer that is not a trusted proxy the header is ignored: its guesses count against
	// the peer, whatever client it names.
	sandboxtest.InOneTokenWindow(func(run int) bool {
		other := clientFrom("127.0.0." + strconv.Itoa(2+run))
		for i := range 20 {
			status, _ := via(other, "192.0.2."+strconv.Itoa(i+1), "guess-"+strconv.Itoa(i))
			require.Equal(t, http.StatusUnauthorized, status, "guess %d", i+1)
		}
		status, h = via(other, "192.0.2.200", token)
		return status == http.StatusTooManyRequests
	})
	assertThrottled(t, status, h, "an untrusted peer naming a new client")
}
