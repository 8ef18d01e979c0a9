package proxy

import (
	"fmt"
	"io"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/partnersim/partnersim/features/laws"
)

// Kind says whose fault a finding is: the deployment's (a violation of the contract) or the
// partner's app's (lint: what it does that costs it in production).
type Kind string

const (
	Violation Kind = "violation"
	Lint      Kind = "lint"
)

// Rule is one thing the proxy checks.
type Rule struct {
	ID   string `json:"id"`
	Kind Kind   `json:"kind"`
	Says string `json:"says"`
	// Needs says what traffic exercises the rule, for a report's "not observed".
	Needs string `json:"needs"`
}

// The proxy's own rules' ids (the laws' are features/laws').
const (
	OpenAPI        = "openapi.exchange"
	ErrorShape     = "shape.error-body"
	JSONBody       = "shape.json"
	RequestID      = "shape.request-id"
	Reachable      = "upstream.reachable"
	Timely         = "upstream.timely"
	TrailingSlash  = "lint.trailing-slash"
	App422         = "lint.app-422"
	WalkCursor     = "lint.walk-without-cursor"
	WalkStopped    = "lint.walk-stopped-early"
	RetryBackoff   = "lint.retry-without-backoff"
	ScopeMissing   = "lint.scope-missing"
	PollRate       = "lint.poll-rate"
	HookSignature  = "webhook.signature"
	HookSchema     = "webhook.event-schema"
	HookAnswerTime = "webhook.answer-time"
	HookRedelivery = "webhook.redelivery-acknowledged"
)

// Rules is every rule, in the order reports list them.
func Rules() []Rule {
	rs := []Rule{
		{OpenAPI, Violation, "every exchange agrees with the OpenAPI document: its route, status, headers and body", "any exchange the document describes (with a document loaded)"},
		{ErrorShape, Violation, "error bodies have the shapes of decisions D2–D4: {\"detail\": …}; 401 and 403 as FastAPI words them; 422 as pydantic's array of {type, loc, msg, input}; 429 with Retry-After; 307 with Location", "an error answer"},
		{JSONBody, Violation, "every API answer with a body is JSON", "an API answer with a body"},
		{RequestID, Violation, "every answer carries X-Request-Id", "any answer"},
		{Reachable, Violation, "the upstream answers (no connection failure)", "any request"},
		{Timely, Violation, "the upstream answers within --slow", "any request"},
	}
	for _, l := range laws.All {
		rs = append(rs, Rule{l.ID, Violation, l.Says, lawNeeds[l.ID]})
	}
	return append(rs,
		Rule{TrailingSlash, Lint, "the app calls the canonical paths: none costs a 307 for a missing or extra trailing slash", "any API request"},
		Rule{App422, Lint, "the app sends requests the API accepts: no 422", "any API request"},
		Rule{WalkCursor, Lint, "the app pages with last_record_number, not with parameters the API ignores (page, offset, …)", "a list request"},
		Rule{WalkStopped, Lint, "a walk the app continues past its first page reaches its last page", "a list walked past its first page"},
		Rule{RetryBackoff, Lint, "after a 429 the app waits Retry-After (1 s when absent) before its next call with that key", "a 429"},
		Rule{ScopeMissing, Lint, "the app calls only what its key's scopes allow: no 403 for a missing scope", "any API request"},
		Rule{PollRate, Lint, "the app repeats one GET (same key, path and query) no faster than --poll-interval", "a GET repeated"},
		Rule{HookSignature, Violation, "each delivery carries a v1 signature by one of --signing-secret over t.body", "a delivery through --receiver with --signing-secret"},
		Rule{HookSchema, Violation, "each delivery's body and headers agree with the document's event schema", "a delivery through --receiver (with a document loaded)"},
		Rule{HookAnswerTime, Lint, "the receiver answers each delivery within the 10 s timeout", "a delivery through --receiver"},
		Rule{HookRedelivery, Lint, "the receiver answers a redelivery (same X-Partner-Webhook-Id) 2xx like the first", "a delivery sent twice through --receiver"},
	)
}

var lawNeeds = map[string]string{
	laws.TotalIsSum:        "a user list page or a user detail",
	laws.ApprovedAtShown:   "a user list page or a user detail",
	laws.PageFilters:       "a filtered list page",
	laws.PageSort:          "an order page, or a user page sorted by user_account_id, with two items or more",
	laws.PagesConsecutive:  "a list page and the page at its last_record_number",
	laws.DescReversesAsc:   "one query walked whole in both sort orders with no write between",
	laws.DetailMatchesList: "a user's detail within a minute of its list item, with no write between",
	laws.SubscriptionKept:  "a subscriptions list after a create by the same key",
	laws.ForeignID404:      "a request by one key naming a subscription another key created and whose list does not hold it",
}

// Finding is one broken rule on one exchange.
type Finding struct {
	Rule     string    `json:"rule"`
	Kind     Kind      `json:"kind"`
	At       time.Time `json:"at"`
	Exchange string    `json:"exchange"` // METHOD path?query → status (never a key)
	Detail   string    `json:"detail"`   // expected …, got …
}

func (f Finding) String() string {
	return fmt.Sprintf("%s %s: %s: %s", f.Kind, f.Rule, f.Exchange, f.Detail)
}

// keep is how many findings of one rule a report keeps (all are counted).
const keep = 20

// liveLimit is how many lint findings of one rule get a live line (every violation does).
const liveLimit = 10

type tally struct {
	observed, failed int
	kept             []Finding
}

// Book is the rules' record: how often each was exercised and what broke it.
type Book struct {
	mu    sync.Mutex
	rules []Rule
	kinds map[string]Kind
	t     map[string]*tally
	live  io.Writer
	start time.Time
	// shed counts exchanges forwarded but not checked at all, docShed those not checked
	// against the document: the checks had fallen behind the traffic (Shed only).
	shed, docShed atomic.Int64
	// last holds the latest findings (rule id and detail), for the page's recent
	// exchanges: n counts every finding ever made.
	last []string
	n    int
}

// total is how many findings were made so far.
func (b *Book) total() int {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.n
}

// since returns the findings made after the n-th (at most the last 16).
func (b *Book) since(n int) []string {
	b.mu.Lock()
	defer b.mu.Unlock()
	k := min(b.n-n, len(b.last))
	return append([]string(nil), b.last[len(b.last)-k:]...)
}

func newBook(live io.Writer, now time.Time) *Book {
	b := &Book{rules: Rules(), kinds: map[string]Kind{}, t: map[string]*tally{}, live: live, start: now}
	for _, r := range b.rules {
		b.kinds[r.ID] = r.Kind
		b.t[r.ID] = &tally{}
	}
	return b
}

// observe counts an exercise of the rule; pass the finding's detail when it broke ("" when it held).
func (b *Book) observe(rule, exchange, detail string, at time.Time) {
	b.mu.Lock()
	defer b.mu.Unlock()
	t := b.t[rule]
	t.observed++
	if detail == "" {
		return
	}
	t.failed++
	b.n++
	b.last = append(b.last, rule+": "+detail)
	if len(b.last) > 16 {
		b.last = b.last[len(b.last)-16:]
	}
	f := Finding{Rule: rule, Kind: b.kinds[rule], At: at.UTC(), Exchange: exchange, Detail: detail}
	if len(t.kept) < keep {
		t.kept = append(t.kept, f)
	}
	if b.live != nil && (f.Kind == Violation || t.failed <= liveLimit) {
		fmt.Fprintln(b.live, f)
		if f.Kind == Lint && t.failed == liveLimit {
			fmt.Fprintf(b.live, "lint %s: further findings are counted in the report, not printed\n", rule)
		}
	}
}

// check observes a rule with an error's text as its finding.
func (b *Book) check(rule, exchange string, err error, at time.Time) {
	detail := ""
	if err != nil {
		detail = err.Error()
	}
	b.observe(rule, exchange, detail, at)
}

// RuleResult is one rule's outcome.
type RuleResult struct {
	Rule
	Observed int       `json:"observed"`
	Failed   int       `json:"failed"`
	Findings []Finding `json:"findings,omitempty"`
}

// Status is "passed", "failed" or "not observed".
func (r RuleResult) Status() string {
	switch {
	case r.Failed > 0:
		return "failed"
	case r.Observed == 0:
		return "not observed"
	}
	return "passed"
}

// Results is every rule's outcome, in Rules' order.
func (b *Book) Results() []RuleResult {
	b.mu.Lock()
	defer b.mu.Unlock()
	out := make([]RuleResult, len(b.rules))
	for i, r := range b.rules {
		t := b.t[r.ID]
		out[i] = RuleResult{Rule: r, Observed: t.observed, Failed: t.failed, Findings: append([]Finding(nil), t.kept...)}
	}
	return out
}

// Failed counts the findings of a kind ("" for both).
func (b *Book) Failed(kind Kind) int {
	n := 0
	for _, r := range b.Results() {
		if kind == "" || r.Kind == kind {
			n += r.Failed
		}
	}
	return n
}

// Unchecked says how many exchanges were forwarded without any check, and how many without the
// document's, because the checks had fallen behind (Shed: with Wait both are 0).
func (b *Book) Unchecked() (none, document int64) { return b.shed.Load(), b.docShed.Load() }

// Verdict is the run's outcome for --fail-on, nil when it passes: "violations" fails on the
// deployment's findings, "lint" on the app's too, "" never. Either fails too when an exchange
// went unchecked (Shed, behind): a violation may have passed unseen, and a CI run that passed
// would say what it does not know.
func (b *Book) Verdict(failOn string) error {
	if failOn == "" {
		return nil
	}
	var why []string
	switch v, l := b.Failed(Violation), b.Failed(Lint); {
	case failOn == "lint" && v+l > 0:
		why = append(why, fmt.Sprintf("%d violations and %d lint findings seen", v, l))
	case v > 0:
		why = append(why, fmt.Sprintf("%d violations seen", v))
	}
	if none, document := b.Unchecked(); none+document > 0 {
		why = append(why, fmt.Sprintf("%d exchanges forwarded unchecked and %d not checked against the document, "+
			"the checks behind the traffic (--when-behind shed): a violation may have passed unseen; "+
			"--when-behind wait (the default) checks every exchange, the app waiting for the checks", none, document))
	}
	if len(why) == 0 {
		return nil
	}
	return fmt.Errorf("--fail-on %s: %s", failOn, strings.Join(why, "; "))
}
