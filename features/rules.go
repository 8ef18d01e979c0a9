package features

import (
	"bufio"
	_ "embed"
	"fmt"
	"io/fs"
	"slices"
	"strings"
	"sync"
)

// rulesTSV is the rule inventory: every observable rule of the spec and of decisions D2–D9, one
// line each (id, source section, the sentence). Scenarios cite the rules they check with a tag,
// @rule:<id>; rules_test.go fails when a rule has no scenario or a scenario cites an unknown rule.
//
//go:embed rules.tsv
var rulesTSV string

// Rule is one line of the rule inventory.
type Rule struct {
	ID     string
	Source string
	Text   string
}

// Rules returns the rule inventory in file order.
func Rules() []Rule {
	var out []Rule
	for i, line := range strings.Split(strings.TrimRight(rulesTSV, "\n"), "\n") {
		if i == 0 || line == "" {
			continue // header
		}
		f := strings.SplitN(line, "\t", 3)
		if len(f) != 3 {
			panic(fmt.Sprintf("features/rules.tsv line %d: expected id, source and rule separated by tabs, got %q", i+1, line))
		}
		out = append(out, Rule{ID: f[0], Source: f[1], Text: f[2]})
	}
	return out
}

// ruleTag is the tag prefix by which a scenario cites a rule (@rule:D6.3).
const ruleTag = "rule:"

// RulesOf returns the rule ids a scenario's tags cite.
func RulesOf(tags []string) []string {
	var out []string
	for _, t := range tags {
		if id, ok := strings.CutPrefix(strings.TrimPrefix(t, "@"), ruleTag); ok {
			out = append(out, id)
		}
	}
	return out
}

// RuleOutcome says what one run established about one rule.
type RuleOutcome struct {
	Rule
	// Passed, Failed and Skipped count the citing scenarios by outcome.
	Passed, Failed, Skipped int
	// SkipReasons are the distinct reasons the skipped ones gave.
	SkipReasons []string
}

// Checked reports whether the run checked the rule: a citing scenario ran (passed or failed).
func (o RuleOutcome) Checked() bool { return o.Passed+o.Failed > 0 }

// RuleOutcomes folds the run's scenarios into one outcome per rule of the inventory.
func (r *Report) RuleOutcomes() []RuleOutcome {
	byID := map[string]*RuleOutcome{}
	var out []*RuleOutcome
	for _, ru := range Rules() {
		o := &RuleOutcome{Rule: ru}
		byID[ru.ID] = o
		out = append(out, o)
	}
	for _, sc := range r.Scenarios {
		for _, id := range RulesOf(sc.Tags) {
			o := byID[id]
			if o == nil {
				continue
			}
			switch sc.Status {
			case Passed:
				o.Passed++
			case Failed:
				o.Failed++
			case Skipped:
				o.Skipped++
				if sc.Err != "" && !slices.Contains(o.SkipReasons, sc.Err) {
					o.SkipReasons = append(o.SkipReasons, sc.Err)
				}
			}
		}
	}
	res := make([]RuleOutcome, len(out))
	for i, o := range out {
		res[i] = *o
	}
	return res
}

// RulesSummary is one line: how many rules of the inventory the run checked, and the ids of the
// ones it could not (with why, e.g. they need a control plane).
func (r *Report) RulesSummary() string {
	outs := r.RuleOutcomes()
	checked, failed := 0, 0
	unchecked := map[string][]string{} // reason → rule ids
	var reasons []string
	for _, o := range outs {
		switch {
		case o.Failed > 0:
			failed++
			checked++
		case o.Checked():
			checked++
		default:
			why := "not run"
			if len(o.SkipReasons) > 0 {
				why = o.SkipReasons[0]
			}
			if _, ok := unchecked[why]; !ok {
				reasons = append(reasons, why)
			}
			unchecked[why] = append(unchecked[why], o.ID)
		}
	}
	s := fmt.Sprintf("%d of %d rules checked (%d broken)", checked, len(outs), failed)
	for _, why := range reasons {
		s += fmt.Sprintf("; %d unchecked (%s): %s", len(unchecked[why]), why, strings.Join(unchecked[why], " "))
	}
	return s
}

// scenarioIndex reads every embedded feature file: feature (file stem) → scenario name → its
// tags (the feature's included), without the @; problems are duplicate names.
func scenarioIndex() (map[string]map[string][]string, []string) {
	out := map[string]map[string][]string{}
	var problems []string
	files, _ := fs.Glob(Features(), "*.feature")
	for _, f := range files {
		b, err := fs.ReadFile(Features(), f)
		if err != nil {
			problems = append(problems, err.Error())
			continue
		}
		stem := strings.TrimSuffix(f, ".feature")
		out[stem] = map[string][]string{}
		var featureTags, pending []string
		sc := bufio.NewScanner(strings.NewReader(string(b)))
		for sc.Scan() {
			line := strings.TrimSpace(sc.Text())
			switch {
			case strings.HasPrefix(line, "@"):
				for _, tag := range strings.Fields(line) {
					pending = append(pending, strings.TrimPrefix(tag, "@"))
				}
			case strings.HasPrefix(line, "Feature:"):
				featureTags, pending = pending, nil
			case strings.HasPrefix(line, "Scenario:") || strings.HasPrefix(line, "Scenario Outline:"):
				_, name, _ := strings.Cut(line, ":")
				name = strings.TrimSpace(name)
				if _, dup := out[stem][name]; dup {
					problems = append(problems, fmt.Sprintf("%s: scenario %q appears twice; names must be unique for reports", f, name))
				}
				tags := append(slices.Clone(featureTags), pending...)
				slices.Sort(tags)
				out[stem][name] = tags
				pending = nil
			}
		}
	}
	return out, problems
}

var needsControl = sync.OnceValue(func() map[string]bool {
	idx, _ := scenarioIndex()
	out := map[string]bool{}
	for _, names := range idx {
		for _, tags := range names {
			for _, id := range RulesOf(tags) {
				if _, seen := out[id]; !seen {
					out[id] = true
				}
				if !slices.Contains(tags, "sandbox") {
					out[id] = false
				}
			}
		}
	}
	return out
})

// NeedsControlPlane reports whether a rule is cited only by @sandbox scenarios, which create
// the state they check: a run without a control plane cannot check it.
func NeedsControlPlane(id string) bool { return needsControl()[id] }
