package main

import (
	"bytes"
	"context"
	"errors"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"regexp"
	"runtime"
	"runtime/debug"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"github.com/tidwall/gjson"

	"github.com/partnersim/partnersim/simulator/openapi"
)

// -h and --help print the command's help and succeed (exit 0) everywhere.
func TestHelpSucceedsEverywhere(t *testing.T) {
	for _, args := range [][]string{
		{"serve"}, {"receive"}, {"send"}, {"certify"}, {"contract"}, {"load"},
		{"trigger", "kyc"}, {"trigger", "clock"}, {"scenario", "run"}, {"scenario", "list"},
		{"snapshot", "save"}, {"snapshot", "restore"}, {"snapshot"}, {"scenario"}, {"trigger"},
		{"fixtures", "check"}, {"fixtures", "generate"},
		{"deliveries"}, {"events", "resend"}, {"events"}, {"secret", "rotate"}, {"secret"}, {"scenario", "show"},
	} {
		for _, h := range []string{"-h", "--help"} {
			var out, errOut bytes.Buffer
			full := append(append([]string{"partnersim"}, args...), h)
			err := run(context.Background(), full, noEnv, &out, &errOut)
			assert.NoError(t, err, strings.Join(full, " "))
			assert.NotEmpty(t, out.String()+errOut.String(), "%s prints its help", strings.Join(full, " "))
		}
	}
}

// Flags after positional arguments are flags: `snapshot save -h` must not
// save a snapshot named "-h", and `snapshot save NAME --sandbox-url …` reaches that URL.
func TestFlagsAfterPositionalArguments(t *testing.T) {
	rec := newControlRecorder(t, `{"snapshot":"nightly","action":"saved"}`)
	var out bytes.Buffer
	require.NoError(t, run(context.Background(), []string{"partnersim", "snapshot", "save", "-h", "--sandbox-url", rec.srv.URL}, noEnv, &out, &out))
	require.NoError(t, run(context.Background(), []string{"partnersim", "snapshot", "save", "nightly", "--sandbox-url", rec.srv.URL, "--sandbox-token", "t"}, noEnv, &out, &out))
	require.NoError(t, run(context.Background(), []string{"partnersim", "scenario", "run", "onboarding", "--sandbox-url", rec.srv.URL, "--sandbox-token", "t"}, noEnv, &out, &out))
	got := rec.got()
	assert.Equal(t, []string{"POST /_sandbox/snapshots/nightly", "POST /_sandbox/scenarios/onboarding/run"}, got[:min(2, len(got))])
	err := run(context.Background(), []string{"partnersim", "snapshot", "save", "a", "b", "--sandbox-url", rec.srv.URL}, noEnv, &out, &out)
	assert.ErrorContains(t, err, "one NAME")
}

// Serve on a busy port fails before touching the store.
func TestServeOnBusyPortLeavesTheStoreAlone(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	defer ln.Close()
	db := filepath.Join(t.TempDir(), "untouched.db")
	var out bytes.Buffer
	err = run(context.Background(), []string{"partnersim", "serve", "--addr", ln.Addr().String(), "--db", db}, noEnv, &out, &out)
	require.Error(t, err)
	assert.Contains(t, err.Error(), ln.Addr().String())
	_, statErr := os.Stat(db)
	assert.True(t, os.IsNotExist(statErr), "the store file was created: %v", statErr)
}

// Serve refuses a non-loopback address with the published token, saying why.
func TestServeExposedRefusesThePublishedToken(t *testing.T) {
	var out bytes.Buffer
	err := run(context.Background(), []string{"partnersim", "serve", "--addr", "0.0.0.0:0", "--db", filepath.Join(t.TempDir(), "s.db")}, noEnv, &out, &out)
	require.Error(t, err)
	assert.Contains(t, err.Error(), "published")
}

// controlRecorder is a stand-in control plane that records each request and answers answer.
type controlRecorder struct {
	mu       sync.Mutex
	requests []string // "METHOD /path body"
	tokens   []string
	srv      *httptest.Server
}

func newControlRecorder(t *testing.T, answer string) *controlRecorder {
	t.Helper()
	r := &controlRecorder{}
	r.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		body, _ := io.ReadAll(req.Body)
		r.mu.Lock()
		r.requests = append(r.requests, strings.TrimSpace(req.Method+" "+req.URL.RequestURI()+" "+string(body)))
		r.tokens = append(r.tokens, req.Header.Get("x-sandbox-token"))
		r.mu.Unlock()
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write([]byte(answer))
	}))
	t.Cleanup(r.srv.Close)
	return r
}

func (r *controlRecorder) got() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return slices.Clone(r.requests)
}

// Every trigger kind sends its own control-plane call with the flags it was given.
func TestTriggerKindsCallTheControlPlane(t *testing.T) {
	for _, c := range []struct {
		args []string
		want string
		out  string
	}{
		{[]string{"kyc", "--user", "usr_1", "--product", "crypto", "--status", "approved"},
			`POST /_sandbox/users/usr_1/kyc {"product":"crypto","status":"approved"}`, "kyc: the"},
		{[]string{"order", "--user", "usr_1", "--symbol", "AAPL", "--notional", "10"},
			`POST /_sandbox/orders {"notional":"10","platform_id":"usr_1","product":"securities","side":"buy","symbol":"AAPL"}`, "placed (pending)"},
		{[]string{"robo", "--user", "usr_1", "--amount", "100"},
			`POST /_sandbox/transactions {"amount":"100","platform_id":"usr_1","product":"robo","type":"deposit"}`, "robo deposit"},
		{[]string{"fill", "--transaction", "txn_1", "--price", "VTI=250.10,BND=72.40"},
			`POST /_sandbox/transactions/txn_1/fill {"price":{"BND":"72.40","VTI":"250.10"}}`, "transaction txn_1 is now"},
		{[]string{"cancel", "--transaction", "txn_1"}, `POST /_sandbox/transactions/txn_1/cancel`, "no event"},
		{[]string{"fail", "--transaction", "txn_1"}, `POST /_sandbox/transactions/txn_1/fail`, "no event"},
		{[]string{"clock", "--seconds", "300"}, `POST /_sandbox/clock/advance {"seconds":300}`, "virtual clock now"},
		{[]string{"clock", "--seconds", "300", "--institution", "ins_1"}, `POST /_sandbox/clock/advance {"institution_id":"ins_1","seconds":300}`,
			"virtual clock of ins_1 now"},
	} {
		rec := newControlRecorder(t, `{"now":"2026-01-01T00:00:00Z"}`)
		var out bytes.Buffer
		err := run(context.Background(), cli("trigger", append(c.args, "--sandbox-url", rec.srv.URL, "--sandbox-token", "tok")...), noEnv, &out, &out)
		require.NoError(t, err, "%v: %s", c.args, out.String())
		assert.Equal(t, c.want, strings.Join(rec.got(), "; "), "%v", c.args)
		assert.Contains(t, out.String(), c.out, "%v", c.args)
	}
}

// A trigger without a flag it needs says which, before any request.
func TestTriggerNeedsItsFlags(t *testing.T) {
	rec := newControlRecorder(t, `{}`)
	var out bytes.Buffer
	err := run(context.Background(), cli("trigger", "kyc", "--user", "usr_1", "--sandbox-url", rec.srv.URL), noEnv, &out, &out)
	require.Error(t, err)
	assert.Contains(t, err.Error(), "trigger kyc needs --product")
	assert.Contains(t, err.Error(), "trigger kyc needs --status")
	assert.NotContains(t, err.Error(), "--user")
	err = run(context.Background(), cli("trigger", "fill", "--sandbox-url", rec.srv.URL), noEnv, &out, &out)
	assert.ErrorContains(t, err, "trigger fill needs --transaction")
	err = run(context.Background(), cli("trigger", "cancel", "--price", "1", "--transaction", "txn_1"), noEnv, &out, &out)
	assert.ErrorContains(t, err, "unknown flag: --price", "only fill takes a price")
	err = run(context.Background(), cli("trigger", "refund"), noEnv, &out, &out)
	assert.ErrorContains(t, err, `unknown subcommand "refund"`)
	err = run(context.Background(), cli("trigger"), noEnv, &out, &out)
	assert.ErrorContains(t, err, "want a subcommand: cancel, clock, fail, fill, kyc, order, robo")
	assert.Empty(t, rec.got(), "no request was sent")
}

// Every flag of every command, verbs included, has its PARTNERSIM_<FLAG> twin; the command line
// wins over the environment, and a bad value names its variable.
func TestEnvironmentTwinsOfFlags(t *testing.T) {
	rec := newControlRecorder(t, `{"snapshot":"nightly","action":"saved","now":"2026-01-01T00:00:00Z"}`)
	env := func(k string) string {
		return map[string]string{"PARTNERSIM_SANDBOX_URL": rec.srv.URL, "PARTNERSIM_SANDBOX_TOKEN": "from-env", "PARTNERSIM_SECONDS": "oops"}[k]
	}
	var out bytes.Buffer
	require.NoError(t, run(context.Background(), cli("snapshot", "save", "nightly"), env, &out, &out))
	require.NoError(t, run(context.Background(), cli("snapshot", "restore", "nightly", "--sandbox-token", "from-flag"), env, &out, &out))
	assert.Equal(t, []string{"POST /_sandbox/snapshots/nightly", "POST /_sandbox/snapshots/nightly/restore"}, rec.got())
	rec.mu.Lock()
	assert.Equal(t, []string{"from-env", "from-flag"}, rec.tokens)
	rec.mu.Unlock()
	err := run(context.Background(), cli("trigger", "clock"), env, &out, &out)
	assert.ErrorContains(t, err, `PARTNERSIM_SECONDS="oops"`)
	require.NoError(t, run(context.Background(), cli("trigger", "clock", "--seconds", "5"), env, &out, &out), "a flag given wins over a bad variable")
}

// `partnersim completion SHELL` prints a script for each shell the README names.
func TestCompletionScripts(t *testing.T) {
	for _, shell := range []string{"bash", "zsh", "fish", "powershell"} {
		var out, errOut bytes.Buffer
		require.NoError(t, run(context.Background(), cli("completion", shell), noEnv, &out, &errOut), shell)
		assert.Contains(t, out.String(), "partnersim", shell)
		assert.Greater(t, out.Len(), 1000, "%s: a whole script", shell)
	}
}

// `partnersim version` renders the module version and the VCS stamp of the build info.
func TestVersion(t *testing.T) {
	var out bytes.Buffer
	require.NoError(t, run(context.Background(), cli("version"), noEnv, &out, &out))
	assert.True(t, strings.HasPrefix(out.String(), "partnersim "), out.String())
	assert.Contains(t, out.String(), runtime.Version())

	info := &debug.BuildInfo{GoVersion: "go1.99", Main: debug.Module{Path: "github.com/partnersim/partnersim", Version: "v1.4.0"},
		Settings: []debug.BuildSetting{{Key: "vcs.revision", Value: "0123abcd"}, {Key: "vcs.time", Value: "2026-11-24T21:00:00Z"}, {Key: "vcs.modified", Value: "true"}}}
	assert.Equal(t, "partnersim v1.4.0 commit 0123abcd (2026-11-24T21:00:00Z, modified) go1.99", versionLine(info))
	info.Settings, info.Main.Version = nil, ""
	assert.Equal(t, "partnersim (devel) commit unknown (built without VCS information) go1.99", versionLine(info))
	assert.Equal(t, "partnersim (no build information)", versionLine(nil))
}

// serve --allowed-host: a loopback-bound sandbox answers that Host besides loopback ones, and
// no other (decisions D18); a value with a scheme or port is refused with what to write.
func TestServeAllowedHost(t *testing.T) {
	c := startChild(t, filepath.Join(t.TempDir(), "s.db"), "--allowed-host", "sandbox.test", "--allowed-host", ".dev.test")
	for host, want := range map[string]int{"sandbox.test:8080": 200, "a.dev.test": 200, "localhost": 200, "rebind.example": 421} {
		req, err := http.NewRequest("GET", c.base+"/health", nil)
		require.NoError(t, err)
		req.Host = host
		res, err := http.DefaultClient.Do(req)
		require.NoError(t, err)
		res.Body.Close()
		assert.Equal(t, want, res.StatusCode, "Host %q", host)
	}
	var out bytes.Buffer
	err := run(context.Background(), []string{"partnersim", "serve", "--addr", "127.0.0.1:0", "--db", filepath.Join(t.TempDir(), "s.db"),
		"--allowed-host", "http://sandbox.test:8080"}, noEnv, &out, &out)
	require.Error(t, err)
	assert.Contains(t, err.Error(), "--allowed-host")
}

// serve's log lines write their times as every other value the sandbox emits (pydantic v2's
// datetime: Z, microseconds at most; decisions D5), so one parser reads them all.
func TestServeLogTimesAreThePydanticForm(t *testing.T) {
	serve := startCLI(t, noEnv, "serve", "--addr", "127.0.0.1:0", "--db", filepath.Join(t.TempDir(), "s.db"))
	stderr := serve.errOut
	waitOutput(t, stderr, `"msg":"serving"`)
	require.NoError(t, serve.stop())
	pydantic := regexp.MustCompile(`^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d{6})?Z$`)
	lines := strings.Split(strings.TrimSpace(stderr.String()), "\n")
	require.NotEmpty(t, lines)
	for _, line := range lines {
		ts := gjson.Get(line, "time").String()
		assert.True(t, pydantic.MatchString(ts), "log time %q in %s", ts, line)
	}
}

// `partnersim openapi` prints the documents the sandbox serves, indented, one per form of the
// command, and says what a malformed --api-version should look like.
func TestOpenAPIPrintsTheServedDocuments(t *testing.T) {
	for _, tc := range []struct {
		args []string
		doc  func() ([]byte, error)
	}{
		{nil, func() ([]byte, error) { return openapi.Partner([]string{"v1"}) }},
		{[]string{"--api-versions", "v1,v2"}, func() ([]byte, error) { return openapi.Partner([]string{"v1", "v2"}) }},
		{[]string{"--api-version", "v2"}, func() ([]byte, error) { return openapi.PartnerVersion("v2") }},
		{[]string{"--control-plane"}, openapi.ControlPlane},
		{[]string{"--state-adapter"}, openapi.StateAdapter},
	} {
		out, _, err := runCLI("openapi", tc.args...)
		require.NoError(t, err, tc.args)
		doc, err := tc.doc()
		require.NoError(t, err)
		want, err := openapi.Indented(doc)
		require.NoError(t, err)
		assert.Equal(t, string(want), out, tc.args)
		assert.True(t, strings.HasPrefix(out, "{\n  \""), "indented: %q", out[:min(len(out), 20)])
	}
	_, _, err := runCLI("openapi", "--api-version", "2")
	require.Error(t, err)
	assert.Contains(t, err.Error(), "e.g. v2")
}

// --allowed-host takes host names or .suffix patterns that name a domain (decisions D18): ".",
// "*", a wildcard and an empty value would answer every Host, so serve refuses to start.
func TestServeAllowedHostRefusesEveryName(t *testing.T) {
	// A serve that starts returns nil at once on a context that has already ended.
	ended, cancel := context.WithCancel(context.Background())
	cancel()
	for _, h := range []string{".", "*", "", " ", "*.example.test", "..", ".example..test", "a,,b"} {
		var out bytes.Buffer
		err := run(ended, []string{"partnersim", "serve", "--addr", "127.0.0.1:0", "--db", filepath.Join(t.TempDir(), "s.db"),
			"--allowed-host", h}, noEnv, &out, &out)
		if !assert.Error(t, err, "--allowed-host %q started", h) {
			continue
		}
		assert.Contains(t, err.Error(), "--allowed-host", "--allowed-host %q", h)
	}
}

// The sandbox token is printed once, where a person reads it (the banner), and masked in the
// logs (decisions D18): container and CI logs keep both.
func TestServePrintsTheTokenOnceAndMasksItInLogs(t *testing.T) {
	const tok = "an-operator-secret-of-24+chars-x"
	serve := startCLI(t, noEnv, "serve", "--addr", "127.0.0.1:0", "--db", filepath.Join(t.TempDir(), "s.db"),
		"--sandbox-token", tok, "--log-level", "debug")
	out, logs := serve.out, serve.errOut
	waitOutput(t, out, "try: curl")
	require.NoError(t, serve.stop())
	assert.Equal(t, 1, strings.Count(out.String(), tok), "the banner prints the token once:\n%s", out.String())
	assert.NotContains(t, logs.String(), tok)

	var buf bytes.Buffer
	log := newServeLogger(&buf, slog.LevelInfo, func() string { return tok })
	log.Info("x", slog.String("path", "/"+tok+"/y"), slog.Any("err", errors.New("bad "+tok)))
	assert.NotContains(t, buf.String(), tok, "masked in a log line")
	assert.Contains(t, buf.String(), "/…/y")
}
