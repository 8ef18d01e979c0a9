package control

import (
	"context"

	"github.com/partnersim/partnersim/simulator"
)

// Deliveries lists one page of the delivery log, newest first. Its errors:
// surface.Deliveries.Deliveries, their one home.
func (s *Service) Deliveries(ctx context.Context, f simulator.DeliveryFilter) (*simulator.DeliveryPage, error) {
	return s.db.Deliveries(ctx, f)
}

// Redeliver queues the event again, one new pending delivery per enabled subscription of its
// type, with the same event id and body bytes. Its errors: surface.Deliveries.Redeliver, their
// one home.
func (s *Service) Redeliver(ctx context.Context, eventID string) ([]*simulator.Delivery, error) {
	return s.db.Redeliver(ctx, eventID)
}

// RedeliverDelivery queues the event of one delivery again, to that delivery's subscription
// only. Its errors: surface.Deliveries.RedeliverDelivery, their one home.
func (s *Service) RedeliverDelivery(ctx context.Context, id string) (*simulator.Delivery, error) {
	return s.db.RedeliverDelivery(ctx, id)
}

// PendingDeliveries lists up to limit deliveries waiting for an attempt, soonest first. Its
// errors: surface.Deliveries.PendingDeliveries, their one home.
func (s *Service) PendingDeliveries(ctx context.Context, limit int) ([]*simulator.Delivery, error) {
	return s.db.PendingDeliveries(ctx, limit)
}
