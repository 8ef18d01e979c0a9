package features

import (
	"testing"
	"time"
)

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

// A run's cleanup has time for each institution it created, never less than a minute: a run of
// 220 institutions on a busy sandbox was cut at one minute with most of them left behind.
func TestCleanupBudgetGrowsWithTheRun(t *testing.T) {
	for n, want := range map[int]time.Duration{0: time.Minute, 60: time.Minute, 220: 220 * time.Second} {
		if got := cleanupBudget(n); got != want {
			t.Errorf("cleanupBudget(%d) = %v, want %v", n, got, want)
		}
	}
}
