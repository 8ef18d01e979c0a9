package bolt

import (
	"context"
	"encoding/json"
	"fmt"

	"go.etcd.io/bbolt"

	"github.com/partnersim/partnersim/simulator"
)

// SaveClock keeps the clock's offsets (decisions D9: they are state, and survive a restart),
// durably.
func (s *DB) SaveClock(ctx context.Context) error {
	raw, err := json.Marshal(s.Clock.State())
	if err != nil {
		return err
	}
	return s.updateNow(ctx, func(w *writeTx) error { return w.Bucket(bMeta).Put(metaClock, raw) })
}

// RestoreClock puts the offsets the store kept back on the clock; a store that kept none
// leaves it as it is.
func (s *DB) RestoreClock(ctx context.Context) error {
	var (
		st   simulator.ClockState
		kept bool
	)
	err := s.view(ctx, func(tx *bbolt.Tx) error {
		raw := tx.Bucket(bMeta).Get(metaClock)
		if raw == nil {
			return nil
		}
		kept = true
		if err := json.Unmarshal(raw, &st); err != nil {
			return fmt.Errorf("decode the stored clock: %w", err)
		}
		return nil
	})
	if err != nil || !kept {
		return err
	}
	s.Clock.Restore(st)
	return nil
}
