package control_test

import (
	"context"
	"sync"
	"testing"

	"github.com/shopspring/decimal"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/partnersim/partnersim/simulator"
)

// subscribe subscribes a URL of institution instID to events of type t through the store (the
// partner API's create), and returns the subscription's id.
func (r *rig) subscribe(tb testing.TB, instID string, t simulator.EventType, url string) string {
	tb.Helper()
	sub, _, err := r.db.CreateSubscription(context.Background(), instID, t, url, "v1")
	require.NoError(tb, err)
	return sub.ID
}

// deliveries lists every delivery of an institution, newest first.
func (r *rig) deliveries(tb testing.TB, instID string) []*simulator.Delivery {
	tb.Helper()
	page, err := r.db.Deliveries(context.Background(), simulator.DeliveryFilter{InstitutionID: instID, Limit: 1000})
	require.NoError(tb, err)
	return page.Deliveries
}

// held is what a trading operation may change for one user: the user's record, the
// institution's delivery log and the outbox.
type held struct {
	user       *simulator.User
	deliveries int
	pending    int
}

func (r *rig) held(tb testing.TB, platformID, instID string) held {
	tb.Helper()
	ctx := context.Background()
	u, err := r.db.User(ctx, platformID)
	require.NoError(tb, err)
	pending, err := r.db.PendingDeliveries(ctx, 1000)
	require.NoError(tb, err)
	return held{user: u, deliveries: len(r.deliveries(tb, instID)), pending: len(pending)}
}

func dec(s string) decimal.Decimal { return decimal.RequireFromString(s) }

// aapl is a prices map of AAPL alone.
func aapl(price string) map[string]decimal.Decimal {
	return map[string]decimal.Decimal{"AAPL": dec(price)}
}

// A KYC move saves the account's new state, and the kyc event goes to the outbox with one
// pending delivery per enabled kyc subscription of the institution, in the same transaction;
// the move answers with the institution's prices.
func TestTransitionKYCSavesTheMoveWithItsEventAndFanOut(t *testing.T) {
	ctx := context.Background()
	r := newRig(t)
	kycSub := r.subscribe(t, "ins_harbor", simulator.EventKYC, "https://hooks.partner.example/kyc")
	r.subscribe(t, "ins_harbor", simulator.EventTransaction, "https://hooks.partner.example/txn")
	r.subscribe(t, "ins_prairie", simulator.EventKYC, "https://hooks.partner.example/prairie")

	move, err := r.db.TransitionKYC(ctx, "usr_hfcu_0002", simulator.ProductCrypto, simulator.KYCApproved)
	require.NoError(t, err)

	assert.Equal(t, simulator.KYCApproved, move.Account.KYCStatus)
	require.NotNil(t, move.Account.KYCApprovedAt)
	assert.Equal(t, start, *move.Account.KYCApprovedAt, "the first approval is stamped with the clock's now")
	harbor, err := r.db.Institution(ctx, "ins_harbor")
	require.NoError(t, err)
	assert.Equal(t, harbor.Prices, move.Prices)
	require.NotNil(t, move.Event)
	assert.Equal(t, simulator.EventKYC, move.Event.Type)
	assert.Equal(t, "usr_hfcu_0002", move.Event.Data.PlatformID)
	assert.Equal(t, simulator.KYCApproved, move.Event.Data.KYCStatus)

	assert.Equal(t, simulator.KYCApproved, r.kycOf(t, "usr_hfcu_0002", simulator.ProductCrypto))
	ds := r.deliveries(t, "ins_harbor")
	require.Len(t, ds, 1, "one delivery: to the one kyc subscription of the user's institution")
	assert.Equal(t, kycSub, ds[0].SubscriptionID)
	assert.Equal(t, move.Event.ID, ds[0].EventID)
	assert.Equal(t, simulator.DeliveryPending, ds[0].Status)
	pending, err := r.db.PendingDeliveries(ctx, 10)
	require.NoError(t, err)
	require.Len(t, pending, 1)
	assert.Equal(t, ds[0].ID, pending[0].ID)
	assert.Empty(t, r.deliveries(t, "ins_prairie"), "another institution's subscriptions get nothing")
}

// A move to pending is not delivered (decisions D8): the state is saved, no event is written.
func TestTransitionKYCToPendingEmitsNothing(t *testing.T) {
	ctx := context.Background()
	r := newRig(t)
	r.subscribe(t, "ins_harbor", simulator.EventKYC, "https://hooks.partner.example/kyc")

	move, err := r.db.TransitionKYC(ctx, "usr_hfcu_0015", simulator.ProductCrypto, simulator.KYCPending)
	require.NoError(t, err)

	assert.Nil(t, move.Event)
	assert.Equal(t, simulator.KYCPending, r.kycOf(t, "usr_hfcu_0015", simulator.ProductCrypto))
	assert.Empty(t, r.deliveries(t, "ins_harbor"))
}

// Every refused move returns its error and leaves everything as it was: the user's record,
// the delivery log and the outbox.
func TestTransitionKYCRefusedChangesNothing(t *testing.T) {
	ctx := context.Background()
	for _, tc := range []struct {
		name, user string
		product    simulator.Product
		to         simulator.KYCStatus
		code, msg  string
	}{
		{"unknown user", "usr_nobody", simulator.ProductCrypto, simulator.KYCApproved, simulator.ENOTFOUND, ""},
		{"no such account", "usr_hfcu_0025", simulator.ProductCrypto, simulator.KYCApproved, simulator.ENOTFOUND, "user usr_hfcu_0025 has no crypto account"},
		{"a move the machine refuses", "usr_hfcu_0012", simulator.ProductCrypto, simulator.KYCApproved, simulator.ECONFLICT,
			"kyc transition not allowed: closed -> approved (allowed next states: none)"},
		{"approved to pending", "usr_hfcu_0001", simulator.ProductCrypto, simulator.KYCPending, simulator.ECONFLICT,
			"kyc transition not allowed: approved -> pending (allowed next states: closed, account_takeover)"},
		{"an unknown state", "usr_hfcu_0002", simulator.ProductCrypto, "frozen", simulator.EINVALID, "unknown kyc status: frozen"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := newRig(t)
			r.subscribe(t, "ins_harbor", simulator.EventKYC, "https://hooks.partner.example/kyc")
			watched := tc.user
			if watched == "usr_nobody" {
				watched = "usr_hfcu_0002"
			}
			before := r.held(t, watched, "ins_harbor")

			move, err := r.db.TransitionKYC(ctx, tc.user, tc.product, tc.to)

			assert.Nil(t, move)
			assert.Equal(t, tc.code, code(err), "%v", err)
			if tc.msg != "" {
				assert.Equal(t, tc.msg, simulator.ErrorMessage(err))
			}
			assert.Equal(t, before, r.held(t, watched, "ins_harbor"))
		})
	}
}

// A move reads, checks and writes in one transaction: of moves racing on one account, only
// the first finds the state it moves from; the others are refused, and one event is written.
func TestTransitionKYCRacingMovesMoveOnce(t *testing.T) {
	ctx := context.Background()
	r := newRig(t)
	r.subscribe(t, "ins_harbor", simulator.EventKYC, "https://hooks.partner.example/kyc")
	const n = 8
	errs := make([]error, n)
	var wg sync.WaitGroup
	for i := range n {
		wg.Go(func() {
			_, errs[i] = r.db.TransitionKYC(ctx, "usr_hfcu_0016", simulator.ProductCrypto, simulator.KYCApproved)
		})
	}
	wg.Wait()

	codes := map[string]int{}
	for _, err := range errs {
		codes[code(err)]++
	}
	assert.Equal(t, map[string]int{"": 1, simulator.ECONFLICT: n - 1}, codes)
	assert.Len(t, r.deliveries(t, "ins_harbor"), 1, "one move, one event, one delivery")
}

// PlaceOrder places a pending transaction of one pending order; TransactionAny reads it back.
func TestPlaceOrder(t *testing.T) {
	ctx := context.Background()
	r := newRig(t)
	notional := dec("100.00")

	txn, orders, err := r.db.PlaceOrder(ctx, simulator.OrderRequest{PlatformID: "usr_hfcu_0001", Product: simulator.ProductSecurities,
		Side: simulator.SideBuy, Symbol: "AAPL", Notional: &notional})
	require.NoError(t, err)

	assert.Equal(t, simulator.OrderPending, txn.Status)
	assert.Equal(t, simulator.TxnBuy, txn.Type)
	require.Len(t, orders, 1)
	assert.Equal(t, simulator.OrderPending, orders[0].Status)
	assert.True(t, orders[0].ByNotional)
	got, gotOrders, err := r.db.TransactionAny(ctx, txn.ID)
	require.NoError(t, err)
	assert.Equal(t, txn.ID, got.ID)
	assert.Equal(t, "ins_harbor", got.InstitutionID)
	require.Len(t, gotOrders, 1)
	assert.Equal(t, orders[0].ID, gotOrders[0].ID)
}

// PlaceOrder's and PlaceRobo's errors, each leaving the user as it was.
func TestPlaceRefused(t *testing.T) {
	ctx := context.Background()
	r := newRig(t)
	one := dec("1")
	order := func(user string, p simulator.Product, symbol string) func() error {
		return func() error {
			_, _, err := r.db.PlaceOrder(ctx, simulator.OrderRequest{PlatformID: user, Product: p, Side: simulator.SideBuy, Symbol: symbol, Quantity: &one})
			return err
		}
	}
	roboOf := func(user, amount string) func() error {
		return func() error {
			_, _, err := r.db.PlaceRobo(ctx, user, simulator.TxnDeposit, dec(amount))
			return err
		}
	}
	robo := func(user string) func() error { return roboOf(user, "100.00") }
	for _, tc := range []struct {
		name, user string
		place      func() error
		code       string
	}{
		{"order: unknown user", "usr_hfcu_0001", order("usr_nobody", simulator.ProductSecurities, "AAPL"), simulator.ENOTFOUND},
		{"order: no such account", "usr_hfcu_0025", order("usr_hfcu_0025", simulator.ProductSecurities, "AAPL"), simulator.ENOTFOUND},
		{"order: account not approved", "usr_hfcu_0002", order("usr_hfcu_0002", simulator.ProductSecurities, "AAPL"), simulator.ECONFLICT},
		{"order: symbol without a price", "usr_hfcu_0001", order("usr_hfcu_0001", simulator.ProductSecurities, "ZZZZ"), simulator.EINVALID},
		{"robo: unknown user", "usr_hfcu_0001", robo("usr_nobody"), simulator.ENOTFOUND},
		{"robo: no robo account", "usr_hfcu_0025", robo("usr_hfcu_0025"), simulator.ENOTFOUND},
		{"robo: account not approved", "usr_hfcu_0009", robo("usr_hfcu_0009"), simulator.ECONFLICT},
		{"robo: amount not positive", "usr_hfcu_0001", roboOf("usr_hfcu_0001", "0"), simulator.EINVALID},
		{"robo: too small to trade after fees", "usr_hfcu_0001", roboOf("usr_hfcu_0001", "0.01"), simulator.EINVALID},
	} {
		t.Run(tc.name, func(t *testing.T) {
			before := r.held(t, tc.user, "ins_harbor")
			err := tc.place()
			assert.Equal(t, tc.code, code(err), "%v", err)
			assert.Equal(t, before, r.held(t, tc.user, "ins_harbor"))
		})
	}
}

// A robo deposit is one pending transaction of one buy leg per symbol of the account's model
// portfolio.
func TestPlaceRoboSplitsByThePortfolio(t *testing.T) {
	ctx := context.Background()
	r := newRig(t)
	u, err := r.db.User(ctx, "usr_hfcu_0001")
	require.NoError(t, err)
	pf := r.defaults.Portfolios[0]
	for _, p := range r.defaults.Portfolios {
		if p.Name == u.Account(simulator.ProductRobo).Portfolio {
			pf = p
		}
	}

	txn, orders, err := r.db.PlaceRobo(ctx, "usr_hfcu_0001", simulator.TxnDeposit, dec("1000.00"))
	require.NoError(t, err)

	assert.Equal(t, simulator.OrderPending, txn.Status)
	assert.True(t, dec("1000.00").Equal(txn.Amount))
	var symbols, want []string
	for _, o := range orders {
		symbols = append(symbols, o.Symbol)
		assert.Equal(t, simulator.SideBuy, o.Side)
	}
	for _, w := range pf.Weights {
		want = append(want, w.Symbol)
	}
	assert.ElementsMatch(t, want, symbols)
}

// placeAAPL places a share order of usr_hfcu_0001's securities account.
func (r *rig) placeAAPL(tb testing.TB, side simulator.Side, qty string) *simulator.Transaction {
	tb.Helper()
	q := dec(qty)
	txn, _, err := r.db.PlaceOrder(context.Background(), simulator.OrderRequest{PlatformID: "usr_hfcu_0001", Product: simulator.ProductSecurities,
		Side: side, Symbol: "AAPL", Quantity: &q})
	require.NoError(tb, err)
	return txn
}

// A fill completes the transaction, moves the account's cash and holdings and writes the
// transaction event with its deliveries; a second fill, a cancel after it and an unknown
// transaction are refused.
func TestFillTransaction(t *testing.T) {
	ctx := context.Background()
	r := newRig(t)
	txnSub := r.subscribe(t, "ins_harbor", simulator.EventTransaction, "https://hooks.partner.example/txn")
	r.subscribe(t, "ins_harbor", simulator.EventKYC, "https://hooks.partner.example/kyc")
	before, err := r.db.User(ctx, "usr_hfcu_0001")
	require.NoError(t, err)
	txn := r.placeAAPL(t, simulator.SideBuy, "2")

	got, orders, ev, err := r.db.FillTransaction(ctx, txn.ID, map[string]decimal.Decimal{"AAPL": dec("100.00")})
	require.NoError(t, err)

	assert.Equal(t, simulator.OrderCompleted, got.Status)
	require.Len(t, orders, 1)
	assert.Equal(t, simulator.OrderCompleted, orders[0].Status)
	assert.True(t, dec("200.00").Equal(orders[0].Notional), "2 × 100.00, got %s", orders[0].Notional)
	require.NotNil(t, ev)
	assert.Equal(t, simulator.EventTransaction, ev.Type)
	assert.Equal(t, txn.ID, ev.Data.TransactionID)
	after, err := r.db.User(ctx, "usr_hfcu_0001")
	require.NoError(t, err)
	cost := dec("200.00").Add(orders[0].Fee)
	assert.True(t, before.Account(simulator.ProductSecurities).Cash.Sub(cost).Equal(after.Account(simulator.ProductSecurities).Cash))
	ds := r.deliveries(t, "ins_harbor")
	require.Len(t, ds, 1, "one delivery: to the transaction subscription")
	assert.Equal(t, txnSub, ds[0].SubscriptionID)
	assert.Equal(t, ev.ID, ds[0].EventID)

	_, _, _, err = r.db.FillTransaction(ctx, txn.ID, nil)
	assert.Equal(t, simulator.ECONFLICT, code(err), "filled twice: %v", err)
	_, _, err = r.db.EndTransaction(ctx, txn.ID, simulator.OrderCanceled)
	assert.Equal(t, simulator.ECONFLICT, code(err), "canceled once filled: %v", err)
	_, _, _, err = r.db.FillTransaction(ctx, "txn_nobody", nil)
	assert.Equal(t, simulator.ENOTFOUND, code(err), "%v", err)
}

// A fill the domain refuses — a price that is not positive, or more than the cash buys — leaves
// the transaction pending and the account, the delivery log and the outbox as they were.
func TestFillRefusedChangesNothing(t *testing.T) {
	ctx := context.Background()
	r := newRig(t)
	r.subscribe(t, "ins_harbor", simulator.EventTransaction, "https://hooks.partner.example/txn")
	for _, tc := range []struct {
		name, qty string
		price     string
		code      string
	}{
		{"price not positive", "1", "0", simulator.EINVALID},
		{"more than the cash buys", "1000", "190.00", simulator.ECONFLICT},
	} {
		t.Run(tc.name, func(t *testing.T) {
			txn := r.placeAAPL(t, simulator.SideBuy, tc.qty)
			before := r.held(t, "usr_hfcu_0001", "ins_harbor")

			_, _, ev, err := r.db.FillTransaction(ctx, txn.ID, map[string]decimal.Decimal{"AAPL": dec(tc.price)})

			assert.Equal(t, tc.code, code(err), "%v", err)
			assert.Nil(t, ev)
			assert.Equal(t, before, r.held(t, "usr_hfcu_0001", "ins_harbor"))
			got, _, err := r.db.TransactionAny(ctx, txn.ID)
			require.NoError(t, err)
			assert.Equal(t, simulator.OrderPending, got.Status)
		})
	}
}

// Cancel and fail end a pending transaction and every leg, with no event (spec §3.2); an
// ended transaction cannot end again, and an unknown one is ENOTFOUND.
func TestEndTransaction(t *testing.T) {
	ctx := context.Background()
	r := newRig(t)
	r.subscribe(t, "ins_harbor", simulator.EventTransaction, "https://hooks.partner.example/txn")
	for _, to := range []simulator.OrderStatus{simulator.OrderCanceled, simulator.OrderFailed} {
		txn := r.placeAAPL(t, simulator.SideSell, "1")

		got, orders, err := r.db.EndTransaction(ctx, txn.ID, to)
		require.NoError(t, err)
		assert.Equal(t, to, got.Status)
		require.Len(t, orders, 1)
		assert.Equal(t, to, orders[0].Status)

		_, _, err = r.db.EndTransaction(ctx, txn.ID, to)
		assert.Equal(t, simulator.ECONFLICT, code(err), "ended twice: %v", err)
		_, _, _, err = r.db.FillTransaction(ctx, txn.ID, nil)
		assert.Equal(t, simulator.ECONFLICT, code(err), "filled once %s: %v", to, err)
	}
	assert.Empty(t, r.deliveries(t, "ins_harbor"), "cancel and fail emit no event")
	_, _, err := r.db.EndTransaction(ctx, "txn_nobody", simulator.OrderCanceled)
	assert.Equal(t, simulator.ENOTFOUND, code(err), "%v", err)
	_, _, err = r.db.TransactionAny(ctx, "txn_nobody")
	assert.Equal(t, simulator.ENOTFOUND, code(err), "%v", err)
}
