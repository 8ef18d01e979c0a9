package control

import (
	"context"

	"github.com/shopspring/decimal"

	"github.com/partnersim/partnersim/simulator"
)

// The trading operations (decisions D7, D9): each loads what the domain's rule needs, applies
// it and saves what it returns, with any event and its deliveries, in one write transaction.

// TransitionKYC moves one account through the KYC state machine (ENOTFOUND for an unknown user
// or account, ECONFLICT for a move the machine refuses, EINVALID for an unknown state).
func (s *Service) TransitionKYC(ctx context.Context, platformID string, p simulator.Product, to simulator.KYCStatus) (*simulator.KYCMove, error) {
	return s.db.TransitionKYC(ctx, platformID, p, to)
}

// PlaceOrder places a pending order and its transaction (ENOTFOUND for an unknown user or
// account, ECONFLICT for an account that is not approved, EINVALID for a symbol without a
// price).
func (s *Service) PlaceOrder(ctx context.Context, r simulator.OrderRequest) (*simulator.Transaction, []*simulator.Order, error) {
	return s.db.PlaceOrder(ctx, r)
}

// PlaceRobo places a robo deposit, withdrawal or rebalance across the account's model
// portfolio (ENOTFOUND for an unknown user or robo account, ECONFLICT for an account that is
// not approved, EINVALID for an amount that is not positive or too small to trade after fees,
// or a portfolio symbol without a price).
func (s *Service) PlaceRobo(ctx context.Context, platformID string, typ simulator.TransactionType, amount decimal.Decimal) (*simulator.Transaction, []*simulator.Order, error) {
	return s.db.PlaceRobo(ctx, platformID, typ, amount)
}

// FillTransaction fills a pending transaction at prices (by symbol; the institution's for
// those not given) and emits its transaction event (ENOTFOUND when unknown, ECONFLICT when not
// pending or when the account lacks the cash or the position the fill needs, EINVALID for a
// price that is not positive or a symbol without one: then nothing changes).
func (s *Service) FillTransaction(ctx context.Context, txnID string, prices map[string]decimal.Decimal) (*simulator.Transaction, []*simulator.Order, *simulator.Event, error) {
	return s.db.FillTransaction(ctx, txnID, prices)
}

// EndTransaction cancels or fails a pending transaction — to is simulator.OrderCanceled or
// simulator.OrderFailed — with no event (ENOTFOUND when unknown, ECONFLICT when not pending).
func (s *Service) EndTransaction(ctx context.Context, txnID string, to simulator.OrderStatus) (*simulator.Transaction, []*simulator.Order, error) {
	return s.db.EndTransaction(ctx, txnID, to)
}

// TransactionAny returns a transaction of any institution with its orders (ENOTFOUND when
// unknown).
func (s *Service) TransactionAny(ctx context.Context, id string) (*simulator.Transaction, []*simulator.Order, error) {
	return s.db.TransactionAny(ctx, id)
}
