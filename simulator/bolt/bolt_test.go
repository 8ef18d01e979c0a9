package bolt_test

import (
	"cmp"
	"context"
	"fmt"
	"math/rand/v2"
	"path/filepath"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/shopspring/decimal"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/partnersim/partnersim/simulator"
	"github.com/partnersim/partnersim/simulator/bolt"
)

// MustOpen opens a store on a temp file and closes it at the end of the test. In a test (not a
// benchmark) every write runs twice, first in a transaction that is rolled back, as bbolt's
// Batch runs it when another write of its group fails: a write that keeps state outside its
// transaction fails the test that makes it, not one run in several (DB.update).
func MustOpen(tb testing.TB, opts ...bolt.Options) *bolt.DB {
	tb.Helper()
	db := mustOpenBatched(tb, opts...)
	if _, ok := tb.(*testing.T); ok {
		db.RehearseWrites()
	}
	return db
}

// mustOpenBatched opens a store whose writes are bbolt's Batch, as in the product.
func mustOpenBatched(tb testing.TB, opts ...bolt.Options) *bolt.DB {
	tb.Helper()
	db, err := bolt.Open(filepath.Join(tb.TempDir(), "test.db"), simulator.NewClock(nil), nil, opts...)
	require.NoError(tb, err)
	tb.Cleanup(func() { db.Close() })
	return db
}

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

var base = time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC)

// spread is the step between the few distinct instants of a world: 7 hours, so that a world
// spans days, partial and whole (the day counters' segments), with ties still common.
const spread = 7 * time.Hour

// world is a random data set and the brute-force truth the indexes must agree with.
type world struct {
	users  []simulator.User
	orders []simulator.Order
}

func seedWorld(tb testing.TB, db *bolt.DB, nUsers, nOrders int, seed uint64) *world {
	tb.Helper()
	r := rand.New(rand.NewPCG(seed, seed))
	ctx := context.Background()
	l, err := db.NewLoader(ctx, true)
	require.NoError(tb, err)
	l.Batch = 500
	w := &world{}
	insts := []string{"ins_a", "ins_b"}
	for _, id := range insts {
		require.NoError(tb, l.Institution(simulator.Institution{ID: id, Name: id, Prices: map[string]decimal.Decimal{"AAPL": decimal.RequireFromString("190.12")}}))
	}
	for i := range nUsers {
		u := simulator.User{
			PlatformID:    fmt.Sprintf("usr_%05d", i),
			InstitutionID: insts[r.IntN(2)],
			UserAccountID: fmt.Sprintf("u%03d", r.IntN(nUsers*3)),
			// few distinct instants, so ties are common and the tie-break is exercised
			CreatedAt: base.Add(time.Duration(r.IntN(50)) * spread),
		}
		for _, p := range simulator.Products {
			if r.IntN(2) == 0 {
				u.Accounts = append(u.Accounts, simulator.Account{Product: p, KYCStatus: simulator.KYCStatuses[r.IntN(6)], Cash: decimal.New(int64(r.IntN(10000)), -2)})
			}
		}
		if slices.ContainsFunc(w.users, func(o simulator.User) bool {
			return o.InstitutionID == u.InstitutionID && o.UserAccountID == u.UserAccountID
		}) {
			u.UserAccountID += fmt.Sprintf("_%d", i)
		}
		w.users = append(w.users, u)
		require.NoError(tb, l.User(u))
	}
	for i := range nOrders {
		u := w.users[r.IntN(len(w.users))]
		o := simulator.Order{ID: fmt.Sprintf("ord_%05d", i), InstitutionID: u.InstitutionID, TransactionID: fmt.Sprintf("txn_%05d", i),
			PlatformID: u.PlatformID, UserAccountID: u.UserAccountID, Product: simulator.Products[r.IntN(4)],
			Side: []simulator.Side{simulator.SideBuy, simulator.SideSell}[r.IntN(2)], Symbol: "AAPL",
			Status: simulator.OrderStatuses[r.IntN(4)], PlacedAt: base.Add(time.Duration(r.IntN(40)) * spread)}
		w.orders = append(w.orders, o)
		require.NoError(tb, l.Transaction(simulator.Transaction{ID: o.TransactionID, InstitutionID: o.InstitutionID, OrderIDs: []string{o.ID}}, []simulator.Order{o}))
	}
	require.NoError(tb, l.Finish("tok"))
	return w
}

func ptr[T any](v T) *T { return &v }

// expectUsers is the brute-force answer to a user list query.
func (w *world) expectUsers(instID string, f simulator.UserFilter) ([]string, int) {
	var m []simulator.User
	for _, u := range w.users {
		if u.InstitutionID != instID || f.UserAccountID != nil && u.UserAccountID != *f.UserAccountID ||
			f.Product != nil && u.Account(*f.Product) == nil ||
			f.CreatedStart != nil && u.CreatedAt.Before(*f.CreatedStart) || f.CreatedEnd != nil && !u.CreatedAt.Before(*f.CreatedEnd) {
			continue
		}
		ok := true
		for p, st := range f.KYC {
			a := u.Account(p)
			ok = ok && a != nil && a.KYCStatus == st
		}
		if ok {
			m = append(m, u)
		}
	}
	slices.SortFunc(m, func(a, b simulator.User) int {
		c := a.CreatedAt.Compare(b.CreatedAt)
		if f.SortKey == simulator.SortUserAccountID {
			c = cmp.Compare(a.UserAccountID, b.UserAccountID)
		}
		return cmp.Or(c, cmp.Compare(a.PlatformID, b.PlatformID))
	})
	if f.Desc {
		slices.Reverse(m)
	}
	var ids []string
	for i := f.Offset; i < len(m) && i < f.Offset+f.Limit; i++ {
		ids = append(ids, m[i].PlatformID)
	}
	return ids, len(m)
}

func TestListUsersAgreesWithBruteForce(t *testing.T) {
	db := MustOpen(t)
	w := seedWorld(t, db, 300, 0, 1)
	r := rand.New(rand.NewPCG(2, 2))
	for i := range 2000 {
		f := simulator.UserFilter{Limit: 1 + r.IntN(30), Offset: r.IntN(120), Desc: r.IntN(2) == 0, SortKey: simulator.SortCreatedAt}
		if r.IntN(2) == 0 {
			f.SortKey = simulator.SortUserAccountID
		}
		if r.IntN(3) == 0 {
			f.Product = ptr(simulator.Products[r.IntN(4)])
		}
		for range r.IntN(3) {
			if f.KYC == nil {
				f.KYC = map[simulator.Product]simulator.KYCStatus{}
			}
			f.KYC[simulator.Products[r.IntN(4)]] = simulator.KYCStatuses[r.IntN(6)]
		}
		if r.IntN(3) == 0 {
			f.CreatedStart = ptr(base.Add(time.Duration(r.IntN(50)) * spread))
		}
		if r.IntN(3) == 0 {
			f.CreatedEnd = ptr(base.Add(time.Duration(r.IntN(50)) * spread))
		}
		if r.IntN(10) == 0 {
			f.UserAccountID = ptr(w.users[r.IntN(len(w.users))].UserAccountID)
		}
		inst := []string{"ins_a", "ins_b"}[r.IntN(2)]
		page, err := db.ListUsers(context.Background(), inst, f)
		require.NoError(t, err)
		want, total := w.expectUsers(inst, f)
		var got []string
		for _, u := range page.Users {
			got = append(got, u.PlatformID)
			require.Equal(t, inst, u.InstitutionID, "another institution's user leaked")
		}
		require.Equal(t, want, got, "query %d: %+v", i, f)
		require.Equal(t, total, page.Total, "query %d total: %+v", i, f)
		// The API's list reads items: the same users, as their whole records show them.
		items, err := db.ListUserItems(context.Background(), inst, f)
		require.NoError(t, err)
		require.Equal(t, page.Total, items.Total, "query %d items' total", i)
		wantItems := []simulator.UserItem{}
		for _, u := range page.Users {
			wantItems = append(wantItems, u.Item(page.Prices, []simulator.AccountItem{})) // nil and empty render alike
		}
		require.Equal(t, wantItems, items.AllItems(), "query %d items: %+v", i, f)
	}
}

// Pages deep into a list sorted by user_account_id start at the marks earlier walks left
// (pageReads.walks): asked again, in either order, they are the same; after a user is added
// anywhere in the list every later page moves by one, and the pages still agree with the
// brute force's.
func TestDeepUserPagesFollowWrites(t *testing.T) {
	ctx := context.Background()
	db := MustOpen(t)
	w := seedWorld(t, db, 700, 0, 5)
	r := rand.New(rand.NewPCG(5, 5))
	check := func(i int) {
		f := simulator.UserFilter{SortKey: simulator.SortUserAccountID, Limit: 1 + r.IntN(40), Offset: r.IntN(400), Desc: r.IntN(2) == 0}
		if r.IntN(4) == 0 {
			f.Product = ptr(simulator.Products[r.IntN(4)])
		}
		want, total := w.expectUsers("ins_a", f)
		page, err := db.ListUsers(ctx, "ins_a", f)
		require.NoError(t, err)
		got := []string(nil)
		for _, u := range page.Users {
			got = append(got, u.PlatformID)
		}
		require.Equal(t, want, got, "query %d: %+v", i, f)
		require.Equal(t, total, page.Total, "query %d total: %+v", i, f)
	}
	for i := range 600 {
		check(i)
		if i%40 == 39 {
			u := simulator.User{InstitutionID: "ins_a", UserAccountID: fmt.Sprintf("u%03d_new%d", r.IntN(2100), i), CreatedAt: base,
				Accounts: []simulator.Account{{Product: simulator.Products[r.IntN(4)], KYCStatus: simulator.KYCApproved, Cash: decimal.New(1, 0)}}}
			require.NoError(t, db.CreateUser(ctx, &u))
			w.users = append(w.users, u)
		}
	}
}

func TestListOrdersAgreesWithBruteForce(t *testing.T) {
	db := MustOpen(t)
	w := seedWorld(t, db, 50, 600, 3)
	r := rand.New(rand.NewPCG(4, 4))
	for i := range 2000 {
		f := simulator.OrderFilter{Limit: 1 + r.IntN(30), Offset: r.IntN(150), Desc: r.IntN(2) == 0}
		if r.IntN(3) == 0 {
			f.Product = ptr(simulator.Products[r.IntN(4)])
		}
		if r.IntN(3) == 0 {
			f.Status = ptr(simulator.OrderStatuses[r.IntN(4)])
		}
		if r.IntN(3) == 0 {
			f.Side = ptr([]simulator.Side{simulator.SideBuy, simulator.SideSell}[r.IntN(2)])
		}
		if r.IntN(4) == 0 {
			f.UserAccountID = ptr(w.users[r.IntN(len(w.users))].UserAccountID)
		}
		if r.IntN(3) == 0 {
			f.PlacedStart = ptr(base.Add(time.Duration(r.IntN(40)) * spread))
		}
		if r.IntN(3) == 0 {
			f.PlacedEnd = ptr(base.Add(time.Duration(r.IntN(40)) * spread))
		}
		inst := []string{"ins_a", "ins_b"}[r.IntN(2)]
		var m []simulator.Order
		for _, o := range w.orders {
			if o.InstitutionID == inst && (f.Product == nil || o.Product == *f.Product) && (f.Status == nil || o.Status == *f.Status) &&
				(f.Side == nil || o.Side == *f.Side) && (f.UserAccountID == nil || o.UserAccountID == *f.UserAccountID) &&
				(f.PlacedStart == nil || !o.PlacedAt.Before(*f.PlacedStart)) && (f.PlacedEnd == nil || o.PlacedAt.Before(*f.PlacedEnd)) {
				m = append(m, o)
			}
		}
		slices.SortFunc(m, func(a, b simulator.Order) int { return cmp.Or(a.PlacedAt.Compare(b.PlacedAt), cmp.Compare(a.ID, b.ID)) })
		if f.Desc {
			slices.Reverse(m)
		}
		var want, got []string
		for j := f.Offset; j < len(m) && j < f.Offset+f.Limit; j++ {
			want = append(want, m[j].ID)
		}
		page, err := db.ListOrders(context.Background(), inst, f)
		require.NoError(t, err)
		for _, o := range page.Orders {
			got = append(got, o.ID)
		}
		require.Equal(t, want, got, "query %d: %+v", i, f)
		require.Equal(t, len(m), page.Total, "query %d total %+v", i, f)
		items, err := db.ListOrderItems(context.Background(), inst, f)
		require.NoError(t, err)
		require.Equal(t, page.Total, items.Total, "query %d items' total", i)
		wantItems := []simulator.OrderItem{}
		for _, o := range page.Orders {
			wantItems = append(wantItems, o.Item())
		}
		require.Equal(t, wantItems, bolt.OrderItemsOf(t, items), "query %d items: %+v", i, f)
	}
}

func TestPagesNeverRepeatOrSkip(t *testing.T) {
	db := MustOpen(t)
	w := seedWorld(t, db, 200, 0, 5)
	for _, desc := range []bool{false, true} {
		seen := map[string]bool{}
		for off := 0; ; off += 7 {
			page, err := db.ListUsers(context.Background(), "ins_a", simulator.UserFilter{Limit: 7, Offset: off, Desc: desc, SortKey: simulator.SortCreatedAt})
			require.NoError(t, err)
			if len(page.Users) == 0 {
				break
			}
			for _, u := range page.Users {
				assert.False(t, seen[u.PlatformID], "repeated %s", u.PlatformID)
				seen[u.PlatformID] = true
			}
		}
		_, total := w.expectUsers("ins_a", simulator.UserFilter{Limit: 1})
		assert.Len(t, seen, total)
	}
}

func TestRevokeSessionsAndResolution(t *testing.T) {
	db := MustOpen(t)
	ctx := context.Background()
	l, err := db.NewLoader(ctx, true)
	require.NoError(t, err)
	core, dbp := "symitar", "q2"
	require.NoError(t, l.Institution(simulator.Institution{ID: "ins_full", Vendors: simulator.Vendors{Core: &core, DBP: &dbp}}))
	require.NoError(t, l.Institution(simulator.Institution{ID: "ins_none"}))
	require.NoError(t, l.User(simulator.User{PlatformID: "usr_1", InstitutionID: "ins_full", UserAccountID: "alice", LiveSessions: 3, CreatedAt: base}))
	require.NoError(t, l.User(simulator.User{PlatformID: "usr_2", InstitutionID: "ins_full", UserAccountID: "bob", LiveSessions: 1, CreatedAt: base}))
	require.NoError(t, l.User(simulator.User{PlatformID: "usr_3", InstitutionID: "ins_none", UserAccountID: "carol", LiveSessions: 1, CreatedAt: base}))
	d := "dbp-1"
	require.NoError(t, l.Member(simulator.Member{InstitutionID: "ins_full", CoreID: "M100", CoreIDType: simulator.CoreIDMemberNumber, DBPID: &d, UserIDs: []string{"usr_missing", "usr_1", "usr_2"}}))
	require.NoError(t, l.Member(simulator.Member{InstitutionID: "ins_full", CoreID: "M200", CoreIDType: simulator.CoreIDCIF, UserIDs: []string{"usr_missing"}}))
	require.NoError(t, l.Finish(""))

	v, err := db.UserDetail(ctx, "ins_full", "dbp-1", simulator.IDDBP)
	require.NoError(t, err)
	assert.Equal(t, "usr_1", v.PlatformID, "first account with a user record")
	assert.Equal(t, []simulator.IdentityRef{{ID: "M100", Type: "member_number"}}, v.CoreIDs)
	assert.Equal(t, []simulator.IdentityRef{{ID: "dbp-1", Type: "q2"}}, v.DBPIDs)
	_, err = db.UserDetail(ctx, "ins_none", "M100", simulator.IDCore)
	assert.Equal(t, simulator.EINVALID, simulator.ErrorCode(err))
	assert.Equal(t, "no vendor configured for user_account_id_type: core", simulator.ErrorMessage(err))
	_, err = db.UserDetail(ctx, "ins_full", "M200", simulator.IDCore)
	assert.True(t, simulator.IsNotFound(err), "member without user record")
	_, err = db.UserDetail(ctx, "ins_full", "usr_3", simulator.IDPlatform)
	assert.True(t, simulator.IsNotFound(err), "another institution's user")

	err = db.RevokeSessions(ctx, "ins_none", "usr_3", simulator.IDPlatform)
	assert.Equal(t, "no digital banking platform configured", simulator.ErrorMessage(err))
	err = db.RevokeSessions(ctx, "ins_full", "M999", simulator.IDCore)
	assert.Equal(t, "no member matches user_account_id", simulator.ErrorMessage(err))
	err = db.RevokeSessions(ctx, "ins_full", "M200", simulator.IDCore)
	assert.Equal(t, "no user record for this member", simulator.ErrorMessage(err))
	require.NoError(t, db.RevokeSessions(ctx, "ins_full", "M100", simulator.IDCore))
	for _, id := range []string{"usr_1", "usr_2"} {
		u, err := db.User(ctx, id)
		require.NoError(t, err)
		assert.Zero(t, u.LiveSessions, "%s sessions end", id)
	}
	require.NoError(t, db.RevokeSessions(ctx, "ins_full", "M100", simulator.IDCore), "no live sessions still 204")
	u, _ := db.User(ctx, "usr_3")
	assert.Equal(t, 1, u.LiveSessions, "other institution untouched")
}

// TestInstitutionCacheSeesPriceChanges: the read path caches institutions; every write to one
// (prices here) must be visible to the next read, including under concurrent readers.
// readWhile runs read over and over on a goroutine of its own (concurrent readers filling the
// caches) until the returned stop is called, which waits for it.
func readWhile(read func()) (stop func()) {
	quit, done := make(chan struct{}), make(chan struct{})
	go func() {
		defer close(done)
		for {
			select {
			case <-quit:
				return
			default:
				read()
			}
		}
	}()
	return func() { close(quit); <-done }
}

func TestInstitutionCacheSeesPriceChanges(t *testing.T) {
	db := MustOpen(t)
	ctx := context.Background()
	in, err := db.CreateInstitution(ctx, "C", simulator.Vendors{})
	require.NoError(t, err)
	stop := readWhile(func() { _, _ = db.ListUsers(ctx, in.ID, simulator.UserFilter{Limit: 1}) })
	for i := 1; i <= 200; i++ {
		p := decimal.NewFromInt(int64(i))
		_, err := db.SetPrices(ctx, in.ID, map[string]decimal.Decimal{"AAPL": p})
		require.NoError(t, err)
		page, err := db.ListUsers(ctx, in.ID, simulator.UserFilter{Limit: 1})
		require.NoError(t, err)
		require.True(t, page.Prices["AAPL"].Equal(p), "read %d after write %d", page.Prices["AAPL"].IntPart(), i)
	}
	stop()
}

// A filter no index covers is counted by walking, and the count is remembered for the store's
// state: paging the same list again stops at each page, and after a write that changes which
// users match, the total is the new one (a remembered count is never served stale).
func TestFilteredCountsFollowWrites(t *testing.T) {
	db := MustOpen(t)
	w := seedWorld(t, db, 300, 0, 6)
	ctx := context.Background()
	f := simulator.UserFilter{Product: ptr(simulator.ProductSecurities), KYC: map[simulator.Product]simulator.KYCStatus{simulator.ProductCrypto: simulator.KYCApproved},
		Limit: 5, SortKey: simulator.SortCreatedAt}
	check := func(step string) int {
		var total int
		for _, off := range []int{0, 3, 0, 7} { // the repeats are answered from the remembered count
			f.Offset = off
			page, err := db.ListUsers(ctx, "ins_a", f)
			require.NoError(t, err)
			want, n := w.expectUsers("ins_a", f)
			var got []string
			for _, u := range page.Users {
				got = append(got, u.PlatformID)
			}
			require.Equal(t, want, got, "%s, offset %d", step, off)
			require.Equal(t, n, page.Total, "%s, offset %d", step, off)
			total = n
		}
		return total
	}
	before := check("before")
	require.Positive(t, before)
	moved := 0
	for i := range w.users {
		u := &w.users[i]
		if u.InstitutionID != "ins_a" || u.Account(simulator.ProductSecurities) == nil {
			continue
		}
		if a := u.Account(simulator.ProductCrypto); a != nil && a.KYCStatus == simulator.KYCApproved {
			_, err := db.TransitionKYC(ctx, u.PlatformID, simulator.ProductCrypto, simulator.KYCClosed)
			require.NoError(t, err)
			a.KYCStatus = simulator.KYCClosed
			moved++
			require.Equal(t, before-moved, check(fmt.Sprintf("after %d moves", moved)))
			if moved == 3 {
				break
			}
		}
	}
	require.Equal(t, 3, moved, "the world has users to move")
}

// Get User Detail's view is kept for the store's state: a user asked for again is answered
// without a transaction (the same view), and any write after it — the user's KYC, the
// institution's prices — is seen by the next read, also with concurrent readers filling the
// cache while the writes commit.
func TestUserDetailViewsFollowWrites(t *testing.T) {
	db := MustOpen(t)
	w := seedWorld(t, db, 20, 0, 8)
	ctx := context.Background()
	u := w.users[0]
	detail := func() *simulator.UserView {
		v, err := db.UserDetail(ctx, u.InstitutionID, u.PlatformID, simulator.IDPlatform)
		require.NoError(t, err)
		return v
	}
	detail()
	kept := detail()
	require.Same(t, kept, detail(), "asked for again in the same state: the kept view")

	stop := readWhile(func() { _, _ = db.UserDetail(ctx, u.InstitutionID, u.PlatformID, simulator.IDPlatform) })
	moved := 0
	for i := 1; i <= 100; i++ {
		p := decimal.NewFromInt(int64(i))
		_, err := db.SetPrices(ctx, u.InstitutionID, map[string]decimal.Decimal{"AAPL": p})
		require.NoError(t, err)
		v := detail()
		require.True(t, v.Prices["AAPL"].Equal(p), "prices %s after write %d", v.Prices["AAPL"], i)
		if len(u.Accounts) > 0 {
			to := simulator.KYCApproved // then account_takeover and back: a cycle the state machine allows
			if v.Item.Accounts[0].KYCStatus == simulator.KYCApproved {
				to = simulator.KYCAccountTakeover
			}
			if _, err := db.TransitionKYC(ctx, u.PlatformID, u.Accounts[0].Product, to); err == nil {
				require.Equal(t, to, detail().Item.Accounts[0].KYCStatus, "KYC after write %d", i)
				moved++
			}
		}
	}
	stop()
	require.Positive(t, moved, "some KYC moves were allowed")
}

// An institution's lists answer in one read transaction that also finds the institution:
// ENOTFOUND for an unknown or deleted one, never the empty list a second transaction would
// read after the delete had removed the keys and subscriptions but not yet the institution.
func TestInstitutionListsOfAnUnknownInstitutionAreNotFound(t *testing.T) {
	db := MustOpen(t)
	ctx := context.Background()
	in, err := db.CreateInstitution(ctx, "gone", simulator.Vendors{})
	require.NoError(t, err)
	_, _, err = db.IssueKey(ctx, in.ID, simulator.Scopes, "")
	require.NoError(t, err)
	_, _, err = db.CreateSubscription(ctx, in.ID, simulator.EventKYC, "https://hooks.example/kyc", "v1")
	require.NoError(t, err)
	require.NoError(t, db.DeleteInstitution(ctx, in.ID))
	for _, id := range []string{in.ID, "ins_never"} {
		_, err := db.Keys(ctx, id)
		assert.True(t, simulator.IsNotFound(err), "Keys(%s): got %v, want ENOTFOUND", id, err)
		_, err = db.Subscriptions(ctx, id)
		assert.True(t, simulator.IsNotFound(err), "Subscriptions(%s): got %v, want ENOTFOUND", id, err)
		_, err = db.ListOrders(ctx, id, simulator.OrderFilter{Limit: 10})
		assert.True(t, simulator.IsNotFound(err), "ListOrders(%s): got %v, want ENOTFOUND", id, err)
		_, err = db.ListUsers(ctx, id, simulator.UserFilter{Limit: 10})
		assert.True(t, simulator.IsNotFound(err), "ListUsers(%s): got %v, want ENOTFOUND", id, err)
		_, err = db.ListOrders(ctx, id, simulator.OrderFilter{PlacedStart: &base, PlacedEnd: &base, Limit: 10})
		assert.True(t, simulator.IsNotFound(err), "ListOrders(%s) of an empty window: got %v, want ENOTFOUND", id, err)
		_, err = db.ListUsers(ctx, id, simulator.UserFilter{CreatedStart: &base, CreatedEnd: &base, Limit: 10})
		assert.True(t, simulator.IsNotFound(err), "ListUsers(%s) of an empty window: got %v, want ENOTFOUND", id, err)
	}
}

// A window that can hold nothing (start at or after end) is an empty page of a known
// institution.
func TestEmptyWindowIsAnEmptyPage(t *testing.T) {
	db := MustOpen(t)
	ctx := context.Background()
	w := seedWorld(t, db, 20, 40, 7)
	instID := w.users[0].InstitutionID
	end := base.Add(-time.Hour)
	orders, err := db.ListOrders(ctx, instID, simulator.OrderFilter{PlacedStart: &base, PlacedEnd: &end, Limit: 10})
	require.NoError(t, err)
	assert.Empty(t, orders.Orders)
	assert.Zero(t, orders.Total)
	users, err := db.ListUsers(ctx, instID, simulator.UserFilter{CreatedStart: &base, CreatedEnd: &end, Limit: 10})
	require.NoError(t, err)
	assert.Empty(t, users.Users)
	assert.Zero(t, users.Total)
}
