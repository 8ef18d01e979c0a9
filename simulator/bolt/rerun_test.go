package bolt_test

import (
	"context"
	"fmt"
	"sync"
	"testing"

	"github.com/shopspring/decimal"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/partnersim/partnersim/simulator"
	"github.com/partnersim/partnersim/simulator/bolt"
)

// A write may run twice: bbolt's Batch, which groups concurrent writers, rolls the group back
// and runs each call again when one of them fails (DB.update). Every write must then answer
// as if it had run once. A fill that appended the orders it read to a list outside its
// transaction read them twice on the rerun and refused its own first copy, already filled:
// "order … is completed: only a pending order can be filled" (the contract suite failed one
// run in several on it, when a scenario's fill shared a group with another's refused write).

// rehearsed is a store whose every write runs first in a transaction that is rolled back.
func rehearsed(t *testing.T) (*bolt.DB, *simulator.Institution, *simulator.User) {
	t.Helper()
	db := MustOpen(t, bolt.Options{Defaults: bolt.Defaults{Portfolios: []simulator.Portfolio{{Name: "balanced", Weights: []simulator.Weight{
		{Symbol: "AAPL", Weight: decimal.RequireFromString("0.6")}, {Symbol: "VTI", Weight: decimal.RequireFromString("0.4")}}}}}})
	db.RehearseWrites() // MustOpen does, said again: these cases are about it
	ctx := context.Background()
	in, err := db.CreateInstitution(ctx, "rehearsed", simulator.Vendors{})
	require.NoError(t, err)
	_, err = db.SetPrices(ctx, in.ID, map[string]decimal.Decimal{"AAPL": decimal.RequireFromString("190"), "VTI": decimal.RequireFromString("250")})
	require.NoError(t, err)
	u := &simulator.User{InstitutionID: in.ID, UserAccountID: "alice", Accounts: []simulator.Account{
		{Product: simulator.ProductSecurities, KYCStatus: simulator.KYCApproved, Cash: decimal.NewFromInt(10000)},
		{Product: simulator.ProductRobo, KYCStatus: simulator.KYCApproved, Cash: decimal.NewFromInt(10000), Portfolio: "balanced"}}}
	require.NoError(t, db.CreateUser(ctx, u))
	return db, in, u
}

func TestWritesAnswerOnceWhenRunTwice(t *testing.T) {
	ctx := context.Background()
	half := decimal.RequireFromString("0.5")
	buy := func(db *bolt.DB, u *simulator.User) *simulator.Transaction {
		t.Helper()
		tx, orders, err := db.PlaceOrder(ctx, simulator.OrderRequest{PlatformID: u.PlatformID, Product: simulator.ProductSecurities,
			Side: simulator.SideBuy, Symbol: "AAPL", Quantity: &half})
		require.NoError(t, err)
		require.Len(t, orders, 1)
		return tx
	}
	t.Run("a fill fills each order once", func(t *testing.T) {
		db, _, u := rehearsed(t)
		tx, orders, _, err := db.FillTransaction(ctx, buy(db, u).ID, nil)
		require.NoError(t, err)
		assert.Equal(t, simulator.OrderCompleted, tx.Status)
		require.Len(t, orders, 1)
		assert.Equal(t, "95.00", orders[0].Notional.StringFixed(2))
	})
	t.Run("a robo fill fills each leg once", func(t *testing.T) {
		db, _, u := rehearsed(t)
		tx, legs, err := db.PlaceRobo(ctx, u.PlatformID, simulator.TxnDeposit, decimal.NewFromInt(1000))
		require.NoError(t, err)
		filled, orders, _, err := db.FillTransaction(ctx, tx.ID, nil)
		require.NoError(t, err)
		assert.Equal(t, simulator.OrderCompleted, filled.Status)
		assert.Len(t, orders, len(legs))
	})
	for _, to := range []simulator.OrderStatus{simulator.OrderCanceled, simulator.OrderFailed} {
		t.Run("ending a transaction ends each leg once: "+string(to), func(t *testing.T) {
			db, _, u := rehearsed(t)
			tx, legs, err := db.PlaceRobo(ctx, u.PlatformID, simulator.TxnDeposit, decimal.NewFromInt(1000))
			require.NoError(t, err)
			ended, orders, err := db.EndTransaction(ctx, tx.ID, to)
			require.NoError(t, err)
			assert.Equal(t, to, ended.Status)
			assert.Len(t, orders, len(legs))
		})
	}
	t.Run("the first subscribe returns the secret it stored", func(t *testing.T) {
		db, in, _ := rehearsed(t)
		_, issued, err := db.CreateSubscription(ctx, in.ID, simulator.EventKYC, "https://93.184.216.34/hook", "v1")
		require.NoError(t, err)
		sec, err := db.SigningSecrets(ctx, in.ID)
		require.NoError(t, err)
		assert.Equal(t, sec.Current, issued)
		_, again, err := db.CreateSubscription(ctx, in.ID, simulator.EventTransaction, "https://93.184.216.34/hook", "v1")
		require.NoError(t, err)
		assert.Empty(t, again, "only the first subscribe issues the secret")
	})
	t.Run("a KYC move answers the account it made", func(t *testing.T) {
		db, _, u := rehearsed(t)
		move, err := db.TransitionKYC(ctx, u.PlatformID, simulator.ProductSecurities, simulator.KYCClosed)
		require.NoError(t, err)
		assert.Equal(t, simulator.KYCClosed, move.Account.KYCStatus)
		require.NotNil(t, move.Event)
	})
}

// The same with bbolt's own Batch: fills of several writers beside writes that fail (a
// duplicate user), so that groups are rolled back and rerun. Before the fix some fills failed
// with "only a pending order can be filled" on every run of this test.
func TestFillsBesideFailingWrites(t *testing.T) {
	db := mustOpenBatched(t)
	ctx := context.Background()
	in, err := db.CreateInstitution(ctx, "batched", simulator.Vendors{})
	require.NoError(t, err)
	_, err = db.SetPrices(ctx, in.ID, map[string]decimal.Decimal{"AAPL": decimal.RequireFromString("190")})
	require.NoError(t, err)
	half := decimal.RequireFromString("0.5")
	var wg sync.WaitGroup
	errs := make(chan error, 8)
	for g := range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			u := &simulator.User{InstitutionID: in.ID, UserAccountID: fmt.Sprintf("u%d", g),
				Accounts: []simulator.Account{{Product: simulator.ProductSecurities, KYCStatus: simulator.KYCApproved, Cash: decimal.NewFromInt(100000)}}}
			if err := db.CreateUser(ctx, u); err != nil {
				errs <- err
				return
			}
			for range 25 {
				tx, _, err := db.PlaceOrder(ctx, simulator.OrderRequest{PlatformID: u.PlatformID, Product: simulator.ProductSecurities,
					Side: simulator.SideBuy, Symbol: "AAPL", Quantity: &half})
				if err == nil {
					_, _, _, err = db.FillTransaction(ctx, tx.ID, nil)
				}
				if err != nil {
					errs <- err
					return
				}
				if err := db.CreateUser(ctx, &simulator.User{InstitutionID: in.ID, UserAccountID: u.UserAccountID}); err == nil {
					errs <- fmt.Errorf("a duplicate user_account_id %s was accepted", u.UserAccountID)
					return
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
}
