package features

import (
	"encoding/json"
	"fmt"
	"io"
	"strings"
	"sync"
	"time"

	"github.com/partnersim/partnersim/internal/junit"
)

// Formats are the report formats Run writes to Options.Output.
var Formats = []string{"pretty", "progress", "junit", "cucumber"}

// liveWriter prints each scenario as it finishes (pretty, progress), whole and under one lock,
// so concurrent scenarios never interleave.
type liveWriter struct {
	mu     sync.Mutex
	w      io.Writer
	format string
	dots   int
}

func (l *liveWriter) scenario(s ScenarioResult) {
	l.mu.Lock()
	defer l.mu.Unlock()
	switch l.format {
	case "pretty":
		_, _ = io.WriteString(l.w, scenarioBlock(s)+"\n")
	case "progress":
		mark := map[Status]string{Passed: ".", Failed: "F", Skipped: "-"}[s.Status]
		l.dots++
		if l.dots%70 == 0 {
			mark += "\n"
		}
		_, _ = io.WriteString(l.w, mark)
	}
}

// finish writes what a live format prints after the run: the failures again (progress), and
// the summary lines — the same lines `partnersim contract` prints.
func (l *liveWriter) finish(r *Report) {
	l.mu.Lock()
	defer l.mu.Unlock()
	var b strings.Builder
	if l.format == "progress" {
		if l.dots%70 != 0 {
			b.WriteString("\n")
		}
		for _, f := range r.Failed() {
			b.WriteString("\n" + scenarioBlock(f) + "\n")
		}
	}
	// The rules the run could not check, each with what it lacked, then the summary lines.
	b.WriteString("\n" + r.RulesSummary() + "\n")
	for _, line := range r.uncheckedLines() {
		b.WriteString("  unchecked " + line + "\n")
	}
	b.WriteString("\n" + r.Summary() + "\n" + r.StepSummary() + "\n")
	_, _ = io.WriteString(l.w, b.String())
}

// stepMark is a step's outcome at a glance in the human formats.
var stepMark = map[Status]string{Passed: "✓", Failed: "✗", Skipped: "-", Undefined: "?", Pending: "…", Ambiguous: "!"}

// scenarioBlock is one scenario as the pretty format prints it: the title with its file and
// line, each step with its outcome, and why it failed or was skipped.
func scenarioBlock(s ScenarioResult) string {
	var b strings.Builder
	fmt.Fprintf(&b, "%s: %s  # %s  %s %s\n", s.FeatureName, s.Title(), s.Where(), strings.ToUpper(string(s.Status)), s.Duration.Round(time.Millisecond))
	if s.Status == Skipped {
		fmt.Fprintf(&b, "  skipped: %s\n", s.Err)
		return b.String()
	}
	for _, st := range s.Steps {
		fmt.Fprintf(&b, "  %s %s%s", stepMark[st.Status], st.Keyword, st.Text)
		if st.Status == Passed || st.Status == Failed {
			fmt.Fprintf(&b, "  (%s)", st.Duration.Round(time.Millisecond))
		}
		b.WriteString("\n")
		if st.Arg != "" && st.Status != Skipped {
			b.WriteString(indent(st.Arg, "      ") + "\n")
		}
		if st.Err != "" {
			b.WriteString(indent(st.Err, "      ") + "\n")
		}
	}
	return b.String()
}

func indent(s, pre string) string {
	return pre + strings.ReplaceAll(strings.TrimRight(s, "\n"), "\n", "\n"+pre)
}

// WriteJUnit writes the report as JUnit XML (package junit): a testsuite per feature, a
// testcase per scenario; a skip is <skipped message="why"/>, a failure <failure message="step:
// expected, got"> with the scenario's steps as its text; every count is the count of its
// testcases.
func (r *Report) WriteJUnit(w io.Writer) error {
	all := junit.Suites{Name: "partner-api", Time: junit.Seconds(r.Duration)}
	for _, scs := range r.sorted() {
		s := junit.Suite{Name: r.featureName(scs[0].Feature), File: scs[0].Feature}
		var span time.Duration
		first := scs[0].Start
		for _, sc := range scs {
			if sc.Start.Before(first) {
				first = sc.Start
			}
			span += sc.Duration
			c := junit.Case{Name: sc.Title(), Classname: s.Name, File: sc.Feature, Line: sc.Line, Time: junit.Seconds(sc.Duration)}
			switch sc.Status {
			case Skipped:
				c.Skipped = &junit.Message{Message: sc.Err}
			case Failed:
				c.Failure = &junit.Message{Message: sc.Err, Type: "failed", Text: scenarioBlock(sc)}
			default:
				c.SystemOut = scenarioBlock(sc)
			}
			s.Add(c)
		}
		s.Time, s.Timestamp = junit.Seconds(span), first.UTC().Format(time.RFC3339)
		all.Add(s)
	}
	// The rule inventory: a suite of no testcases (the counts stay the scenarios'), whose
	// properties are the run's rule summary and every unchecked rule with what it lacked.
	inv := junit.Suite{Name: "rule inventory", File: "rules.tsv", Time: "0.000",
		Properties: &junit.Properties{Props: []junit.Property{{Name: "rules", Value: r.RulesSummary()}}}}
	for _, o := range r.UncheckedRules() {
		inv.Properties.Props = append(inv.Properties.Props, junit.Property{Name: "unchecked " + o.ID, Value: o.Lacked()})
	}
	all.Suites = append(all.Suites, inv)
	return junit.Write(w, all)
}

// Cucumber JSON: the format of cucumber-jvm/-js reports (Jenkins' cucumber-reports, Allure,
// Xray). A skipped scenario's first skipped step carries the reason as its error_message, and
// the scenario element carries it as skip_reason.
type cucumberFeature struct {
	URI         string            `json:"uri"`
	ID          string            `json:"id"`
	Keyword     string            `json:"keyword"`
	Name        string            `json:"name"`
	Description string            `json:"description"`
	Line        int               `json:"line"`
	Tags        []cucumberTag     `json:"tags,omitempty"`
	Elements    []cucumberElement `json:"elements"`
}

type cucumberTag struct {
	Name string `json:"name"`
}

type cucumberElement struct {
	ID         string         `json:"id"`
	Keyword    string         `json:"keyword"`
	Name       string         `json:"name"`
	Line       int            `json:"line"`
	Type       string         `json:"type"`
	Tags       []cucumberTag  `json:"tags,omitempty"`
	StartTime  string         `json:"start_timestamp"`
	SkipReason string         `json:"skip_reason,omitempty"`
	Steps      []cucumberStep `json:"steps"`
}

type cucumberStep struct {
	Keyword string         `json:"keyword"`
	Name    string         `json:"name"`
	Line    int            `json:"line"`
	Result  cucumberResult `json:"result"`
}

type cucumberResult struct {
	Status   string `json:"status"`
	Duration int64  `json:"duration,omitempty"` // nanoseconds
	Error    string `json:"error_message,omitempty"`
}

func cucumberID(s string) string {
	return strings.ToLower(strings.Join(strings.Fields(s), "-"))
}

func cucumberTags(tags []string) []cucumberTag {
	out := make([]cucumberTag, 0, len(tags))
	for _, t := range tags {
		out = append(out, cucumberTag{Name: "@" + t})
	}
	return out
}

// WriteCucumber writes the report as cucumber JSON: a feature per file, an element per
// scenario.
func (r *Report) WriteCucumber(w io.Writer) error {
	out := []cucumberFeature{}
	for _, scs := range r.sorted() {
		fi := r.Features[scs[0].Feature]
		f := cucumberFeature{URI: scs[0].Feature, ID: cucumberID(r.featureName(scs[0].Feature)), Keyword: "Feature",
			Name: r.featureName(scs[0].Feature), Description: fi.Description, Line: fi.Line, Tags: cucumberTags(fi.Tags)}
		for _, sc := range scs {
			el := cucumberElement{ID: f.ID + ";" + cucumberID(sc.Title()), Keyword: "Scenario", Name: sc.Title(), Line: sc.Line,
				Type: "scenario", Tags: cucumberTags(sc.Tags), StartTime: sc.Start.UTC().Format(time.RFC3339Nano), Steps: []cucumberStep{}}
			if sc.Example > 0 {
				el.Keyword = "Scenario Outline"
			}
			reasonGiven := false
			if sc.Status == Skipped {
				el.SkipReason = sc.Err
			}
			for _, st := range sc.Steps {
				cs := cucumberStep{Keyword: st.Keyword, Name: st.Text, Line: st.Line,
					Result: cucumberResult{Status: string(st.Status), Duration: st.Duration.Nanoseconds(), Error: st.Err}}
				if st.Status == Skipped && sc.Status == Skipped && !reasonGiven {
					cs.Result.Error, reasonGiven = "skipped: "+sc.Err, true
				}
				el.Steps = append(el.Steps, cs)
			}
			f.Elements = append(f.Elements, el)
		}
		out = append(out, f)
	}
	// The rule inventory: a feature of no scenarios whose description is the run's rule summary
	// and every unchecked rule with what it lacked.
	desc := append([]string{r.RulesSummary()}, r.uncheckedLines()...)
	out = append(out, cucumberFeature{URI: "rules.tsv", ID: "rule-inventory", Keyword: "Feature", Name: "Rule inventory",
		Description: strings.Join(desc, "\n"), Elements: []cucumberElement{}})
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(out)
}

// Write writes the report in one of Formats (the live formats print every scenario again, then
// the summary).
func (r *Report) Write(w io.Writer, format string) error {
	switch format {
	case "junit":
		return r.WriteJUnit(w)
	case "cucumber":
		return r.WriteCucumber(w)
	case "pretty", "progress":
		l := &liveWriter{w: w, format: format}
		for _, scs := range r.sorted() {
			for _, sc := range scs {
				l.scenario(sc)
			}
		}
		l.finish(r)
		return nil
	}
	return fmt.Errorf("unknown report format %q (one of %s)", format, strings.Join(Formats, ", "))
}
