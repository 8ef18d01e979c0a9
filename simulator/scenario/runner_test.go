package scenario_test

import (
	"context"
	"maps"
	"path/filepath"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/partnersim/partnersim/simulator/control"
	"github.com/partnersim/partnersim/simulator/sandbox"
	"github.com/partnersim/partnersim/simulator/scenario"
)

// counted counts the wakers a runner has registered and not yet removed.
type counted struct {
	*control.Service
	n atomic.Int64
}

func (c *counted) OnClockMove(wake func()) (remove func()) {
	c.n.Add(1)
	rm := c.Service.OnClockMove(wake)
	return func() { rm(); c.n.Add(-1) }
}

// Every run of a delayed scenario once registered a waker that was never removed, so each run
// left a closure behind that every clock move called for ever. A run's waker goes when the run
// ends, and Close waits for runs still waiting on the clock.
func TestScenarioRunsLeaveNoWakersBehind(t *testing.T) {
	ctx := context.Background()
	sb, err := sandbox.Open(ctx, sandbox.Config{DBPath: filepath.Join(t.TempDir(), "s.db")})
	require.NoError(t, err)
	defer sb.Close()
	svc := &counted{Service: control.New(control.Config{Store: sb.DB, Guard: sb.Guard})}
	runner := scenario.NewRunner(scenario.Config{Service: sb.DB, Moves: svc, Clock: sb.Clock, IDs: sb.DB.IDs, Scenarios: sb.Fixtures.Scenarios,
		Institution: sb.Fixtures.Institutions[0].ID})
	for range 5 {
		run, err := runner.RunScenario(ctx, "onboarding-approved", "")
		require.NoError(t, err)
		require.Equal(t, "running", run.Status, "its later steps wait on the virtual clock")
		_, err = svc.AdvanceClock(ctx, "", time.Hour)
		require.NoError(t, err)
		require.Eventually(t, func() bool {
			r, err := runner.ScenarioRun(ctx, run.RunID)
			return err == nil && r.Status == "completed"
		}, 5*time.Second, 2*time.Millisecond)
	}
	require.Eventually(t, func() bool { return svc.n.Load() == 0 }, 5*time.Second, 2*time.Millisecond,
		"wakers: %d, want none once the runs ended", svc.n.Load())

	// A run still waiting when the runner closes ends with it: Close waits for it.
	_, err = runner.RunScenario(ctx, "onboarding-approved", "")
	require.NoError(t, err)
	require.Equal(t, int64(1), svc.n.Load(), "the run waits on the clock")
	runner.Close()
	require.Equal(t, int64(0), svc.n.Load(), "the waiting run ended and removed its waker before Close returned")
}

// Resume goes on with a stored run from its first pending step, keeps the ended ones listed, and
// fails a run whose scenario the fixture set no longer has (saying so) instead of guessing.
func TestResumeGoesOnOrSaysWhyNot(t *testing.T) {
	ctx := context.Background()
	sb, err := sandbox.Open(ctx, sandbox.Config{DBPath: filepath.Join(t.TempDir(), "s.db")})
	require.NoError(t, err)
	defer sb.Close()
	svc := control.New(control.Config{Store: sb.DB, Guard: sb.Guard})
	cfg := scenario.Config{Service: sb.DB, Moves: svc, Store: sb.DB, Clock: sb.Clock, IDs: sb.DB.IDs, Scenarios: sb.Fixtures.Scenarios,
		Institution: sb.Fixtures.Institutions[0].ID}
	first := scenario.NewRunner(cfg)
	waiting, err := first.RunScenario(ctx, "onboarding-approved", "")
	require.NoError(t, err)
	gone, err := first.RunScenario(ctx, "robo-deposit", "")
	require.NoError(t, err)
	first.Close() // the process stops: both runs wait on the clock

	cfg.Scenarios = maps.Clone(cfg.Scenarios)
	delete(cfg.Scenarios, "robo-deposit")
	second := scenario.NewRunner(cfg)
	defer second.Close()
	require.NoError(t, second.Resume(ctx))
	r, err := second.ScenarioRun(ctx, gone.RunID)
	require.NoError(t, err)
	require.Equal(t, "failed", r.Status)
	require.Contains(t, r.Steps[1].Error, "no longer has this scenario")
	require.Equal(t, "skipped", r.Steps[2].Status)

	_, err = svc.AdvanceClock(ctx, "", time.Hour)
	require.NoError(t, err)
	require.Eventually(t, func() bool {
		r, err := second.ScenarioRun(ctx, waiting.RunID)
		return err == nil && r.Status == "completed"
	}, 5*time.Second, 2*time.Millisecond, "the waiting run goes on after the restart")
	runs, err := second.ScenarioRuns(ctx, "", 10)
	require.NoError(t, err)
	require.Len(t, runs, 2, "both runs are listed after the restart")
}
