package httpapi_test

import (
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/partnersim/partnersim/internal/sandboxtest"
)

// parityDecision is a row of the recorded table where the sandbox answers otherwise than
// FastAPI, by a decision of docs/decisions.md; want, when set, is what the sandbox answers
// instead ("" when it does).
type parityDecision struct {
	why  string
	want func(sandboxtest.ParityAnswer) string
}

// neverFive is D17's answer where FastAPI cannot render its own 422 (a lone surrogate, NaN,
// 1e400 in the rejected input) and answers 500: the 422 it would have rendered.
var neverFive = parityDecision{
	why: "D17/D19: FastAPI fails to render its 422 (500); the sandbox answers the 422, the unrenderable input null",
	want: func(a sandboxtest.ParityAnswer) string {
		if a.Status != 422 || a.ContentType != "application/json" || !strings.HasPrefix(a.Body, `{"detail":[`) {
			return "want the 422 FastAPI would have rendered, got " + a.String()
		}
		return ""
	},
}

// parityDecisions are the table's rows the decisions answer otherwise than FastAPI.
var parityDecisions = map[string]parityDecision{
	"slash HTTP/1.0 no Host":               {why: "D18: a sandbox on loopback answers a request without a loopback Host 421 before routing"},
	"allow PUT /v1/webhooks/subscriptions": {why: "D2: Allow lists every method of the path (Starlette names the first route's only)"},
	"newline GET /openapi.json%0A ":        {why: "D16: the document is the sandbox's own; the route matches as FastAPI's does (200)"},
	"body malformed with key":              {why: `D4: json_invalid's loc is ["body"], not ["body", offset]`},
	"body malformed without key":           {why: "D3: authentication (401) comes before the body is parsed; FastAPI parses the body first"},
	`callback https://\ud800.com/`:         neverFive,
	"callback surrogate event type":        neverFive,
	"callback NaN":                         neverFive,
	"callback 1e400":                       neverFive,
}

// parityPending are rows the sandbox does not match yet, with the decision that will make it.
// A pending row that matches fails the test: take it off this list.
var parityPending = map[string]string{
	`callback https://1.2.3.4/\ud800`:         "D19 (lone surrogate): pydantic refuses it with string_unicode, FastAPI cannot render that (500); the sandbox creates the subscription",
	`callback https://\u0345/`:                "D19 (IDNA): pydantic maps it to xn--uxa and accepts it",
	`callback https://\u0661.com/`:            "D19 (IDNA): the Bidi rule refuses it (422 url_parsing)",
	`callback https://\u05d0.1/`:              "D19 (IDNA): invalid international domain name, not invalid IPv4 address",
	`callback https://a\u05d0.com/`:           "D19 (IDNA): the Bidi rule refuses it",
	`callback https://\u05d0a.com/`:           "D19 (IDNA): the Bidi rule refuses it",
	`callback https://a\u0661.com/`:           "D19 (IDNA): the Bidi rule refuses it",
	`callback https://a\u200db.com/`:          "D19 (IDNA): ZWJ outside its context (ContextJ)",
	`callback https://a\u200cb.com/`:          "D19 (IDNA): ZWNJ outside its context (ContextJ)",
	`callback https://\u2100.com/`:            "D19 (IDNA): a disallowed UTS 46 mapping",
	`callback https://\ufe16.com/`:            "D19 (IDNA): a disallowed UTS 46 mapping",
	`callback https://\ufe6b.com/`:            "D19 (IDNA): a disallowed UTS 46 mapping",
	`callback https://a\u0003b@127.0.0.1:9/x`: "D19 (a refusal's reason): pydantic percent-encodes the control character in the userinfo and accepts the URL; the sandbox refuses it as not public",
}

// parityHandler is what the sandbox's own handler answers where the framework's reference
// handler was reached and the sandbox's outcome is known from its state (the default fixtures,
// loopback callbacks on).
var parityHandler = map[string]int{
	`callback https://ab@127.0.0.1:9/x`:       201,
	`callback https://a\u0003b@127.0.0.1:9/x`: 201, // pydantic percent-encodes the control character, as loopback is allowed
	`callback https://93.184.216.34/`:         201,
}

// TestFastAPIParity replays the table internal/parity recorded from FastAPI (decisions D19)
// against the sandbox: every row answers as FastAPI did, or as the decision it names.
func TestFastAPIParity(t *testing.T) {
	table := sandboxtest.ReadParityTable(t, filepath.Join("testdata", filepath.Base(sandboxtest.ParityTablePath)))
	if len(table.Cases) == 0 {
		t.Fatal("the parity table has no rows")
	}
	a := MustServe(t)
	addr := a.Listener.Addr().String()
	seen := map[string]bool{}
	for _, c := range table.Cases {
		seen[c.Name] = true
		got := sandboxtest.Exchange(t, addr, c.Request)
		mismatch := sandboxtest.ParityMismatch(c.Answer, got)
		if want, ok := parityHandler[c.Name]; ok && mismatch == "" && got.Status != want {
			mismatch = "want the sandbox's handler to answer " + strconv.Itoa(want) + ", got " + got.String()
		}
		if d, ok := parityDecisions[c.Name]; ok {
			switch {
			case mismatch == "":
				t.Errorf("%s: answers as FastAPI now; take it off parityDecisions (%s)", c.Name, d.why)
			case d.want != nil:
				if m := d.want(got); m != "" {
					t.Errorf("%s: %s (%s)", c.Name, m, d.why)
				}
			}
			continue
		}
		if why, ok := parityPending[c.Name]; ok {
			if mismatch == "" {
				t.Errorf("%s: answers as FastAPI now; take it off parityPending (%s)", c.Name, why)
			}
			continue
		}
		if mismatch != "" {
			t.Errorf("%s %s (%s): %s", c.Request.Method, c.Request.Target, c.Name, mismatch)
		}
	}
	for name := range parityDecisions {
		if !seen[name] {
			t.Errorf("parityDecisions names %q, which the table does not hold", name)
		}
	}
	for name := range parityPending {
		if !seen[name] {
			t.Errorf("parityPending names %q, which the table does not hold", name)
		}
	}
}
