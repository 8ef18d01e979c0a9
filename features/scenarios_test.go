package features

import (
	"bufio"
	"io/fs"
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
