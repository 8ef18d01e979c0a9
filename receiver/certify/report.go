package certify

import (
	"fmt"
	"io"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/partnersim/partnersim/internal/junit"
)

// Report is a run's outcome: every case, in the order sent.
type Report struct {
	URL       string        `json:"url"`
	Tolerance time.Duration `json:"tolerance"`
	Started   time.Time     `json:"started"`
	Duration  time.Duration `json:"duration"`
	Results   []Result      `json:"results"`
}

// Passed reports whether every case passed (and there was at least one).
func (r Report) Passed() bool { return len(r.Results) > 0 && r.Failed() == 0 }

// Failed counts the failed cases.
func (r Report) Failed() int {
	n := 0
	for _, res := range r.Results {
		if !res.Passed {
			n++
		}
	}
	return n
}

// WriteTable writes the report for people: one row per case (name, expectation, what came
// back, result, what it proves), then each failure's reason, then a summary line.
func (r Report) WriteTable(w io.Writer) error {
	ew := &errWriter{w: w}
	fmt.Fprintf(ew, "certify %s (tolerance %s)\n\n", r.URL, r.Tolerance)
	tw := tabwriter.NewWriter(ew, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "  CASE\tEXPECT\tGOT\tRESULT\tWHAT IT PROVES")
	for _, res := range r.Results {
		verdict := "pass"
		if !res.Passed {
			verdict = "FAIL"
		}
		fmt.Fprintf(tw, "  %s\t%s\t%s\t%s\t%s\n", res.Name, res.Expect, res.Got(), verdict, res.Proves)
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	if failed := r.Failed(); failed > 0 {
		fmt.Fprintln(ew)
		for _, res := range r.Results {
			if !res.Passed {
				fmt.Fprintf(ew, "  FAIL %s: %s\n", res.Name, res.Reason)
				fmt.Fprintf(ew, "       sent: %s\n", res.Sends)
			}
		}
	}
	if r.noneAcknowledged() {
		fmt.Fprintln(ew, "\n  The receiver acknowledged none of the valid deliveries: check --url and --secret. Until it")
		fmt.Fprintln(ew, "  does, its refusals prove nothing: a receiver that refuses everything refuses those too.")
	}
	fmt.Fprintf(ew, "\n%d cases: %d passed, %d failed (%s)\n", len(r.Results), len(r.Results)-r.Failed(), r.Failed(),
		r.Duration.Round(time.Millisecond))
	return ew.err
}

// noneAcknowledged reports whether every case that expects a 2xx failed.
func (r Report) noneAcknowledged() bool {
	some := false
	for _, res := range r.Results {
		if res.Expect == Expect2xx {
			if res.Passed {
				return false
			}
			some = true
		}
	}
	return some
}

// errWriter keeps the first write error, so a sequence of prints is checked once.
type errWriter struct {
	w   io.Writer
	err error
}

func (e *errWriter) Write(p []byte) (int, error) {
	if e.err != nil {
		return 0, e.err
	}
	n, err := e.w.Write(p)
	e.err = err
	return n, err
}

// WriteJUnit writes the report as JUnit XML: one testsuite ("partnersim certify"), one
// testcase per case named by the case's stable name, a <failure> carrying the reason for each
// failed case, and what was sent and what came back in the case's system-out.
func (r Report) WriteJUnit(w io.Writer) error {
	suite := junit.Suite{Name: "partnersim certify", Time: junit.Seconds(r.Duration),
		Timestamp:  r.Started.UTC().Format("2006-01-02T15:04:05"),
		Properties: &junit.Properties{Props: []junit.Property{{Name: "url", Value: r.URL}, {Name: "tolerance", Value: r.Tolerance.String()}}}}
	for _, res := range r.Results {
		jc := junit.Case{Name: res.Name, Classname: "certify", Time: junit.Seconds(res.Duration), SystemOut: details(res)}
		if !res.Passed {
			jc.Failure = &junit.Message{Message: res.Reason, Type: "expected " + string(res.Expect),
				Text: fmt.Sprintf("%s\nproves: %s\nsent: %s\ngot: %s", res.Reason, res.Proves, res.Sends, res.Got())}
		}
		suite.Add(jc)
	}
	doc := junit.Suites{Name: suite.Name, Time: suite.Time}
	doc.Add(suite)
	return junit.Write(w, doc)
}

// details renders what a case sent and got, for the JUnit system-out.
func details(res Result) string {
	var b strings.Builder
	fmt.Fprintf(&b, "proves: %s\nexpect: %s\nsent: %s\n", res.Proves, res.Expect, res.Sends)
	if res.EventID != "" {
		fmt.Fprintf(&b, "event_id: %s\n", res.EventID)
	}
	if res.HeaderID != "" {
		fmt.Fprintf(&b, "X-Partner-Webhook-Id: %s\n", res.HeaderID)
	}
	if res.Signature != "" {
		fmt.Fprintf(&b, "X-Partner-Webhook-Signature: %s\n", res.Signature)
	}
	fmt.Fprintf(&b, "got: %s\n", res.Got())
	if res.Answer != "" {
		fmt.Fprintf(&b, "answer: %s\n", res.Answer)
	}
	return b.String()
}
