package features

import (
	"flag"
	"fmt"
	"os"
	"regexp"
	"slices"
	"strings"
	"testing"
)

var update = flag.Bool("update", false, "rewrite the generated coverage section of features/README.md")

var ruleID = regexp.MustCompile(`^(S|D)\d+(\.\d+)*$`)

// The inventory is complete in both directions: every rule is cited by a scenario that would fail
// if an implementation broke it, every scenario cites at least one rule, and no scenario cites a
// rule that does not exist.
func TestRuleInventory(t *testing.T) {
	rules := Rules()
	if len(rules) < 100 {
		t.Fatalf("expected the whole inventory, got %d rules", len(rules))
	}
	known := map[string]bool{}
	for _, r := range rules {
		if !ruleID.MatchString(r.ID) {
			t.Errorf("rule id %q is not S<spec section>… or D<decision>…", r.ID)
		}
		if known[r.ID] {
			t.Errorf("rule %s appears twice in rules.tsv", r.ID)
		}
		known[r.ID] = true
		if strings.TrimSpace(r.Source) == "" || len(r.Text) < 10 {
			t.Errorf("rule %s needs its source section and its sentence", r.ID)
		}
		if !strings.HasPrefix(r.Source, "spec §") && !strings.HasPrefix(r.Source, "decisions D") {
			t.Errorf("rule %s: source %q names neither a spec section nor a decision", r.ID, r.Source)
		}
	}
	cited := map[string]int{}
	for feature, names := range scenarioTags(t) {
		for name, tags := range names {
			ids := RulesOf(tags)
			if len(ids) == 0 {
				t.Errorf("%s: %q cites no rule (tag it @rule:<id> with the rule of rules.tsv it checks)", feature, name)
			}
			for _, id := range ids {
				if !known[id] {
					t.Errorf("%s: %q cites @rule:%s, which rules.tsv does not have", feature, name, id)
				}
				cited[id]++
			}
			if !slices.Contains(tags, "spec") && !slices.Contains(tags, "assumed") {
				t.Errorf("%s: %q is tagged neither @spec nor @assumed", feature, name)
			}
		}
	}
	for _, r := range rules {
		if cited[r.ID] == 0 {
			t.Errorf("rule %s (%s) has no scenario: no scenario would fail if an implementation broke it", r.ID, r.Text)
		}
	}
	// rules-adapter.tsv names the capabilities of exactly the rules a control plane unlocks.
	adapter := AdapterNeeds()
	for _, r := range rules {
		caps, listed := adapter[r.ID]
		switch {
		case NeedsControlPlane(r.ID) && (!listed || len(caps) == 0):
			t.Errorf("rule %s needs a control plane, but rules-adapter.tsv does not name the capabilities that unlock it (go test ./features -run 'TestContract$' -update)", r.ID)
		case !NeedsControlPlane(r.ID) && listed:
			t.Errorf("rule %s needs no control plane, yet rules-adapter.tsv lists it", r.ID)
		}
	}
}

const (
	coverageBegin = "<!-- coverage:begin (generated from rules.tsv and the @rule tags by `go test ./features -run TestReadmeCoverage -update`; do not edit) -->"
	coverageEnd   = "<!-- coverage:end -->"
)

// coverageSection renders the README's coverage table: each rule with the scenarios citing it
// and whether a deployment without a control plane can check it.
func coverageSection(t *testing.T) string {
	byRule := map[string][]string{}
	scenarios := scenarioTags(t)
	var features []string
	for f := range scenarios {
		features = append(features, f)
	}
	slices.Sort(features)
	nScen := 0
	for _, f := range features {
		var names []string
		for n := range scenarios[f] {
			names = append(names, n)
		}
		slices.Sort(names)
		for _, n := range names {
			nScen++
			tags := scenarios[f][n]
			var plain []string
			for _, tg := range tags {
				if !strings.HasPrefix(tg, ruleTag) {
					plain = append(plain, tg)
				}
			}
			for _, id := range RulesOf(tags) {
				byRule[id] = append(byRule[id], fmt.Sprintf("%s: %s (%s)", f, n, strings.Join(plain, ", ")))
			}
		}
	}
	rules := Rules()
	free, given := 0, 0
	for _, r := range rules {
		switch needs := RuleNeeds()[r.ID]; {
		case len(needs) == 0:
			free++
		case !slices.Contains(needs, NeedControlPlane):
			given++
		}
	}
	var b strings.Builder
	b.WriteString(coverageBegin + "\n\n")
	fmt.Fprintf(&b, "### What a deployment must give for each rule\n\n")
	fmt.Fprintf(&b, "%d rules, %d scenarios. %d rules are checked with only a key with every scope; %d more with the inputs named (`--var`, `--key-without`, `--signing-secret`, a reachable receiver); the other %d need the state adapter (`--sandbox-url`: the sandbox's control plane, or another implementation's serving [openapi/state-adapter.yaml](../simulator/openapi/state-adapter.yaml)), which creates the state they check, with the capabilities named (rules-adapter.tsv).\n\n",
		len(rules), nScen, free, given, len(rules)-free-given)
	b.WriteString("| rule | source | the rule | scenarios that fail when it breaks | what a deployment must give |\n|---|---|---|---|---|\n")
	esc := strings.NewReplacer("|", `\|`, "<", "&lt;", ">", "&gt;")
	for _, r := range rules {
		must := "a key with every scope"
		if needs := slices.Clone(RuleNeeds()[r.ID]); len(needs) > 0 {
			if i := slices.Index(needs, NeedControlPlane); i >= 0 {
				needs[i] = "the state adapter (--sandbox-url) with " + strings.Join(AdapterNeeds()[r.ID], ", ")
			}
			must = strings.Join(needs, ", ")
		}
		fmt.Fprintf(&b, "| %s | %s | %s | %s | %s |\n", r.ID, esc.Replace(r.Source), esc.Replace(r.Text), esc.Replace(strings.Join(byRule[r.ID], "; ")), esc.Replace(must))
	}
	b.WriteString("\n" + coverageEnd)
	return b.String()
}

// The README's coverage section is generated from the inventory and the scenarios' tags, and
// kept in sync: -update rewrites it.
func TestReadmeCoverage(t *testing.T) {
	b, err := os.ReadFile("README.md")
	if err != nil {
		t.Fatal(err)
	}
	s := string(b)
	i, j := strings.Index(s, coverageBegin), strings.Index(s, coverageEnd)
	if i < 0 || j < i {
		t.Fatalf("README.md has no generated coverage section (%q … %q)", coverageBegin, coverageEnd)
	}
	want := coverageSection(t)
	got := s[i : j+len(coverageEnd)]
	if got == want {
		return
	}
	if *update {
		if err := os.WriteFile("README.md", []byte(s[:i]+want+s[j+len(coverageEnd):]), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	t.Errorf("README.md's coverage section is out of date with rules.tsv and the features: run go test ./features -run TestReadmeCoverage -update")
}

// Every input a scenario may name is documented in the README's inputs table.
func TestReadmeListsInputs(t *testing.T) {
	b, err := os.ReadFile("README.md")
	if err != nil {
		t.Fatal(err)
	}
	for _, in := range Inputs {
		if !strings.Contains(string(b), "`"+in.Name+"`") {
			t.Errorf("README.md's inputs table does not list %s (%s)", in.Name, in.Doc)
		}
	}
}
