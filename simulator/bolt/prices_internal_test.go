package bolt

import (
	"context"
	"fmt"
	"math/rand/v2"
	"path/filepath"
	"testing"
	"time"

	"github.com/shopspring/decimal"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.etcd.io/bbolt"

	"github.com/partnersim/partnersim/simulator"
)

// A holding valued through the price table sums exactly what simulator.CentsSum.AddHolding sums
// at the prices' map, for tables of every size (probes that collide and wrap), symbols that
// are missing and prices beyond 18 digits (which the table declines).
func TestPriceTableMatchesPrices(t *testing.T) {
	r := rand.New(rand.NewPCG(34, 3))
	for _, n := range []int{0, 1, 3, 16, 17, 100, 1000} {
		prices := map[string]decimal.Decimal{}
		for i := range n {
			p := decimal.New(r.Int64N(1e9), -int32(r.IntN(6)))
			if r.IntN(20) == 0 {
				p = decimal.RequireFromString("1234567890123456789.5") // 20 digits
			}
			prices[fmt.Sprintf("S%d", i)] = p
		}
		table := newPriceTable(prices)
		for i := range n + 50 { // the last 50 have no price
			sym := fmt.Sprintf("S%d", i)
			c, exp := r.Int64N(1e12), -int32(r.IntN(9))
			var got, want simulator.CentsSum
			ok := table.addHolding(&got, nil, []byte(sym), c, exp)
			want.AddHolding(c, exp, prices[sym])
			wantCents, wantOK := want.Cents()
			if p, found := prices[sym]; found && p.NumDigits() > 18 {
				assert.False(t, ok, "%s at %s: declined", sym, p)
				assert.False(t, wantOK, "%s at %s: the map's sum is spoilt too", sym, p)
				continue
			}
			gotCents, gotOK := got.Cents()
			if assert.True(t, ok, "%s of %d prices", sym, n) {
				assert.Equal(t, wantOK, gotOK, "%s of %d prices", sym, n)
				assert.Equal(t, wantCents, gotCents, "%s of %d prices: %d×10^%d", sym, n, c, exp)
			}
		}
	}
}

// valueVersions counts a store's user index values that keep their accounts' values (tag 3),
// by the price version they keep them at.
func valueVersions(t *testing.T, db *DB) map[uint64]int {
	t.Helper()
	out := map[uint64]int{}
	require.NoError(t, db.db.View(func(tx *bbolt.Tx) error {
		return tx.Bucket(bUserIndex).ForEach(func(k, v []byte) error {
			n := summaryUAIDLen(v, true)
			head := userSummaryLen + uvarintLen(uint64(n)) + n
			if v[head] == 3 {
				version, _ := uvarintAt(v, head+1)
				out[version]++
			}
			return nil
		})
	}))
	return out
}

// A user index value keeps its accounts' values at the version of its institution's prices it
// was written at (tag 3), and a page reads them as stored only while the prices are still at
// that version: after a price changes (SetPrices), a restart, a snapshot restored, every page is
// what the whole records show at the current prices. The version moves only when a price's
// value does, and survives a restart and a snapshot with the values written at it.
func TestUserValuesFollowPriceVersions(t *testing.T) {
	ctx := context.Background()
	db := tempStore(t, nil)
	r := rand.New(rand.NewPCG(34, 12))
	symbols := []string{"AAPL", "VTI", "BTC"}
	prices := map[string]decimal.Decimal{"AAPL": decimal.New(19012, -2), "VTI": decimal.New(25005, -2), "BTC": decimal.New(650012, -2)}
	l, err := db.NewLoader(ctx, true)
	require.NoError(t, err)
	require.NoError(t, l.Institution(simulator.Institution{ID: "ins_a", Name: "a", Prices: prices}))
	at := time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC)
	entries := 0
	for i := range 120 {
		u := simulator.User{PlatformID: fmt.Sprintf("usr_%03d", i), InstitutionID: "ins_a", UserAccountID: fmt.Sprintf("u%03d", i), CreatedAt: at.Add(time.Duration(i) * time.Hour)}
		for p := range 1 + r.IntN(3) {
			a := simulator.Account{Product: simulator.Products[p], KYCStatus: simulator.KYCApproved, Cash: decimal.New(r.Int64N(1e7), -2)}
			for range 1 + r.IntN(3) {
				a.Holdings = append(a.Holdings, simulator.Holding{Symbol: symbols[r.IntN(3)], Quantity: decimal.New(r.Int64N(1e7), -int32(2+r.IntN(7)))})
			}
			u.Accounts = append(u.Accounts, a)
		}
		entries += 2 + 4*len(u.Accounts)
		require.NoError(t, l.User(u))
	}
	require.NoError(t, l.Finish("tok"))

	check := func(version uint64, what string) {
		t.Helper()
		for _, f := range []simulator.UserFilter{{Limit: 100}, {Limit: 100, Offset: 50, Desc: true}, {Limit: 30, Product: ptrTo(simulator.Products[1])}} {
			page, err := db.ListUserItems(ctx, "ins_a", f)
			require.NoError(t, err)
			require.NotNil(t, page.Rows, "%s: read as rows", what)
			whole, err := db.ListUsers(ctx, "ins_a", f)
			require.NoError(t, err)
			want := []simulator.UserItem{}
			for _, u := range whole.Users {
				want = append(want, u.Item(whole.Prices, []simulator.AccountItem{}))
			}
			require.Equal(t, want, page.AllItems(), "%s: %+v", what, f)
		}
		require.NoError(t, db.db.View(func(tx *bbolt.Tx) error {
			require.Equal(t, version, priceVersion(tx, "ins_a"), "%s: the price version", what)
			return nil
		}))
	}
	setPrice := func(sym string, p decimal.Decimal) {
		t.Helper()
		_, err := db.SetPrices(ctx, "ins_a", map[string]decimal.Decimal{sym: p})
		require.NoError(t, err)
	}
	rewrite := func(pid string) {
		t.Helper()
		require.NoError(t, db.update(ctx, func(w *writeTx) error {
			u, err := getUser(w.Tx, "ins_a", pid)
			if err != nil {
				return err
			}
			was := *u
			u.LiveSessions++
			return w.putUser(&was, u)
		}))
	}

	check(0, "as loaded")
	require.Equal(t, map[uint64]int{0: entries}, valueVersions(t, db), "every value kept at the loaded prices")
	setPrice("AAPL", decimal.New(19100, -2))
	check(1, "a price changed")
	setPrice("AAPL", decimal.New(191000, -3))
	check(1, "the same price again, written otherwise")
	rewrite("usr_007")
	versions := valueVersions(t, db)
	require.Equal(t, entries, versions[0]+versions[1])
	require.Positive(t, versions[1], "a user rewritten keeps its values at the current version")
	check(1, "a user rewritten")

	snap := filepath.Join(t.TempDir(), "s.snapshot")
	require.NoError(t, db.SaveSnapshot(ctx, snap))
	setPrice("BTC", decimal.New(640012, -2))
	rewrite("usr_008")
	check(2, "another price changed")
	db = reopen(t, db, nil)
	check(2, "after a restart")
	require.NoError(t, db.RestoreSnapshot(ctx, snap))
	check(1, "the snapshot restored")
	setPrice("VTI", decimal.New(1, 0))
	check(2, "a price changed after the restore")
}

// A write values a user at the prices and price version its own transaction sees, even when the
// read cache still holds the institution as an earlier state had it (as it may for a moment
// after a restore or a reset, whose versions start again).
func TestUserValuedAtItsTransactionsPrices(t *testing.T) {
	ctx := context.Background()
	db := tempStore(t, nil)
	l, err := db.NewLoader(ctx, true)
	require.NoError(t, err)
	require.NoError(t, l.Institution(simulator.Institution{ID: "ins_a", Name: "a", Prices: map[string]decimal.Decimal{"AAPL": decimal.New(19012, -2)}}))
	u := simulator.User{PlatformID: "usr_1", InstitutionID: "ins_a", UserAccountID: "u1", CreatedAt: time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC),
		Accounts: []simulator.Account{{Product: simulator.ProductSecurities, KYCStatus: simulator.KYCApproved, Cash: decimal.New(100, 0),
			Holdings: []simulator.Holding{{Symbol: "AAPL", Quantity: decimal.New(3, 0)}}}}}
	require.NoError(t, l.User(u))
	require.NoError(t, l.Finish("tok"))
	require.NoError(t, db.view(ctx, func(tx *bbolt.Tx) error { _, err := db.readPriced(tx, "ins_a"); return err })) // cached
	// Another state's institution behind the cache's back: other prices at version 5.
	later := map[string]decimal.Decimal{"AAPL": decimal.New(2, 0)}
	require.NoError(t, db.db.Update(func(tx *bbolt.Tx) error {
		raw, err := encodeRecord(&simulator.Institution{ID: "ins_a", Name: "a", Prices: later})
		require.NoError(t, err)
		require.NoError(t, tx.Bucket(bInstitutions).Put([]byte("ins_a"), raw))
		return tx.Bucket(bPriceVersions).Put([]byte("ins_a"), []byte{5})
	}))
	require.NoError(t, db.update(ctx, func(w *writeTx) error {
		was := u
		u.LiveSessions++
		return w.putUser(&was, &u)
	}))
	require.NoError(t, db.db.View(func(tx *bbolt.Tx) error {
		v := tx.Bucket(bUserIndex).Get(cat(inst("ins_a"), []byte{kindAll, sortCreated}, timeKey(u.CreatedAt), []byte(u.PlatformID)))
		require.Equal(t, userIndexValue(&u, true, &pricedInstitution{prices: newPriceTable(later), version: 5}), v, "valued at the transaction's prices and version")
		return nil
	}))
}
