package control

import (
	"context"
	"time"

	"github.com/shopspring/decimal"

	"github.com/partnersim/partnersim/simulator"
)

// The tenants' operations: institutions, their keys, members and users, prices and signing
// secrets. Each is one write transaction of the store.

// CreateInstitution creates an isolated tenant with the fixtures' default prices and fees. Its
// errors: surface.Tenants.CreateInstitution, their one home.
func (s *Service) CreateInstitution(ctx context.Context, name string, v simulator.Vendors) (*simulator.Institution, error) {
	return s.db.CreateInstitution(ctx, name, v)
}

// DeleteInstitution removes an institution with everything of it, its own virtual clock
// included. Its errors: surface.Tenants.DeleteInstitution, their one home.
func (s *Service) DeleteInstitution(ctx context.Context, instID string) error {
	if err := s.db.DeleteInstitution(ctx, instID); err != nil {
		return err
	}
	s.clock.ForgetInstitution(instID)
	return nil
}

// IssueKey issues a key for an institution; the plaintext is returned once and never stored.
// Its errors: surface.Tenants.IssueKey, their one home.
func (s *Service) IssueKey(ctx context.Context, instID string, scopes []simulator.Scope, description string) (*simulator.APIKey, string, error) {
	return s.db.IssueKey(ctx, instID, scopes, description)
}

// RevokeKey revokes a key; it answers 401 from then on. Its errors: surface.Tenants.RevokeKey,
// their one home.
func (s *Service) RevokeKey(ctx context.Context, keyID string) error {
	return s.db.RevokeKey(ctx, keyID)
}

// CreateMember adds a member. Its errors: surface.Tenants.CreateMember, their one home.
func (s *Service) CreateMember(ctx context.Context, m *simulator.Member) error {
	return s.db.CreateMember(ctx, m)
}

// CreateUser adds a user and gives it its platform id. Its errors: surface.Tenants.CreateUser,
// their one home.
func (s *Service) CreateUser(ctx context.Context, u *simulator.User) error {
	return s.db.CreateUser(ctx, u)
}

// SetPrices merges prices into the institution's and returns them all. Its errors:
// surface.Tenants.SetPrices, their one home.
func (s *Service) SetPrices(ctx context.Context, instID string, prices map[string]decimal.Decimal) (map[string]decimal.Decimal, error) {
	return s.db.SetPrices(ctx, instID, prices)
}

// RotateSecret issues a new signing secret; the old one keeps signing for overlap. Its errors:
// surface.Tenants.RotateSecret, their one home.
func (s *Service) RotateSecret(ctx context.Context, instID string, overlap time.Duration) (string, error) {
	return s.db.RotateSecret(ctx, instID, overlap)
}
