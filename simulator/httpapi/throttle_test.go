package httpapi_test

import (
	"context"
	"io"
	"net"
	"net/http"
	"net/netip"
	"net/url"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"github.com/tidwall/gjson"

	"github.com/partnersim/partnersim/simulator/sandbox"
)

// clientFrom returns a client whose connections come from the loopback address local, so a
// test can be two client addresses at once.
func clientFrom(local string) *http.Client {
	d := &net.Dialer{LocalAddr: &net.TCPAddr{IP: net.ParseIP(local)}}
	return &http.Client{Transport: &http.Transport{DialContext: func(ctx context.Context, network, addr string) (net.Conn, error) {
		return d.DialContext(ctx, network, addr)
	}}, CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
}

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

// Failed x-sandbox-token checks are throttled per client address (decisions D18): after 20 in
// a minute every token check from that address is answered 429 with Retry-After — the right
// token too, or a guesser would learn it from the first non-429 — while other addresses and
// the partner API go on.
func TestWrongSandboxTokensAreThrottledPerAddress(t *testing.T) {
	a := MustServe(t)
	guesser, other := clientFrom("127.0.0.1"), clientFrom("127.0.0.2")
	for i := range 20 {
		status, _, body := tokenCall(t, a, guesser, "guess-"+strconv.Itoa(i))
		require.Equal(t, http.StatusUnauthorized, status, "guess %d: %s", i+1, body)
	}
	status, h, body := tokenCall(t, a, guesser, "guess-21")
	assertThrottled(t, status, h, "the 21st wrong token")
	assert.Contains(t, gjson.Get(body, "detail").String(), "Retry-After")
	status, h, _ = tokenCall(t, a, guesser, token)
	assertThrottled(t, status, h, "the right token from the throttled address")

	status, _, body = tokenCall(t, a, other, token)
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
	a := MustServe(t)
	c := clientFrom("127.0.0.1")
	for i := range 15 {
		status, _, body := signIn(t, a, c, "guess-"+strconv.Itoa(i))
		require.Equal(t, http.StatusUnauthorized, status, "sign-in %d: %.200s", i+1, body)
	}
	for i := range 5 {
		status, _, _ := tokenCall(t, a, c, "header-guess-"+strconv.Itoa(i))
		require.Equal(t, http.StatusUnauthorized, status)
	}
	status, h, body := signIn(t, a, c, "guess-21")
	assertThrottled(t, status, h, "the 21st wrong check, a sign-in")
	assert.Contains(t, body, "Too many")
	status, h, _ = signIn(t, a, c, token)
	assertThrottled(t, status, h, "the right token from the throttled address")
	assert.Empty(t, h.Values("Set-Cookie"), "no session for a throttled sign-in")
	status, _, _ = signIn(t, a, clientFrom("127.0.0.3"), token)
	assert.Equal(t, http.StatusSeeOther, status, "another address signs in")
}

// Behind a reverse proxy every client shares the proxy's address (decisions D18): with the
// proxy's range given as a trusted proxy, the client counted is the right-most address of
// X-Forwarded-For that is not a trusted proxy, so 20 wrong tokens from one client throttle that
// client only; from any other peer the header is ignored.
func TestTrustedProxyThrottlesTheClient(t *testing.T) {
	a := MustServe(t, func(c *sandbox.Config) { c.TrustedProxies = []netip.Prefix{netip.MustParsePrefix("127.0.0.1/32")} })
	proxy, other := clientFrom("127.0.0.1"), clientFrom("127.0.0.2")
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
	for i := range 20 {
		status, _ := via(proxy, "198.51.100.1, 203.0.113.5", "guess-"+strconv.Itoa(i))
		require.Equal(t, http.StatusUnauthorized, status, "guess %d", i+1)
	}
	status, h := via(proxy, "203.0.113.5", token)
	assertThrottled(t, status, h, "the guessing client, through the proxy")
	status, _ = via(proxy, "203.0.113.6", token)
	assert.Equal(t, http.StatusOK, status, "another client through the same proxy")
	status, _ = via(proxy, "", token)
	assert.Equal(t, http.StatusOK, status, "the proxy itself")

	// From a peer that is not a trusted proxy the header is ignored: its guesses count against
	// the peer, whatever client it names.
	for i := range 20 {
		status, _ := via(other, "192.0.2."+strconv.Itoa(i+1), "guess-"+strconv.Itoa(i))
		require.Equal(t, http.StatusUnauthorized, status, "guess %d", i+1)
	}
	status, h = via(other, "192.0.2.200", token)
	assertThrottled(t, status, h, "an untrusted peer naming a new client")
}
