package control

import (
	"context"

	"github.com/partnersim/partnersim/simulator"
)

// Deliveries lists one page of the delivery log, newest first.
func (s *Service) Deliveries(ctx context.Context, f simulator.DeliveryFilter) (*simulator.DeliveryPage, error) {
	return s.db.Deliveries(ctx, f)
}

// Redeliver queues the event again, one new delivery per subscription it went to (ENOTFOUND
// when the event is unknown).
func (s *Service) Redeliver(ctx context.Context, eventID string) ([]*simulator.Delivery, error) {
	return s.db.Redeliver(ctx, eventID)
}

// PendingDeliveries lists up to limit deliveries waiting for an attempt, soonest first.
func (s *Service) PendingDeliveries(ctx context.Context, limit int) ([]*simulator.Delivery, error) {
	return s.db.PendingDeliveries(ctx, limit)
}
