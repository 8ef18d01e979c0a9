package bolt

import (
	"bytes"
	"context"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.etcd.io/bbolt"

	"github.com/partnersim/partnersim/simulator"
)

// A page of orders read with their strings cut from one arena (orderItems,
// decoder.orderItemStrings) holds each order's item as the whole order gives it — orders whose
// product, side or status an item knows beside ones it does not (read on their own), and
// records of the JSON form, in any mix on one page.
func TestOrderItemsMatchWholeOrders(t *testing.T) {
	g := recordGen{rand.New(rand.NewPCG(34, 4))}
	db := tempStore(t, nil)
	const instID = "ins_page"
	var raws, keys [][]byte
	require.NoError(t, db.db.Update(func(tx *bbolt.Tx) error {
		b := tx.Bucket(bOrders)
		for i := range 400 {
			o := g.order()
			o.InstitutionID = instID
			if g.r.IntN(8) > 0 {
				o.Product = simulator.Products[g.r.IntN(len(simulator.Products))]
				o.Side = orderSides[g.r.IntN(2)]
				o.Status = simulator.OrderStatuses[g.r.IntN(len(simulator.OrderStatuses))]
			}
			raw, err := encodeRecord(o)
			if err != nil {
				return err
			}
			if i%50 == 7 { // a record of the JSON form
				if raw, err = json.Marshal(o); err != nil {
					return err
				}
			}
			key := cat(orderKeyPrefix(o), []byte(o.ID), []byte{byte(i >> 8), byte(i)}) // unique
			if err := b.Put(key, raw); err != nil {
				return err
			}
			raws, keys = append(raws, raw), append(keys, key)
		}
		return nil
	}))
	order := make([]int, len(keys)) // the page in key order, as an index gives it
	for i := range order {
		order[i] = i
	}
	slices.SortFunc(order, func(a, b int) int { return bytes.Compare(keys[a], keys[b]) })
	require.NoError(t, db.db.View(func(tx *bbolt.Tx) error {
		for start := 0; start < len(order); start += 25 {
			page := order[start:min(start+25, len(order))]
			pageKeys := make([][]byte, len(page))
			for i, k := range page {
				pageKeys[i] = keys[k]
			}
			items, err := orderItems(tx, pageKeys, instID)
			require.NoError(t, err)
			for i, k := range page {
				var whole simulator.Order
				require.NoError(t, decodeRecord(raws[k], &whole))
				want, got := whole.Item(), items[i]
				for _, a := range []*simulator.Amount{&want.Quantity, &want.Notional, &want.Fee, &got.Quantity, &got.Notional, &got.Fee} {
					d := a.Decimal() // either form of the same decimal
					*a = simulator.Amount{Big: &d}
				}
				require.Equal(t, want, got, "order %d of the page at %d", i, start)
			}
		}
		for _, raw := range raws[:50] {
			if raw[0] != recordV1 {
				continue
			}
			for n := 1; n < len(raw); n += 1 + len(raw)/20 {
				var it simulator.OrderItem
				var ends [4]int
				d := decoder{b: raw[1:n]}
				d.orderItemStrings(&it, nil, &ends)
				require.Error(t, d.err, "cut at %d bytes", n)
			}
		}
		_, err := orderItems(tx, keys[:1], "ins_other")
		require.Error(t, err, "another institution's order: a stale index")
		return nil
	}))
}

// An order's list item read from a covered index entry as a page's walk copies it
// (orderItemValue, decoder.coveredOrder) is the item of the order decoded whole — products,
// sides and statuses an item knows and ones it does not, every amount size, a non-UTF-8 id
// (kept as the record keeps it), placed_at as its instant — and a cut entry is an error.
func TestCoveredOrderItemMatchesWholeOrder(t *testing.T) {
	g := recordGen{rand.New(rand.NewPCG(34, 7))}
	for i := range 3000 {
		o := g.order()
		if g.r.IntN(4) > 0 {
			o.Product = simulator.Products[g.r.IntN(len(simulator.Products))]
			o.Side = orderSides[g.r.IntN(2)]
			o.Status = simulator.OrderStatuses[g.r.IntN(len(simulator.OrderStatuses))]
		}
		if o.PlacedAt.Before(simulator.FirstStorableTime) { // a stored order's is never
			o.PlacedAt = time.Date(2025, 1, 2, 3, 4, 5, 6, time.FixedZone("", -3600))
		}
		if i%10 == 3 {
			o.ID = "ord_\xff" + o.ID
		}
		rest := cat(timeKey(o.PlacedAt), []byte(o.ID))
		entry := append(append(binary.AppendUvarint(nil, uint64(len(rest))), rest...), orderItemValue(o)...)
		raw, err := encodeRecord(o)
		require.NoError(t, err)
		var whole simulator.Order
		require.NoError(t, decodeRecord(raw, &whole))
		items, err := coveredOrderItems([][]byte{entry})
		require.NoError(t, err, "order %d", i)
		want := whole.Item()
		want.PlacedAt = want.PlacedAt.UTC()
		require.Equal(t, sameForm([]simulator.OrderItem{want}), sameForm(items), "order %d", i)
		require.Equal(t, orderSummary(o)[:orderSummaryLen], orderItemValue(o)[:orderSummaryLen], "a filter reads either form alike")
		for n := 1; n < len(entry); n += 1 + len(entry)/20 {
			_, err := coveredOrderItems([][]byte{entry[:n]})
			require.Error(t, err, "order %d cut at %d bytes", i, n)
		}
	}
}

// A store written before order index values carried list items (no metaOrderItems, each value
// the summary) answers every order page as one written since: the same items, read from its
// records; an order written to it keeps the form it has. A store written since writes covered
// values to every index but the index of all orders, and its pages after orders change are
// those of the whole orders.
func TestOrderListsOfAStoreWrittenBeforeItems(t *testing.T) {
	ctx := context.Background()
	db := tempStore(t, nil)
	g := recordGen{rand.New(rand.NewPCG(34, 8))}
	l, err := db.NewLoader(ctx, true)
	require.NoError(t, err)
	require.NoError(t, l.Institution(simulator.Institution{ID: "ins_a", Name: "a"}))
	at := time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC)
	var orders []*simulator.Order
	for i := range 400 {
		o := g.order()
		o.ID, o.InstitutionID, o.UserAccountID = fmt.Sprintf("ord_%04d", i), "ins_a", fmt.Sprintf("u%02d", (i*7)%30)
		if i%40 != 5 { // a few of unknown product, side or status
			o.Product = simulator.Products[g.r.IntN(len(simulator.Products))]
			o.Side = orderSides[g.r.IntN(2)]
			o.Status = simulator.OrderStatuses[g.r.IntN(len(simulator.OrderStatuses))]
		}
		o.PlacedAt = at.Add(time.Duration((i*37)%500) * time.Hour)
		orders = append(orders, o)
		require.NoError(t, l.Transaction(simulator.Transaction{ID: "txn_" + o.ID, InstitutionID: "ins_a", OrderIDs: []string{o.ID}}, []simulator.Order{*o}))
	}
	require.NoError(t, l.Finish("tok"))
	r := rand.New(rand.NewPCG(34, 9))
	queries := make([]simulator.OrderFilter, 300)
	for i := range queries {
		f := &queries[i]
		*f = simulator.OrderFilter{Limit: 1 + r.IntN(40), Offset: r.IntN(100), Desc: r.IntN(2) == 0}
		for _, set := range []func(){ // each filter in one query of three
			func() { f.Status = ptrTo(simulator.OrderStatuses[r.IntN(4)]) },
			func() { f.Product = ptrTo(simulator.Products[r.IntN(4)]) },
			func() { f.Side = ptrTo(orderSides[r.IntN(2)]) },
			func() { f.UserAccountID = ptrTo(fmt.Sprintf("u%02d", r.IntN(31))) },
			func() { f.PlacedStart = ptrTo(at.Add(time.Duration(r.IntN(500)) * time.Hour)) },
		} {
			if r.IntN(3) == 0 {
				set()
			}
		}
	}
	// pages reads every query's page and holds it to the whole orders' items.
	pages := func() []*simulator.OrderItemPage {
		out := make([]*simulator.OrderItemPage, len(queries))
		for i, f := range queries {
			whole, err := db.ListOrders(ctx, "ins_a", f)
			require.NoError(t, err)
			want := make([]simulator.OrderItem, len(whole.Orders))
			for j, o := range whole.Orders {
				want[j] = o.Item()
			}
			out[i], err = db.ListOrderItems(ctx, "ins_a", f)
			require.NoError(t, err)
			require.Equal(t, whole.Total, out[i].Total, "query %d: %+v", i, f)
			require.Equal(t, sameForm(want), sameForm(out[i].Items), "query %d: %+v", i, f)
		}
		return out
	}
	entry := func(o *simulator.Order, kind ...byte) []byte {
		var v []byte
		require.NoError(t, db.db.View(func(tx *bbolt.Tx) error {
			prefix := cat(inst("ins_a"), kind, []byte{sortCreated})
			v = bytes.Clone(tx.Bucket(bOrderIndex).Get(cat(prefix, timeKey(o.PlacedAt), []byte(o.ID))))
			return nil
		}))
		return v
	}
	o := orders[7]
	require.Equal(t, orderItemValue(o), entry(o, kindStatus, byte(simulator.OrderStatusIndex(o.Status))), "a covered entry")
	require.Equal(t, orderSummary(o), entry(o, kindAll), "the index of all orders is never covered")
	pages()

	// A write to a covered store: a status changes, and with it completed_at and the entries.
	change := func(o *simulator.Order) {
		require.NoError(t, db.update(ctx, func(w *writeTx) error {
			was := *o
			o.Status, o.CompletedAt, o.Fee = simulator.OrderCompleted, ptrTo(o.PlacedAt.Add(time.Minute)), o.Fee.Add(o.Fee)
			if was.Status == simulator.OrderCompleted {
				o.Status = simulator.OrderCanceled
			}
			return w.putOrder(&was, o)
		}))
	}
	change(orders[11])
	covered := pages()

	// The same store as written before: no mark, each value the summary alone.
	require.NoError(t, db.db.Update(func(tx *bbolt.Tx) error {
		require.NoError(t, tx.Bucket(bMeta).Delete(metaOrderItems))
		b := tx.Bucket(bOrderIndex)
		var keys, summaries [][]byte
		c := b.Cursor()
		for k, v := c.First(); k != nil; k, v = c.Next() {
			if coveredKind(k[len(inst("ins_a"))]) {
				d := decoder{b: v[orderSummaryLen:]}
				keys, summaries = append(keys, bytes.Clone(k)), append(summaries, cat(v[:orderSummaryLen], d.raw(d.uvarint())))
			}
		}
		for i, k := range keys {
			require.NoError(t, b.Put(k, summaries[i]))
		}
		return nil
	}))
	require.Equal(t, covered, pages(), "the records read as the index was")
	change(orders[7])
	require.Equal(t, orderSummary(o), entry(o, kindStatus, byte(simulator.OrderStatusIndex(o.Status))), "a write keeps the form the store has")
	pages()
}

// sameForm returns a copy of items with each amount as a decimal: either form of the same
// decimal (simulator.Amount) compares alike.
func sameForm(items []simulator.OrderItem) []simulator.OrderItem {
	out := slices.Clone(items)
	for i := range out {
		for _, a := range []*simulator.Amount{&out[i].Quantity, &out[i].Notional, &out[i].Fee} {
			d := a.Decimal()
			*a = simulator.Amount{Big: &d}
		}
	}
	return out
}

// planOrders walks the index covering the most of a query's status, product and side, the one
// with fewer entries on a tie, and says when a filter is left for the walk.
func TestPlanOrdersPicksTheNarrowestIndex(t *testing.T) {
	ctx := context.Background()
	db := tempStore(t, nil)
	l, err := db.NewLoader(ctx, true)
	require.NoError(t, err)
	require.NoError(t, l.Institution(simulator.Institution{ID: "ins_a", Name: "a"}))
	sec, cry := simulator.ProductSecurities, simulator.ProductCrypto
	buy, sell := simulator.SideBuy, simulator.SideSell
	done, pending := simulator.OrderCompleted, simulator.OrderPending
	kinds := []struct {
		n       int
		product simulator.Product
		side    simulator.Side
		status  simulator.OrderStatus
	}{{8, sec, buy, done}, {1, cry, sell, done}, {2, cry, sell, pending}}
	for i, k := range kinds {
		for j := range k.n {
			id := fmt.Sprintf("ord_%d_%d", i, j)
			o := simulator.Order{ID: id, InstitutionID: "ins_a", UserAccountID: "u1", Product: k.product, Side: k.side, Status: k.status, PlacedAt: time.Date(2025, 1, 2, 0, 0, 0, 0, time.UTC)}
			require.NoError(t, l.Transaction(simulator.Transaction{ID: "txn_" + id, InstitutionID: "ins_a", OrderIDs: []string{id}}, []simulator.Order{o}))
		}
	}
	require.NoError(t, l.Finish("tok"))
	si, pi := func(s simulator.OrderStatus) byte { return byte(simulator.OrderStatusIndex(s)) }, func(p simulator.Product) byte { return byte(simulator.ProductIndex(p)) }
	for _, c := range []struct {
		f        simulator.OrderFilter
		filter   []byte
		residual bool
	}{
		{simulator.OrderFilter{}, []byte{kindAll}, false},
		{simulator.OrderFilter{Side: &sell}, []byte{kindAll}, true},
		{simulator.OrderFilter{Status: &done}, []byte{kindStatus, si(done)}, false},
		{simulator.OrderFilter{Status: &done, Product: &cry}, []byte{kindProduct, pi(cry)}, true},       // 3 against 9
		{simulator.OrderFilter{Status: &pending, Product: &sec}, []byte{kindStatus, si(pending)}, true}, // 2 against 8
		{simulator.OrderFilter{Status: &done, Side: &buy}, []byte{kindStatSide, si(done), 0}, false},
		{simulator.OrderFilter{Product: &cry, Side: &sell}, []byte{kindProdSide, pi(cry), 1}, false},
		{simulator.OrderFilter{Status: &done, Product: &cry, Side: &sell}, []byte{kindStatSide, si(done), 1}, true},   // 1 against 3
		{simulator.OrderFilter{Status: &pending, Product: &sec, Side: &sell}, []byte{kindProdSide, pi(sec), 1}, true}, // 0 against 2
		{simulator.OrderFilter{UserAccountID: ptrTo("u1"), Side: &sell}, []byte("Uu1\x00"), true},
	} {
		require.NoError(t, db.db.View(func(tx *bbolt.Tx) error {
			filter, residual := planOrders(tx, "ins_a", c.f)
			assert.Equal(t, c.filter, filter, "%+v", c.f)
			assert.Equal(t, c.residual, residual, "%+v", c.f)
			return nil
		}))
	}
}
