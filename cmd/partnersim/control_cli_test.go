package main

import (
	"bytes"
	"context"
	"net/http"
	"net/http/httptest"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"github.com/tidwall/gjson"

	"github.com/partnersim/partnersim/internal/sandboxtest"
	"github.com/partnersim/partnersim/simulator/sandbox"
)

const (
	harborWebhooksKey = "sbx_harborWebhooks00000000000000000000000003"
	harborAllKey      = "sbx_harborAllScopes0000000000000000000000001"
	otherToken        = "psim_another_token_for_this_test_0123"
)

// cliSandbox is a sandbox on a port of its own with a token of its own, and the environment a
// terminal that exported serve's line has.
type cliSandbox struct {
	*sandboxtest.Sandbox
	env func(string) string
}

func newCLISandbox(t *testing.T) *cliSandbox {
	t.Helper()
	srv := sandboxtest.MustServe(t, func(c *sandbox.Config) { c.SandboxToken = otherToken })
	return &cliSandbox{Sandbox: srv, env: func(k string) string {
		return map[string]string{"PARTNERSIM_SANDBOX_URL": srv.URL, "PARTNERSIM_SANDBOX_TOKEN": otherToken}[k]
	}}
}

// cmd runs partnersim with the sandbox's environment and returns stdout and stderr together.
func (s *cliSandbox) cmd(t *testing.T, args ...string) (string, error) {
	t.Helper()
	var out bytes.Buffer
	err := run(context.Background(), append([]string{"partnersim"}, args...), s.env, &out, &out)
	return out.String(), err
}

func (s *cliSandbox) mustCmd(t *testing.T, args ...string) string {
	t.Helper()
	out, err := s.cmd(t, args...)
	require.NoError(t, err, "partnersim %s:\n%s", strings.Join(args, " "), out)
	return out
}

// subscribe subscribes Harbor to event type typ at a hook answering status, and returns the hook's
// count of requests.
func (s *cliSandbox) subscribe(t *testing.T, typ string, status int) *atomic.Int64 {
	t.Helper()
	var n atomic.Int64
	hook := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		n.Add(1)
		w.WriteHeader(status)
	}))
	t.Cleanup(hook.Close)
	r := s.Call(t, "POST", "/v1/webhooks/subscriptions", `{"event_type":"`+typ+`","url":"`+hook.URL+`/hook"}`, "x-api-key: "+harborWebhooksKey)
	require.Equal(t, 201, r.Status, r.Body)
	return &n
}

// splitShell splits a printed command line as a POSIX shell would: words, and words quoted
// with single quotes (what shellQuote writes).
func splitShell(t *testing.T, line string) []string {
	t.Helper()
	var words []string
	var cur strings.Builder
	inWord, quoted := false, false
	for _, r := range line {
		switch {
		case quoted && r == '\'':
			quoted = false
		case quoted:
			cur.WriteRune(r)
		case r == '\'':
			quoted, inWord = true, true
		case r == ' ':
			if inWord {
				words = append(words, cur.String())
				cur.Reset()
				inWord = false
			}
		default:
			cur.WriteRune(r)
			inWord = true
		}
	}
	require.False(t, quoted, "unbalanced quote in %q", line)
	if inWord {
		words = append(words, cur.String())
	}
	return words
}

// runPrinted runs a partnersim command line as printed, with no environment at all.
func runPrinted(t *testing.T, line string) string {
	t.Helper()
	words := splitShell(t, strings.TrimSpace(line))
	require.Equal(t, "partnersim", words[0], "a printed hint is a partnersim command: %q", line)
	var out bytes.Buffer
	require.NoError(t, run(context.Background(), words, noEnv, &out, &out), "the printed %q failed:\n%s", line, out.String())
	return out.String()
}

// Every control-plane command reaches the sandbox PARTNERSIM_SANDBOX_URL and _TOKEN name, and
// receive refetches from it.
func TestControlCommandsFollowTheEnvironment(t *testing.T) {
	s := newCLISandbox(t)
	s.subscribe(t, "kyc", 200)
	out := s.mustCmd(t, "trigger", "kyc", "--user", "usr_hfcu_0002", "--product", "crypto", "--status", "approved")
	ev := regexp.MustCompile(`event (evt_\w+)`).FindStringSubmatch(out)
	require.NotNil(t, ev, out)
	assert.Contains(t, out, "delivered")
	s.mustCmd(t, "scenario", "list")
	s.mustCmd(t, "scenario", "run", "onboarding-approved")
	s.mustCmd(t, "deliveries", "--event", ev[1])
	s.mustCmd(t, "events", "resend", ev[1])
	s.mustCmd(t, "secret", "rotate", "--institution", "ins_harbor")
	s.mustCmd(t, "snapshot", "save", "envtest")

	r := startReceive(t, s.env, "--secret", testSecret, "--api-key", harborAllKey)
	assert.Contains(t, r.out.String(), "refetch        links.self from "+s.URL, "receive refetches from the sandbox the environment names")
}

// serve prints what a second terminal needs, and every hint partnersim prints runs as printed:
// the export line, the first call, trigger's "fill it", scenario's clock, deliveries' next page.
func TestPrintedHintsRunAsPrinted(t *testing.T) {
	out := startCLI(t, noGOMEMLIMIT, "serve", "--addr", "127.0.0.1:0", "--db", filepath.Join(t.TempDir(), "s.db"), "--sandbox-token", otherToken).out
	exports := waitOutput(t, out, `(?m)^\s+(export .*)$`)[1]
	base := regexp.MustCompile(`API base URL\s+(http://\S+)/v1`).FindStringSubmatch(out.String())[1]
	assert.Equal(t, "export PARTNERSIM_SANDBOX_URL="+base+" PARTNERSIM_SANDBOX_TOKEN="+otherToken, exports)

	// The export line and the first call, run by a shell as a reader would paste them.
	try := regexp.MustCompile(`(?m)^\s+try: (curl .*)$`).FindStringSubmatch(out.String())
	require.NotNil(t, try, out.String())
	sh, err := exec.Command("sh", "-c", "set -e; "+exports+"; test \"$PARTNERSIM_SANDBOX_URL\" = "+base+"; "+try[1]+" --fail --silent").CombinedOutput()
	require.NoError(t, err, "%s", sh)
	assert.Equal(t, int64(2), gjson.GetBytes(sh, "items.#").Int(), "%s", sh)

	// The hints of trigger, scenario and deliveries, run with no environment at all. A
	// subscription to both event types makes the fill and the scenario's kyc step deliver.
	hook := httptest.NewServer(http.HandlerFunc(func(http.ResponseWriter, *http.Request) {}))
	defer hook.Close()
	for _, typ := range []string{"kyc", "transaction"} {
		req, err := http.NewRequest("POST", base+"/v1/webhooks/subscriptions", strings.NewReader(`{"event_type":"`+typ+`","url":"`+hook.URL+`"}`))
		require.NoError(t, err)
		req.Header.Set("x-api-key", harborWebhooksKey)
		req.Header.Set("Content-Type", "application/json")
		resp, err := http.DefaultClient.Do(req)
		require.NoError(t, err)
		resp.Body.Close()
		require.Equal(t, 201, resp.StatusCode)
	}
	env := func(k string) string {
		return map[string]string{"PARTNERSIM_SANDBOX_URL": base, "PARTNERSIM_SANDBOX_TOKEN": otherToken}[k]
	}
	var buf bytes.Buffer
	require.NoError(t, run(context.Background(), cli("trigger", "order", "--user", "usr_hfcu_0001", "--symbol", "AAPL", "--notional", "10.00"), env, &buf, &buf))
	fill := regexp.MustCompile(`(?m)^fill it: (.*)$`).FindStringSubmatch(buf.String())
	require.NotNil(t, fill, buf.String())
	assert.Contains(t, runPrinted(t, fill[1]), "is now completed")

	buf.Reset()
	require.NoError(t, run(context.Background(), cli("scenario", "run", "onboarding-approved"), env, &buf, &buf))
	clock := regexp.MustCompile(`(?m)wait on the virtual clock: (partnersim .*) plays the next now$`).FindStringSubmatch(buf.String())
	require.NotNil(t, clock, buf.String())
	fired := runPrinted(t, clock[1])
	assert.Regexp(t, `scenario step\(s\) came due:\n  onboarding-approved run run_\w+ step 2 kyc at \S+: done → document_requested`, fired)

	buf.Reset()
	require.NoError(t, run(context.Background(), cli("deliveries", "--limit", "1"), env, &buf, &buf))
	more := regexp.MustCompile(`(?m)^more: (.*)$`).FindStringSubmatch(buf.String())
	require.NotNil(t, more, "two deliveries, a page of one: a next page\n%s", buf.String())
	next := runPrinted(t, more[1])
	assert.Contains(t, next, "CREATED (UTC)")
	assert.NotEqual(t, buf.String(), next, "the next page is another")
}

// deliveries lists and filters the log as a table or as JSON, and --follow prints each new
// attempt as it is made until interrupted.
func TestDeliveriesListsAndFollows(t *testing.T) {
	s := newCLISandbox(t)
	s.subscribe(t, "kyc", 200)
	failing := s.subscribe(t, "transaction", 503)
	out := s.mustCmd(t, "trigger", "kyc", "--user", "usr_hfcu_0002", "--product", "crypto", "--status", "approved")
	ev := regexp.MustCompile(`event (evt_\w+)`).FindStringSubmatch(out)[1]

	table := s.mustCmd(t, "deliveries", "--event", ev)
	assert.Regexp(t, `(?m)^CREATED \(UTC\)\s+DELIVERY\s+EVENT\s+TYPE\s+INSTITUTION\s+STATUS\s+ATTEMPTS\s+LAST ATTEMPT\s+NEXT ATTEMPT \(VIRTUAL\)\s+URL$`, table)
	assert.Regexp(t, `(?m)^\d{4}-\d\d-\d\d \d\d:\d\d:\d\dZ\s+dlv_\w+\s+`+ev+`\s+kyc\s+ins_harbor\s+delivered\s+1\s+HTTP 200 in`, table)
	assert.Contains(t, s.mustCmd(t, "deliveries", "--status", "failed"), "no deliveries match")
	js := gjson.Parse(s.mustCmd(t, "deliveries", "--institution", "ins_harbor", "--event-type", "kyc", "-o", "json"))
	require.True(t, js.Get("deliveries").IsArray(), js.Raw)
	assert.Equal(t, ev, js.Get("deliveries.0.event_id").String())
	_, err := s.cmd(t, "deliveries", "--status", "lost")
	assert.ErrorContains(t, err, "status")
	_, err = s.cmd(t, "deliveries", "-o", "yaml")
	assert.ErrorContains(t, err, "--output \"yaml\": use table or json")

	// Follow: nothing from before it began; the failing attempt of a new transaction event.
	follow := startCLI(t, s.env, "deliveries", "--follow", "--interval", "100ms")
	followOut := follow.out
	waitOutput(t, follow.errOut, `following new delivery attempts at `+regexp.QuoteMeta(s.URL))
	out = s.mustCmd(t, "trigger", "order", "--user", "usr_hfcu_0001", "--symbol", "AAPL", "--notional", "10.00")
	txn := regexp.MustCompile(`transaction (txn_\w+)`).FindStringSubmatch(out)[1]
	s.mustCmd(t, "trigger", "fill", "--transaction", txn)
	line := waitOutput(t, followOut, `(?m)^.*attempt 1: HTTP 503 in .*$`)[0]
	assert.Contains(t, line, "transaction")
	assert.NotContains(t, followOut.String(), ev, "attempts made before following began are not printed")
	require.NoError(t, follow.stop(), "Ctrl-C ends following without an error")
	assert.GreaterOrEqual(t, failing.Load(), int64(1))

	// trigger clock lists the retry it made due, with its answer.
	clock := s.mustCmd(t, "trigger", "clock", "--seconds", "5")
	assert.Regexp(t, `1 delivery attempt\(s\) came due:\n  delivery dlv_\w+ attempt 2 at \S+ \(event evt_\w+\): HTTP 503, pending, next attempt \S+\n`, clock)
	js = gjson.Parse(s.mustCmd(t, "trigger", "clock", "--seconds", "300", "-o", "json"))
	assert.Equal(t, int64(3), js.Get("attempts.0.attempt").Int(), js.Raw)
	assert.Contains(t, s.mustCmd(t, "trigger", "clock", "--seconds", "1"), "nothing came due")
	// One advance past the rest of the schedule plays every retry left, in order, and the last
	// ends the delivery as failed; --institution moves that institution's clock alone.
	clock = s.mustCmd(t, "trigger", "clock", "--seconds", "100000", "--institution", "ins_harbor")
	assert.Contains(t, clock, "virtual clock of ins_harbor now ")
	assert.Regexp(t, `5 delivery attempt\(s\) came due:\n(  delivery dlv_\w+ attempt \d at .*, pending, next attempt \S+\n){4}  delivery dlv_\w+ attempt 8 at .*: HTTP 503, failed\n`, clock)
}

// events resend sends an event again and shows the new deliveries; secret rotate issues a new
// secret; scenario run --wait waits for the run's end.
func TestEventsResendSecretRotateScenarioWait(t *testing.T) {
	s := newCLISandbox(t)
	hits := s.subscribe(t, "kyc", 200)
	out := s.mustCmd(t, "trigger", "kyc", "--user", "usr_hfcu_0002", "--product", "crypto", "--status", "approved")
	ev := regexp.MustCompile(`event (evt_\w+)`).FindStringSubmatch(out)[1]
	out = s.mustCmd(t, "events", "resend", ev)
	assert.Contains(t, out, "event "+ev+" sent again: 1 new deliveries")
	assert.Regexp(t, `(?m)^  delivery dlv_\w+ -> \S+: delivered \(attempt 1: HTTP 200`, out)
	assert.Equal(t, 1, strings.Count(out, "delivery dlv_"), "only the new delivery")
	assert.Equal(t, int64(2), hits.Load())
	_, err := s.cmd(t, "events", "resend", "evt_nope")
	assert.ErrorContains(t, err, "404")

	out = s.mustCmd(t, "secret", "rotate", "--institution", "ins_harbor", "--overlap", "1h")
	assert.Regexp(t, `new signing secret of ins_harbor \(shown once\): whsec_\S+`, out)
	js := gjson.Parse(s.mustCmd(t, "secret", "rotate", "--institution", "ins_harbor", "-o", "json"))
	assert.True(t, strings.HasPrefix(js.Get("signing_secret").String(), "whsec_"), js.Raw)
	_, err = s.cmd(t, "secret", "rotate")
	assert.ErrorContains(t, err, "--institution")

	// --wait: the run ends once the clock reaches its last step.
	wait := startCLI(t, s.env, "scenario", "run", "onboarding-approved", "--institution", "ins_harbor", "--wait")
	waitOut := wait.out
	waitOutput(t, wait.errOut, `waiting for the run to end`)
	if wait.ended() {
		t.Fatalf("--wait returned before the clock moved: %v\n%s", wait.err, waitOut.String())
	}
	s.mustCmd(t, "trigger", "clock", "--seconds", "86400")
	require.NoError(t, wait.wait(), waitOut.String())
	assert.Regexp(t, `(?m)^run run_\w+ completed$`, waitOut.String())
	assert.Regexp(t, `4\. kyc\s+done`, waitOut.String())
}

// scenario --help's example names a scenario and an institution of the default fixtures.
func TestScenarioExampleNamesWhatExists(t *testing.T) {
	s := newCLISandbox(t)
	m := regexp.MustCompile(`scenario run (\S+) --institution (\S+)`).FindStringSubmatch(scenarioExample)
	require.NotNil(t, m)
	out := s.mustCmd(t, "scenario", "run", m[1], "--institution", m[2])
	assert.Contains(t, out, "scenario "+m[1]+" run run_")
}

// deliveries shows when a pending delivery's next attempt is due (on the virtual clock), and
// deliveries redeliver sends one delivery's event again to its subscription only.
func TestDeliveriesNextAttemptAndRedeliverOne(t *testing.T) {
	s := newCLISandbox(t)
	failing := s.subscribe(t, "kyc", 503)
	acking := s.subscribe(t, "kyc", 200)
	out := s.mustCmd(t, "trigger", "kyc", "--user", "usr_hfcu_0002", "--product", "crypto", "--status", "approved")
	ev := regexp.MustCompile(`event (evt_\w+)`).FindStringSubmatch(out)[1]
	sandboxtest.Eventually(t, func() bool { return failing.Load() == 1 && acking.Load() == 1 }, "both hooks got the event")

	table := s.mustCmd(t, "deliveries", "--event", ev)
	assert.Regexp(t, `(?m)^CREATED \(UTC\)\s+DELIVERY\s+EVENT\s+TYPE\s+INSTITUTION\s+STATUS\s+ATTEMPTS\s+LAST ATTEMPT\s+NEXT ATTEMPT \(VIRTUAL\)\s+URL$`, table)
	pending := regexp.MustCompile(`(?m)^\S+ \S+\s+(dlv_\w+)\s+` + ev + `\s+kyc\s+ins_harbor\s+pending\s+1\s+HTTP 503 in \S+\s+(\d{4}-\d\d-\d\d \d\d:\d\d:\d\dZ)\s+`).FindStringSubmatch(table)
	require.NotNil(t, pending, "a pending delivery shows its next attempt:\n%s", table)
	assert.Regexp(t, `(?m)\s+delivered\s+1\s+HTTP 200 in \S+\s+-\s+http`, table, "a delivered one has none")

	out = s.mustCmd(t, "deliveries", "redeliver", pending[1])
	assert.Regexp(t, `delivery `+pending[1]+` sent again as dlv_\w+, to its subscription only`, out)
	sandboxtest.Eventually(t, func() bool { return failing.Load() == 2 }, "the failing hook got it again")
	assert.Equal(t, int64(1), acking.Load(), "the hook that acknowledged got no duplicate")
	_, err := s.cmd(t, "deliveries", "redeliver", "dlv_nope")
	assert.ErrorContains(t, err, "404")
}

// scenario run --wait says the advance that finishes the run (not only its next step), --advance
// makes that advance itself, and a --wait that gives up says what is still pending.
func TestScenarioWaitFinishesOrSaysWhatIsPending(t *testing.T) {
	s := newCLISandbox(t)
	// robo-deposit: create_user now, place_transaction 5 s later, fill 60 s after that.
	_, err := s.cmd(t, "scenario", "run", "robo-deposit", "--institution", "ins_harbor", "--wait", "--timeout", "50ms")
	require.Error(t, err)
	assert.Regexp(t, `still running after --timeout 50ms; pending: 2\. place_transaction due \S+, 3\. fill due \S+`, err.Error())
	assert.Regexp(t, `partnersim trigger clock --seconds 6[56]\b.* finishes it`, err.Error(), "the advance to its last step")

	out := s.mustCmd(t, "scenario", "run", "robo-deposit", "--institution", "ins_harbor", "--wait", "--advance")
	assert.Regexp(t, `advanced ins_harbor's virtual clock by 6[56]s to play the run through`, out)
	assert.Regexp(t, `(?m)^run run_\w+ completed$`, out)
	assert.Regexp(t, `3\. fill\s+done`, out)
}
