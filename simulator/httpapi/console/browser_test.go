package console_test

import (
	"context"
	"flag"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/chromedp/cdproto/network"
	"github.com/chromedp/cdproto/page"
	"github.com/chromedp/chromedp"

	"github.com/partnersim/partnersim/features/proxy"
	"github.com/partnersim/partnersim/internal/sandboxtest"
	"github.com/partnersim/partnersim/simulator/sandbox"
)

// The browser tests drive the console in a real headless Chromium (Debian's chromium package,
// which .ci/run installs). One browser process serves every test; each test gets its own
// browser context (cookies apart) and tab. They skip only when no Chromium can be found.

// shared is the one browser of the test binary, started by the first test that needs it and
// stopped by TestMain.
var shared struct {
	once   sync.Once
	ctx    context.Context
	stop   func()
	skip   string
	err    error
	chrome string
}

func TestMain(m *testing.M) {
	flag.Parse()
	// Seeding 100,000 users is CPU work (half a minute and more under the race detector on a
	// busy 2-core machine): start it now, beside the browser tests, which mostly wait.
	cleanup := func() {}
	if run := flag.Lookup("test.run").Value.String(); run == "" || matchesTest(run, "TestUsersPageStaysResponsiveWith100kUsers") {
		cleanup = startSeedingLarge()
	}
	code := m.Run()
	if shared.stop != nil {
		shared.stop()
	}
	cleanup()
	os.Exit(code)
}

// matchesTest reports whether a -run pattern selects a top-level test.
func matchesTest(pattern, name string) bool {
	re, err := regexp.Compile(strings.Split(pattern, "/")[0])
	return err != nil || re.MatchString(name)
}

// chromium finds a Chromium or Chrome binary: $PARTNERSIM_CHROMIUM, then the usual names.
func chromium() string {
	if p := os.Getenv("PARTNERSIM_CHROMIUM"); p != "" {
		return p
	}
	for _, name := range []string{"chromium", "chromium-browser", "google-chrome", "google-chrome-stable"} {
		if p, err := exec.LookPath(name); err == nil {
			return p
		}
	}
	return ""
}

func browser(t *testing.T) context.Context {
	t.Helper()
	shared.once.Do(func() {
		shared.chrome = chromium()
		if shared.chrome == "" {
			shared.skip = "no Chromium found: install Debian's chromium (apt-get install -y chromium; .ci/run does) or set PARTNERSIM_CHROMIUM to a Chrome binary"
			return
		}
		dir, err := os.MkdirTemp("", "partnersim-chromium-")
		if err != nil {
			shared.err = err
			return
		}
		// The flags that keep Chromium off the network (this machine's and CI's network is
		// closed; without them it keeps trying Google's hosts) and let it run as root.
		opts := append(chromedp.DefaultExecAllocatorOptions[:], chromedp.ExecPath(shared.chrome), chromedp.NoSandbox, chromedp.DisableGPU,
			chromedp.Flag("disable-quic", true), chromedp.Flag("disable-component-update", true), chromedp.Flag("disable-sync", true),
			chromedp.UserDataDir(dir), chromedp.WindowSize(1440, 1000))
		alloc, cancelAlloc := chromedp.NewExecAllocator(context.Background(), opts...)
		ctx, cancel := chromedp.NewContext(alloc)
		shared.stop = func() {
			cancel()
			cancelAlloc()
			os.RemoveAll(dir)
		}
		if err := chromedp.Do(ctx); err != nil {
			shared.err = fmt.Errorf("start %s: %w", shared.chrome, err)
			return
		}
		shared.ctx = ctx
	})
	if shared.skip != "" {
		t.Skip(shared.skip)
	}
	if shared.err != nil {
		t.Fatal(shared.err)
	}
	return shared.ctx
}

// tab is one test's browser tab on a sandbox; it records every request the page makes.
type tab struct {
	t    *testing.T
	ctx  context.Context
	sb   *sandboxtest.Sandbox
	mu   sync.Mutex
	urls []string
}

// openTab opens a tab in a fresh browser context; when the test ends it checks that every
// request went to the sandbox (or to one of the other origins the test allows).
func openTab(t *testing.T, sb *sandboxtest.Sandbox, allowed ...string) *tab {
	t.Helper()
	b := browser(t)
	tb := &tab{t: t, sb: sb}
	ctx, cancelTimeout := context.WithTimeout(b, 90*time.Second)
	ctx, cancel := chromedp.NewContext(ctx, chromedp.WithNewBrowserContext(), chromedp.WithListener(func(ev any) {
		if e, ok := ev.(*network.EventRequestWillBeSent); ok {
			tb.mu.Lock()
			tb.urls = append(tb.urls, e.Request.URL)
			tb.mu.Unlock()
		}
	}))
	tb.ctx = ctx
	// The first action on a context opens its tab for the context's whole life: it must run on
	// the tab's own context, not on a shorter one derived for a step.
	if err := chromedp.Do(ctx); err != nil {
		cancel()
		cancelTimeout()
		t.Fatalf("open a tab: %v", err)
	}
	t.Cleanup(func() {
		cancel()
		cancelTimeout()
		tb.mu.Lock()
		defer tb.mu.Unlock()
		allowed = append(allowed, sb.URL+"/")
	next:
		for _, u := range tb.urls {
			for _, a := range allowed {
				if strings.HasPrefix(u, a) {
					continue next
				}
			}
			t.Errorf("the page requested %s, outside the sandbox %s", u, sb.URL)
		}
		if len(tb.urls) == 0 {
			t.Errorf("no request was recorded: the network listener is broken")
		}
	})
	return tb
}

// do runs steps, failing the test with what it was doing.
func (tb *tab) do(what string, steps ...chromedp.Action[chromedp.Void]) {
	tb.t.Helper()
	ctx, cancel := context.WithTimeout(tb.ctx, 20*time.Second)
	defer cancel()
	if err := chromedp.Do(ctx, steps...); err != nil {
		tb.t.Fatalf("%s: %v (page: %s)", what, err, tb.text("body"))
	}
}

// text returns an element's text ("" when it cannot be read).
func (tb *tab) text(sel string) string {
	ctx, cancel := context.WithTimeout(tb.ctx, 5*time.Second)
	defer cancel()
	s, _ := chromedp.Run(ctx, chromedp.Text(chromedp.CSS(sel)))
	return s
}

// eval evaluates a JavaScript expression.
func eval[T any](tb *tab, expr string) T {
	tb.t.Helper()
	ctx, cancel := context.WithTimeout(tb.ctx, 10*time.Second)
	defer cancel()
	v, err := chromedp.Run(ctx, chromedp.Evaluate[T](expr))
	if err != nil {
		tb.t.Fatalf("evaluate %s: %v", expr, err)
	}
	return v
}

// waitFor polls a JavaScript predicate in the page until it holds (20 s at most).
func (tb *tab) waitFor(what, predicate string) {
	tb.t.Helper()
	tb.do(what, chromedp.Func(func(ctx context.Context, t *chromedp.Target) error {
		_, err := chromedp.Poll[bool](predicate, chromedp.WithPollingInterval(50*time.Millisecond), chromedp.WithPollingTimeout(15*time.Second))(ctx, t)
		return err
	}))
}

func (tb *tab) open(path string) {
	tb.t.Helper()
	tb.do("open "+path, chromedp.Navigate(tb.sb.URL+path), chromedp.WaitReady(chromedp.CSS("body")))
}

// submit clicks an element that loads a new page (a form's button, a link), waits for the
// load, and then for waitSel on the new page.
func (tb *tab) click(sel, waitSel string) {
	tb.t.Helper()
	tb.do("click "+sel, chromedp.WaitVisible(chromedp.CSS(sel)), loads(chromedp.Click(chromedp.CSS(sel))), chromedp.WaitVisible(chromedp.CSS(waitSel)))
}

// loads runs an action that navigates and waits for the new page's load event.
func loads(a chromedp.Action[chromedp.Void]) chromedp.Action[chromedp.Void] {
	return chromedp.Func(func(ctx context.Context, t *chromedp.Target) error {
		_, err := chromedp.WaitEvent(page.LoadEventFired, nil, a)(ctx, t)
		return err
	})
}

// signIn signs the tab in with the sandbox token and waits for the institutions list: for a row,
// not a given institution, which a test that creates many may have moved to a later page.
func (tb *tab) signIn() {
	tb.t.Helper()
	tb.open("/_sandbox/ui/")
	tb.do("sign in", chromedp.WaitVisible(chromedp.CSS("#token")), chromedp.SendKeys(chromedp.CSS("#token"), tb.sb.SB.Token),
		loads(chromedp.Click(chromedp.CSS("#signin"))), chromedp.WaitVisible(chromedp.CSS("#institutions tbody tr")))
}

// shot saves a screenshot under $PARTNERSIM_SCREENSHOTS (docs/console*.png are made so).
func (tb *tab) shot(name string) {
	dir := os.Getenv("PARTNERSIM_SCREENSHOTS")
	if dir == "" {
		return
	}
	ctx, cancel := context.WithTimeout(tb.ctx, 20*time.Second)
	defer cancel()
	png, err := chromedp.Run(ctx, chromedp.FullScreenshot(100))
	if err != nil {
		tb.t.Errorf("screenshot %s: %v", name, err)
		return
	}
	if err := os.WriteFile(filepath.Join(dir, name+".png"), png, 0o644); err != nil {
		tb.t.Error(err)
	}
}

// receiver is a webhook callback that answers what fail says for the n-th request (from 1)
// and keeps the signature headers it got.
type receiver struct {
	*httptest.Server
	n    atomic.Int64
	mu   sync.Mutex
	sigs []string
}

func newReceiver(t *testing.T, fail func(n int64) bool) *receiver {
	r := &receiver{}
	r.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		n := r.n.Add(1)
		r.mu.Lock()
		r.sigs = append(r.sigs, req.Header.Get("X-Partner-Webhook-Signature"))
		r.mu.Unlock()
		if fail(n) {
			http.Error(w, `{"error":"receiver down for the test"}`, http.StatusInternalServerError)
			return
		}
		w.WriteHeader(http.StatusOK)
		_, _ = w.Write([]byte(`{"received":true}`))
	}))
	t.Cleanup(r.Close)
	return r
}

const harborKey = "sbx_harborAllScopes0000000000000000000000001"

func subscribe(t *testing.T, sb *sandboxtest.Sandbox, url, eventType string) {
	t.Helper()
	r := sb.Call(t, http.MethodPost, "/v1/webhooks/subscriptions", `{"url":"`+url+`","event_type":"`+eventType+`"}`, "x-api-key: "+harborKey)
	if r.Status != http.StatusCreated {
		t.Fatalf("subscribe: %d %s", r.Status, r.Body)
	}
}

func TestBrowserSignIn(t *testing.T) {
	sb := sandboxtest.MustServe(t)
	tb := openTab(t, sb)
	tb.open("/_sandbox/ui/institutions/ins_harbor")
	tb.do("a wrong token", chromedp.WaitVisible(chromedp.CSS("#token")), chromedp.SendKeys(chromedp.CSS("#token"), "psim_not_the_token"),
		loads(chromedp.Click(chromedp.CSS("#signin"))), chromedp.WaitVisible(chromedp.CSS("#signin-error")))
	assert(t, strings.Contains(tb.text("#signin-error"), "That is not this sandbox's token"), "a wrong token is refused: %q", tb.text("#signin-error"))
	tb.open("/_sandbox/ui/clock")
	tb.do("still signed out", chromedp.WaitVisible(chromedp.CSS("#token")))
	tb.shot("console-signin")

	tb.do("the right token", chromedp.SendKeys(chromedp.CSS("#token"), sb.SB.Token), loads(chromedp.Click(chromedp.CSS("#signin"))),
		chromedp.WaitVisible(chromedp.CSS("#clock-virtual")))
	tb.open("/_sandbox/ui/institutions/ins_harbor")
	tb.do("the institution page", chromedp.WaitVisible(chromedp.CSS("#keys-h")))
	assert(t, !strings.Contains(tb.text("body"), harborKey), "a key's plaintext is never shown again")
	cookies := eval[string](tb, "document.cookie")
	assert(t, cookies == "", "the session cookie is HttpOnly, invisible to scripts: %q", cookies)
}

// Moving a KYC status shows the event and its delivery; a delivery made while the log is open
// appears without a reload.
func TestBrowserKYCEventAndDelivery(t *testing.T) {
	sb := sandboxtest.MustServe(t)
	recv := newReceiver(t, func(int64) bool { return false })
	subscribe(t, sb, recv.URL, "kyc")
	pid := newUser(t, sb, `[{"product":"crypto","kyc_status":"pending"}]`)
	tb := openTab(t, sb)
	tb.signIn()

	tb.open("/_sandbox/ui/deliveries")
	tb.do("the empty log", chromedp.WaitVisible(chromedp.CSS("#deliveries")))
	sb.MustControl(t, http.MethodPost, "/_sandbox/users/"+pid+"/kyc", `{"product":"crypto","status":"document_requested"}`)
	tb.waitFor("the delivery appears live", `document.querySelectorAll('tbody.delivery[data-status="delivered"]').length === 1`)
	assert(t, strings.Contains(tb.text("[data-stamp]"), "updated"), "the cadence line says when it updated: %q", tb.text("[data-stamp]"))

	tb.open("/_sandbox/ui/users/" + pid)
	tb.click(`#account-crypto button[value="approved"]`, "#flash a")
	assert(t, strings.Contains(tb.text("#flash"), "crypto KYC is now approved. Event evt_"), "the flash names the event: %q", tb.text("#flash"))
	assert(t, tb.text("#account-crypto .kyc") == "approved", "the badge shows approved: %q", tb.text("#account-crypto .kyc"))
	buttons := eval[[]string](tb, `Array.from(document.querySelectorAll('#account-crypto .kyc-moves button')).map(b => b.value)`)
	assert(t, strings.Join(buttons, ",") == "closed,account_takeover", "only the allowed moves are offered: %v", buttons)
	tb.shot("console-user-kyc")

	tb.click("#flash a", "tbody.delivery")
	tb.waitFor("its delivery is delivered", `document.querySelector('tbody.delivery').dataset.status === "delivered"`)
	row := tb.text("tbody.delivery")
	assert(t, strings.Contains(row, "kyc\tcrypto → approved") && strings.Contains(row, "ins_harbor") && strings.Contains(row, recv.URL), "the delivery row: %q", row)
	tb.do("open the attempts", chromedp.Click(chromedp.CSS("tbody.delivery details summary")), chromedp.WaitVisible(chromedp.CSS("tbody.delivery pre.body")))
	recv.mu.Lock()
	sig := recv.sigs[len(recv.sigs)-1]
	recv.mu.Unlock()
	assert(t, strings.Contains(tb.text("tbody.delivery details"), "X-Partner-Webhook-Signature: "+sig), "the signature header sent is shown: %q", sig)
	assert(t, strings.Contains(tb.text("tbody.delivery pre.body"), `"kyc_status": "approved"`), "the body is shown pretty-printed")
	exact := eval[string](tb, `document.querySelector('tbody.delivery button.copy-body').dataset.copy`)
	assert(t, strings.Contains(exact, `"kyc_status":"approved"`) && !strings.Contains(exact, "\n"), "the copy button holds the exact bytes: %q", exact)
	tb.shot("console-deliveries")
}

// Filling an order changes the account's cash and holdings on the user page.
func TestBrowserFillChangesCashAndHoldings(t *testing.T) {
	sb := sandboxtest.MustServe(t)
	pid := newUser(t, sb, `[{"product":"securities","kyc_status":"approved","cash":"1000.00"}]`)
	tb := openTab(t, sb)
	tb.signIn()
	tb.open("/_sandbox/ui/users/" + pid)
	assert(t, tb.text("#account-securities .cash") == "1000.00", "cash before: %q", tb.text("#account-securities .cash"))
	tb.do("place a 100.00 AAPL buy", chromedp.SetValue(chromedp.CSS("#o-symbol"), "AAPL"), chromedp.SetValue(chromedp.CSS("#o-amount"), "100.00"),
		loads(chromedp.Click(chromedp.CSS("#place-order"))), chromedp.WaitVisible(chromedp.CSS("#user-orders button.fill")))
	assert(t, strings.Contains(tb.text("#flash"), "Placed a buy of $100.00 of AAPL"), "the flash: %q", tb.text("#flash"))
	assert(t, tb.text("#account-securities .cash") == "1000.00", "a pending order moves no cash yet")
	tb.click("#user-orders button.fill", "#flash")
	assert(t, strings.Contains(tb.text("#flash"), "completed"), "the flash: %q", tb.text("#flash"))

	u := sb.MustControl(t, http.MethodGet, "/_sandbox/users/"+pid, "")
	wantCash := u.JSON(`accounts.#(product=="securities").cash`).String()
	wantQty := u.JSON(`accounts.#(product=="securities").holdings.#(symbol=="AAPL").quantity`).String()
	assert(t, wantCash != "1000.00" && wantQty != "", "the fill moved cash and holdings: %s", u.Body)
	assert(t, tb.text("#account-securities .cash") == wantCash, "cash after: %q, want %q", tb.text("#account-securities .cash"), wantCash)
	holdings := tb.text("#account-securities .holdings tbody")
	assert(t, strings.Contains(holdings, "AAPL") && strings.Contains(holdings, wantQty), "holdings after: %q, want AAPL %s", holdings, wantQty)
	assert(t, tb.text("#user-orders .badge") == "completed", "the order is completed: %q", tb.text("#user-orders .badge"))
	tb.shot("console")
}

// Advancing the virtual clock makes a failed delivery's retry happen; redeliver sends again.
func TestBrowserRetryOnClockAdvanceAndRedeliver(t *testing.T) {
	sb := sandboxtest.MustServe(t, func(c *sandbox.Config) { c.RetrySchedule = []time.Duration{time.Hour, time.Hour} })
	recv := newReceiver(t, func(n int64) bool { return n == 1 })
	subscribe(t, sb, recv.URL, "kyc")
	pid := newUser(t, sb, `[{"product":"crypto","kyc_status":"pending"}]`)
	ev := sb.MustControl(t, http.MethodPost, "/_sandbox/users/"+pid+"/kyc", `{"product":"crypto","status":"approved"}`).JSON("event_id").String()
	tb := openTab(t, sb)
	tb.signIn()

	tb.open("/_sandbox/ui/deliveries?event_id=" + ev)
	tb.waitFor("the first attempt failed", `(d => d && d.dataset.status === "pending" && d.querySelector('.attempts').textContent === "1")(document.querySelector('tbody.delivery'))`)
	tb.open("/_sandbox/ui/clock")
	tb.waitFor("the retry is listed as due", `document.querySelector('#due').textContent.includes("`+ev+`")`)
	tb.shot("console-clock")
	tb.click(`button.preset[data-seconds="3600"]`, "#flash")
	assert(t, strings.Contains(tb.text("#flash"), "Advanced the virtual clock by 1h0m0s"), "the flash: %q", tb.text("#flash"))

	tb.open("/_sandbox/ui/deliveries?event_id=" + ev)
	tb.waitFor("the retry succeeded", `(d => d.dataset.status === "delivered" && d.querySelector('.attempts').textContent === "2")(document.querySelector('tbody.delivery'))`)
	// Both attempts were made within seconds of wall time; the schedule shows in the virtual
	// time each was due, an hour apart.
	dues := eval[[]string](tb, `[...document.querySelectorAll('tbody.delivery table.attempts td.due')].map(td => td.dataset.due)`)
	assert(t, len(dues) == 2, "each attempt shows when it was due: %q", dues)
	if len(dues) == 2 {
		first, err1 := time.Parse(time.RFC3339Nano, dues[0])
		second, err2 := time.Parse(time.RFC3339Nano, dues[1])
		gap := second.Sub(first)
		assert(t, err1 == nil && err2 == nil && gap >= time.Hour && gap < time.Hour+5*time.Second, "the retry was due an hour after the first attempt on the virtual clock: %q", dues)
	}
	tb.click("button.redeliver", "#flash")
	assert(t, strings.Contains(tb.text("#flash"), "to its subscription only"), "the flash: %q", tb.text("#flash"))
	tb.waitFor("the redelivery is delivered", `document.querySelectorAll('tbody.delivery[data-status="delivered"]').length === 2`)
	assert(t, recv.n.Load() == 3, "the receiver got %d requests, want 3 (failed, retried, redelivered)", recv.n.Load())
}

// Redeliver on one delivery's row sends its event to that delivery's subscription only (the
// endpoint that acknowledged gets no duplicate) and the page keeps its filters; Resend event on
// the same row goes to every enabled subscription of the event's type.
func TestBrowserRedeliverOneDeliveryKeepsTheFilters(t *testing.T) {
	sb := sandboxtest.MustServe(t, func(c *sandbox.Config) { c.RetrySchedule = []time.Duration{time.Hour, time.Hour} })
	down := newReceiver(t, func(int64) bool { return true })
	up := newReceiver(t, func(int64) bool { return false })
	subscribe(t, sb, down.URL, "kyc")
	subscribe(t, sb, up.URL, "kyc")
	pid := newUser(t, sb, `[{"product":"crypto","kyc_status":"pending"}]`)
	ev := sb.MustControl(t, http.MethodPost, "/_sandbox/users/"+pid+"/kyc", `{"product":"crypto","status":"approved"}`).JSON("event_id").String()
	tb := openTab(t, sb)
	tb.signIn()

	filtered := "/_sandbox/ui/deliveries?status=pending&event_type=kyc"
	tb.open(filtered)
	tb.waitFor("the failing endpoint's delivery is pending", `(d => d && d.dataset.event === "`+ev+`" && d.querySelector('.attempts').textContent === "1")(document.querySelector('tbody.delivery[data-status="pending"]'))`)
	tb.click(`tbody.delivery[data-event="`+ev+`"] button.redeliver`, "#flash")
	flash := tb.text("#flash")
	assert(t, strings.Contains(flash, "to its subscription only"), "the flash: %q", flash)
	assert(t, eval[string](tb, `location.pathname + location.search`) == filtered, "the page kept its filters: %s", eval[string](tb, `location.href`))
	sandboxtest.Eventually(t, func() bool { return down.n.Load() == 2 }, "the failing endpoint got the event again")
	assert(t, up.n.Load() == 1, "the endpoint that acknowledged got %d requests, want 1 (no duplicate)", up.n.Load())

	tb.click(`tbody.delivery[data-event="`+ev+`"] button.resend`, "#flash")
	flash = tb.text("#flash")
	assert(t, strings.Contains(flash, "Resending event "+ev+" to 2 subscription(s)"), "the flash: %q", flash)
	assert(t, eval[string](tb, `location.pathname + location.search`) == filtered, "the page kept its filters: %s", eval[string](tb, `location.href`))
	sandboxtest.Eventually(t, func() bool { return up.n.Load() == 2 && down.n.Load() == 3 }, "resend goes to both")
}

// What a first-day QA tester stumbled on: the order form offers only what the user can trade
// (an approved account first), the flash says dollars or shares, the delivery log's Created
// column stays on one line at the window's 1440 px, date filters hint at a format instead of
// showing a date that reads as a value, and a scenario run's page links what it bound and
// separates the bindings.
func TestBrowserDayOneDetails(t *testing.T) {
	sb := sandboxtest.MustServe(t)
	pid := newUser(t, sb, `[{"product":"securities","kyc_status":"pending"},{"product":"crypto","kyc_status":"approved","cash":"500.00"}]`)
	tb := openTab(t, sb)
	tb.signIn()
	tb.open("/_sandbox/ui/users/" + pid)
	opts := eval[string](tb, `[...document.querySelectorAll('#o-product option')].map(o => o.textContent).join(",")`)
	assert(t, opts == "crypto", "the order form offers the approved account only, got %q", opts)
	tb.do("a $25 buy of BTC", chromedp.SetValue(chromedp.CSS("#o-symbol"), "BTC"), chromedp.SetValue(chromedp.CSS("#o-amount"), "25.00"))
	tb.click("#place-order", "#flash")
	assert(t, strings.Contains(tb.text("#flash"), "Placed a buy of $25.00 of BTC"), "the flash says dollars: %q", tb.text("#flash"))

	for _, page := range []string{"deliveries", "institutions/ins_harbor/users", "institutions/ins_harbor/orders"} {
		tb.open("/_sandbox/ui/" + page)
		bad := eval[string](tb, `[...document.querySelectorAll('input[placeholder]')].map(i => i.placeholder).filter(p => /^\d{4}-\d\d-\d\d/.test(p)).join(",")`)
		assert(t, bad == "", "%s: placeholders that read as values: %q", page, bad)
	}
	recv := newReceiver(t, func(int64) bool { return false })
	subscribe(t, sb, recv.URL, "kyc")
	sb.MustControl(t, http.MethodPost, "/_sandbox/users/"+pid+"/kyc", `{"product":"securities","status":"approved"}`)
	tb.open("/_sandbox/ui/deliveries")
	tb.waitFor("a delivery is listed", `document.querySelector('tbody.delivery td.when') !== null`)
	lines := eval[float64](tb, `(c => { const r = document.createRange(); r.selectNodeContents(c); return new Set([...r.getClientRects()].map(x => Math.round(x.top))).size })(document.querySelector('tbody.delivery td.when'))`)
	assert(t, lines <= 1, "the Created cell takes %v lines", lines)

	tb.open("/_sandbox/ui/scenarios")
	tb.click("#run-onboarding-approved", "#run-status")
	tb.waitFor("step 1 bound the user", `document.querySelector('#run td.result a[href*="/users/usr_"]') !== null`)
	n := eval[float64](tb, `document.querySelectorAll('#run dl.bound dt').length`)
	assert(t, n >= 2, "the bindings are a list (institution and the user), got %v entries", n)
}

// A scenario runs to completion as the clock is advanced from its run page.
func TestBrowserScenarioRunsToCompletion(t *testing.T) {
	sb := sandboxtest.MustServe(t)
	tb := openTab(t, sb)
	tb.signIn()
	tb.open("/_sandbox/ui/scenarios")
	tb.click("#run-onboarding-approved", "#run-status")
	assert(t, strings.Contains(tb.text("#flash"), "Started onboarding-approved"), "the flash: %q", tb.text("#flash"))
	assert(t, tb.text("#run-status") == "running", "waiting on the clock: %q", tb.text("#run-status"))
	tb.click(`button.preset[data-seconds="300"]`, "#flash")
	tb.waitFor("the run completes", `document.getElementById('run-status').textContent === "completed"`)
	steps := eval[int](tb, `document.querySelectorAll('#run tbody .st-good').length`)
	assert(t, steps == 4, "every step done: %d of 4", steps)
	tb.shot("console-scenario")
}

// A page of another site (here another port of the same host, which the browser counts as the
// same site and so sends the SameSite=Strict cookie to) posting a console form, even with the
// right CSRF token, is refused and changes nothing.
func TestBrowserCrossSitePostRefused(t *testing.T) {
	sb := sandboxtest.MustServe(t)
	pid := newUser(t, sb, `[{"product":"crypto","kyc_status":"pending"}]`)
	var csrf atomic.Value
	csrf.Store("")
	evil := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "text/html")
		fmt.Fprintf(w, `<!doctype html><link rel="icon" href="data:,"><form id="f" method="post" action="%s/_sandbox/ui/users/%s/kyc">
<input name="csrf" value="%s"><input name="product" value="crypto"><input name="status" value="approved"></form>
<script>document.getElementById('f').submit()</script>`, sb.URL, pid, csrf.Load())
	}))
	t.Cleanup(evil.Close)
	tb := openTab(t, sb, evil.URL+"/")
	tb.signIn()
	tb.open("/_sandbox/ui/users/" + pid)
	csrf.Store(eval[string](tb, `document.querySelector('input[name=csrf]').value`))
	tb.do("the other site posts", chromedp.Navigate(evil.URL), chromedp.WaitVisible(chromedp.CSS("#refused")))
	assert(t, strings.Contains(tb.text("#refused"), "this request came from another site"), "the refusal says why: %q", tb.text("#refused"))
	assert(t, kycOf(t, sb, pid, "crypto") == "pending", "the cross-site POST changed the KYC status")
}

// The clock page lists each institution advanced on its own with its virtual time, and the
// institution's page shows its clock (decisions D9).
func TestBrowserShowsEachInstitutionsClock(t *testing.T) {
	frozen := time.Date(2026, 6, 15, 12, 0, 0, 0, time.UTC)
	sb := sandboxtest.MustServe(t, func(c *sandbox.Config) { c.FrozenClock = &frozen })
	inst := sb.MustControl(t, http.MethodPost, "/_sandbox/institutions", `{"name":"Ahead","vendors":{"core":null,"dbp":null}}`).JSON("institution_id").String()
	adv := sb.MustControl(t, http.MethodPost, "/_sandbox/clock/advance", `{"seconds":7200,"institution_id":"`+inst+`"}`)
	tb := openTab(t, sb)
	tb.signIn()

	tb.open("/_sandbox/ui/clock")
	row := `#institution-clocks tr[data-institution="` + inst + `"]`
	tb.waitFor("the institution's clock is listed", `document.querySelector('`+row+`') !== null`)
	assert(t, tb.text(row+" .ahead") == "2h0m0s", "ahead by: %q", tb.text(row+" .ahead"))
	assert(t, adv.JSON("now").String() == "2026-06-15T14:00:00Z", "the advance: %s", adv.Body)
	assert(t, tb.text(row+" .virtual") == "2026-06-15 14:00:00Z", "its virtual time: %q", tb.text(row+" .virtual"))
	tb.shot("console-clocks")

	tb.open("/_sandbox/ui/institutions/" + inst)
	tb.waitFor("the institution's clock is shown", `document.querySelector('#institution-clock .ahead') !== null`)
	assert(t, tb.text("#institution-clock .ahead") == "2h0m0s", "its page: %q", tb.text("#institution-clock"))
	tb.open("/_sandbox/ui/institutions/ins_harbor")
	tb.waitFor("another institution's page", `document.querySelector('#institution-clock') !== null`)
	assert(t, !strings.Contains(tb.text("#institution-clock"), "ahead"), "Harbor keeps the process-wide clock: %q", tb.text("#institution-clock"))
}

// A contract proxy in front of the sandbox reports to its control plane; the console's Contract
// proxy page lists the rules and the recent exchanges, an exchange made while it is open
// appears without a reload, and the page asks only the sandbox (never the proxy) for anything.
func TestBrowserContractProxyPage(t *testing.T) {
	sb := sandboxtest.MustServe(t)
	tb := openTab(t, sb)
	tb.signIn()
	tb.open("/_sandbox/ui/proxy")
	tb.do("the page before any proxy", chromedp.WaitVisible(chromedp.CSS("#proxy-none")))
	assert(t, strings.Contains(tb.text("#proxy-none"), "No contract proxy has reported"), "the empty page says what to do: %q", tb.text("#proxy-none"))

	u, _ := url.Parse(sb.URL)
	p, err := proxy.New(proxy.Config{Upstream: u, Loopback: true, SandboxToken: sb.SB.Token, ReportEvery: 20 * time.Millisecond, Address: "http://127.0.0.1:8081"})
	if err != nil {
		t.Fatal(err)
	}
	front := httptest.NewServer(p.API())
	t.Cleanup(func() { front.Close(); p.Close() })
	call := func(path string) {
		sandboxtest.Do(t, http.DefaultClient, http.MethodGet, front.URL+path, "", "", "x-api-key: "+harborKey)
	}
	call("/v1/users/?per_page=2")
	call("/v1/users/?per_page=0") // the app's own 422: its lint

	tb.waitFor("the report on the page (live)", `document.querySelector('#proxy-rules tr[data-rule="lint.app-422"]') !== null`)
	assert(t, strings.Contains(tb.text("#proxy-status"), "http://127.0.0.1:8081"), "the proxy named: %q", tb.text("#proxy-status"))
	assert(t, strings.Contains(tb.text(`#proxy-rules tr[data-rule="lint.app-422"]`), "failed"), "the app's 422 failed: %q", tb.text(`#proxy-rules tr[data-rule="lint.app-422"]`))
	assert(t, strings.Contains(tb.text(`#proxy-rules tr[data-rule="shape.error-body"]`), "passed"), "the error shape held: %q", tb.text(`#proxy-rules tr[data-rule="shape.error-body"]`))
	assert(t, strings.Contains(tb.text("#proxy-recent"), "GET /v1/users/?per_page=0 → 422"), "the recent exchanges: %q", tb.text("#proxy-recent"))
	tb.shot("console-proxy")

	call("/v1/orders/?per_page=3")
	tb.waitFor("a new exchange without a reload", `document.querySelector('#proxy-recent').textContent.includes('/v1/orders/?per_page=3')`)
	assert(t, !strings.Contains(tb.text("body"), harborKey), "a key's plaintext is never shown")
}
