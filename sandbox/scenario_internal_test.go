package sandbox

import (
	"context"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

func (sb *Sandbox) wakerCount() int {
	sb.wakeMu.Lock()
	defer sb.wakeMu.Unlock()
	return len(sb.wakers)
}

// Issue 12 item 3: every run of a delayed scenario registered a waker that was never removed,
// so each run left a closure behind that every clock move called for ever. A run's waker goes
// when the run ends, and Close waits for runs still waiting on the clock.
func TestScenarioRunsLeaveNoWakersBehind(t *testing.T) {
	ctx := context.Background()
	sb, err := Open(ctx, Config{DBPath: filepath.Join(t.TempDir(), "s.db")})
	require.NoError(t, err)
	defer sb.Close()
	base := sb.wakerCount()
	for range 5 {
		run, err := sb.control.RunScenario(ctx, "onboarding-approved", "")
		require.NoError(t, err)
		require.Equal(t, "running", run.Status, "its later steps wait on the virtual clock")
		_, err = sb.control.AdvanceClock(ctx, "", time.Hour)
		require.NoError(t, err)
		require.Eventually(t, func() bool {
			r, err := sb.control.ScenarioRun(ctx, run.RunID)
			return err == nil && r.Status == "completed"
		}, 5*time.Second, 2*time.Millisecond)
	}
	require.Eventually(t, func() bool { return sb.wakerCount() == base }, 5*time.Second, 2*time.Millisecond,
		"wakers: %d, want the %d there were before the runs", sb.wakerCount(), base)

	// A run still waiting when the sandbox closes ends with it: Close waits for it.
	_, err = sb.control.RunScenario(ctx, "onboarding-approved", "")
	require.NoError(t, err)
	require.NoError(t, sb.Close())
	require.Equal(t, base, sb.wakerCount(), "the waiting run ended and removed its waker before Close returned")
}
