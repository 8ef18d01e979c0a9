package control

import (
	"context"

	"github.com/shopspring/decimal"

	"github.com/partnersim/partnersim/simulator"
)

// The trading operations (decisions D7, D9): each loads what the domain's rule needs, applies
// it and saves what it returns, with any event and its deliveries, in one write transaction.

// TransitionKYC moves one account through the KYC state machine. Its errors:
// surface.Trading.TransitionKYC, their one home.
func (s *Service) TransitionKYC(ctx context.Context, platformID string, p simulator.Product, to simulator.KYCStatus) (*simulator.KYCMove, error) {
	return s.db.TransitionKYC(ctx, platformID, p, to)
}

// PlaceOrder places a pending order and its transaction. Its errors:
// surface.Trading.PlaceOrder, their one home.
func (s *Service) PlaceOrder(ctx context.Context, r simulator.OrderRequest) (*simulator.Transaction, []*simulator.Order, error) {
	return s.db.PlaceOrder(ctx, r)
}

// PlaceRobo places a robo deposit, withdrawal or rebalance across the account's model
// portfolio. Its errors: surface.Trading.PlaceRobo, their one home.
func (s *Service) PlaceRobo(ctx context.Context, platformID string, typ simulator.TransactionType, amount decimal.Decimal) (*simulator.Transaction, []*simulator.Order, error) {
	return s.db.PlaceRobo(ctx, platformID, typ, amount)
}

// FillTransaction fills a pending transaction at prices (by symbol; the institution's for those
// not given) and emits its transaction event. Its errors: surface.Trading.FillTransaction,
// their one home.
func (s *Service) FillTransaction(ctx context.Context, txnID string, prices map[string]decimal.Decimal) (*simulator.Transaction, []*simulator.Order, *simulator.Event, error) {
	return s.db.FillTransaction(ctx, txnID, prices)
}

// EndTransaction cancels or fails a pending transaction — to is simulator.OrderCanceled or
// simulator.OrderFailed — with no event. Its errors: surface.Trading.EndTransaction, their one
// home.
func (s *Service) EndTransaction(ctx context.Context, txnID string, to simulator.OrderStatus) (*simulator.Transaction, []*simulator.Order, error) {
	return s.db.EndTransaction(ctx, txnID, to)
}

// TransactionAny returns a transaction of any institution with its orders. Its errors:
// surface.Trading.TransactionAny, their one home.
func (s *Service) TransactionAny(ctx context.Context, id string) (*simulator.Transaction, []*simulator.Order, error) {
	return s.db.TransactionAny(ctx, id)
}
