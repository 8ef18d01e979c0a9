package main

import (
	"bytes"
	"context"
	"encoding/xml"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// The example runs the suite against the sandbox it starts and writes a JUnit report with one
// testcase per scenario, every one passed.
func TestExampleWritesJUnit(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	junit := filepath.Join(t.TempDir(), "contract.xml")
	var stdout, stderr bytes.Buffer
	if err := run(ctx, []string{"-junit", junit, "-tags", "@spec && ~@webhook"}, &stdout, &stderr); err != nil {
		t.Fatalf("run: %v\n%s\n%s", err, stdout.String(), stderr.String())
	}
	b, err := os.ReadFile(junit)
	if err != nil {
		t.Fatal(err)
	}
	var doc struct {
		Tests    int `xml:"tests,attr"`
		Failures int `xml:"failures,attr"`
		Skipped  int `xml:"skipped,attr"`
		Suites   []struct {
			Cases []struct {
				Name string `xml:"name,attr"`
			} `xml:"testcase"`
		} `xml:"testsuite"`
	}
	if err := xml.Unmarshal(b, &doc); err != nil {
		t.Fatalf("the report is not XML: %v", err)
	}
	cases := 0
	for _, s := range doc.Suites {
		cases += len(s.Cases)
	}
	if doc.Tests == 0 || cases != doc.Tests || doc.Failures != 0 || doc.Skipped != 0 {
		t.Errorf("expected every scenario passed, one testcase each: tests=%d testcases=%d failures=%d skipped=%d",
			doc.Tests, cases, doc.Failures, doc.Skipped)
	}
	if !strings.Contains(stderr.String(), "scenarios: ") {
		t.Errorf("expected the summary on stderr, got %q", stderr.String())
	}
}
