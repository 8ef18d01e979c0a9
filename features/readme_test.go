package features

import (
	"bufio"
	"io/fs"
	"os"
	"slices"
	"strings"
	"testing"
)

// scenarioTags reads every feature file: feature name (file stem) → scenario name → its tags
// (feature tags included), without the @.
func scenarioTags(t *testing.T) map[string]map[string][]string {
	t.Helper()
	out := map[string]map[string][]string{}
	files, err := fs.Glob(Features(), "*.feature")
	if err != nil || len(files) == 0 {
		t.Fatalf("no embedded features: %v", err)
	}
	for _, f := range files {
		b, err := fs.ReadFile(Features(), f)
		if err != nil {
			t.Fatal(err)
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
					t.Errorf("%s: scenario %q appears twice; names must be unique for reports", f, name)
				}
				tags := append(slices.Clone(featureTags), pending...)
				slices.Sort(tags)
				out[stem][name] = tags
				pending = nil
			}
		}
	}
	return out
}

// The README's coverage table names every scenario, with its tags, and nothing else.
func TestReadmeCoverageTable(t *testing.T) {
	scenarios := scenarioTags(t)
	b, err := os.ReadFile("README.md")
	if err != nil {
		t.Fatal(err)
	}
	listed := map[string]bool{}
	inTable := false
	for line := range strings.SplitSeq(string(b), "\n") {
		if strings.HasPrefix(line, "## ") {
			inTable = line == "## Coverage"
			continue
		}
		if !inTable || !strings.HasPrefix(line, "| ") || strings.HasPrefix(line, "| endpoint") {
			continue
		}
		cells := strings.Split(strings.Trim(line, "|"), "|")
		if len(cells) != 4 {
			t.Errorf("coverage row with %d cells: %s", len(cells), line)
			continue
		}
		feature, name, ok := strings.Cut(strings.TrimSpace(cells[2]), ": ")
		if !ok {
			t.Errorf("coverage row without feature: scenario: %s", line)
			continue
		}
		tags, found := scenarios[feature][name]
		if !found {
			t.Errorf("README names %s: %q, which no feature has", feature, name)
			continue
		}
		listed[feature+": "+name] = true
		var want []string
		for tag := range strings.SplitSeq(cells[3], ",") {
			want = append(want, strings.TrimSpace(tag))
		}
		slices.Sort(want)
		if !slices.Equal(want, tags) {
			t.Errorf("README tags %s: %q as %v, the feature as %v", feature, name, want, tags)
		}
	}
	for feature, names := range scenarios {
		for name, tags := range names {
			if !listed[feature+": "+name] {
				t.Errorf("%s: %q is missing from the README's coverage table", feature, name)
			}
			if !slices.Contains(tags, "spec") && !slices.Contains(tags, "assumed") {
				t.Errorf("%s: %q is tagged neither @spec nor @assumed", feature, name)
			}
		}
	}
}
