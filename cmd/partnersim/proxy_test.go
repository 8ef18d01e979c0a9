package main

import (
	"bytes"
	"context"
	"encoding/json"
	"encoding/xml"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	junit "github.com/joshdk/go-junit"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/partnersim/partnersim/internal/sandboxtest"
)

// proxying is a `partnersim proxy` running in the test.
type proxying struct {
	url  string
	out  *sandboxtest.Buffer
	stop func() error
}

func startProxy(t *testing.T, args ...string) *proxying {
	t.Helper()
	out := &sandboxtest.Buffer{}
	return startProxyTo(t, out, out, args...)
}

// startProxyTo starts a proxy writing its output to stdout, which ends in out.
func startProxyTo(t *testing.T, stdout io.Writer, out *sandboxtest.Buffer, args ...string) *proxying {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() {
		done <- run(ctx, cli("proxy", append([]string{"--addr", "127.0.0.1:0"}, args...)...), noEnv, stdout, &sandboxtest.Buffer{})
	}()
	stopped := false
	var err error
	stop := func() error {
		if !stopped {
			cancel() // what SIGINT and SIGTERM do through main's NotifyContext
			err, stopped = <-done, true
		}
		return err
	}
	t.Cleanup(func() { stop() })
	return &proxying{url: "http://" + waitOutput(t, out, `proxy listening on (\S+)`)[1], out: out, stop: stop}
}

func get(t *testing.T, url string, headers ...string) sandboxtest.Response {
	t.Helper()
	client := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	return sandboxtest.Do(t, client, http.MethodGet, url, "", "", headers...)
}

// The reports are written when the proxy stops, one testcase per rule, and read back through a
// JUnit library with the counts they claim.
func TestProxyReportsReadBack(t *testing.T) {
	base := startServe(t)
	dir := t.TempDir()
	p := startProxy(t, "--upstream", base, "--fail-on", "violations", "--record", filepath.Join(dir, "set"), "--report", "junit="+filepath.Join(dir, "proxy.xml"),
		"--report", "json="+filepath.Join(dir, "proxy.json"), "--report", "sarif="+filepath.Join(dir, "proxy.sarif"))
	key := "x-api-key: sbx_harborAllScopes0000000000000000000000001"
	r := get(t, p.url+"/v1/users/?per_page=3", key)
	require.Equal(t, 200, r.Status, r.Body)
	assert.Equal(t, 200, get(t, p.url+"/v1/users/?per_page=3&last_record_number=3", key).Status)
	assert.Equal(t, 422, get(t, p.url+"/v1/users/?per_page=0", key).Status) // the app's 422
	assert.Equal(t, 307, get(t, p.url+"/v1/users?per_page=1", key).Status)  // a missing trailing slash
	req, _ := http.NewRequest(http.MethodGet, p.url+"/v1/users/", nil)
	req.Host = "evil.example" // a name that rebinds to loopback: D18 answers 421
	res, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	res.Body.Close()
	assert.Equal(t, http.StatusMisdirectedRequest, res.StatusCode)
	require.NoError(t, p.stop(), "no violation: --fail-on violations exits 0\n%s", p.out)
	assert.NotContains(t, p.out.String(), "sbx_harbor", "a key reached the output")
	out, errOut, err := runCLI("fixtures", "check", filepath.Join(dir, "set"))
	require.NoError(t, err, "the recorded set:\n%s\n%s", out, errOut)

	b, err := os.ReadFile(filepath.Join(dir, "proxy.xml"))
	require.NoError(t, err)
	var attrs struct {
		Tests    int `xml:"tests,attr"`
		Failures int `xml:"failures,attr"`
		Skipped  int `xml:"skipped,attr"`
	}
	require.NoError(t, xml.Unmarshal(b, &attrs))
	suites, err := junit.Ingest(b)
	require.NoError(t, err)
	var total junit.Totals
	failed := map[string]bool{}
	for _, s := range suites {
		total.Tests += s.Totals.Tests
		total.Failed += s.Totals.Failed
		total.Skipped += s.Totals.Skipped
		total.Error += s.Totals.Error
		for _, tc := range s.Tests {
			switch tc.Status {
			case junit.StatusFailed:
				failed[tc.Name] = true
			case junit.StatusSkipped:
				assert.Contains(t, tc.Message, "not observed", tc.Name)
			}
		}
	}
	assert.Equal(t, attrs.Tests, total.Tests, "testcases as claimed")
	assert.Equal(t, attrs.Failures, total.Failed, "failures as claimed")
	assert.Equal(t, attrs.Skipped, total.Skipped, "skips as claimed")
	assert.Zero(t, total.Error)
	assert.Equal(t, map[string]bool{"lint.app-422": true, "lint.trailing-slash": true, "lint.walk-stopped-early": true}, failed)

	var rep struct {
		Passed, Failed int
		Skipped        int `json:"not_observed"`
		Rules          []struct{ ID, Status string }
	}
	b, err = os.ReadFile(filepath.Join(dir, "proxy.json"))
	require.NoError(t, err)
	require.NoError(t, json.Unmarshal(b, &rep))
	assert.Equal(t, total.Tests, len(rep.Rules))
	assert.Equal(t, total.Failed, rep.Failed)
	assert.Equal(t, total.Skipped, rep.Skipped)
	var sarif struct {
		Runs []struct{ Results []struct{ RuleID string } }
	}
	b, err = os.ReadFile(filepath.Join(dir, "proxy.sarif"))
	require.NoError(t, err)
	require.NoError(t, json.Unmarshal(b, &sarif))
	require.Len(t, sarif.Runs, 1)
	assert.Len(t, sarif.Runs[0].Results, 3)
}

// An upstream that answers something other than JSON, or none at all, is passed through with a
// violation, and --fail-on violations makes the run fail.
func TestProxyPassesABrokenUpstreamThrough(t *testing.T) {
	odd := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("X-Request-Id", "r1")
		w.Header().Set("Content-Type", "text/html")
		io.WriteString(w, "<html>maintenance</html>")
	}))
	t.Cleanup(odd.Close)
	p := startProxy(t, "--upstream", odd.URL, "--openapi", "off", "--fail-on", "violations")
	r := get(t, p.url+"/v1/users/", "x-api-key: k")
	assert.Equal(t, "<html>maintenance</html>", r.Body, "the answer passes unchanged")
	assert.ErrorIs(t, p.stop(), errReported)
	assert.Contains(t, p.out.String(), "violation shape.json: GET /v1/users/ → 200: expected a JSON body")

	down := httptest.NewServer(http.NotFoundHandler())
	down.Close() // nothing listens there any more
	p = startProxy(t, "--upstream", down.URL, "--openapi", "off")
	assert.Equal(t, http.StatusBadGateway, get(t, p.url+"/v1/users/").Status)
	require.NoError(t, p.stop())
	assert.True(t, strings.Contains(p.out.String(), "violation upstream.reachable: GET /v1/users/ → no answer"), p.out.String())
}

// `partnersim load --scenario mix` through the proxy against the sandbox: every request
// answers as it does directly (load counts errors) and the proxy sees no violation.
func TestLoadMixThroughTheProxy(t *testing.T) {
	if testing.Short() {
		t.Skip("drives load: not in -short")
	}
	base := startServe(t)
	dir := t.TempDir()
	p := startProxy(t, "--upstream", base, "--fail-on", "violations", "--report", "json="+filepath.Join(dir, "proxy.json"))
	out, errOut, err := runCLI("load", "--target", p.url, "--scenario", "mix", "--connections", "4", "--duration", "2s", "--warmup", "0s", "--no-ceiling")
	require.NoError(t, err, "%s\n%s", out, errOut)
	require.NoError(t, p.stop(), "--fail-on violations:\n%s", p.out)
	var rep struct {
		Rules []struct {
			ID, Kind, Status string
			Observed         int
		}
	}
	b, err := os.ReadFile(filepath.Join(dir, "proxy.json"))
	require.NoError(t, err)
	require.NoError(t, json.Unmarshal(b, &rep))
	for _, r := range rep.Rules {
		t.Logf("%-40s %-12s observed %d", r.ID, r.Status, r.Observed)
		if r.Kind == "violation" {
			assert.NotEqual(t, "failed", r.Status, r.ID)
		}
	}
}

// The proxy's --allowed-host is the sandbox's (decisions D18): ".", "*", a wildcard or an
// empty value would answer every Host, so the proxy refuses to start, as serve does.
func TestProxyAllowedHostRefusesEveryName(t *testing.T) {
	for _, h := range []string{".", "*", "", " ", "*.example.test", "..", ".example..test", "http://app.test:8080"} {
		var out bytes.Buffer
		// A proxy that starts returns nil when the context ends.
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		err := run(ctx, cli("proxy", "--addr", "127.0.0.1:0", "--upstream", "http://127.0.0.1:1", "--openapi", "off", "--allowed-host", h), noEnv, &out, &out)
		cancel()
		if assert.Error(t, err, "--allowed-host %q started", h) {
			assert.Contains(t, err.Error(), "--allowed-host", "--allowed-host %q", h)
		}
	}
}

// A sandbox token goes only to a sandbox: in front of an upstream that serves no control plane
// the proxy sends no report, whatever token the environment holds (one exported for a local
// sandbox must not reach a staging deployment).
func TestProxySendsTheSandboxTokenOnlyToASandbox(t *testing.T) {
	var tokens atomic.Int64
	up := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("X-Sandbox-Token") != "" {
			tokens.Add(1)
		}
		w.Header().Set("Content-Type", "application/json")
		w.Header().Set("X-Request-Id", "r1")
		io.WriteString(w, `{"items":[]}`)
	}))
	t.Cleanup(up.Close)
	p := startProxy(t, "--upstream", up.URL, "--openapi", "off", "--sandbox-token", "psim_a_local_sandbox_token")
	get(t, p.url+"/v1/users/", "x-api-key: k")
	require.NoError(t, p.stop())
	assert.Zero(t, tokens.Load(), "the sandbox token was sent to an upstream that is no sandbox")
	assert.NotContains(t, p.out.String(), "QA console", "the banner promised a console page")
}

// heldOut is a terminal nobody reads from the proxy's first finding on: its worker is held
// there, and the checks fall behind the traffic, until the test releases it.
type heldOut struct {
	*sandboxtest.Buffer
	once    sync.Once
	held    chan struct{}
	release chan struct{}
}

func (h *heldOut) Write(b []byte) (int, error) {
	if bytes.HasPrefix(b, []byte("lint ")) || bytes.HasPrefix(b, []byte("violation ")) {
		h.once.Do(func() {
			close(h.held)
			<-h.release
		})
	}
	return h.Buffer.Write(b)
}

// With --when-behind shed the app is answered while the checks are held, what the queue cannot
// take goes unchecked, and --fail-on violations fails the run for it, naming --when-behind wait,
// though no violation was seen. The default, wait, is the package's test (the app waits there).
func TestProxyFailsARunWithUncheckedExchanges(t *testing.T) {
	up := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("X-Request-Id", "r1")
		if r.URL.Path == "/v1/users" {
			w.Header().Set("Location", "/v1/users/") // the app's lint: a missing slash
			w.WriteHeader(http.StatusTemporaryRedirect)
			return
		}
		w.Header().Set("Content-Type", "application/json")
		io.WriteString(w, `{"items":[]}`)
	}))
	t.Cleanup(up.Close)
	out := &heldOut{Buffer: &sandboxtest.Buffer{}, held: make(chan struct{}), release: make(chan struct{})}
	released := sync.OnceFunc(func() { close(out.release) })
	t.Cleanup(released)
	p := startProxyTo(t, out, out.Buffer, "--upstream", up.URL, "--openapi", "off", "--poll-interval", "0", "--when-behind", "shed", "--fail-on", "violations")
	assert.Equal(t, http.StatusTemporaryRedirect, get(t, p.url+"/v1/users").Status)
	<-out.held
	const queue, extra = 4096, 40 // the proxy's queue, and the exchanges past it
	client := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 8}}
	var wg sync.WaitGroup
	for w := range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := w; i < queue+extra; i += 8 {
				if r := sandboxtest.Do(t, client, http.MethodGet, fmt.Sprintf("%s/v1/users/?n=%d", p.url, i), "", ""); r.Status != http.StatusOK {
					t.Errorf("exchange %d: %d %s", i, r.Status, r.Body)
					return
				}
			}
		}()
	}
	wg.Wait() // every answer, the checks held: shed never makes the app wait
	released()
	assert.ErrorIs(t, p.stop(), errReported)
	assert.Contains(t, p.out.String(), "partnersim proxy stopped: 0 violations")
	assert.Contains(t, p.out.String(), fmt.Sprintf("failed: --fail-on violations: %d exchanges forwarded unchecked", extra))
	assert.Contains(t, p.out.String(), "--when-behind wait (the default) checks every exchange")
}

// --when-behind takes wait or shed.
func TestProxyWhenBehindRefusesOtherValues(t *testing.T) {
	var out bytes.Buffer
	err := run(context.Background(), cli("proxy", "--addr", "127.0.0.1:0", "--upstream", "http://127.0.0.1:1", "--openapi", "off", "--when-behind", "drop"), noEnv, &out, &out)
	if assert.Error(t, err) {
		assert.Contains(t, err.Error(), `--when-behind "drop": want wait or shed`)
	}
}
