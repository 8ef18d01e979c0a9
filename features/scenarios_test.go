package features

import "testing"

// scenarioTags is every scenario's tags by feature (file stem) and name; a scenario name must be
// unique in its feature.
func scenarioTags(t *testing.T) map[string]map[string][]string {
	t.Helper()
	idx, problems := scenarioIndex()
	for _, p := range problems {
		t.Error(p)
	}
	if len(idx) == 0 {
		t.Fatal("no embedded features")
	}
	out := map[string]map[string][]string{}
	for f, names := range idx {
		out[f] = map[string][]string{}
		for n, info := range names {
			out[f][n] = info.Tags
		}
	}
	return out
}
