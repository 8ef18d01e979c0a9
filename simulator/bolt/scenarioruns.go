package bolt

import (
	"context"
	"encoding/json"

	"go.etcd.io/bbolt"

	"github.com/partnersim/partnersim/simulator"
)

// PutScenarioRun stores a scenario run as it stands. The runner writes a run when it starts and
// after each step, so that a run in flight is state, like a delivery in the outbox: a restart
// (or a kill) finds it with what it did and goes on with its pending steps.
func (s *DB) PutScenarioRun(ctx context.Context, run *simulator.ScenarioRun) error {
	return s.update(ctx, func(w *writeTx) error { return w.putRecord(bScenarioRuns, []byte(run.RunID), run) })
}

// ScenarioRuns returns every stored scenario run, by run id.
func (s *DB) ScenarioRuns(ctx context.Context) ([]*simulator.ScenarioRun, error) {
	var out []*simulator.ScenarioRun
	err := s.view(ctx, func(tx *bbolt.Tx) error {
		return tx.Bucket(bScenarioRuns).ForEach(func(_, v []byte) error {
			var run simulator.ScenarioRun
			if err := json.Unmarshal(v, &run); err != nil {
				return err
			}
			out = append(out, &run)
			return nil
		})
	})
	return out, err
}
