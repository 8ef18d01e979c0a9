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
	doc := junit.Suites{Name: "s", Tests: 2, Failures: 1, Time: junit.Seconds(1500 * time.Millisecond), Suites: []junit.Suite{{
		Name: "suite", Tests: 2, Failures: 1, Time: "1.500", Properties: &junit.Properties{Props: []junit.Property{{Name: "url", Value: odd}}},
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
