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

// eachJSON calls fn with each key of b and its value decoded from JSON into a T of its own, in
// key order (a bucket whose records are plain JSON: institutions, keys, scenario runs).
func eachJSON[T any](b *bbolt.Bucket, fn func(k []byte, v *T) error) error {
	return b.ForEach(func(k, raw []byte) error {
		v := new(T)
		if err := json.Unmarshal(raw, v); err != nil {
			return err
		}
		return fn(k, v)
	})
}

// ScenarioRuns returns every stored scenario run, by run id.
func (s *DB) ScenarioRuns(ctx context.Context) ([]*simulator.ScenarioRun, error) {
	var out []*simulator.ScenarioRun
	err := s.view(ctx, func(tx *bbolt.Tx) error {
		return eachJSON(tx.Bucket(bScenarioRuns), func(_ []byte, run *simulator.ScenarioRun) error {
			out = append(out, run)
			return nil
		})
	})
	return out, err
}
