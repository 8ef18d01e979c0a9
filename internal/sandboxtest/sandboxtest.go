package sandboxtest

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/tidwall/gjson"

	"github.com/partnersim/partnersim/simulator/httpapi"
	"github.com/partnersim/partnersim/simulator/openapi/check"
	"github.com/partnersim/partnersim/simulator/sandbox"
)

// DefaultToken is the default fixtures' sandbox token.
const DefaultToken = "psim_sandbox_default_token_2026"

// Sandbox is a sandbox on a temp bbolt file behind a real HTTP server.
type Sandbox struct {
	*httptest.Server
	SB *sandbox.Sandbox
	// checked is the client every call goes through: no redirects followed, and every
	// exchange checked against the OpenAPI documents the sandbox serves (openapi/check).
	checked *http.Client
	checker *check.Checker
}

// MustServe starts a sandbox with the default fixtures (cfg may change its configuration) and
// stops it when the test ends.
func MustServe(tb testing.TB, cfg ...func(*sandbox.Config)) *Sandbox {
	tb.Helper()
	c := sandbox.Config{DBPath: filepath.Join(tb.TempDir(), "sandbox.db")}
	for _, f := range cfg {
		f(&c)
	}
	sb, err := sandbox.Open(context.Background(), c)
	if err != nil {
		tb.Fatalf("open the sandbox: %v", err)
	}
	srv := httptest.NewUnstartedServer(sb.Server)
	srv.Listener = sb.Listener(srv.Listener)
	srv.Config.ConnContext = httpapi.ConnContext // each answer in one write, as serve sends it
	srv.Start()
	tb.Cleanup(func() {
		srv.Close()
		if err := sb.Close(); err != nil {
			tb.Errorf("close the sandbox: %v", err)
		}
	})
	client, checker := checkedClient(tb, srv.URL)
	return &Sandbox{Server: srv, SB: sb, checked: client, checker: checker}
}

// Checker checks exchanges and webhook deliveries against the documents the sandbox serves.
func (s *Sandbox) Checker() *check.Checker { return s.checker }

// CheckedClient is the client Call uses: it follows no redirects and fails any exchange that
// disagrees with the OpenAPI documents the sandbox serves (the contract suite's self-hosted run
// uses it too).
func (s *Sandbox) CheckedClient() *http.Client { return s.checked }

// Response is a response read whole.
type Response struct {
	Status int
	Header http.Header
	Body   string
}

// JSON returns the value at a gjson path of the body.
func (r Response) JSON(path string) gjson.Result { return gjson.Get(r.Body, path) }

// Call makes one request; headers are "Name: value" strings; a body is sent as JSON unless a
// Content-Type header is given.
func (s *Sandbox) Call(tb testing.TB, method, path, body string, headers ...string) Response {
	tb.Helper()
	return Do(tb, s.checked, method, s.URL+path, "application/json", body, headers...)
}

// Do makes one request with client: a body, when given, is sent as contentType; headers are
// "Name: value" strings (a Content-Type among them wins). It returns the response read whole.
func Do(tb testing.TB, client *http.Client, method, url, contentType, body string, headers ...string) Response {
	tb.Helper()
	var rd io.Reader
	if body != "" {
		rd = strings.NewReader(body)
	}
	req, err := http.NewRequest(method, url, rd)
	if err != nil {
		tb.Fatalf("%s %s: %v", method, url, err)
	}
	if body != "" {
		req.Header.Set("Content-Type", contentType)
	}
	for _, h := range headers {
		k, v, _ := strings.Cut(h, ": ")
		req.Header.Set(k, v)
	}
	res, err := client.Do(req)
	if err != nil {
		tb.Fatalf("%s %s: %v", method, url, err)
	}
	defer res.Body.Close()
	b, err := io.ReadAll(res.Body)
	if err != nil {
		tb.Fatalf("%s %s: reading the body: %v", method, url, err)
	}
	return Response{Status: res.StatusCode, Header: res.Header, Body: string(b)}
}

// Get calls the partner API with a key.
func (s *Sandbox) Get(tb testing.TB, path, key string) Response {
	tb.Helper()
	return s.Call(tb, http.MethodGet, path, "", "x-api-key: "+key)
}

// Control calls the control plane with the sandbox's token.
func (s *Sandbox) Control(tb testing.TB, method, path, body string) Response {
	tb.Helper()
	return s.Call(tb, method, path, body, "x-sandbox-token: "+s.SB.Token)
}

// MustControl is Control that requires a 2xx.
func (s *Sandbox) MustControl(tb testing.TB, method, path, body string) Response {
	tb.Helper()
	r := s.Control(tb, method, path, body)
	if r.Status >= 300 {
		tb.Fatalf("%s %s: %d %s", method, path, r.Status, r.Body)
	}
	return r
}

// Eventually polls cond every few milliseconds until it holds, failing the test with msg when
// five seconds pass first. It asks the system; it never sleeps a guessed duration.
func Eventually(tb testing.TB, cond func() bool, msg string, args ...any) {
	tb.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			tb.Fatalf("timed out waiting: "+msg, args...)
		}
		time.Sleep(2 * time.Millisecond)
	}
}
