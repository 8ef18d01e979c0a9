package features

import (
	"bufio"
	_ "embed"
	"fmt"
	"io/fs"
	"regexp"
	"slices"
	"strings"
	"sync"
)

// rulesAdapterTSV says, for each rule only a control plane lets a run check, which of the state
// adapter's capabilities (openapi/state-adapter.yaml) unlock it: those the scenario citing it
// that needs fewest asked for in a run against the sandbox. TestContract keeps it true (-update
// rewrites it).
//
//go:embed rules-adapter.tsv
var rulesAdapterTSV string

// AdapterNeeds is rules-adapter.tsv: rule id → the state adapter's capabilities that unlock it.
func AdapterNeeds() map[string][]string {
	out := map[string][]string{}
	for i, line := range strings.Split(strings.TrimRight(rulesAdapterTSV, "\n"), "\n") {
		if i == 0 || line == "" {
			continue // header
		}
		id, caps, _ := strings.Cut(line, "\t")
		out[id] = splitList(caps)
	}
	return out
}

// RuleCapabilities is, for every rule that only scenarios needing a control plane cite, the
// fewest of the state adapter's capabilities a passing citing scenario asked for (ties: the
// first by name), as rules-adapter.tsv records them.
func (r *Report) RuleCapabilities() map[string][]string {
	out := map[string][]string{}
	for _, sc := range r.Scenarios {
		if sc.Status != Passed {
			continue
		}
		for _, id := range RulesOf(sc.Tags) {
			if !NeedsControlPlane(id) {
				continue
			}
			have, ok := out[id]
			if !ok || len(sc.Capabilities) < len(have) || len(sc.Capabilities) == len(have) && strings.Join(sc.Capabilities, ",") < strings.Join(have, ",") {
				out[id] = slices.Clone(sc.Capabilities)
			}
		}
	}
	return out
}

// RulesAdapterTSV renders caps (RuleCapabilities) as rules-adapter.tsv, in inventory order.
func RulesAdapterTSV(caps map[string][]string) string {
	var b strings.Builder
	b.WriteString("id\tcapabilities of the state adapter that unlock it\n")
	for _, r := range Rules() {
		if c, ok := caps[r.ID]; ok {
			b.WriteString(r.ID + "\t" + strings.Join(c, ", ") + "\n")
		}
	}
	return b.String()
}

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

// Lacked says why a rule went unchecked: the distinct reasons its citing scenarios were skipped
// (the input, capability or option each lacked), or that none of them ran.
func (o RuleOutcome) Lacked() string {
	if len(o.SkipReasons) == 0 {
		return "no scenario citing it ran"
	}
	return strings.Join(o.SkipReasons, "; ")
}

// UncheckedRules are the rules of the inventory the run did not check, in inventory order.
func (r *Report) UncheckedRules() []RuleOutcome {
	var out []RuleOutcome
	for _, o := range r.RuleOutcomes() {
		if !o.Checked() {
			out = append(out, o)
		}
	}
	return out
}

// uncheckedLines is one line per unchecked rule, "S4.4.1: input core_member_id not given (…)",
// for the reports.
func (r *Report) uncheckedLines() []string {
	var out []string
	for _, o := range r.UncheckedRules() {
		out = append(out, o.ID+": "+o.Lacked())
	}
	return out
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

// scenarioInfo is what the feature files say about one scenario.
type scenarioInfo struct {
	Tags []string // the feature's and the scenario's, without the @, sorted
	// Needs are what a deployment must give for the scenario to run, besides a key with every
	// scope (Requirement values), sorted.
	Needs []string
}

// Requirements a scenario may have of a deployment.
const (
	NeedControlPlane = "a control plane (--sandbox-url)"
	NeedSecret       = "the signing secret (--signing-secret)"
	NeedSandboxKey   = "a sandbox key (sbx_)"
	NeedReceiver     = "a receiver the deployment reaches (--receiver-url)"
)

var (
	inputsStep     = regexp.MustCompile(`^(?:Given|And|When|Then|But) the inputs? "([^"]*)"$`)
	keyWithoutStep = regexp.MustCompile(`^(?:Given|And|When|Then|But) a key "[^"]*" without the "([^"]*)" scope$`)
)

// needsOf reads one step line for what it requires of a deployment.
func needsOf(step string) []string {
	switch {
	case inputsStep.MatchString(step):
		var out []string
		for _, n := range splitList(inputsStep.FindStringSubmatch(step)[1]) {
			out = append(out, "--var "+n)
		}
		return out
	case keyWithoutStep.MatchString(step):
		return []string{"--key-without " + keyWithoutStep.FindStringSubmatch(step)[1]}
	case strings.HasSuffix(step, " my institution has its signing secret"):
		return []string{NeedSecret}
	case strings.HasSuffix(step, " the deployment is a sandbox"), strings.Contains(step, " the sandbox issues "):
		return []string{NeedSandboxKey}
	}
	return nil
}

// scenarioIndex reads every embedded feature file: feature (file stem) → scenario name → what
// the files say of it; problems are duplicate names. An outline's needs are its steps' with
// the placeholders of its examples (a key without "<scope>" needs every scope's key).
func scenarioIndex() (map[string]map[string]scenarioInfo, []string) {
	out := map[string]map[string]scenarioInfo{}
	var problems []string
	files, _ := fs.Glob(Features(), "*.feature")
	for _, f := range files {
		b, err := fs.ReadFile(Features(), f)
		if err != nil {
			problems = append(problems, err.Error())
			continue
		}
		stem := strings.TrimSuffix(f, ".feature")
		out[stem] = map[string]scenarioInfo{}
		var featureTags, pending, backgroundNeeds []string
		cur, inBackground := "", false
		add := func(needs ...string) {
			if inBackground {
				backgroundNeeds = append(backgroundNeeds, needs...)
				return
			}
			if cur == "" {
				return
			}
			info := out[stem][cur]
			for _, n := range needs {
				if !slices.Contains(info.Needs, n) {
					info.Needs = append(info.Needs, n)
				}
			}
			slices.Sort(info.Needs)
			out[stem][cur] = info
		}
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
			case strings.HasPrefix(line, "Background:"):
				inBackground = true
			case strings.HasPrefix(line, "Scenario:") || strings.HasPrefix(line, "Scenario Outline:"):
				inBackground = false
				_, name, _ := strings.Cut(line, ":")
				name = strings.TrimSpace(name)
				if _, dup := out[stem][name]; dup {
					problems = append(problems, fmt.Sprintf("%s: scenario %q appears twice; names must be unique for reports", f, name))
				}
				tags := append(slices.Clone(featureTags), pending...)
				slices.Sort(tags)
				out[stem][name] = scenarioInfo{Tags: tags}
				cur, pending = name, nil
				add(backgroundNeeds...)
				if slices.Contains(tags, "sandbox") {
					add(NeedControlPlane)
				}
				if slices.Contains(tags, "webhook") {
					add(NeedReceiver)
				}
			case strings.HasPrefix(line, "|") && cur != "" && strings.Contains(line, ":"):
				// An example row of an outline whose step names a scope by placeholder.
				for _, cell := range strings.Split(line, "|") {
					if c := strings.TrimSpace(cell); slices.Contains(AllScopes, c) && needsScopeKey(out[stem][cur]) {
						add("--key-without " + c)
					}
				}
			default:
				add(needsOf(line)...)
			}
		}
	}
	for _, names := range out {
		for name, info := range names {
			info.Needs = slices.DeleteFunc(info.Needs, func(n string) bool { return n == "--key-without <scope>" })
			names[name] = info
		}
	}
	return out, problems
}

func needsScopeKey(info scenarioInfo) bool {
	return slices.Contains(info.Needs, "--key-without <scope>")
}

var needsControl = sync.OnceValue(func() map[string]bool {
	idx, _ := scenarioIndex()
	out := map[string]bool{}
	for _, names := range idx {
		for _, info := range names {
			for _, id := range RulesOf(info.Tags) {
				if _, seen := out[id]; !seen {
					out[id] = true
				}
				if !slices.Contains(info.Tags, "sandbox") {
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

// RuleNeeds is, for every rule, the least a deployment must give for a run to check it: the
// needs of its citing scenario that needs least (fewest requirements, a control plane last).
// Nothing beyond a key with every scope is an empty list.
var RuleNeeds = sync.OnceValue(func() map[string][]string {
	idx, _ := scenarioIndex()
	out := map[string][]string{}
	cost := func(needs []string) int {
		if slices.Contains(needs, NeedControlPlane) {
			return 1000 + len(needs)
		}
		return len(needs)
	}
	for _, names := range idx {
		for _, info := range names {
			for _, id := range RulesOf(info.Tags) {
				have, ok := out[id]
				c, h := cost(info.Needs), cost(have)
				if !ok || c < h || c == h && strings.Join(info.Needs, "\n") < strings.Join(have, "\n") {
					out[id] = slices.Clone(info.Needs)
				}
			}
		}
	}
	return out
})
