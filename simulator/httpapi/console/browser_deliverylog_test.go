package console_test

import (
	"context"
	"fmt"
	"net/http"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	cdpbrowser "github.com/chromedp/cdproto/browser"
	"github.com/chromedp/chromedp"

	"github.com/partnersim/partnersim/internal/sandboxtest"
	"github.com/partnersim/partnersim/simulator/sandbox"
)

// grantClipboard lets the tab's page read and write the clipboard, as a person's click would.
func (tb *tab) grantClipboard() {
	tb.t.Helper()
	for _, name := range []string{"clipboard-read", "clipboard-write"} {
		_, err := chromedp.CallBrowser(tb.ctx, cdpbrowser.SetPermission, cdpbrowser.SetPermissionParams{
			Permission: &cdpbrowser.PermissionDescriptor{Name: name}, Setting: cdpbrowser.PermissionSettingGranted,
			Origin: tb.sb.URL, BrowserContextID: chromedp.FromContext(tb.ctx).BrowserContextID})
		if err != nil {
			tb.t.Fatalf("grant %s: %v", name, err)
		}
	}
}

// clipboard reads the clipboard's text in the page.
func (tb *tab) clipboard() string {
	tb.t.Helper()
	ctx, cancel := context.WithTimeout(tb.ctx, 10*time.Second)
	defer cancel()
	s, err := chromedp.Run(ctx, chromedp.Evaluate[string](`navigator.clipboard.readText()`, chromedp.EvalAwaitPromise))
	if err != nil {
		tb.t.Fatalf("read the clipboard: %v", err)
	}
	return s
}

// utcTime is the console's one time format.
var utcTime = regexp.MustCompile(`^\d{4}-\d\d-\d\d \d\d:\d\d:\d\dZ$`)

// cadenceStamp is what a live region's cadence line says: when it last changed ("loaded" or
// "updated") and, while nothing has changed since, when it last checked.
var cadenceStamp = regexp.MustCompile(`^(loaded|updated) \d\d:\d\d:\d\dZ( \(checked \d\d:\d\d:\d\dZ, no change\))?$`)

// The delivery log filters by status, event type, institution and user, pages with a cursor,
// shows the institution and event type of each delivery, every time in one UTC format, a
// callback URL on one line however long, and a pretty-printed body whose exact bytes a button
// copies.
func TestBrowserDeliveryLogFiltersPagesAndCopies(t *testing.T) {
	sb := sandboxtest.MustServe(t, func(c *sandbox.Config) { c.RetrySchedule = []time.Duration{time.Hour} })
	good := newReceiver(t, func(int64) bool { return false })
	bad := newReceiver(t, func(int64) bool { return true })
	long := good.URL + "/hooks/partner-investing/webhooks/kyc-and-transaction-events/receiver-endpoint/v1?tenant=harbor-federal-credit-union&route=primary"
	subscribe(t, sb, long, "kyc")
	subscribe(t, sb, bad.URL, "transaction")
	var users []string
	for i := range 3 {
		r := sb.MustControl(t, http.MethodPost, "/_sandbox/institutions/ins_harbor/users",
			fmt.Sprintf(`{"user_account_id":"log-%d","accounts":[{"product":"crypto","kyc_status":"pending"}]}`, i))
		users = append(users, r.JSON("platform_id").String())
		sb.MustControl(t, http.MethodPost, "/_sandbox/users/"+users[i]+"/kyc", `{"product":"crypto","status":"approved"}`)
	}
	txn := sb.MustControl(t, http.MethodPost, "/_sandbox/orders", `{"platform_id":"usr_hfcu_0001","product":"securities","side":"buy","symbol":"AAPL","notional":"10.00"}`).JSON("transaction_id").String()
	sb.MustControl(t, http.MethodPost, "/_sandbox/transactions/"+txn+"/fill", "")

	tb := openTab(t, sb)
	tb.signIn()
	tb.open("/_sandbox/ui/deliveries")
	tb.waitFor("four deliveries, each attempted", `document.querySelectorAll('tbody.delivery').length === 4 &&
		Array.from(document.querySelectorAll('tbody.delivery td.attempts')).every(a => a.textContent === "1")`)
	types := eval[[]string](tb, `Array.from(document.querySelectorAll('tbody.delivery .etype')).map(e => e.textContent)`)
	assert(t, strings.Join(types, ",") == "transaction,kyc,kyc,kyc", "the type column, newest first: %v", types)
	insts := eval[[]string](tb, `Array.from(document.querySelectorAll('tbody.delivery .inst')).map(e => e.textContent)`)
	assert(t, strings.Join(insts, ",") == "ins_harbor,ins_harbor,ins_harbor,ins_harbor", "the institution column: %v", insts)

	// One time format, UTC, in the table, the attempts and the cadence line.
	tb.waitFor("a refresh completed", `Number(document.getElementById('deliveries').dataset.refreshes) >= 1`)
	times := eval[[]string](tb, `Array.from(document.querySelectorAll('tbody.delivery > tr:first-child > td:first-child, table.attempts tbody td:first-child')).map(e => e.textContent)`)
	for _, ts := range times {
		assert(t, utcTime.MatchString(ts), "a time in another format: %q", ts)
	}
	assert(t, len(times) == 8, "a creation and an attempt time per delivery: %v", times)
	stamp := tb.text("[data-stamp]")
	assert(t, cadenceStamp.MatchString(stamp), "the cadence line's times: %q", stamp)

	// A long callback URL stays on one line.
	lines := eval[int](tb, `(td => { const r = document.createRange(); r.selectNodeContents(td); return new Set(Array.from(r.getClientRects()).map(x => Math.round(x.top))).size })(
		Array.from(document.querySelectorAll('tbody.delivery td.url')).find(td => td.textContent.includes("tenant=harbor")))`)
	assert(t, lines == 1, "the long URL is on %d lines, want 1", lines)

	// Filters: status, event type, user.
	tb.do("filter pending", chromedp.SetValue(chromedp.CSS("#f-status"), "pending"), loads(chromedp.Click(chromedp.CSS("#filter"))),
		chromedp.WaitVisible(chromedp.CSS("#deliveries")))
	rows := eval[[]string](tb, `Array.from(document.querySelectorAll('tbody.delivery')).map(d => d.dataset.status + " " + d.dataset.type)`)
	assert(t, strings.Join(rows, ",") == "pending transaction", "status=pending: %v", rows)
	tb.open("/_sandbox/ui/deliveries?event_type=kyc&platform_id=" + users[1])
	rows = eval[[]string](tb, `Array.from(document.querySelectorAll('tbody.delivery')).map(d => d.dataset.type)`)
	assert(t, strings.Join(rows, ",") == "kyc", "one user's kyc deliveries: %v", rows)
	tb.open("/_sandbox/ui/deliveries?status=lost")
	assert(t, strings.Contains(tb.text("body"), "status"), "a bad filter says which: %q", tb.text("body"))

	// Pages of two: the older page is another, and leads back to the newest.
	tb.open("/_sandbox/ui/deliveries?limit=2")
	first := eval[[]string](tb, `Array.from(document.querySelectorAll('tbody.delivery')).map(d => d.dataset.event)`)
	tb.click("#older", "#newest")
	second := eval[[]string](tb, `Array.from(document.querySelectorAll('tbody.delivery')).map(d => d.dataset.event)`)
	assert(t, len(first) == 2 && len(second) == 2 && first[0] != second[0] && first[1] != second[1], "two pages of two: %v then %v", first, second)
	assert(t, eval[int](tb, `document.querySelectorAll('[data-live]').length`) == 0, "an older page is not refreshed")
	tb.click("#newest", "#deliveries")
	again := eval[[]string](tb, `Array.from(document.querySelectorAll('tbody.delivery')).map(d => d.dataset.event)`)
	assert(t, strings.Join(again, ",") == strings.Join(first, ","), "back to the newest: %v", again)

	// The body pretty-printed; its exact bytes copied.
	tb.grantClipboard()
	tb.open("/_sandbox/ui/deliveries?event_type=kyc&limit=1")
	tb.do("open the delivery", chromedp.Click(chromedp.CSS("tbody.delivery details summary")), chromedp.WaitVisible(chromedp.CSS("tbody.delivery pre.body")))
	body := tb.text("tbody.delivery pre.body")
	assert(t, strings.Contains(body, "{\n  \"event_id\": \"evt_") && strings.Contains(body, "\n  \"data\": {\n    \"user_account_id\""), "the body pretty-printed: %q", body)
	tb.do("copy the body", chromedp.Click(chromedp.CSS("tbody.delivery button.copy-body")))
	tb.waitFor("the button says copied", `document.querySelector('tbody.delivery button.copy-body').textContent === "Copied"`)
	copied := tb.clipboard()
	assert(t, strings.HasPrefix(copied, `{"event_id":"evt_`) && strings.Contains(copied, `"kyc_status":"approved"`) && !strings.Contains(copied, "\n"),
		"the exact bytes were copied: %q", copied)
	tb.shot("console-deliveries")
}

// The institutions page searches and pages; key rows show the description and the last four
// characters; a user's page lists the events about the user with their deliveries.
func TestBrowserInstitutionsKeysAndUserEvents(t *testing.T) {
	sb := sandboxtest.MustServe(t)
	for i := range 60 {
		sb.MustControl(t, http.MethodPost, "/_sandbox/institutions", fmt.Sprintf(`{"name":"Contract Run CU %02d","vendors":{"core":null,"dbp":null}}`, i))
	}
	recv := newReceiver(t, func(int64) bool { return false })
	subscribe(t, sb, recv.URL, "kyc")
	pid := newUser(t, sb, `[{"product":"crypto","kyc_status":"pending"}]`)
	sb.MustControl(t, http.MethodPost, "/_sandbox/users/"+pid+"/kyc", `{"product":"crypto","status":"document_requested"}`)
	ev := sb.MustControl(t, http.MethodPost, "/_sandbox/users/"+pid+"/kyc", `{"product":"crypto","status":"approved"}`).JSON("event_id").String()

	tb := openTab(t, sb)
	tb.signIn()
	rows := eval[int](tb, `document.querySelectorAll('#institutions tbody tr').length`)
	assert(t, rows == 50, "a page of 50 institutions, got %d", rows)
	assert(t, strings.Contains(tb.text(".pager .showing"), "Showing 1–50 of 62"), "the pager: %q", tb.text(".pager .showing"))
	tb.click(".pager a.next", "#institutions")
	assert(t, eval[int](tb, `document.querySelectorAll('#institutions tbody tr').length`) == 12, "the second page holds the other 12")
	tb.do("search", chromedp.SetValue(chromedp.CSS("#inst-q"), "harbor"), loads(chromedp.Click(chromedp.CSS("#inst-search"))), chromedp.WaitVisible(chromedp.CSS("#institutions")))
	names := eval[[]string](tb, `Array.from(document.querySelectorAll('#institutions tbody tr td:first-child')).map(e => e.textContent)`)
	assert(t, strings.Join(names, ",") == "Harbor Federal Credit Union", "search by name: %v", names)
	tb.open("/_sandbox/ui/?q=RUN+CU+07")
	names = eval[[]string](tb, `Array.from(document.querySelectorAll('#institutions tbody tr td:first-child')).map(e => e.textContent)`)
	assert(t, strings.Join(names, ",") == "Contract Run CU 07", "search ignores case: %v", names)

	tb.open("/_sandbox/ui/institutions/ins_harbor")
	keys := eval[[]string](tb, `Array.from(document.querySelectorAll('#keys tr.key')).map(r => r.querySelector('.kdesc').textContent + " | " + r.querySelector('.klast').textContent)`)
	assert(t, len(keys) == 4, "Harbor's four keys: %v", keys)
	assert(t, strings.Contains(strings.Join(keys, "\n"), "every scope: users, orders, sessions and webhooks | …0001"), "a key's description and last four: %v", keys)
	assert(t, !strings.Contains(tb.text("#keys"), "sbx_harbo"), "no shared prefix: %q", tb.text("#keys"))
	tb.shot("console-institution")
	tb.do("issue a described key", chromedp.SetValue(chromedp.CSS("#key-desc"), "nightly CI"), loads(chromedp.Click(chromedp.CSS("#issue-key"))),
		chromedp.WaitVisible(chromedp.CSS("#secret")))
	plain := eval[string](tb, `document.getElementById('secret').value`)
	keys = eval[[]string](tb, `Array.from(document.querySelectorAll('#keys tr.key')).map(r => r.querySelector('.kdesc').textContent + " | " + r.querySelector('.klast').textContent)`)
	assert(t, len(plain) > 4 && strings.Contains(strings.Join(keys, "\n"), "nightly CI | …"+plain[len(plain)-4:]), "the new key by its description and last four: %v (key %s)", keys, plain)

	tb.open("/_sandbox/ui/users/" + pid)
	tb.waitFor("the user's events", `document.querySelectorAll('#user-events tr.event').length === 2`)
	events := eval[[]string](tb, `Array.from(document.querySelectorAll('#user-events tr.event')).map(r => r.dataset.event + " " + r.textContent)`)
	assert(t, strings.HasPrefix(events[0], ev) && strings.Contains(events[0], "crypto → approved") && strings.Contains(events[0], "delivered"),
		"the newest event with its delivery: %q", events[0])
	assert(t, strings.Contains(events[1], "crypto → document_requested"), "the earlier event: %q", events[1])
	tb.click("#user-deliveries", "#deliveries")
	assert(t, eval[int](tb, `document.querySelectorAll('tbody.delivery').length`) == 2, "the log filtered to the user")
}

// A live region whose content has not changed is left alone: the nodes a person (or a
// click) is on stay in the document, an open delivery stays open, and the cadence line says
// it checked. A real change still replaces the rows and keeps the open delivery open.
func TestBrowserLiveRegionKeepsUnchangedRows(t *testing.T) {
	sb := sandboxtest.MustServe(t)
	recv := newReceiver(t, func(int64) bool { return false })
	subscribe(t, sb, recv.URL, "kyc")
	pid := newUser(t, sb, `[{"product":"crypto","kyc_status":"pending"}]`)
	sb.MustControl(t, http.MethodPost, "/_sandbox/users/"+pid+"/kyc", `{"product":"crypto","status":"document_requested"}`)
	tb := openTab(t, sb)
	tb.signIn()
	tb.open("/_sandbox/ui/deliveries")
	tb.waitFor("the delivery is delivered", `(d => d && d.dataset.status === "delivered" && d.querySelector('.attempts').textContent === "1")(document.querySelector('tbody.delivery'))`)
	tb.do("open the delivery", chromedp.Click(chromedp.CSS("tbody.delivery details summary")), chromedp.WaitVisible(chromedp.CSS("tbody.delivery pre.body")))

	// Keep references to a row and the open <details>, then let two refreshes complete (so at
	// least one whole fetch began after the references were taken).
	refreshes := `Number(document.getElementById('deliveries').dataset.refreshes || 0)`
	n := eval[int](tb, `(() => { window.probeRow = document.querySelector('#deliveries tbody.delivery tr');
		window.probeDetails = document.querySelector('#deliveries tbody.delivery details'); return `+refreshes+` })()`)
	tb.waitFor("two more refreshes", fmt.Sprintf(`%s >= %d`, refreshes, n+2))
	kept := eval[bool](tb, `document.contains(window.probeRow) && document.contains(window.probeDetails)`)
	assert(t, kept, "an unchanged refresh replaced the rows (a click or a selection there is lost)")
	assert(t, eval[bool](tb, `window.probeDetails.open`), "the open delivery was closed")
	stamp := cadenceStamp.FindStringSubmatch(tb.text("[data-stamp]"))
	assert(t, stamp != nil && stamp[2] != "", "the cadence line says when it last changed and that it checked since: %q", tb.text("[data-stamp]"))

	// A new delivery is a change: the rows are replaced and the open delivery stays open.
	sb.MustControl(t, http.MethodPost, "/_sandbox/users/"+pid+"/kyc", `{"product":"crypto","status":"approved"}`)
	tb.waitFor("the new delivery appears", `document.querySelectorAll('tbody.delivery').length === 2`)
	assert(t, !eval[bool](tb, `document.contains(window.probeRow)`), "a change did not replace the rows")
	id := eval[string](tb, `window.probeDetails.id`)
	assert(t, eval[bool](tb, `document.getElementById(`+strconv.Quote(id)+`).open`), "the open delivery %s was closed by the change", id)
	stamp = cadenceStamp.FindStringSubmatch(tb.text("[data-stamp]"))
	assert(t, stamp != nil && stamp[1] == "updated", "the cadence line after a change: %q", tb.text("[data-stamp]"))
}
