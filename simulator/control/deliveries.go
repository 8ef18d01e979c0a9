package control

import (
	"context"

	"github.com/partnersim/partnersim/simulator"
)

// Deliveries lists one page of the delivery log, newest first (EINVALID for a cursor that is
// not an earlier page's next_cursor; otherwise the store's errors only).
func (s *Service) Deliveries(ctx context.Context, f simulator.DeliveryFilter) (*simulator.DeliveryPage, error) {
	return s.db.Deliveries(ctx, f)
}

// Redeliver queues the event again, one new pending delivery per enabled subscription of its
// type, with the same event id and body bytes (ENOTFOUND for an unknown event, or one with no
// enabled subscription to go to).
func (s *Service) Redeliver(ctx context.Context, eventID string) ([]*simulator.Delivery, error) {
	return s.db.Redeliver(ctx, eventID)
}

// RedeliverDelivery queues the event of one delivery again, to that delivery's subscription
// only (ENOTFOUND for an unknown delivery, or one whose subscription is no longer enabled).
func (s *Service) RedeliverDelivery(ctx context.Context, id string) (*simulator.Delivery, error) {
	return s.db.RedeliverDelivery(ctx, id)
}

// PendingDeliveries lists up to limit deliveries waiting for an attempt, soonest first (the
// store's errors only).
func (s *Service) PendingDeliveries(ctx context.Context, limit int) ([]*simulator.Delivery, error) {
	return s.db.PendingDeliveries(ctx, limit)
}
