package bolt

import (
	"context"

	"github.com/partnersim/partnersim/simulator"
)

// EmitAll writes events and their deliveries in one transaction (benchmarks fill the outbox
// with it; the product writes each event with the state change that caused it).
func (s *DB) EmitAll(ctx context.Context, evs []*simulator.Event) error {
	return s.update(ctx, func(w *writeTx) error {
		for _, e := range evs {
			if err := s.emit(w, e); err != nil {
				return err
			}
		}
		return nil
	})
}

// RehearseWrites makes every later write run its function twice, first in a transaction that
// is rolled back, as bbolt's Batch does when another call of a group fails (see DB.update).
func (s *DB) RehearseWrites() { s.rehearse = true }
