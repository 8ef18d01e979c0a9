package certify

import (
	"encoding/xml"
	"fmt"
	"io"
	"strings"
	"text/tabwriter"
	"time"
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

// JUnit XML (the shape Jenkins, GitLab and GitHub reporters read).
type (
	junitSuites struct {
		XMLName xml.Name     `xml:"testsuites"`
		Name    string       `xml:"name,attr"`
		Tests   int          `xml:"tests,attr"`
		Fails   int          `xml:"failures,attr"`
		Errors  int          `xml:"errors,attr"`
		Time    string       `xml:"time,attr"`
		Suites  []junitSuite `xml:"testsuite"`
	}
	junitSuite struct {
		Name       string          `xml:"name,attr"`
		Tests      int             `xml:"tests,attr"`
		Fails      int             `xml:"failures,attr"`
		Errors     int             `xml:"errors,attr"`
		Skipped    int             `xml:"skipped,attr"`
		Time       string          `xml:"time,attr"`
		Timestamp  string          `xml:"timestamp,attr"`
		Properties []junitProperty `xml:"properties>property"`
		Cases      []junitCase     `xml:"testcase"`
	}
	junitProperty struct {
		Name  string `xml:"name,attr"`
		Value string `xml:"value,attr"`
	}
	junitCase struct {
		Name      string        `xml:"name,attr"`
		Classname string        `xml:"classname,attr"`
		Time      string        `xml:"time,attr"`
		Failure   *junitFailure `xml:"failure,omitempty"`
		SystemOut *junitText    `xml:"system-out,omitempty"`
	}
	junitText struct {
		Text string `xml:",cdata"`
	}
	junitFailure struct {
		Message string `xml:"message,attr"`
		Type    string `xml:"type,attr"`
		Text    string `xml:",cdata"`
	}
)

func seconds(d time.Duration) string { return fmt.Sprintf("%.3f", d.Seconds()) }

// WriteJUnit writes the report as JUnit XML: one testsuite ("partnersim certify"), one
// testcase per case named by the case's stable name, a <failure> carrying the reason for each
// failed case, and what was sent and what came back in the case's system-out.
func (r Report) WriteJUnit(w io.Writer) error {
	suite := junitSuite{Name: "partnersim certify", Tests: len(r.Results), Fails: r.Failed(), Time: seconds(r.Duration),
		Timestamp:  r.Started.UTC().Format("2006-01-02T15:04:05"),
		Properties: []junitProperty{{Name: "url", Value: r.URL}, {Name: "tolerance", Value: r.Tolerance.String()}}}
	for _, res := range r.Results {
		jc := junitCase{Name: res.Name, Classname: "certify", Time: seconds(res.Duration), SystemOut: &junitText{xmlSafe(details(res))}}
		if !res.Passed {
			jc.Failure = &junitFailure{Message: res.Reason, Type: "expected " + string(res.Expect),
				Text: xmlSafe(fmt.Sprintf("%s\nproves: %s\nsent: %s\ngot: %s", res.Reason, res.Proves, res.Sends, res.Got()))}
		}
		suite.Cases = append(suite.Cases, jc)
	}
	doc := junitSuites{Name: suite.Name, Tests: suite.Tests, Fails: suite.Fails, Time: suite.Time, Suites: []junitSuite{suite}}
	if _, err := io.WriteString(w, xml.Header); err != nil {
		return err
	}
	enc := xml.NewEncoder(w)
	enc.Indent("", "  ")
	if err := enc.Encode(doc); err != nil {
		return err
	}
	_, err := io.WriteString(w, "\n")
	return err
}

// xmlSafe replaces what XML 1.0 cannot carry at all (control characters other than tab,
// newline and return; U+FFFE, U+FFFF) with U+FFFD: the encoder escapes attributes itself, but
// CDATA sections are written as they are, and a receiver's answer may hold anything.
func xmlSafe(s string) string {
	return strings.Map(func(r rune) rune {
		switch {
		case r == '\t' || r == '\n' || r == '\r':
			return r
		case r < 0x20 || r == 0xFFFE || r == 0xFFFF:
			return '\uFFFD'
		}
		return r
	}, s)
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
