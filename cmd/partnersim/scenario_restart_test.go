package main

import (
	"path/filepath"
	"syscall"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/partnersim/partnersim/internal/sandboxtest"
)

// A scenario run in flight is state, like a delivery in the outbox: killed with SIGKILL between
// its steps (the user created, the deposit waiting on the virtual clock), the process restarts on
// the same file, the run is still there with what it did, and a clock advance plays the rest.
func TestScenarioRunSurvivesKill9(t *testing.T) {
	db := filepath.Join(t.TempDir(), "scenario.db")
	c := startChild(t, db)
	run := c.mustCall(t, "POST", "/_sandbox/scenarios/robo-deposit/run", map[string]string{"institution_id": "ins_harbor"})
	id := run.Get("run_id").String()
	require.Equal(t, "running", run.Get("status").String(), run.Raw)
	require.Equal(t, "done", run.Get("steps.0.status").String(), "step 1 (create_user) is due at once: %s", run.Raw)
	require.Equal(t, "pending", run.Get("steps.1.status").String(), run.Raw)
	user := run.Get("bound.u").String()
	require.NotEmpty(t, user, run.Raw)

	require.NoError(t, c.cmd.Process.Signal(syscall.SIGKILL))
	_ = c.cmd.Wait()

	c = startChild(t, db)
	got, code, err := c.call("GET", "/_sandbox/scenarios/runs/"+id, nil)
	require.NoError(t, err)
	require.Equal(t, 200, code, "the run outlives the process: %s", got.Raw)
	assert.Equal(t, "running", got.Get("status").String())
	assert.Equal(t, "done", got.Get("steps.0.status").String())
	assert.Equal(t, user, got.Get("bound.u").String(), "what step 1 bound is kept")
	assert.Equal(t, "pending", got.Get("steps.1.status").String())
	listed := c.mustCall(t, "GET", "/_sandbox/scenarios/runs?status=running", nil)
	assert.Contains(t, listed.Raw, id, "the run is listed")

	c.mustCall(t, "POST", "/_sandbox/clock/advance", map[string]int{"seconds": 3600})
	var end string
	sandboxtest.Eventually(t, func() bool {
		end = c.mustCall(t, "GET", "/_sandbox/scenarios/runs/"+id, nil).Get("status").String()
		return end != "running"
	}, "the run ends once the clock passed its last step")
	assert.Equal(t, "completed", end, "the run went on from where it was")
	users := c.mustCall(t, "GET", "/_sandbox/institutions/ins_harbor/users?limit=1000", nil)
	n := 0
	for _, u := range users.Get("items").Array() {
		if u.Get("platform_id").String() == user {
			n++
		}
	}
	assert.Equal(t, 1, n, "step 1 was not played again")
}
