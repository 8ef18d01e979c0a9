package bolt

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/shopspring/decimal"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.etcd.io/bbolt"

	"github.com/partnersim/partnersim/simulator"
)

// placedOrders is thirtyUsers with 240 orders placed an hour apart: pages of covered index
// entries (a status, a product and side, a user) and of order_records' copies (a placed_at
// window), both read as they are rendered from their walk's room (pageRoom).
func placedOrders(t *testing.T) (*DB, time.Time) {
	t.Helper()
	db, clock := thirtyUsers(t)
	ctx := context.Background()
	start := clock.Now()
	for i := range 240 {
		clock.Advance(time.Hour)
		notional := decimal.New(int64(10+i), 0)
		side := []simulator.Side{simulator.SideBuy, simulator.SideSell}[i%2]
		_, _, err := db.PlaceOrder(ctx, simulator.OrderRequest{PlatformID: fmt.Sprintf("usr_%02d", i%30), Product: simulator.ProductSecurities,
			Side: side, Symbol: "AAPL", Notional: &notional})
		require.NoError(t, err)
	}
	return db, start
}

// roomQueries are order pages of each form a page reads after its transaction: covered
// entries (status; a user) and records' copies (a placed_at window, either order).
func roomQueries(start time.Time) []simulator.OrderFilter {
	from, to := start.Add(30*time.Hour+20*time.Minute), start.Add(150*time.Hour)
	uaid := "u03"
	return []simulator.OrderFilter{
		{Status: &simulator.OrderStatuses[0], Limit: 50},
		{Status: &simulator.OrderStatuses[0], Limit: 25, Offset: 100, Desc: true},
		{UserAccountID: &uaid, Limit: 10},
		{PlacedStart: &from, PlacedEnd: &to, Limit: 100},
		{PlacedStart: &from, PlacedEnd: &to, Limit: 40, Offset: 70, Desc: true},
	}
}

// orderIDs reads a page whole: its items' ids, user_account_ids and placed_at.
func orderIDs(t *testing.T, page *simulator.OrderItemPage) []string {
	t.Helper()
	var out []string
	require.NoError(t, eachItem(page, func(o *simulator.OrderItem) {
		out = append(out, o.ID+"/"+o.UserAccountID+"/"+o.PlacedAt.String())
	}))
	return out
}

// readEach reads the page of each query once, and releases it: the items each page reads
// (orderIDs).
func readEach(t *testing.T, db *DB, qs []simulator.OrderFilter) [][]string {
	t.Helper()
	want := make([][]string, len(qs))
	for i, q := range qs {
		page, err := db.ListOrderItems(context.Background(), "ins_a", q)
		require.NoError(t, err)
		require.NotNil(t, page.Room, "query %d: a page read as it is rendered holds its room", i)
		want[i] = orderIDs(t, page)
		require.NotEmpty(t, want[i], "query %d", i)
		page.Release()
	}
	return want
}

// A page read as it is rendered reads its items from its walk's room until its last reader
// releases it: pages taken while another is unread, and the rooms released between them
// taken again, never change that page's items. A room given back before its page was read (a
// release in the store, or a room shared by two pages) fails this test: the page read later
// shows another page's orders.
func TestOrderPagesKeepTheirRoomUntilReleased(t *testing.T) {
	ctx := context.Background()
	db, start := placedOrders(t)
	qs := roomQueries(start)
	want := readEach(t, db, qs)
	// Every page taken before any is read; each read and released in turn while the others
	// wait, and a page of each query taken again (the released rooms) before the next is read.
	pages := make([]*simulator.OrderItemPage, len(qs))
	for i, q := range qs {
		var err error
		pages[i], err = db.ListOrderItems(ctx, "ins_a", q)
		require.NoError(t, err)
	}
	for i := range qs {
		assert.Equal(t, want[i], orderIDs(t, pages[i]), "query %d, read after the pages before it were released", i)
		pages[i].Release()
		for j, q := range qs {
			again, err := db.ListOrderItems(ctx, "ins_a", q)
			require.NoError(t, err)
			assert.Equal(t, want[j], orderIDs(t, again), "query %d", j)
			again.Release()
		}
	}
}

// Pages read concurrently each read their own room (the race detector watches the bytes): a
// room given back while its page is still rendered would be written by another page's walk.
func TestOrderPagesReadConcurrently(t *testing.T) {
	ctx := context.Background()
	db, start := placedOrders(t)
	qs := roomQueries(start)
	want := readEach(t, db, qs)
	readConcurrently(t, want, func(i int) ([]string, error) {
		page, err := db.ListOrderItems(ctx, "ins_a", qs[i])
		if err != nil {
			return nil, err
		}
		defer page.Release()
		var got []string
		err = eachItem(page, func(o *simulator.OrderItem) {
			got = append(got, o.ID+"/"+o.UserAccountID+"/"+o.PlacedAt.String())
		})
		return got, err
	})
}

// readConcurrently reads want's pages from four goroutines at once, forty each, page i by
// read(i), and checks that each reads as want[i].
func readConcurrently(t *testing.T, want [][]string, read func(i int) ([]string, error)) {
	t.Helper()
	var wg sync.WaitGroup
	for g := range 4 {
		wg.Go(func() {
			for n := range 40 {
				i := (g + n) % len(want)
				got, err := read(i)
				if !assert.NoError(t, err, "query %d", i) {
					return
				}
				assert.Equal(t, want[i], got, "query %d", i)
			}
		})
	}
	wg.Wait()
}

// A page released reads no item — Each says it was released rather than give another page's
// bytes — and a second Release does nothing. A page that holds its items, or one never
// released (the control plane's, a test's), is read as before.
func TestOrderPageReleased(t *testing.T) {
	ctx := context.Background()
	db, start := placedOrders(t)
	q := roomQueries(start)[0]
	page, err := db.ListOrderItems(ctx, "ins_a", q)
	require.NoError(t, err)
	require.NotEmpty(t, orderIDs(t, page))
	page.Release()
	page.Release()
	err = eachItem(page, func(*simulator.OrderItem) { t.Error("an item read after release") })
	assert.Equal(t, simulator.EINTERNAL, simulator.ErrorCode(err), "got %v", err)

	held := &simulator.OrderItemPage{Items: []simulator.OrderItem{{ID: "ord_1"}}}
	held.Release()
	var ids []string
	require.NoError(t, eachItem(held, func(o *simulator.OrderItem) { ids = append(ids, o.ID) }))
	assert.Equal(t, []string{"ord_1"}, ids)
}

// A page whose last reader releases it takes its walk's room — the page's ids and the arena
// its entries are copied into — from the pages released before: released pages allocate at
// least two fewer times a page than pages never released, whose rooms are made anew.
func TestOrderPageRoomIsReused(t *testing.T) {
	if raceOn {
		t.Skip("a -race build's sync.Pool drops what is put back")
	}
	ctx := context.Background()
	db, start := placedOrders(t)
	for i, q := range roomQueries(start) {
		read := func(release bool) {
			page, err := db.ListOrderItems(ctx, "ins_a", q)
			if err != nil {
				t.Fatal(err)
			}
			if err := eachItem(page, func(*simulator.OrderItem) {}); err != nil {
				t.Fatal(err)
			}
			if release {
				page.Release()
			}
		}
		kept := testing.AllocsPerRun(50, func() { read(false) })
		released := testing.AllocsPerRun(50, func() { read(true) })
		assert.LessOrEqual(t, released, kept-2, "query %d: allocations a page released %v, never released %v", i, released, kept)
	}
}

// A user page's keys are read in its transaction: its walk's room goes back when the page is
// made, and a page made after reads the same users.
func TestUserPagesReadInTheirTransaction(t *testing.T) {
	ctx := context.Background()
	db, _ := thirtyUsers(t)
	read := func(f simulator.UserFilter) []string {
		page, err := db.ListUserItems(ctx, "ins_a", f)
		require.NoError(t, err)
		var out []string
		for _, u := range page.AllItems() {
			out = append(out, u.UserAccountID)
		}
		return out
	}
	fs := []simulator.UserFilter{{Limit: 10}, {Limit: 7, Offset: 12, Desc: true}, {Limit: 5, SortKey: simulator.SortUserAccountID, Offset: 3}}
	want := make([][]string, len(fs))
	for i, f := range fs {
		want[i] = read(f)
		require.NotEmpty(t, want[i])
	}
	readConcurrently(t, want, func(i int) ([]string, error) {
		page, err := db.ListUserItems(ctx, "ins_a", fs[i])
		if err != nil {
			return nil, err
		}
		var got []string
		for _, u := range page.AllItems() {
			got = append(got, u.UserAccountID)
		}
		return got, nil
	})
}

// A walk from its range's start counts the part of the range before bound as it passes it, and
// steps on past its page to bound at most extra entries (walkPart): done and exact when it got
// there, or at the bucket's end; not done when the page and the steps allowed ended first, or
// when the counted walk went past its range (counters that overstate it) and the page was
// walked again comparing each key: its caller counts the part then (pageStart;
// TestCountedFirstPagePastItsRangeCountsItsPartOnce). The page is the same either way.
func TestWalkCountsItsStartPart(t *testing.T) {
	db := tempStore(t, nil)
	bucket := []byte("t")
	key := func(i int) []byte { return fmt.Appendf(nil, "k%03d", i) }
	require.NoError(t, db.db.Update(func(tx *bbolt.Tx) error {
		b, err := tx.CreateBucket(bucket)
		if err != nil {
			return err
		}
		for i := range 100 {
			if err := b.Put(key(i), []byte{1}); err != nil {
				return err
			}
		}
		return nil
	}))
	keyOf := func(dst, k, _ []byte) []byte { return append(dst, k...) }
	for _, c := range []struct {
		lo, hi, bound int // keys k000..k099; hi 100 is past the last
		desc          bool
		limit, extra  int
		n             int
		done          bool
	}{
		{0, 100, 30, false, 10, 20, 30, true}, // steps on 20 past the page
		{0, 100, 30, false, 10, 19, 0, false}, // one step short
		{0, 100, 30, false, 40, 0, 30, true},  // the page passes it
		{0, 100, 70, true, 10, 20, 30, true},  // descending: [k070, k100)
		{0, 100, 70, true, 5, 10, 0, false},
		{90, 100, 100, false, 5, 10, 10, true}, // to the bucket's end
		{10, 20, 15, false, 10, 0, 5, true},    // a page of the whole range
		{10, 20, 15, true, 3, 2, 5, true},      // [k015, k020) descending
		{10, 20, 10, false, 3, 100, 0, true},   // an empty part
		{50, 60, 55, false, 12, 100, 0, false}, // a page past the range: walked again, the part left to its caller
		{50, 60, 53, true, 12, 100, 0, false},
	} {
		require.NoError(t, db.db.View(func(tx *bbolt.Tx) error {
			room := takePageRoom()
			defer room.Release()
			w := walkPart{bound: key(c.bound), extra: c.extra}
			ids, err := pageCounted(context.Background(), tx.Bucket(bucket), key(c.lo), key(c.hi), c.desc, 0, c.limit, keyOf, room, &w)
			require.NoError(t, err)
			assert.Equal(t, c.done, w.done, "%+v", c)
			if c.done {
				assert.Equal(t, c.n, w.n, "%+v", c)
			}
			var want [][]byte
			for i := range min(c.limit, c.hi-c.lo) {
				if c.desc {
					want = append(want, key(c.hi-1-i))
				} else {
					want = append(want, key(c.lo+i))
				}
			}
			assert.Equal(t, want, ids, "%+v", c)
			return nil
		}))
	}
}
