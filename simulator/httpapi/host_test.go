package httpapi_test

import (
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

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
