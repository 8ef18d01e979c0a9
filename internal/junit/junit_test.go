package junit_test

import (
	"bytes"
	"encoding/xml"
	"strings"
	"testing"
	"time"

	"github.com/partnersim/partnersim/internal/junit"
)

// A document is written with the XML declaration and a final newline, and reads back as it
// was given, but for what XML cannot carry: a control character and invalid UTF-8 come back as
// U+FFFD, wherever they stood (a receiver's answer may hold anything).
func TestWriteReadsBack(t *testing.T) {
	odd := "<b>&nope\x00\xff]]></b>"
	doc := junit.Suites{Name: "s", Counts: junit.Counts{Tests: 2, Failures: 1}, Time: junit.Seconds(1500 * time.Millisecond), Suites: []junit.Suite{{
		Name: "suite", Counts: junit.Counts{Tests: 2, Failures: 1}, Time: "1.500", Properties: &junit.Properties{Props: []junit.Property{{Name: "url", Value: odd}}},
		Cases: []junit.Case{
			{Name: "ok", Classname: "c", Time: "0.500", SystemOut: odd},
			{Name: "bad", Classname: "c", Time: "1.000", Failure: &junit.Message{Message: odd, Type: "failed", Text: odd}},
		}}}}
	var out bytes.Buffer
	if err := junit.Write(&out, doc); err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(out.String(), xml.Header) || !strings.HasSuffix(out.String(), "</testsuites>\n") {
		t.Errorf("expected the XML declaration first and a newline last, got %q", out.String())
	}
	var got junit.Suites
	if err := xml.Unmarshal(out.Bytes(), &got); err != nil {
		t.Fatalf("the document does not parse: %v\n%s", err, out.String())
	}
	safe := "<b>&nope\uFFFD\uFFFD]]></b>"
	s := got.Suites[0]
	if got.Time != "1.500" || s.Properties.Props[0].Value != safe || s.Cases[0].SystemOut != safe ||
		s.Cases[1].Failure.Message != safe || s.Cases[1].Failure.Text != safe || s.Cases[0].Failure != nil {
		t.Errorf("expected the document back with %q for each odd text, got\n%s", safe, out.String())
	}
}

// A suite without properties writes no <properties> element.
func TestNoPropertiesNoElement(t *testing.T) {
	var out bytes.Buffer
	if err := junit.Write(&out, junit.Suites{Suites: []junit.Suite{{Name: "bare"}}}); err != nil {
		t.Fatal(err)
	}
	if strings.Contains(out.String(), "properties") {
		t.Errorf("expected no properties element, got\n%s", out.String())
	}
}

// A suite counts the cases added to it, a document the suites added to it, and both write
// their counts as the attributes JUnit readers look for.
func TestAddCounts(t *testing.T) {
	var doc junit.Suites
	for _, cases := range [][]junit.Case{
		{{Name: "ok"}, {Name: "bad", Failure: &junit.Message{Message: "no"}}, {Name: "later", Skipped: &junit.Message{Message: "why"}}},
		{{Name: "bad too", Failure: &junit.Message{Message: "no"}}},
	} {
		var s junit.Suite
		for _, c := range cases {
			s.Add(c)
		}
		doc.Add(s)
	}
	if want := (junit.Counts{Tests: 3, Failures: 1, Skipped: 1}); doc.Suites[0].Counts != want {
		t.Errorf("expected the first suite to count %+v, got %+v", want, doc.Suites[0].Counts)
	}
	if want := (junit.Counts{Tests: 4, Failures: 2, Skipped: 1}); doc.Counts != want || len(doc.Suites) != 2 {
		t.Errorf("expected the document to count %+v over 2 suites, got %+v over %d", want, doc.Counts, len(doc.Suites))
	}
	var out bytes.Buffer
	if err := junit.Write(&out, doc); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{`<testsuites name="" tests="4" failures="2" errors="0" skipped="1" time="">`, `<testsuite name="" tests="3" failures="1" errors="0" skipped="1" time="">`} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("expected %s in\n%s", want, out.String())
		}
	}
}
