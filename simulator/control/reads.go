package control

import (
	"context"

	"github.com/partnersim/partnersim/simulator"
)

// The reads: what the institutions hold, as the control plane and the console show it.

// Institutions lists every institution with its count of users. Its errors:
// surface.Institutions.Institutions, their one home.
func (s *Service) Institutions(ctx context.Context) ([]*simulator.Institution, []int, error) {
	return s.db.Institutions(ctx)
}

// Institution returns an institution with its prices and fees. Its errors:
// surface.Institutions.Institution, their one home.
func (s *Service) Institution(ctx context.Context, id string) (*simulator.Institution, error) {
	return s.db.Institution(ctx, id)
}

// User returns a user by platform id, in any institution. Its errors:
// surface.Institutions.User, their one home.
func (s *Service) User(ctx context.Context, platformID string) (*simulator.User, error) {
	return s.db.User(ctx, platformID)
}

// InstitutionUsers lists one page of an institution's users with Get User List's filters. Its
// errors: surface.Institutions.InstitutionUsers, their one home.
func (s *Service) InstitutionUsers(ctx context.Context, instID string, f simulator.UserFilter) (*simulator.UserPage, error) {
	return s.db.ListUsers(ctx, instID, f) // it reads the institution in the same transaction
}

// InstitutionOrders lists one page of an institution's orders with Get Order List's filters.
// Its errors: surface.Institutions.InstitutionOrders, their one home.
func (s *Service) InstitutionOrders(ctx context.Context, instID string, f simulator.OrderFilter) (*simulator.OrderPage, error) {
	return s.db.ListOrders(ctx, instID, f) // it reads the institution in the same transaction
}

// InstitutionKeys lists an institution's keys, never a plaintext. Its errors:
// surface.Institutions.InstitutionKeys, their one home.
func (s *Service) InstitutionKeys(ctx context.Context, instID string) ([]*simulator.APIKey, error) {
	return s.db.Keys(ctx, instID) // it reads the institution in the same transaction
}

// InstitutionSubscriptions lists an institution's live webhook subscriptions. Its errors:
// surface.Institutions.InstitutionSubscriptions, their one home.
func (s *Service) InstitutionSubscriptions(ctx context.Context, instID string) ([]*simulator.Subscription, error) {
	return s.db.Subscriptions(ctx, instID) // it reads the institution in the same transaction
}
