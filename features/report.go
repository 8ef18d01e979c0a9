package features

import (
	"fmt"
	"slices"
	"strings"
	"sync"
	"time"
)

// Status is a scenario's or a step's outcome.
type Status string

// Outcomes. A scenario is Passed, Failed or Skipped; a step may also be Undefined, Pending or
// Ambiguous (each of which fails its scenario: the suite runs strict).
const (
	Passed    Status = "passed"
	Failed    Status = "failed"
	Skipped   Status = "skipped"
	Undefined Status = "undefined"
	Pending   Status = "pending"
	Ambiguous Status = "ambiguous"
)

// ScenarioResult is one scenario's outcome: one per scenario, and one per example row of an
// outline.
type ScenarioResult struct {
	// Feature is the feature file (health.feature); FeatureName its title.
	Feature     string
	FeatureName string
	// Name is the scenario's name (an outline's, with the example's values filled in); Example
	// numbers an outline's rows from 1 (0 for a plain scenario); Line is where it is written
	// (an outline's example row).
	Name    string
	Example int
	Line    int
	Tags    []string
	Status  Status
	// Err says why: for a failure the failed step, what it expected and what it got; for a skip
	// which option, capability or input was missing.
	Err string
	// Steps are the scenario's steps as they ran (background steps first).
	Steps []StepResult
	// Start is when the scenario began; Duration how long it ran.
	Start    time.Time
	Duration time.Duration
	// Capabilities are the state adapter's capabilities (openapi/state-adapter.yaml) that the
	// scenario's control-plane requests needed, sorted; none without a control plane.
	Capabilities []string
}

// StepResult is one step's outcome.
type StepResult struct {
	Keyword string // "Given ", "When ", "And " … as written
	Text    string
	Line    int
	// Arg is the step's DocString, or its data table as rows of cells joined by " | ".
	Arg      string
	Status   Status
	Err      string
	Duration time.Duration
}

// Title names the scenario uniquely within its feature: an outline's rows get " #N".
func (s ScenarioResult) Title() string {
	if s.Example > 0 {
		return fmt.Sprintf("%s #%d", s.Name, s.Example)
	}
	return s.Name
}

// Where is "file:line".
func (s ScenarioResult) Where() string { return fmt.Sprintf("%s:%d", s.Feature, s.Line) }

// Report is a whole run's outcome. Every format (pretty, progress, JUnit, cucumber JSON) is
// rendered from it, so they agree with each other and with Summary.
type Report struct {
	mu        sync.Mutex
	Scenarios []ScenarioResult
	// Features are the feature files' titles and descriptions, by file, for the reports that
	// group by feature.
	Features map[string]FeatureInfo
	// ExitCode is godog's: 0 all passed, 1 a scenario failed, 2 bad options.
	ExitCode int
	// Cleanup lists the institutions the run created but could not delete when it ended.
	Cleanup  []string
	Start    time.Time
	Duration time.Duration
}

// FeatureInfo describes one feature file.
type FeatureInfo struct {
	Name        string
	Description string
	Line        int
	Tags        []string
}

func (r *Report) add(s ScenarioResult) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.Scenarios = append(r.Scenarios, s)
}

// Failed lists the failed scenarios.
func (r *Report) Failed() []ScenarioResult { return r.with(Failed) }

// Passed lists the passed scenarios.
func (r *Report) Passed() []ScenarioResult { return r.with(Passed) }

// Skipped lists the skipped scenarios.
func (r *Report) Skipped() []ScenarioResult { return r.with(Skipped) }

func (r *Report) with(s Status) []ScenarioResult {
	var out []ScenarioResult
	for _, sc := range r.Scenarios {
		if sc.Status == s {
			out = append(out, sc)
		}
	}
	return out
}

// Result returns the outcome of the scenario named name. An outline runs once per example
// under one name: it failed if any example failed, passed if none failed and one passed.
func (r *Report) Result(name string) (ScenarioResult, bool) {
	var out ScenarioResult
	found := false
	rank := map[Status]int{Skipped: 0, Passed: 1, Failed: 2}
	for _, sc := range r.Scenarios {
		if sc.Name == name && (!found || rank[sc.Status] > rank[out.Status]) {
			out, found = sc, true
		}
	}
	return out, found
}

// Slowest returns the n scenarios that took longest, slowest first.
func (r *Report) Slowest(n int) []ScenarioResult {
	out := slices.Clone(r.Scenarios)
	slices.SortFunc(out, func(a, b ScenarioResult) int { return int(b.Duration - a.Duration) })
	return out[:min(n, len(out))]
}

// OK reports whether the run passed: no failed scenario and godog's exit code 0.
func (r *Report) OK() bool { return r.ExitCode == 0 && len(r.Failed()) == 0 }

// Summary is one line: counts of passed, failed and skipped scenarios. Every report prints
// this same line.
func (r *Report) Summary() string {
	return fmt.Sprintf("%d scenarios: %d passed, %d failed, %d skipped (%s)", len(r.Scenarios), len(r.Passed()), len(r.Failed()),
		len(r.Skipped()), r.Duration.Round(time.Millisecond))
}

// StepSummary is one line: counts of steps by outcome, from the same scenarios as Summary.
func (r *Report) StepSummary() string {
	n := map[Status]int{}
	total := 0
	for _, sc := range r.Scenarios {
		for _, st := range sc.Steps {
			n[st.Status]++
			total++
		}
	}
	parts := []string{fmt.Sprintf("%d passed", n[Passed]), fmt.Sprintf("%d failed", n[Failed]), fmt.Sprintf("%d skipped", n[Skipped])}
	for _, s := range []Status{Undefined, Pending, Ambiguous} {
		if n[s] > 0 {
			parts = append(parts, fmt.Sprintf("%d %s", n[s], s))
		}
	}
	return fmt.Sprintf("%d steps: %s", total, strings.Join(parts, ", "))
}

// sorted returns the scenarios grouped by feature file (files in name order), each feature's in
// the order they are written: reports read the same whatever order the run took.
func (r *Report) sorted() [][]ScenarioResult {
	all := slices.Clone(r.Scenarios)
	slices.SortStableFunc(all, func(a, b ScenarioResult) int {
		if c := strings.Compare(a.Feature, b.Feature); c != 0 {
			return c
		}
		return a.Line - b.Line
	})
	var out [][]ScenarioResult
	for i, sc := range all {
		if i == 0 || sc.Feature != all[i-1].Feature {
			out = append(out, nil)
		}
		out[len(out)-1] = append(out[len(out)-1], sc)
	}
	return out
}

// featureName is the feature's title, or its file when the run did not see its document.
func (r *Report) featureName(file string) string {
	if f, ok := r.Features[file]; ok && f.Name != "" {
		return f.Name
	}
	return file
}
