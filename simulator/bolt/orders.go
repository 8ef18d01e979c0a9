package bolt

import (
	"context"
	"encoding/binary"
	"fmt"
	"slices"
	"sync"
	"unsafe"

	"go.etcd.io/bbolt"

	"github.com/partnersim/partnersim/simulator"
)

// orderSummary is the value of every order index entry of a store without metaOrderItems, and
// of the index of all orders in every store: the product, side and status bytes every filter
// reads, then the user_account_id.
func orderSummary(o *simulator.Order) []byte {
	return cat(orderSummaryHead(o), []byte(o.UserAccountID))
}

func orderSummaryHead(o *simulator.Order) []byte {
	return []byte{byte(simulator.ProductIndex(o.Product)), sideByte(o.Side), byte(simulator.OrderStatusIndex(o.Status))}
}

// orderSummaryLen is the length of the part every order index value starts with and every
// filter reads: the product, side and status bytes.
const orderSummaryLen = 3

// metaOrderItems marks a store whose order index values carry what an order's list item shows
// (orderItemValue), but those of the index of all orders (coveredKind): every store emptied or
// created since they do. A filtered page of such a store is read from its index walk alone —
// its orders lie far apart in order_records (a user's, a status's, a product's and side's), and
// each was reached by a descent from the root and decoded there. A store written before keeps
// the summary alone (orderSummary) and is read from its records, as it always was; writers keep
// the form the store has.
var metaOrderItems = []byte("order_items")

// coversOrders reports whether the store's order index values carry the list items.
func coversOrders(tx *bbolt.Tx) bool { return tx.Bucket(bMeta).Get(metaOrderItems) != nil }

// coversOrders reports whether the store written keeps list items in its order index values
// (metaOrderItems). A build's spools always do: a build writes into an emptied store.
func (w *writeTx) coversOrders() bool { return w.sink != nil || coversOrders(w.Tx) }

// metaOrderPlain marks a store whose covered order index values say, in their tag
// (orderItemTail's bit plainTag), when the order's id, user_account_id, symbol and recurring
// order id all need no JSON escaping (simulator.PlainJSON), so that a page renders them without
// checking each again: every store created or emptied since they do. A store written before
// has no entry with the bit, its pages check the strings as they always did, and its writers
// keep it so (a binary of the format before would refuse an entry with it).
var metaOrderPlain = []byte("order_plain")

// marksPlain reports whether the store written notes plain strings in its covered order
// values (metaOrderPlain). A build's spools always do: a build writes into an emptied store.
func (w *writeTx) marksPlain() bool {
	return w.sink != nil || w.Tx.Bucket(bMeta).Get(metaOrderPlain) != nil
}

// coveredKind reports whether the entries of an order index of kind carry list items in a store
// that covers orders. The index of all orders does not: it lists the orders in order_records'
// own order (both by placed_at, then id), so a page of it steps from one record to the next,
// and a copy of every order there would grow the store by a sixth of what covering costs.
func coveredKind(kind byte) bool { return kind != kindAll }

// orderItemValue is the value of a covered order index entry: the summary's bytes
// (orderSummaryLen), the user_account_id's length and the user_account_id, then the rest of
// what a list item shows and the entry's key does not (encoder.orderItemTail; the key holds
// placed_at and the order id); marks: the store notes plain strings (metaOrderPlain).
func orderItemValue(o *simulator.Order, marks bool) []byte {
	e := encoder{b: make([]byte, 0, 64)}
	e.b = append(e.b, orderSummaryHead(o)...)
	e.str(o.UserAccountID)
	e.orderItemTail(o, marks)
	return e.b
}

// sideByte is s's position in simulator.Sides as an order's summary and index keys keep it; a
// side the list does not name is kept at the first one's.
func sideByte(s simulator.Side) byte { return byte(max(simulator.SideIndex(s), 0)) }

// orderIndexEntries returns (prefix, rest) of every index entry of an order.
func orderIndexEntries(o *simulator.Order) [][2][]byte {
	var out [6][2][]byte
	return orderIndexEntriesIn(&out, o)
}

// orderIndexEntriesIn is orderIndexEntries in out (on the caller's stack). Their bytes lie in
// one allocation, each part capped to its own length: a build makes them for every order, and
// a slice each (and one for every part of each) was a tenth of the bytes a build allocates
// (decisions D17).
func orderIndexEntriesIn(out *[6][2][]byte, o *simulator.Order) [][2][]byte {
	product, status, side := byte(simulator.ProductIndex(o.Product)), byte(simulator.OrderStatusIndex(o.Status)), sideByte(o.Side)
	filters := [6][3]byte{{kindAll}, {kindUser}, {kindProduct, product}, {kindStatus, status},
		{kindStatSide, status, side}, {kindProdSide, product, side}}
	lens := [6]int{1, 1, 2, 2, 3, 3}
	inLen := len(o.InstitutionID) + 1
	b := make([]byte, 0, 8+len(o.ID)+6*(inLen+2)+14+len(o.UserAccountID)+1)
	b = appendTimeKey(b, o.PlacedAt)
	b = append(b, o.ID...)
	rest := b[:len(b):len(b)]
	for i, f := range filters {
		at := len(b)
		b = appendInst(b, o.InstitutionID)
		b = append(b, f[:lens[i]]...)
		if f[0] == kindUser {
			b = append(append(b, o.UserAccountID...), 0)
		}
		b = append(b, sortCreated)
		out[i] = [2][]byte{b[at:len(b):len(b)], rest}
	}
	return out[:]
}

// putOrder writes an order and keeps its indexes; old is the stored version or nil.
func (w *writeTx) putOrder(old, o *simulator.Order) error {
	var was []byte
	var olds [][2][]byte
	if old != nil {
		was, olds = orderKeyPrefix(old), orderIndexEntries(old)
	}
	var entries [6][2][]byte
	summed, covered := orderIndexEntriesIn(&entries, o), [][2][]byte(nil)
	if w.coversOrders() {
		kind := len(o.InstitutionID) + 1 // after the institution and its separator
		summed, covered = partition(summed, func(e [2][]byte) bool { return !coveredKind(e[0][kind]) })
	}
	if err := w.reindex(bOrderIndex, olds, summed, orderSummary(o)); err != nil {
		return err
	}
	if len(covered) > 0 {
		if err := w.reindex(bOrderIndex, nil, covered, orderItemValue(o, w.marksPlain())); err != nil {
			return err
		}
	}
	return orderRecords.put(w, o.ID, was, orderKeyPrefix(o), o)
}

// partition splits entries into those keep reports and the others, each in the order given,
// by reordering entries in place: a build puts every order through it, and appending to two
// new slices was an eighth of the bytes a build allocates (decisions D17).
func partition(entries [][2][]byte, keep func([2][]byte) bool) (kept, others [][2][]byte) {
	k := 0
	for i, e := range entries {
		if keep(e) {
			copy(entries[k+1:i+1], entries[k:i])
			entries[k] = e
			k++
		}
	}
	return entries[:k:k], entries[k:]
}

// getOrder reads an order of institution instID; another institution's order does not exist.
func getOrder(tx *bbolt.Tx, instID, id string) (*simulator.Order, error) {
	return getClustered[simulator.Order](tx, orderRecords, instID, id)
}

func getTransaction(tx *bbolt.Tx, instID, id string) (*simulator.Transaction, []*simulator.Order, error) {
	var t simulator.Transaction
	if err := getRecord(tx, bTransactions, []byte(id), &t, "transaction not found"); err != nil {
		return nil, nil, err
	}
	if t.InstitutionID != instID {
		return nil, nil, simulator.Errorf(simulator.ENOTFOUND, "transaction not found")
	}
	orders := make([]*simulator.Order, 0, len(t.OrderIDs))
	for _, id := range t.OrderIDs {
		o, err := getOrder(tx, instID, id)
		if err != nil {
			return nil, nil, fmt.Errorf("transaction %s names missing order %s: %w", t.ID, id, err)
		}
		orders = append(orders, o)
	}
	return &t, orders, nil
}

// Transaction returns a transaction of the institution with its orders.
func (s *DB) Transaction(ctx context.Context, instID, id string) (*simulator.Transaction, []*simulator.Order, error) {
	var (
		t      *simulator.Transaction
		orders []*simulator.Order
	)
	err := s.view(ctx, func(tx *bbolt.Tx) (err error) {
		t, orders, err = getTransaction(tx, instID, id)
		return err
	})
	return t, orders, err
}

// ListOrders answers Get Order List (decisions D6) with whole orders (the control plane's list;
// the API's is ListOrderItems): sorted by placed_at then order id, from the narrowest index
// (user, else status, else product, else all); ENOTFOUND when the institution is unknown, an
// empty page when the placed_at window matches nothing.
func (s *DB) ListOrders(ctx context.Context, instID string, f simulator.OrderFilter) (*simulator.OrderPage, error) {
	page := &simulator.OrderPage{Orders: []*simulator.Order{}}
	room := takePageRoom() // the keys are read in the transaction: given back after it
	defer room.Release()
	return orNil(page, s.listOrders(ctx, instID, f, false, room, &page.Total, func(tx *bbolt.Tx, keys [][]byte, _ orderForm) (err error) {
		page.Orders, err = pageRecords(tx, bOrders, keys, instID, func(o *simulator.Order) string { return o.InstitutionID }, "order")
		return err
	}))
}

// ListOrderItems answers Get Order List as ListOrders does, each order as its list item shows
// it: read from the index entries the page's walk found when they carry it, or from the
// records a walk of order_records found (a page of the index of all orders), one at a time as
// the page is rendered (coveredOrders, recordOrders), else decoded from its record
// (orderItems). A page read as it is rendered holds the room its walk copied those bytes into
// (pageRoom) until its last reader releases it (simulator.OrderItemPage.Release); one that
// is never released leaves its room to the collector.
func (s *DB) ListOrderItems(ctx context.Context, instID string, f simulator.OrderFilter) (*simulator.OrderItemPage, error) {
	l := &orderItemPage{page: simulator.OrderItemPage{Items: []simulator.OrderItem{}}}
	page := &l.page
	room := takePageRoom()
	err := s.listOrders(ctx, instID, f, true, room, &page.Total, l.read(instID))
	if err != nil || page.Read == nil { // nothing read after the transaction: the room goes back now
		room.Release()
		return orNil(page, err)
	}
	page.Room = room
	return page, nil
}

// read is listOrders' reader of the page's walk for l: the page reads its items as it is
// rendered from what the walk copied (coveredOrders, recordOrders), or holds them (orderItems).
func (l *orderItemPage) read(instID string) func(tx *bbolt.Tx, keys [][]byte, form orderForm) error {
	page := &l.page
	return func(tx *bbolt.Tx, keys [][]byte, form orderForm) (err error) {
		switch form {
		case orderEntries:
			l.covered.entries = keys
			page.Items, page.Read = nil, &l.covered
		case orderRecordsRead:
			l.records = recordOrders{records: keys, instID: instID}
			page.Items, page.Read = nil, &l.records
		default:
			page.Items, err = orderItems(tx, keys, instID)
		}
		return err
	}
}

// orderForm is what a page's walk found for each of its orders (listOrders).
type orderForm int

const (
	orderKeys        orderForm = iota // its key in order_records
	orderEntries                      // its covered index entry, copied (coveredOrder)
	orderRecordsRead                  // its record, copied from a walk of order_records
)

// orderItemPage is a page of ListOrderItems with the readers of its covered entries and of its
// records' copies: one allocation a page.
type orderItemPage struct {
	page    simulator.OrderItemPage
	covered coveredOrders
	records recordOrders
}

// recordOrders reads a page's items from the records a walk of order_records copied
// (listOrders), one at a time into one row as the page is rendered, as coveredOrders reads
// entries: each record's strings are cut from its copy (decoder.orderRow), so a page makes no
// item, string or time to keep, and reaches no record by its key.
type recordOrders struct {
	records [][]byte
	instID  string
	row     simulator.OrderRow
}

// ReadRows gives yield the page's items in order (simulator.OrderRowReader).
func (r *recordOrders) ReadRows(yield func(*simulator.OrderRow)) error {
	for _, raw := range r.records {
		if err := recordRow(raw, &r.row, r.instID); err != nil {
			return err
		}
		yield(&r.row)
	}
	return nil
}

// recordRow reads an order record of either form, the page's own copy, into o as its list
// item's row (decoder.orderRow, Order.Item) — its strings cut from raw — and checks that it is
// instID's (a stale index otherwise).
func recordRow(raw []byte, o *simulator.OrderRow, instID string) error {
	var inst string
	if len(raw) > 0 && raw[0] == recordV1 {
		d := decoder{b: raw[1:]}
		d.shared = unsafe.String(unsafe.SliceData(d.b), len(d.b))
		if inst = d.orderRow(o); d.err != nil {
			return fmt.Errorf("decode %s record: %w", bOrders, d.err)
		}
	} else { // the JSON form
		it, err := recordItem(raw)
		if err != nil {
			return err
		}
		*o, inst = it.Row(), it.inst
	}
	if inst != instID {
		return staleIndex("order")
	}
	return nil
}

// instItem is an order's list item and its institution.
type instItem struct {
	simulator.OrderItem
	inst string
}

// recordItem reads an order record of either form, whole, as its list item shows it
// (Order.Item; a binary record's strings copied), with its institution.
func recordItem(raw []byte) (instItem, error) {
	var o simulator.Order
	if err := decodeRecord(raw, &o); err != nil {
		return instItem{}, fmt.Errorf("decode %s record: %w", bOrders, err)
	}
	return instItem{o.Item(), o.InstitutionID}, nil
}

// coveredOrders reads a page's items from its covered index entries as the walk copied them
// (decoder.coveredOrder), one at a time into one row, which each read sets whole: each row's
// strings are cut from its entry's bytes, which nothing writes after the walk (pageScan's arena
// is the page's own), so a page allocates no item and no string.
type coveredOrders struct {
	entries [][]byte
	row     simulator.OrderRow
}

// ReadRows gives yield the page's items in order (simulator.OrderRowReader).
func (c *coveredOrders) ReadRows(yield func(*simulator.OrderRow)) error {
	for _, e := range c.entries {
		d := decoder{b: e, shared: unsafe.String(unsafe.SliceData(e), len(e))}
		if d.coveredOrder(&c.row); d.err != nil {
			return fmt.Errorf("decode %s value: %w", bOrderIndex, d.err)
		}
		yield(&c.row)
	}
	return nil
}

// cutOrderStrings gives each item its id, user_account_id, symbol and recurring order id, cut
// from all where ends says they end; an item whose ends[0] is negative has its own.
func cutOrderStrings(items []simulator.OrderItem, all string, ends [][4]int) {
	at := 0
	for i := range items {
		e := &ends[i]
		if e[0] < 0 {
			continue
		}
		it := &items[i]
		it.ID, it.UserAccountID, it.Symbol, it.RecurringOrderID = all[at:e[0]], all[e[0]:e[1]], all[e[1]:e[2]], all[e[2]:e[3]]
		at = e[3]
	}
}

// orderItems reads the orders a page names from order_records as their list items show them
// (decoder.orderItemStrings): their amounts as stored, never a decimal, and their strings cut
// from one string of the page's, copied from the records into reused room (orderScratch).
func orderItems(tx *bbolt.Tx, keys [][]byte, instID string) ([]simulator.OrderItem, error) {
	items := make([]simulator.OrderItem, len(keys))
	sc := orderScratch.Get().(*orderRoom)
	defer orderScratch.Put(sc)
	arena, ends := sc.arena[:0], append(sc.ends[:0], make([][4]int, len(keys))...)
	err := eachRecord(tx, bOrders, keys, "order", func(i int, raw []byte) error {
		if len(raw) > 0 && raw[0] == recordV1 {
			d := decoder{b: raw[1:]}
			inst, grown, ok := d.orderItemStrings(&items[i], arena, &ends[i])
			if d.err != nil {
				return fmt.Errorf("decode %s/%q: %w", bOrders, keys[i], d.err)
			}
			if ok {
				if string(inst) != instID {
					return staleIndex("order")
				}
				arena = grown
				return nil
			}
		}
		ends[i][0] = -1 // its strings are its own (recordItem), not cut from arena
		it, err := recordItem(raw)
		if err == nil && it.inst != instID {
			err = staleIndex("order")
		}
		items[i] = it.OrderItem
		return err
	})
	sc.arena, sc.ends = arena, ends
	if err != nil {
		return nil, err
	}
	cutOrderStrings(items, string(arena), ends)
	return items, nil
}

// orderRoom is orderItems' working room, kept between pages (orderScratch).
type orderRoom struct {
	arena []byte
	ends  [][4]int
}

var orderScratch = sync.Pool{New: func() any { return new(orderRoom) }}

// listOrders finds Get Order List's page in the order indexes, stores the count of every match
// in *total and hands the page's keys in order_records to read, which decodes them — or, when
// items are wanted, the index walked carries them (coversOrders, coveredKind), the page's
// entries as coveredOrder reads them (orderEntries); or, items wanted from the index of all
// orders with no filter left to check, the page's records, walked in order_records itself
// (indexPage.records: it lists them in that index's order) and copied (orderRecordsRead).
func (s *DB) listOrders(ctx context.Context, instID string, f simulator.OrderFilter, items bool, room *pageRoom, total *int, read func(tx *bbolt.Tx, keys [][]byte, form orderForm) error) error {
	return s.view(ctx, func(tx *bbolt.Tx) error {
		if _, err := s.readInstitution(tx, instID); err != nil || f.MatchesNothing() {
			return err
		}
		reads := s.readsOf(tx)
		filter, residual := planOrders(tx, reads, instID, f)
		// The institution's head, the index prefix, its end and the window's bounds, in one
		// allocation: each is capped where it ends, so nothing appended to one writes another.
		n := len(instID) + 1 + len(filter) + 1
		keys := make([]byte, 0, 4*n+16)
		keys = append(appendInst(keys, instID), filter...)
		head := keys[: len(instID)+1 : len(instID)+1]
		keys = append(keys, sortCreated)
		prefix := keys[:n:n]
		lo, hi := prefix, appendPrefixEnd(keys[n:n], prefix)
		hi = hi[:len(hi):len(hi)]
		if f.PlacedStart != nil {
			at := len(keys) + len(hi)
			lo = appendTimeKey(append(keys[at:at], prefix...), *f.PlacedStart)
			lo = lo[:len(lo):len(lo)]
		}
		if f.PlacedEnd != nil {
			at := len(keys) + len(hi) + len(lo)
			hi = appendTimeKey(append(keys[at:at], prefix...), *f.PlacedEnd)
			hi = hi[:len(hi):len(hi)]
		}
		p := indexPage{bucket: bOrderIndex, prefix: prefix, lo: lo, hi: hi, byTime: true, residual: residual,
			desc: f.Desc, offset: f.Offset, limit: f.Limit, room: room}
		form := orderKeys
		switch { // one reader of the entries a page, made for the form it reads
		case items && coveredKind(filter[0]) && reads.orderItems:
			form, p.keyOf = orderEntries, func(dst, k, v []byte) []byte { // the key's placed_at and order id, then the value
				rest := k[len(prefix):]
				if len(rest) < 0x80 { // its uvarint: one byte, without a call a page's entry
					dst = append(dst, byte(len(rest)))
				} else {
					dst = binary.AppendUvarint(dst, uint64(len(rest)))
				}
				return append(append(dst, rest...), v...)
			}
		case items && filter[0] == kindAll && !residual:
			form, p.keyOf = orderRecordsRead, func(dst, _, v []byte) []byte { return append(dst, v...) }
			p.records, p.head = bOrders, head
		default:
			p.keyOf = func(dst, k, _ []byte) []byte { return append(append(dst, head...), k[len(prefix):]...) } // institution, placed_at, order id
		}
		ids, n, err := s.page(ctx, tx, p, func() ([]byte, func(v []byte) bool) { return orderFilter(f) })
		*total = n
		if err != nil {
			return err
		}
		return read(tx, ids, form)
	})
}

// orderFilter is the key and the match of Get Order List's filters on an order index entry's
// summary (orderSummary): product, side and status, each when given.
func orderFilter(f simulator.OrderFilter) ([]byte, func(v []byte) bool) {
	want := [3]int{-1, -1, -1} // product, side, status; -1: any
	if f.Product != nil {
		want[0] = simulator.ProductIndex(*f.Product)
	}
	if f.Side != nil {
		want[1] = int(sideByte(*f.Side))
	}
	if f.Status != nil {
		want[2] = simulator.OrderStatusIndex(*f.Status)
	}
	return []byte{byte(want[0] + 1), byte(want[1] + 1), byte(want[2] + 1)}, func(v []byte) bool {
		for i, w := range want {
			if w >= 0 && int(v[i]) != w {
				return false
			}
		}
		return true
	}
}

// planOrders picks the order index for a query: the user's own index when a user is named
// (a user has few orders), else the index covering the most of status, product and side, the
// smallest by its counter (through reads; nil reads it from tx) on a tie. residual reports a filter the index does not cover, which
// the scan must check (and count) itself.
func planOrders(tx *bbolt.Tx, reads *pageReads, instID string, f simulator.OrderFilter) (filter []byte, residual bool) {
	if f.UserAccountID != nil {
		return cat([]byte{kindUser}, []byte(*f.UserAccountID), []byte{0}), f.Status != nil || f.Product != nil || f.Side != nil
	}
	type cand struct {
		filter []byte
		covers int
	}
	cands := make([]cand, 0, 4) // at most four, on the stack: growing it was three allocations a query
	var st, pr, sd byte
	if f.Status != nil {
		st = byte(simulator.OrderStatusIndex(*f.Status))
		cands = append(cands, cand{[]byte{kindStatus, st}, 1})
	}
	if f.Product != nil {
		pr = byte(simulator.ProductIndex(*f.Product))
		cands = append(cands, cand{[]byte{kindProduct, pr}, 1})
	}
	if f.Side != nil {
		sd = sideByte(*f.Side)
		if f.Status != nil {
			cands = append(cands, cand{[]byte{kindStatSide, st, sd}, 2})
		}
		if f.Product != nil {
			cands = append(cands, cand{[]byte{kindProdSide, pr, sd}, 2})
		}
	}
	wanted := 0
	for _, set := range []bool{f.Status != nil, f.Product != nil, f.Side != nil} {
		if set {
			wanted++
		}
	}
	top := 0
	for _, c := range cands {
		top = max(top, c.covers)
	}
	cands = slices.DeleteFunc(cands, func(c cand) bool { return c.covers < top })
	if len(cands) == 0 {
		return []byte{kindAll}, wanted > 0
	}
	best := cands[0]
	if len(cands) > 1 { // a tie: the smallest by its counter (read only then)
		bestN := -1
		for _, c := range cands {
			if n := reads.countOf(tx, bOrderIndex, cat(inst(instID), c.filter, []byte{sortCreated})); bestN < 0 || n < bestN {
				best, bestN = c, n
			}
		}
	}
	return best.filter, best.covers < wanted
}
