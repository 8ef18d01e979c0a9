package features

import (
	"bytes"
	"context"
	"encoding/json"
	"encoding/xml"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	junit "github.com/joshdk/go-junit"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// halfServer answers /v1/health as the spec says and every other path 500: against it a run
// without a control plane has passes (health), failures (everything else that runs) and skips
// (@sandbox scenarios, and 403 scenarios without their keys).
func halfServer(t *testing.T) string {
	t.Helper()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		if r.URL.Path == "/v1/health" {
			_, _ = w.Write([]byte(`{"status":"ok"}`))
			return
		}
		w.WriteHeader(http.StatusInternalServerError)
		_, _ = w.Write([]byte(`{"detail":"Internal Server Error"}`))
	}))
	t.Cleanup(srv.Close)
	return srv.URL + "/v1"
}

// mixedRun runs three features against halfServer concurrently, in the given format.
func mixedRun(t *testing.T, format string) (*Report, string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	var out bytes.Buffer
	rep, err := Run(ctx, Options{BaseURL: halfServer(t), APIKey: "sbx_x", Paths: []string{"health.feature", "auth.feature", "control_plane.feature"},
		Format: format, Output: &out, Concurrency: 8, Randomize: -1, Wait: time.Second})
	require.NoError(t, err)
	require.NotEmpty(t, rep.Passed(), "expected passes")
	require.NotEmpty(t, rep.Failed(), "expected failures")
	require.NotEmpty(t, rep.Skipped(), "expected skips")
	return rep, out.String()
}

// JUnit as CI servers read it, read back by a JUnit library: one testcase per scenario, skips as
// skips with their reason, failures naming the step, what was expected and what came, and
// counts that agree with the testcases and with the run's summary.
func TestJUnitReadBackByALibrary(t *testing.T) {
	t.Parallel()
	rep, out := mixedRun(t, "junit")
	suites, err := junit.Ingest([]byte(out))
	require.NoError(t, err)

	byName := map[string]junit.Test{}
	var total junit.Totals
	for _, s := range suites {
		for _, tc := range s.Tests {
			key := s.Name + "\x00" + tc.Name
			_, dup := byName[key]
			assert.False(t, dup, "testcase %q appears twice in suite %q", tc.Name, s.Name)
			byName[key] = tc
		}
		total.Tests += s.Totals.Tests
		total.Passed += s.Totals.Passed
		total.Failed += s.Totals.Failed
		total.Skipped += s.Totals.Skipped
		total.Error += s.Totals.Error
	}
	assert.Equal(t, len(rep.Scenarios), total.Tests, "one testcase per scenario")
	assert.Equal(t, len(rep.Passed()), total.Passed)
	assert.Equal(t, len(rep.Failed()), total.Failed)
	assert.Equal(t, len(rep.Skipped()), total.Skipped)
	assert.Zero(t, total.Error, "nothing is an <error>: a skip is <skipped>, a failure <failure>")

	for _, sc := range rep.Scenarios {
		tc, ok := byName[sc.FeatureName+"\x00"+sc.Title()]
		if !assert.True(t, ok, "no testcase for %s %q", sc.FeatureName, sc.Title()) {
			continue
		}
		switch sc.Status {
		case Skipped:
			assert.Equal(t, junit.StatusSkipped, tc.Status, sc.Title())
			assert.NotEmpty(t, tc.Message, "a skip says why: %s", sc.Title())
			assert.Equal(t, sc.Err, tc.Message)
		case Failed:
			assert.Equal(t, junit.StatusFailed, tc.Status, sc.Title())
			assert.Contains(t, tc.Message, "step ", "the failure names its step")
			assert.Contains(t, tc.Message, "expected", "the failure says what was expected")
			assert.Contains(t, tc.Message, "got", "the failure says what came")
		default:
			assert.Equal(t, junit.StatusPassed, tc.Status, sc.Title())
		}
	}
	// Reasons a platform team can act on: the missing option is named.
	reasons := map[string]bool{}
	for _, s := range rep.Skipped() {
		reasons[s.Err] = true
	}
	assert.True(t, reasons["@sandbox: no control plane (--sandbox-url)"], "the @sandbox reason: %v", reasons)
	assert.True(t, anyContains(reasons, "--key-without"), "the missing-key reason: %v", reasons)

	// The attributes agree with the testcases, at every level (the library counts testcases; CI
	// servers show the attributes).
	var doc struct {
		Tests    int `xml:"tests,attr"`
		Failures int `xml:"failures,attr"`
		Errors   int `xml:"errors,attr"`
		Skipped  int `xml:"skipped,attr"`
		Suites   []struct {
			Name     string `xml:"name,attr"`
			Tests    int    `xml:"tests,attr"`
			Failures int    `xml:"failures,attr"`
			Skipped  int    `xml:"skipped,attr"`
		} `xml:"testsuite"`
	}
	require.NoError(t, xml.Unmarshal([]byte(out), &doc))
	assert.Equal(t, [4]int{total.Tests, total.Failed, 0, total.Skipped}, [4]int{doc.Tests, doc.Failures, doc.Errors, doc.Skipped})
	require.Len(t, doc.Suites, len(suites))
	for i, s := range suites {
		d := doc.Suites[i]
		assert.Equal(t, [3]int{s.Totals.Tests, s.Totals.Failed, s.Totals.Skipped}, [3]int{d.Tests, d.Failures, d.Skipped}, d.Name)
	}
	assert.Contains(t, rep.Summary(), fmt.Sprintf("%d scenarios: %d passed, %d failed, %d skipped", total.Tests, total.Passed, total.Failed, total.Skipped))
}

func anyContains(set map[string]bool, sub string) bool {
	for s := range set {
		if strings.Contains(s, sub) {
			return true
		}
	}
	return false
}

// Cucumber JSON carries the skip reason on the skipped scenario and its first skipped step.
func TestCucumberJSONCarriesTheSkipReason(t *testing.T) {
	t.Parallel()
	rep, out := mixedRun(t, "cucumber")
	var feats []struct {
		URI      string `json:"uri"`
		Name     string `json:"name"`
		Elements []struct {
			Name       string `json:"name"`
			Line       int    `json:"line"`
			SkipReason string `json:"skip_reason"`
			Steps      []struct {
				Keyword string `json:"keyword"`
				Line    int    `json:"line"`
				Result  struct {
					Status string `json:"status"`
					Error  string `json:"error_message"`
				} `json:"result"`
			} `json:"steps"`
		} `json:"elements"`
	}
	require.NoError(t, json.Unmarshal([]byte(out), &feats))
	n := 0
	for _, f := range feats {
		for _, el := range f.Elements {
			n++
			res, ok := scenarioTitled(rep, f.URI, el.Name)
			require.True(t, ok, "element %q of %s is a scenario of the run", el.Name, f.URI)
			assert.Equal(t, res.Line, el.Line)
			require.NotEmpty(t, el.Steps)
			assert.NotEmpty(t, el.Steps[0].Keyword, "steps keep their keyword")
			assert.NotZero(t, el.Steps[0].Line, "steps keep their line")
			if res.Status != Skipped {
				assert.Empty(t, el.SkipReason)
				continue
			}
			assert.Equal(t, res.Err, el.SkipReason)
			first := ""
			for _, s := range el.Steps {
				if s.Result.Status == "skipped" {
					first = s.Result.Error
					break
				}
			}
			assert.Equal(t, "skipped: "+res.Err, first, el.Name)
		}
	}
	assert.Equal(t, len(rep.Scenarios), n, "one element per scenario")
}

func scenarioTitled(rep *Report, file, title string) (ScenarioResult, bool) {
	for _, s := range rep.Scenarios {
		if s.Feature == file && s.Title() == title {
			return s, true
		}
	}
	return ScenarioResult{}, false
}

// The pretty format prints each scenario's block whole although eight run at once, and its
// summary is the run's.
func TestPrettyPrintsEachScenarioWhole(t *testing.T) {
	t.Parallel()
	rep, out := mixedRun(t, "pretty")
	for _, s := range rep.Scenarios {
		assert.Contains(t, out, scenarioBlock(s), "the block of %q is printed whole", s.Title())
	}
	assert.Equal(t, len(rep.Scenarios), strings.Count(out, "  # "), "one block per scenario")
	assert.True(t, strings.HasSuffix(out, "\n"+rep.Summary()+"\n"+rep.StepSummary()+"\n"), "the summary ends the report:\n%s", out[max(0, len(out)-300):])
	assert.Equal(t, 1, strings.Count(out, " scenarios: "), "one scenario count, not two that disagree")
}

// A scenario skipped by a step that gives no reason still says which step skipped it.
func TestOutcomeOfAScenario(t *testing.T) {
	steps := []StepResult{{Keyword: "Given ", Text: "a", Line: 3, Status: Passed}, {Keyword: "When ", Text: "b", Line: 4, Status: Failed, Err: "expected 200, got 500"}, {Text: "c", Status: Skipped}}
	st, why := scenarioOutcome(steps, "")
	assert.Equal(t, Failed, st)
	assert.Equal(t, `step "When b" (line 4): expected 200, got 500`, why)
	st, why = scenarioOutcome(steps[2:], "")
	assert.Equal(t, Skipped, st)
	assert.Contains(t, why, `step "c"`)
	st, why = scenarioOutcome(steps[2:], "no key")
	assert.Equal(t, [2]string{string(Skipped), "no key"}, [2]string{string(st), why})
	st, why = scenarioOutcome([]StepResult{{Keyword: "Then ", Text: "d", Line: 9, Status: Undefined, Err: "no step definition matches this step"}}, "")
	assert.Equal(t, Failed, st)
	assert.Equal(t, `undefined step "Then d" (line 9): no step definition matches this step`, why)
	st, _ = scenarioOutcome(steps[:1], "")
	assert.Equal(t, Passed, st)
}
