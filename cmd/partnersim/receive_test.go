package main

import (
	"bytes"
	"context"
	"encoding/json"
	"encoding/xml"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/partnersim/partnersim/internal/sandboxtest"
	"github.com/partnersim/partnersim/simulator/webhook/signature"
)

const testSecret = "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw"

// waitOutput polls out until re matches, and returns the first match's groups.
func waitOutput(tb testing.TB, out *sandboxtest.Buffer, re string) []string {
	tb.Helper()
	rx := regexp.MustCompile(re)
	var m []string
	require.Eventually(tb, func() bool {
		m = rx.FindStringSubmatch(out.String())
		return m != nil
	}, 10*time.Second, 5*time.Millisecond, "output never matched %s:\n%s", re, out.String())
	return m
}

// running is a command run in the background by a test, its output captured; it is stopped
// when the test ends.
type running struct {
	out, errOut *sandboxtest.Buffer
	cancel      context.CancelFunc
	done        chan struct{} // closed when run returns
	err         error         // what run returned, once done is closed
}

// startCLI runs `partnersim command args…` in the background with getenv.
func startCLI(tb testing.TB, getenv func(string) string, command string, args ...string) *running {
	tb.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	r := &running{out: &sandboxtest.Buffer{}, errOut: &sandboxtest.Buffer{}, cancel: cancel, done: make(chan struct{})}
	go func() {
		r.err = run(ctx, cli(command, args...), getenv, r.out, r.errOut)
		close(r.done)
	}()
	tb.Cleanup(func() { _ = r.stop() })
	return r
}

// ended reports whether the command has returned.
func (r *running) ended() bool {
	select {
	case <-r.done:
		return true
	default:
		return false
	}
}

// wait waits for the command to return by itself and returns its error.
func (r *running) wait() error {
	select {
	case <-r.done:
		return r.err
	case <-time.After(10 * time.Second):
		return errors.New("the command did not end within 10s")
	}
}

// stop ends the command as Ctrl-C does (main's NotifyContext) and returns its error.
func (r *running) stop() error {
	r.cancel()
	return r.wait()
}

// noGOMEMLIMIT is an environment that switches serve's memory limit off.
func noGOMEMLIMIT(k string) string { return map[string]string{"GOMEMLIMIT": "off"}[k] }

// receiving is a `partnersim receive` running in the test.
type receiving struct {
	*running
	base string // http://127.0.0.1:port
}

func startReceive(tb testing.TB, getenv func(string) string, args ...string) *receiving {
	tb.Helper()
	args = append([]string{"--addr", "127.0.0.1:0", "--db", filepath.Join(tb.TempDir(), "receiver.db")}, args...)
	r := &receiving{running: startCLI(tb, getenv, "receive", args...)}
	rx := regexp.MustCompile(`listening on (127\.0\.0\.1:\d+)`)
	tick := time.NewTicker(5 * time.Millisecond)
	defer tick.Stop()
	deadline := time.After(10 * time.Second)
	for !rx.MatchString(r.out.String()) {
		select {
		case <-r.done:
			tb.Fatalf("receive ended early: %v\n%s", r.err, r.errOut.String())
		case <-deadline:
			tb.Fatalf("no banner within 10s:\n%s", r.out.String())
		case <-tick.C:
		}
	}
	r.base = "http://" + rx.FindStringSubmatch(r.out.String())[1]
	return r
}

func send(tb testing.TB, args ...string) (string, error) {
	tb.Helper()
	var out, errOut bytes.Buffer
	err := run(context.Background(), cli("send", args...), noEnv, &out, &errOut)
	return out.String() + errOut.String(), err
}

// fakeAPI answers refetches: every user has an approved crypto account, every transaction is
// completed with two orders.
func fakeAPI(tb testing.TB, key string) *httptest.Server {
	tb.Helper()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("x-api-key") != key {
			w.WriteHeader(http.StatusUnauthorized)
			return
		}
		w.Header().Set("Content-Type", "application/json")
		switch {
		case strings.HasPrefix(r.URL.Path, "/v1/users/"):
			fmt.Fprint(w, `{"user_account_id":"partner-1","accounts":[{"product":"robo","kyc_status":"pending","current_market_value":"0.00"},`+
				`{"product":"crypto","kyc_status":"approved","current_market_value":"12.50"}]}`)
		case strings.HasPrefix(r.URL.Path, "/v1/transactions/"):
			fmt.Fprint(w, `{"transaction_id":"txn_1","status":"completed","orders":[{},{}]}`)
		default:
			http.NotFound(w, r)
		}
	}))
	tb.Cleanup(srv.Close)
	return srv
}

func TestReceiveSendAndCertifyEndToEnd(t *testing.T) {
	env := func(k string) string { return map[string]string{"PARTNERSIM_SECRET": testSecret}[k] }
	r := startReceive(t, env)
	banner := r.out.String()
	assert.Contains(t, banner, "callback URL   "+r.base+"/webhooks")
	assert.Contains(t, banner, "inspection     "+r.base+"/_receiver/events")
	assert.Contains(t, banner, "secrets        whsec_MfKQ…")
	assert.Contains(t, banner, "refetch        off: no --api-key")
	assert.Contains(t, banner, "faults         none")

	// A signed sample: acknowledged, then processed (without a refetch: no key).
	got, err := send(t, "--url", r.base+"/webhooks", "--secret", testSecret, "--sample", "kyc", "--event-id", "evt_e2e_1")
	require.NoError(t, err, got)
	assert.Contains(t, got, "POST "+r.base+"/webhooks (sample kyc, ")
	assert.Contains(t, got, "X-Partner-Webhook-Id: evt_e2e_1\n")
	assert.Regexp(t, `X-Partner-Webhook-Signature: t=\d+,v1=[0-9a-f]{64}\n`, got)
	assert.Contains(t, got, `"event_id":"evt_e2e_1"`)
	assert.Regexp(t, `HTTP/1.1 200 OK in \d+ms\n(  .*\n)*  Content-Type: application/json\n`, got)
	assert.Contains(t, got, `{"verdict":"accepted","reason":"queued for processing"}`)
	waitOutput(t, r.out, `\d\d:\d\d:\d\d processed evt_e2e_1 kyc crypto → approved user partner-\w+ — not refetched \(no --api-key\)\n`)

	// The same event again (a fresh signature): a duplicate, acknowledged.
	got, err = send(t, "--url", r.base+"/", "--secret", testSecret, "--sample", "kyc", "--event-id", "evt_e2e_1")
	require.NoError(t, err, got)
	assert.Contains(t, got, `"verdict":"duplicate"`)
	waitOutput(t, r.out, `duplicate evt_e2e_1 kyc crypto → approved user partner-\w+ — 200, already received; not processed again\n`)

	// A replay: refused, and send exits non-zero.
	old := fmt.Sprint(time.Now().Add(-time.Hour).Unix())
	got, err = send(t, "--url", r.base+"/webhooks", "--secret", testSecret, "--event-id", "evt_e2e_old", "--t", old)
	require.ErrorIs(t, err, errReported)
	assert.Contains(t, got, "400 Bad Request")
	assert.Contains(t, got, "signature timestamp is too old")
	assert.Contains(t, got, "the receiver answered 400")
	waitOutput(t, r.out, `refused   evt_e2e_old \(id header\) — 400, signature timestamp is too old: t is 1h0m\d+s old, tolerance 5m0s\n`)

	// A test event: acknowledged, never processed.
	got, err = send(t, "--url", r.base+"/webhooks", "--secret", testSecret, "--sample", "test", "--event-id", "evt_e2e_test")
	require.NoError(t, err, got)
	waitOutput(t, r.out, `skipped   evt_e2e_test kyc is_test crypto → approved user test_user — 200, not processed: is_test event`)

	// A file, sent byte for byte, with a lying id header.
	file := filepath.Join(t.TempDir(), "body.json")
	fileBody := `{"event_id":"evt_file","event_type":"transaction","is_test":false,"data":{"transaction_id":"txn_9","status":"completed"},"links":{"self":"/v1/transactions/txn_9/"}}`
	require.NoError(t, os.WriteFile(file, []byte(fileBody), 0o600))
	got, err = send(t, "--url", r.base+"/webhooks", "--secret", testSecret, "--file", file, "--event-id", "evt_other")
	require.ErrorIs(t, err, errReported)
	assert.Contains(t, got, fmt.Sprintf("(%s, %d bytes)", file, len(fileBody)))
	waitOutput(t, r.out, `refused   evt_file — 400, X-Partner-Webhook-Id "evt_other" differs from the body's event_id "evt_file"\n`)
	got, err = send(t, "--url", r.base+"/webhooks", "--secret", testSecret, "--file", file)
	require.NoError(t, err, got)
	assert.Contains(t, got, "X-Partner-Webhook-Id: evt_file\n")
	waitOutput(t, r.out, `processed evt_file transaction txn_9 completed — not refetched`)

	// The inspection API is mounted beside the endpoint.
	resp, err := http.Get(r.base + "/_receiver/events?event_id=evt_e2e_1")
	require.NoError(t, err)
	var events struct {
		Events []struct{ Verdict string } `json:"events"`
	}
	require.NoError(t, json.NewDecoder(resp.Body).Decode(&events))
	resp.Body.Close()
	require.Len(t, events.Events, 2)
	assert.Equal(t, "accepted", events.Events[0].Verdict)
	assert.Equal(t, "duplicate", events.Events[1].Verdict)

	// Certify our own receiver: every case passes, the table and the JUnit file say so.
	junit := filepath.Join(t.TempDir(), "certify.xml")
	var out, errOut bytes.Buffer
	err = run(context.Background(), cli("certify", "--url", r.base+"/webhooks", "--junit", junit), env, &out, &errOut)
	require.NoError(t, err, "%s\n%s", out.String(), errOut.String())
	assert.Contains(t, out.String(), "13 cases: 13 passed, 0 failed")
	assert.NotContains(t, out.String(), "FAIL")
	assert.Contains(t, out.String(), "JUnit report: "+junit)
	raw, err := os.ReadFile(junit)
	require.NoError(t, err)
	var doc struct {
		Suites []struct {
			Tests int `xml:"tests,attr"`
			Fails int `xml:"failures,attr"`
			Cases []struct {
				Name string `xml:"name,attr"`
			} `xml:"testcase"`
		} `xml:"testsuite"`
	}
	require.NoError(t, xml.Unmarshal(raw, &doc))
	require.Len(t, doc.Suites, 1)
	assert.Equal(t, 13, doc.Suites[0].Tests)
	assert.Zero(t, doc.Suites[0].Fails)
	waitOutput(t, r.out, `refused   evt_\w+ \(id header\) — 400, no v1 signature matches the body`)

	require.NoError(t, r.stop())
	assert.True(t, strings.HasSuffix(r.out.String(), "receiver stopped\n"), r.out.String())
	assert.Empty(t, r.errOut.String())
}

func TestReceiveRefetchesWithTheKey(t *testing.T) {
	const key = "sbx_0123456789abcdefghijABCDEFGHIJ0123456789"
	api := fakeAPI(t, key)
	rotated := "whsec_2b7nQvZyOa5cXkqR1s9lHh0pFzUuWtE3"
	r := startReceive(t, noEnv, "--secret", rotated+","+testSecret, "--api-base-url", api.URL+"/v1/", "--api-key", key,
		"--fail-first", "1", "--fail-status", "503", "--tolerance", "1m")
	banner := r.out.String()
	assert.Contains(t, banner, "secrets        whsec_2b7n…, whsec_MfKQ…")
	assert.Contains(t, banner, "refetch        links.self from "+api.URL+" with key sbx_0123…")
	assert.Contains(t, banner, "faults         the first 1 deliveries answered 503")
	assert.Contains(t, banner, "tolerance      1m0s either way")

	// The first delivery is the injected failure; the retry goes through.
	got, err := send(t, "--url", r.base+"/webhooks", "--secret", testSecret, "--event-id", "evt_r1")
	require.ErrorIs(t, err, errReported)
	assert.Contains(t, got, "503 Service Unavailable")
	waitOutput(t, r.out, `fault     evt_r1 \(id header\) — 503, injected failure: fail_first \(0 left\)\n`)
	got, err = send(t, "--url", r.base+"/webhooks", "--secret", testSecret, "--event-id", "evt_r1")
	require.NoError(t, err, got)
	waitOutput(t, r.out, `processed evt_r1 kyc crypto → approved user partner-\w+ — refetched /v1/users/usr_\w+/\?user_account_id_type=platform: crypto kyc_status now approved, market value 12.50\n`)

	got, err = send(t, "--url", r.base+"/webhooks", "--secret", rotated, "--sample", "transaction", "--event-id", "evt_r2")
	require.NoError(t, err, got)
	waitOutput(t, r.out, `processed evt_r2 transaction txn_\w+ completed \(robo\) user partner-\w+ — refetched /v1/transactions/txn_\w+/: transaction status completed, 2 order\(s\)\n`)
	require.NoError(t, r.stop())
}

func TestReceiveSaysWhenProcessingFails(t *testing.T) {
	api := fakeAPI(t, "the-right-key")
	r := startReceive(t, noEnv, "--secret", testSecret, "--api-base-url", api.URL, "--api-key", "a-wrong-key")
	got, err := send(t, "--url", r.base+"/webhooks", "--secret", testSecret, "--event-id", "evt_f")
	require.NoError(t, err, got)
	waitOutput(t, r.out, `failed    evt_f kyc crypto → approved user partner-\w+ — after 1 attempt\(s\): attempt 1: refetch /v1/users/usr_\w+/\?user_account_id_type=platform: status 401`)
}

func TestCertifyFailsAgainstAReceiverThatAcceptsEverything(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { w.WriteHeader(http.StatusOK) }))
	defer srv.Close()
	junit := filepath.Join(t.TempDir(), "report.xml")
	var out, errOut bytes.Buffer
	err := run(context.Background(), cli("certify", "--url", srv.URL, "--secret", testSecret, "--junit", junit), noEnv, &out, &errOut)
	require.ErrorIs(t, err, errReported)
	text := out.String()
	assert.Contains(t, text, "13 cases: 6 passed, 7 failed")
	assert.Regexp(t, `(?m)^  no-signature-header\s+non-2xx\s+200\s+FAIL\s+refuses an unsigned delivery$`, text)
	assert.Contains(t, text, "  FAIL tampered-body: expected non-2xx, got 200: the receiver acknowledged it\n")
	raw, err := os.ReadFile(junit)
	require.NoError(t, err)
	assert.Equal(t, 7, strings.Count(string(raw), "<failure "))
}

func TestReceiveSendCertifyRefuseBadFlags(t *testing.T) {
	for _, c := range []struct {
		run  func(context.Context, []string, func(string) string, *bytes.Buffer, *bytes.Buffer) error
		args []string
		want string
	}{
		{receiveCmd, []string{}, "receive needs --secret"},
		{receiveCmd, []string{"--secret", "sbx_notasecret"}, `a signing secret starts with "whsec_"`},
		{receiveCmd, []string{"--secret", testSecret, "extra"}, "receive takes no arguments"},
		{receiveCmd, []string{"--secret", testSecret, "--api-key", "k", "--api-base-url", "localhost:8080"}, "--api-base-url"},
		{receiveCmd, []string{"--secret", testSecret, "--delay", "11m"}, "--delay 11m0s"},
		{receiveCmd, []string{"--secret", testSecret, "--fail-first", "-1", "--db", "/nonexistent-dir/x.db"}, "fail_first must be at least 0"},
		{sendCmd, []string{"--secret", testSecret}, "send needs --url"},
		{sendCmd, []string{"--url", "http://127.0.0.1:9/"}, "send needs --secret"},
		{sendCmd, []string{"--url", "http://127.0.0.1:9/", "--secret", testSecret, "--sample", "fill"}, `--sample "fill"`},
		{sendCmd, []string{"--url", "http://127.0.0.1:9/", "--secret", testSecret, "--sample", "kyc", "--file", "x"}, "not both"},
		{sendCmd, []string{"--url", "http://127.0.0.1:9/", "--secret", testSecret, "--file", "/nonexistent"}, "no such file"},
		{certifyCmd, []string{"--secret", testSecret}, "the receiver's URL is required"},
		{certifyCmd, []string{"--url", "http://127.0.0.1:9/"}, "the signing secret is required"},
		{certifyCmd, []string{"--url", "http://127.0.0.1:9/", "--secret", testSecret, "--timeout", "0s"}, "--timeout"},
	} {
		var out, errOut bytes.Buffer
		err := c.run(context.Background(), c.args, noEnv, &out, &errOut)
		if assert.Error(t, err, "%q", c.args) {
			assert.NotErrorIs(t, err, errReported, "%q", c.args)
			assert.Contains(t, err.Error()+errOut.String(), c.want, "%q", c.args)
		}
	}
}

func receiveCmd(ctx context.Context, args []string, getenv func(string) string, out, errOut *bytes.Buffer) error {
	return run(ctx, cli("receive", args...), getenv, out, errOut)
}

func sendCmd(ctx context.Context, args []string, getenv func(string) string, out, errOut *bytes.Buffer) error {
	return run(ctx, cli("send", args...), getenv, out, errOut)
}

func certifyCmd(ctx context.Context, args []string, getenv func(string) string, out, errOut *bytes.Buffer) error {
	return run(ctx, cli("certify", args...), getenv, out, errOut)
}

func TestSendSignsWithEverySecretGiven(t *testing.T) {
	rotated := "whsec_2b7nQvZyOa5cXkqR1s9lHh0pFzUuWtE3"
	var header string
	var body []byte
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		header = r.Header.Get(signature.HeaderSignature)
		body, _ = io.ReadAll(r.Body)
		w.WriteHeader(http.StatusAccepted)
	}))
	defer srv.Close()
	got, err := send(t, "--url", srv.URL, "--secret", rotated, "--secret", testSecret, "--t", "1700000000")
	require.NoError(t, err, got)
	assert.Contains(t, got, "202 Accepted")
	h, err := signature.Parse(header)
	require.NoError(t, err)
	assert.Equal(t, int64(1700000000), h.Timestamp.Unix())
	require.Len(t, h.Signatures, 2)
	at := time.Unix(1700000000, 0)
	assert.NoError(t, signature.Verify(header, body, []string{rotated}, time.Minute, at))
	assert.NoError(t, signature.Verify(header, body, []string{testSecret}, time.Minute, at))
	assert.Equal(t, signature.Sign(at, body, rotated, testSecret), header, "new secret first, as given")
}
