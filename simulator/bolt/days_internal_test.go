package bolt

import (
	"bytes"
	"context"
	"encoding/binary"
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/shopspring/decimal"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.etcd.io/bbolt"

	"github.com/partnersim/partnersim/simulator"
)

// thirtyUsers is a store of institution ins_a and its thirty users usr_00..usr_29 (u00..u29),
// created 17 hours apart, each with cash and AAPL to trade, on a frozen clock.
func thirtyUsers(t *testing.T) (*DB, *simulator.Clock) {
	t.Helper()
	clock := simulator.NewFrozenClock(time.Date(2025, 3, 1, 0, 0, 0, 0, time.UTC))
	db := tempStore(t, clock)
	l, err := db.NewLoader(context.Background(), true)
	require.NoError(t, err)
	require.NoError(t, l.Institution(simulator.Institution{ID: "ins_a", Prices: map[string]decimal.Decimal{"AAPL": decimal.New(19012, -2)},
		Fees: map[simulator.Product]simulator.FeeRule{simulator.ProductSecurities: {Rate: decimal.Zero, Minimum: decimal.Zero}}}))
	for i := range 30 {
		require.NoError(t, l.User(simulator.User{PlatformID: fmt.Sprintf("usr_%02d", i), InstitutionID: "ins_a", UserAccountID: fmt.Sprintf("u%02d", i),
			CreatedAt: clock.Now().Add(-time.Duration(i) * 17 * time.Hour),
			Accounts: []simulator.Account{{Product: simulator.ProductSecurities, KYCStatus: simulator.KYCApproved, Cash: decimal.New(1e6, 0),
				Holdings: []simulator.Holding{{Symbol: "AAPL", Quantity: decimal.New(1000, 0)}}}}}))
	}
	require.NoError(t, l.Finish("tok"))
	return db, clock
}

// The day counters stay true through the writes that move index entries (orders placed,
// filled and canceled; KYC moves): every list answered from them equals the same list answered
// by walking, as a store without them is read.
func TestDayCountersFollowWrites(t *testing.T) {
	ctx := context.Background()
	db, clock := thirtyUsers(t)

	r := rand.New(rand.NewPCG(9, 9))
	var txns []string
	for range 300 {
		clock.Advance(time.Duration(r.IntN(20)) * time.Hour)
		switch n := r.IntN(10); {
		case n < 6 || len(txns) == 0:
			notional := decimal.New(int64(10+r.IntN(100)), 0)
			side := []simulator.Side{simulator.SideBuy, simulator.SideSell}[r.IntN(2)]
			tx, _, err := db.PlaceOrder(ctx, simulator.OrderRequest{PlatformID: fmt.Sprintf("usr_%02d", r.IntN(30)), Product: simulator.ProductSecurities,
				Side: side, Symbol: "AAPL", Notional: &notional})
			if simulator.ErrorCode(err) == simulator.ECONFLICT {
				continue // a closed account
			}
			require.NoError(t, err)
			txns = append(txns, tx.ID)
		case n < 8:
			_, _, _, _ = db.FillTransaction(ctx, txns[r.IntN(len(txns))], nil)
		case n < 9:
			_, _, _ = db.EndTransaction(ctx, txns[r.IntN(len(txns))], simulator.OrderCanceled)
		default:
			_, _ = db.TransitionKYC(ctx, fmt.Sprintf("usr_%02d", r.IntN(30)), simulator.ProductSecurities,
				[]simulator.KYCStatus{simulator.KYCClosed, simulator.KYCAccountTakeover}[r.IntN(2)])
		}
	}

	setDays := func(on bool) {
		require.NoError(t, db.db.Update(func(tx *bbolt.Tx) error {
			if on {
				return tx.Bucket(bMeta).Put(metaDays, []byte("1"))
			}
			return tx.Bucket(bMeta).Delete(metaDays)
		}))
	}
	start, end := clock.Now().Add(-400*time.Hour), clock.Now()
	for i := range 400 {
		of := simulator.OrderFilter{Limit: 1 + r.IntN(40), Offset: r.IntN(200), Desc: r.IntN(2) == 0}
		if r.IntN(2) == 0 {
			of.Status = &simulator.OrderStatuses[r.IntN(4)]
		}
		if r.IntN(3) == 0 {
			t := start.Add(time.Duration(r.Int64N(int64(end.Sub(start)))))
			of.PlacedStart = &t
		}
		if r.IntN(3) == 0 {
			t := start.Add(time.Duration(r.Int64N(int64(end.Sub(start)))))
			of.PlacedEnd = &t
		}
		uf := simulator.UserFilter{Limit: 1 + r.IntN(10), Offset: r.IntN(30), Desc: r.IntN(2) == 0, SortKey: simulator.SortCreatedAt}
		if r.IntN(2) == 0 {
			uf.KYC = map[simulator.Product]simulator.KYCStatus{simulator.ProductSecurities: simulator.KYCStatuses[r.IntN(6)]}
		}
		if r.IntN(2) == 0 {
			t := clock.Now().Add(-time.Duration(r.IntN(30*17)) * time.Hour)
			uf.CreatedStart = &t
		}
		setDays(true)
		o1, err := db.ListOrders(ctx, "ins_a", of)
		require.NoError(t, err)
		u1, err := db.ListUsers(ctx, "ins_a", uf)
		require.NoError(t, err)
		setDays(false)
		o2, err := db.ListOrders(ctx, "ins_a", of)
		require.NoError(t, err)
		u2, err := db.ListUsers(ctx, "ins_a", uf)
		require.NoError(t, err)
		require.Equal(t, o2.Total, o1.Total, "query %d: %+v", i, of)
		require.Equal(t, len(o2.Orders), len(o1.Orders), "query %d: %+v", i, of)
		for j := range o1.Orders {
			require.Equal(t, o2.Orders[j].ID, o1.Orders[j].ID, "query %d: %+v", i, of)
		}
		// The API's page, read from the index entries or the records its walk copied, with
		// the counters: the same orders, as their items show them.
		setDays(true)
		oi, err := db.ListOrderItems(ctx, "ins_a", of)
		require.NoError(t, err)
		require.Equal(t, o2.Total, oi.Total, "query %d: %+v", i, of)
		items := OrderItemsOf(t, oi)
		require.Equal(t, len(o2.Orders), len(items), "query %d: %+v", i, of)
		for j, it := range items {
			want := o2.Orders[j].Item()
			assert.Equal(t, want.ID, it.ID, "query %d: %+v", i, of)
			assert.Equal(t, want.UserAccountID, it.UserAccountID, "query %d: %+v", i, of)
			assert.True(t, want.PlacedAt.Equal(it.PlacedAt), "query %d: %+v: placed_at %v, want %v", i, of, it.PlacedAt, want.PlacedAt)
		}
		oi.Release()
		require.Equal(t, u2.Total, u1.Total, "query %d: %+v", i, uf)
		require.Equal(t, len(u2.Users), len(u1.Users), "query %d: %+v", i, uf)
		for j := range u1.Users {
			require.Equal(t, u2.Users[j].PlatformID, u1.Users[j].PlatformID, "query %d: %+v", i, uf)
		}
	}
}

// hourStore is a store of 1,500 users and 3,200 orders, 3,000 of them loaded over span from
// start (over four days: about 30 an hour; over six hours: about 8 a minute, 500 an hour, an
// hour of the order list at a million users) and 200 placed and moved after the load, over
// about four days more; and mark, which sets or clears the store's marks of minute, hour and
// day counters (a store written before them), a write each.
func hourStore(t testing.TB, span time.Duration) (db *DB, start time.Time, clock *simulator.Clock, mark func(minutes, hours, days bool)) {
	t.Helper()
	ctx := context.Background()
	start = time.Date(2025, 3, 1, 0, 0, 0, 0, time.UTC)
	clock = simulator.NewFrozenClock(start.Add(span))
	db = tempStore(t, clock)
	l, err := db.NewLoader(ctx, true)
	require.NoError(t, err)
	require.NoError(t, l.Institution(simulator.Institution{ID: "ins_a", Prices: map[string]decimal.Decimal{"AAPL": decimal.New(19012, -2)},
		Fees: map[simulator.Product]simulator.FeeRule{simulator.ProductSecurities: {Rate: decimal.Zero, Minimum: decimal.Zero}}}))
	r := rand.New(rand.NewPCG(34, 34))
	at := func() time.Time { return start.Add(time.Duration(r.Int64N(int64(span)))) }
	const users = 1500
	for i := range users {
		u := simulator.User{PlatformID: fmt.Sprintf("usr_%04d", i), InstitutionID: "ins_a", UserAccountID: fmt.Sprintf("u%04d", i), CreatedAt: at(),
			Accounts: []simulator.Account{{Product: simulator.ProductSecurities, KYCStatus: simulator.KYCApproved, Cash: decimal.New(1e6, 0)}}}
		require.NoError(t, l.User(u))
		var orders []simulator.Order
		for j := range 2 {
			orders = append(orders, simulator.Order{ID: fmt.Sprintf("ord_%04d_%d", i, j), InstitutionID: "ins_a", UserAccountID: u.UserAccountID,
				Product: simulator.ProductSecurities, Side: simulator.SideBuy, Status: simulator.OrderStatuses[r.IntN(4)], Symbol: "AAPL",
				Quantity: decimal.New(1, 0), PlacedAt: at()})
		}
		require.NoError(t, l.Transaction(simulator.Transaction{ID: fmt.Sprintf("txn_%04d", i), InstitutionID: "ins_a",
			OrderIDs: []string{orders[0].ID, orders[1].ID}}, orders))
	}
	require.NoError(t, l.Finish("tok"))
	for range 200 { // orders placed and moved after the load, counted by the writes
		clock.Advance(time.Duration(r.IntN(60)) * time.Minute)
		notional := decimal.New(int64(10+r.IntN(100)), 0)
		tx, _, err := db.PlaceOrder(ctx, simulator.OrderRequest{PlatformID: fmt.Sprintf("usr_%04d", r.IntN(users)), Product: simulator.ProductSecurities,
			Side: simulator.SideBuy, Symbol: "AAPL", Notional: &notional})
		require.NoError(t, err)
		if r.IntN(2) == 0 {
			_, _, _ = db.EndTransaction(ctx, tx.ID, simulator.OrderCanceled)
		}
	}

	mark = func(minutes, hours, days bool) {
		require.NoError(t, db.db.Update(func(tx *bbolt.Tx) error {
			for _, m := range []struct {
				key []byte
				on  bool
			}{{metaMinutes, minutes}, {metaHours, hours}, {metaDays, days}} {
				var err error
				if m.on {
					err = tx.Bucket(bMeta).Put(m.key, []byte("1"))
				} else {
					err = tx.Bucket(bMeta).Delete(m.key)
				}
				if err != nil {
					return err
				}
			}
			return nil
		}))
	}
	return db, start, clock, mark
}

// A page far into an institution's whole list starts in the hour, then the minute, its
// counters find, and a created_at / placed_at range counts its partial days by their hours and
// its partial hours by their minutes: on a store of hundreds of entries a day, and on one of
// hundreds an hour, each list read with minute counters (once, then with the counters read
// whole) equals the same list read by hours alone (a store written before minute counters: no
// metaMinutes), by days alone (no metaHours) and by walking (before day counters), for pages
// at every depth in either order, ranges with bounds at any instant, and entries added and
// moved after the load.
func TestTimeCountersFindPagesInTheirHourAndMinute(t *testing.T) {
	for _, store := range []struct {
		name string
		span time.Duration
	}{{"thirty an hour", 96 * time.Hour}, {"five hundred an hour", 6 * time.Hour}} {
		t.Run(store.name, func(t *testing.T) {
			ctx := context.Background()
			db, start, clock, mark := hourStore(t, store.span)
			r := rand.New(rand.NewPCG(35, 35))
			const users = 1500
			end := clock.Now().Add(time.Hour)
			instant := func() *time.Time {
				to := end // three in four within the load's span, the rest anywhere
				if r.IntN(4) > 0 {
					to = start.Add(store.span + time.Hour)
				}
				t := start.Add(-time.Hour + time.Duration(r.Int64N(int64(to.Sub(start)+time.Hour))))
				switch r.IntN(8) {
				case 0:
					t = t.Truncate(time.Hour)
				case 1:
					t = t.Truncate(time.Minute)
				}
				return &t
			}
			for i := range 300 {
				of := simulator.OrderFilter{Limit: 1 + r.IntN(60), Offset: r.IntN(3400), Desc: r.IntN(2) == 0}
				uf := simulator.UserFilter{Limit: 1 + r.IntN(60), Offset: r.IntN(users), Desc: r.IntN(2) == 0}
				if r.IntN(3) == 0 {
					of.PlacedStart, uf.CreatedStart = instant(), instant()
					of.Offset, uf.Offset = r.IntN(300), r.IntN(300)
				}
				if r.IntN(3) == 0 {
					of.PlacedEnd, uf.CreatedEnd = instant(), instant()
				}
				type answer struct {
					orders []string
					users  []string
					totals [2]int
				}
				read := func() answer {
					o, err := db.ListOrderItems(ctx, "ins_a", of)
					require.NoError(t, err)
					u, err := db.ListUserItems(ctx, "ins_a", uf)
					require.NoError(t, err)
					a := answer{orders: []string{}, users: []string{}, totals: [2]int{o.Total, u.Total}}
					for _, o := range OrderItemsOf(t, o) {
						a.orders = append(a.orders, strings.Clone(o.ID))
					}
					o.Release()
					for _, u := range u.AllItems() {
						a.users = append(a.users, u.UserAccountID)
					}
					return a
				}
				mark(true, true, true)
				byMinutes := read()
				byMinutesAgain := read() // the day and hour counters now read whole (pageReads)
				mark(false, true, true)
				byHours := read()
				mark(false, false, true)
				byDays := read()
				mark(false, false, false)
				walked := read()
				require.Equal(t, walked, byDays, "query %d: %+v / %+v", i, of, uf)
				require.Equal(t, walked, byHours, "query %d: %+v / %+v", i, of, uf)
				require.Equal(t, walked, byMinutes, "query %d: %+v / %+v", i, of, uf)
				require.Equal(t, walked, byMinutesAgain, "query %d: %+v / %+v", i, of, uf)
			}
		})
	}
}

// A placed_at range's partial hours are counted from their minute counters, not walked: on a
// store of hundreds of orders an hour, counters of the range's first hour that overstate it
// (they never should) show in its total_records.
func TestPartialHoursAreCountedByTheirMinutes(t *testing.T) {
	ctx := context.Background()
	db, start, _, mark := hourStore(t, 6*time.Hour)
	mark(true, true, true)
	// From near the middle of its hour (a timeKey's hours begin at 12:43 past UTC's), where
	// walking its shorter side would step over a quarter of the hour's orders.
	t0 := start.Add(2 * time.Hour)
	from := t0.Add(-time.Duration(binary.BigEndian.Uint64(timeKey(t0))%uint64(time.Hour)) + 27*time.Minute + 22*time.Second)
	to := start.Add(5*time.Hour + 41*time.Minute + 50*time.Second)
	total := func() int {
		page, err := db.ListOrderItems(ctx, "ins_a", simulator.OrderFilter{Limit: 10, PlacedStart: &from, PlacedEnd: &to})
		require.NoError(t, err)
		page.Release()
		return page.Total
	}
	want := total()
	mark(false, false, false)
	require.Equal(t, want, total(), "counted by minutes and walked")

	all := cat(inst("ins_a"), []byte{kindAll, sortCreated})
	h := hourOf(timeKey(from))
	require.NoError(t, db.db.Update(func(tx *bbolt.Tx) error {
		b := tx.Bucket(bCounts)
		for m := h * 60; m < h*60+60; m++ {
			k := minuteCountKey(bOrderIndex, all, m)
			if v := b.Get(k); v != nil {
				if err := b.Put(k, u64(binary.BigEndian.Uint64(v)+5)); err != nil {
					return err
				}
			}
		}
		return nil
	}))
	mark(true, true, true)
	for round := range 2 { // the counters walked, then the day and hour counters read whole
		assert.NotEqual(t, want, total(), "round %d: the partial hour's minutes were not read", round)
	}
	mark(false, true, true)
	assert.Equal(t, want, total(), "a store without minute counters walks its partial hours")
}

// The first page of a placed_at / created_at range counts the partial hour at the side it is
// walked from as the walk passes it (dayRange.pageStart): its items and total_records equal
// those of the range walked (a store without day counters), for bounds at any instant, pages
// of one to a hundred and fifty entries (shorter and longer than the part, than the range) in
// either order, read once and again (the hours' counters then read whole: pageReads).
func TestFirstPageCountsItsStartHour(t *testing.T) {
	ctx := context.Background()
	db, start, clock, mark := hourStore(t, 96*time.Hour)
	r := rand.New(rand.NewPCG(36, 36))
	end := clock.Now().Add(time.Hour)
	instant := func() *time.Time {
		t := start.Add(-time.Hour + time.Duration(r.Int64N(int64(end.Sub(start)+time.Hour))))
		return &t
	}
	type answer struct {
		orders, users []string
		totals        [2]int
	}
	type query struct {
		of simulator.OrderFilter
		uf simulator.UserFilter
	}
	var qs []query
	for range 400 {
		q := query{of: simulator.OrderFilter{Limit: 1 + r.IntN(150), Desc: r.IntN(2) == 0, PlacedStart: instant()},
			uf: simulator.UserFilter{Limit: 1 + r.IntN(150), Desc: r.IntN(2) == 0, CreatedStart: instant()}}
		if r.IntN(3) > 0 {
			span := time.Duration(r.Int64N(int64(30 * time.Hour)))
			if r.IntN(3) == 0 {
				span = time.Duration(r.Int64N(int64(2 * time.Hour)))
			}
			oe, ue := q.of.PlacedStart.Add(span), q.uf.CreatedStart.Add(span)
			q.of.PlacedEnd, q.uf.CreatedEnd = &oe, &ue
		}
		qs = append(qs, q)
	}
	read := func(q query) answer {
		o, err := db.ListOrderItems(ctx, "ins_a", q.of)
		require.NoError(t, err)
		u, err := db.ListUserItems(ctx, "ins_a", q.uf)
		require.NoError(t, err)
		a := answer{orders: []string{}, users: []string{}, totals: [2]int{o.Total, u.Total}}
		for _, o := range OrderItemsOf(t, o) {
			a.orders = append(a.orders, strings.Clone(o.ID)) // the page's bytes, given back below
		}
		o.Release()
		for _, u := range u.AllItems() {
			a.users = append(a.users, u.UserAccountID)
		}
		return a
	}
	mark(false, false, false)
	walked := make([]answer, len(qs))
	for i, q := range qs {
		walked[i] = read(q)
	}
	mark(true, true, true)
	for round := range 2 {
		for i, q := range qs {
			require.Equal(t, walked[i], read(q), "round %d, query %d: %+v / %+v", round, i, q.of, q.uf)
		}
	}
}

// A page the counters place inside its range is walked without comparing each key with the
// range's bounds (pageCounted); counters that overstate the index (they never should) send the
// walk past the range's end, and the page is then walked again comparing each key: the same
// users as a walk that compares, never another list's entries.
func TestCountedWalkPastItsRangeIsWalkedAgain(t *testing.T) {
	ctx := context.Background()
	db, _ := thirtyUsers(t)
	ids := func(desc bool) []string {
		page, err := db.ListUserItems(ctx, "ins_a", simulator.UserFilter{Limit: 100, Desc: desc})
		require.NoError(t, err)
		var out []string
		for _, u := range page.AllItems() {
			out = append(out, u.UserAccountID)
		}
		return out
	}
	want := map[bool][]string{false: ids(false), true: ids(true)}
	require.Len(t, want[false], 30)

	all := cat(inst("ins_a"), []byte{kindAll, sortCreated})
	require.NoError(t, db.db.Update(func(tx *bbolt.Tx) error { return tx.Bucket(bCounts).Put(countKey(bUserIndex, all), u64(35)) }))
	for _, desc := range []bool{false, true} {
		assert.Equal(t, want[desc], ids(desc), "desc %v: got the users of a walk past the list's end", desc)
	}
}

// A range's first page whose counters overstate it (they never should) walks past the range
// with the partial hour at its start still being counted (pageStart); the page is then walked
// again comparing each key, and the part, left uncounted by the walk given up, is counted once
// on its own: the users of a walk that compares, and a total of the counters' days plus the
// part's one user, neither dropped nor counted twice.
func TestCountedFirstPagePastItsRangeCountsItsPartOnce(t *testing.T) {
	ctx := context.Background()
	db, clock := thirtyUsers(t)
	at := func(i int) time.Time { return clock.Now().Add(-time.Duration(i) * 17 * time.Hour) } // u<i>'s created_at, on the hour
	// u20..u10, descending; the walk starts in u10's hour, a part of it ([its start, hi)).
	start, end := at(20), at(10).Add(30*time.Minute)
	f := simulator.UserFilter{Limit: 13, Desc: true, CreatedStart: &start, CreatedEnd: &end}
	var want []string
	for i := 10; i <= 20; i++ {
		want = append(want, fmt.Sprintf("u%02d", i))
	}

	all := cat(inst("ins_a"), []byte{kindAll, sortCreated})
	day := dayCountKey(bUserIndex, all, timeKey(at(15)))
	require.NoError(t, db.db.Update(func(tx *bbolt.Tx) error { // u15's day, whole inside the range: 1 → 6
		return tx.Bucket(bCounts).Put(day, u64(6))
	}))
	for round := range 2 { // the counters walked, then read whole (pageReads.dayTable)
		page, err := db.ListUserItems(ctx, "ins_a", f)
		require.NoError(t, err)
		var got []string
		for _, u := range page.AllItems() {
			got = append(got, u.UserAccountID)
		}
		assert.Equal(t, want, got, "round %d: got the users of a walk past the range", round)
		assert.Equal(t, 11+5, page.Total, "round %d: total_records counts the part's user once", round)
	}
}

// isPrefixEnd, which tells a whole index's end from a range's without making the end, agrees
// with prefixEnd, for prefixes ending in 0xff bytes or made of them, and keys of any length.
func TestIsPrefixEndIsPrefixEnd(t *testing.T) {
	prefixes := [][]byte{{'a'}, {'a', 0, kindAll, sortCreated}, {'a', 0xff}, {'a', 0xfe, 0xff, 0xff}, {0xff}, {0xff, 0xff}, {}}
	keys := [][]byte{nil, {}, {'a'}, {'b'}, {'a', 1}, {'a', 0, kindAll, sortCreated + 1}, {'a', 0, kindAll, sortCreated, 0}, {'b', 0}, {'a', 0xff}, {'a', 0xff, 0}}
	for _, prefix := range prefixes {
		end := prefixEnd(prefix)
		keys := append(slices.Clone(keys), end, append(slices.Clone(end), 0), cat(prefix, []byte{1}))
		if len(end) > 0 {
			keys = append(keys, end[:len(end)-1])
		}
		for _, k := range keys {
			assert.Equal(t, bytes.Equal(k, end), isPrefixEnd(k, prefix), "prefix %x, key %x", prefix, k)
		}
	}
}

// BenchmarkWeekPages reads first pages of placed_at ranges on a store of 500 orders an hour (an
// hour of the order list at a million users): random bounds inside the load's six hours, read
// with the minute counters and, as a store written before them is, by hours alone.
//
//	go test -run '^$' -bench WeekPages ./simulator/bolt/
func BenchmarkWeekPages(b *testing.B) {
	db, start, _, mark := hourStore(b, 6*time.Hour)
	ctx := context.Background()
	for _, by := range []struct {
		name    string
		minutes bool
	}{{"hours", false}, {"minutes", true}} {
		b.Run(by.name, func(b *testing.B) {
			mark(by.minutes, true, true)
			r := rand.New(rand.NewPCG(1, 1))
			for b.Loop() {
				from := start.Add(time.Duration(r.Int64N(int64(2 * time.Hour))))
				to := from.Add(time.Duration(r.Int64N(int64(4*time.Hour))) + time.Minute)
				page, err := db.ListOrderItems(ctx, "ins_a", simulator.OrderFilter{Limit: 25, Desc: r.IntN(2) == 0, PlacedStart: &from, PlacedEnd: &to})
				if err != nil {
					b.Fatal(err)
				}
				page.Release()
			}
		})
	}
}
