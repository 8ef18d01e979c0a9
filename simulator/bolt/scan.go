package bolt

import (
	"bytes"
	"context"
	"encoding/binary"
	"fmt"
	"math"
	"slices"
	"sync"
	"unicode/utf8"

	"go.etcd.io/bbolt"

	"github.com/partnersim/partnersim/simulator"
)

// prefixEnd returns the smallest key greater than every key with the prefix, or nil when none
// is (the prefix is all 0xff).
func prefixEnd(prefix []byte) []byte { return appendPrefixEnd(nil, prefix) }

// appendPrefixEnd appends prefixEnd(prefix) to dst, or returns nil when there is none.
func appendPrefixEnd(dst, prefix []byte) []byte {
	for i := len(prefix) - 1; i >= 0; i-- {
		if prefix[i] < 0xff {
			return append(append(dst, prefix[:i]...), prefix[i]+1)
		}
	}
	return nil
}

// isPrefixEnd reports whether k is prefixEnd(prefix), without making it.
func isPrefixEnd(k, prefix []byte) bool {
	i := len(prefix) - 1
	for i >= 0 && prefix[i] == 0xff {
		i--
	}
	if i < 0 {
		return len(k) == 0 // prefixEnd's nil, as bytes.Equal sees it
	}
	return len(k) == i+1 && k[i] == prefix[i]+1 && bytes.Equal(k[:i], prefix[:i])
}

// pageScan walks index keys in [lo, hi) ascending, or descending when desc, and returns the keys
// of the records (keyOf of each key and value, in room's arena) of the matching entries at
// positions [offset, offset+limit) — or, keyOf nil, their values themselves (the transaction's
// bytes). The keys are appended to room's ids and the slice returned is the part of them this
// walk added. The room is the page's own and nothing writes its bytes until the page's last
// reader releases it (pageRoom): a reader may cut strings from them (coveredOrders).
// match nil means every entry matches. With total nil the walk stops as soon as the page is
// full (the caller knows the count); otherwise it walks the whole range and stores the number
// of matches in *total. A long walk stops with ctx's error once ctx is
// done (the client went away: decisions D17), checked every scanCheckEvery entries.
func pageScan(ctx context.Context, b *bbolt.Bucket, lo, hi []byte, desc bool, offset, limit int, match func(v []byte) bool, total *int, keyOf func(dst, k, v []byte) []byte, room *pageRoom) ([][]byte, error) {
	return pageWalk(ctx, b, lo, hi, desc, offset, limit, match, total, keyOf, nil, false, room, nil)
}

// pageCounted is pageScan of a page the counters place inside its range — [lo, hi) holds at
// least offset+limit entries from where the walk starts, every one a match — read with
// pageWalk's counted walk; part, when set, is counted as the walk passes it (walkPart).
func pageCounted(ctx context.Context, b *bbolt.Bucket, lo, hi []byte, desc bool, offset, limit int, keyOf func(dst, k, v []byte) []byte, room *pageRoom, part *walkPart) ([][]byte, error) {
	return pageWalk(ctx, b, lo, hi, desc, offset, limit, nil, nil, keyOf, nil, true, room, part)
}

// walkPart is a part of a range at the side its walk starts from — [lo, bound) of an ascending
// walk, [bound, hi) of a descending one — that the walk counts as it passes its entries
// (pageWalk), and, when the page ends first, steps on to count, at most extra entries past the
// page: the start-side partial hour of a time range (dayRange.startPart), whose separate count
// was a descent and a walk over the entries the page walks anyway. n is the part's entries
// once done; a walk that did not reach bound leaves done false.
type walkPart struct {
	bound []byte
	extra int
	n     int
	done  bool
}

// pageWalk is pageScan that, given marks (pageReads.walks: the keys of every markEvery-th entry of
// the walk, as far as earlier walks in the same state went), starts at the last mark at or
// before offset instead of at the range's start, and adds to marks.fresh those it passes
// beyond the known ones.
//
// counted says the counters place the page inside the range (pageCounted; match and total are
// nil then): the walk does not compare each key with the range's bounds — two comparisons of
// keys of forty bytes and more an entry, a tenth of a page's walk — but only the last it
// reads; were that outside the range (counters that do not match the index: they never
// should), the page is walked again comparing each key, as it would have been, and part (a
// counted walk's, from the range's start: offset 0) is left uncounted (done false) for its
// caller to count.
func pageWalk(ctx context.Context, b *bbolt.Bucket, lo, hi []byte, desc bool, offset, limit int, match func(v []byte) bool, total *int, keyOf func(dst, k, v []byte) []byte, marks *marking, counted bool, room *pageRoom, part *walkPart) ([][]byte, error) {
	from, arenaFrom := len(room.ids), len(room.arena)
	room.ids = slices.Grow(room.ids, min(limit, pageRoomIDsMax))
	c := b.Cursor()
	var k, v []byte
	n := 0
	if j := marks.before(offset); j > 0 {
		if k, v = c.Seek(marks.known[j-1]); bytes.Equal(k, marks.known[j-1]) {
			n = j * markEvery
		}
	}
	switch {
	case n > 0: // at the mark
	case desc:
		if hi == nil {
			k, v = c.Last()
		} else if k, _ = c.Seek(hi); k == nil {
			k, v = c.Last()
		} else {
			k, v = c.Prev()
		}
	default:
		k, v = c.Seek(lo)
	}
	// outside reports a counted walk's last key outside the range: the page is walked again.
	outside := func(last []byte) bool {
		return last != nil && (bytes.Compare(last, lo) < 0 || hi != nil && bytes.Compare(last, hi) >= 0)
	}
	if counted && marks == nil {
		last, err := pageRun(ctx, c, k, v, desc, offset, limit, keyOf, room, part)
		if err != nil {
			return nil, err
		}
		if outside(last) {
			if part != nil {
				part.n, part.done = 0, false
			}
			room.ids, room.arena = room.ids[:from], room.arena[:arenaFrom] // what this walk added: walked again
			return pageWalk(ctx, b, lo, hi, desc, offset, limit, nil, nil, keyOf, nil, false, room, nil)
		}
		return room.ids[from:], nil
	}
	sized := false // room's arena holds the page's keys, but for one longer than the first
	next := c.Next
	if desc {
		next = c.Prev
	}
	walked := 0
	mark := marks.next() // the entry of the next mark to take
	var last []byte      // the last key of the page read, in a counted walk
	for ; k != nil; k, v = next() {
		if walked++; walked%scanCheckEvery == 0 {
			if err := ctx.Err(); err != nil {
				return nil, err
			}
		}
		if counted {
			last = k
		} else if desc && bytes.Compare(k, lo) < 0 || !desc && hi != nil && bytes.Compare(k, hi) >= 0 {
			break
		}
		if match != nil && !match(v) {
			continue
		}
		if n == mark {
			marks.fresh = append(marks.fresh, bytes.Clone(k))
			mark += markEvery
		}
		switch {
		case n < offset || n >= offset+limit:
		case keyOf == nil:
			room.ids = append(room.ids, v)
		default:
			if !sized {
				// A record's key is at most 8 bytes longer than its index entry's; an entry
				// copied whole (a covering index's) is its key, its value and a length. A
				// room given back keeps its arena, so a page of the size before grows nothing.
				room.arena = slices.Grow(room.arena, min(limit, 128)*(len(k)+len(v)+8))
				sized = true
			}
			start := len(room.arena)
			room.arena = keyOf(room.arena, k, v)
			room.ids = append(room.ids, room.arena[start:len(room.arena):len(room.arena)])
		}
		n++
		if total == nil && n >= offset+limit {
			break
		}
	}
	if counted && outside(last) {
		if marks != nil {
			marks.fresh = marks.fresh[:0]
		}
		room.ids, room.arena = room.ids[:from], room.arena[:arenaFrom] // what this walk added: walked again
		return pageWalk(ctx, b, lo, hi, desc, offset, limit, match, total, keyOf, marks, false, room, nil)
	}
	if total != nil {
		*total = n
	}
	return room.ids[from:], nil
}

// pageRun is pageWalk's counted walk without marks (a first page of a whole index, a run the
// day counters found, a range's first page): from k, v, where c stands, it steps over offset
// entries and puts the next limit in room (their keyOf, or their values when keyOf is nil),
// counting part, when set, as it passes it (walkPart), in a loop that keeps its slices in
// locals and calls the cursor directly — the general loop's checks were a third of a page's
// walk —, and returns the last key of the page it read for the caller's bounds check.
func pageRun(ctx context.Context, c *bbolt.Cursor, k, v []byte, desc bool, offset, limit int, keyOf func(dst, k, v []byte) []byte, room *pageRoom, part *walkPart) ([]byte, error) {
	if limit <= 0 {
		return nil, nil
	}
	ids, arena := room.ids, room.arena
	end := offset + limit
	var last []byte
	n, past := 0, 0
	for k != nil {
		if part != nil && !part.done {
			if cmp := bytes.Compare(k, part.bound); desc && cmp < 0 || !desc && cmp >= 0 {
				part.done = true // the part lies inside the range: so does its bound
			} else {
				part.n++
			}
		}
		if n >= end { // past the page, counting the part alone
			if part == nil || part.done || past >= part.extra {
				break
			}
			past++
		} else {
			if n >= offset {
				switch {
				case keyOf == nil:
					ids = append(ids, v)
				default:
					if n == offset {
						// As pageWalk sizes it: a record's key is at most 8 bytes longer than its
						// index entry's, an entry copied whole is its key, its value and a length.
						arena = slices.Grow(arena, min(limit, 128)*(len(k)+len(v)+8))
					}
					start := len(arena)
					arena = keyOf(arena, k, v)
					ids = append(ids, arena[start:len(arena):len(arena)])
				}
			}
			last = k
			if n++; n >= end && (part == nil || part.done) {
				break
			}
		}
		if (n+past)%scanCheckEvery == 0 {
			if err := ctx.Err(); err != nil {
				room.ids, room.arena = ids, arena
				return nil, err
			}
		}
		if desc { // called here, not through a method value or a helper: a call less an entry
			k, v = c.Prev()
		} else {
			k, v = c.Next()
		}
	}
	if part != nil && k == nil {
		part.done = true // the bucket's end: the part was walked whole
	}
	room.ids, room.arena = ids, arena
	return last, nil
}

// pageRoom is where a page's walk puts the page's keys (ids) and the bytes they are copied into
// (arena): taken from the rooms given back before (takePageRoom) when the page is walked, and
// given back by the page's last reader (Release) — a page's slice of ids and arena were a few
// percent of an order page's work, allocated and zeroed per page. A reader that cuts strings
// from the arena and uses them after the transaction (an order page rendered from its covered
// entries or its records' copies) holds the room until then (simulator.OrderItemPage.Release);
// a page read inside its transaction gives it back there (listUsers, listOrders).
type pageRoom struct {
	ids   [][]byte
	arena []byte
}

// pageRoomIDsMax and pageRoomArenaMax bound the room a pageRoom given back keeps: a page of a
// few hundred entries, as the API's pages are (per_page is at most 100); a larger one (the
// control plane's) lets its room go.
const (
	pageRoomIDsMax   = 1024
	pageRoomArenaMax = 256 << 10
)

var pageRooms = sync.Pool{New: func() any { return new(pageRoom) }}

// takePageRoom returns an empty room, with the room of one given back before.
func takePageRoom() *pageRoom {
	r := pageRooms.Get().(*pageRoom)
	r.ids, r.arena = r.ids[:0], r.arena[:0]
	return r
}

// Release gives the room back for a later page (simulator.Releaser): neither its ids nor
// anything cut from its arena may be used after.
func (r *pageRoom) Release() {
	clear(r.ids) // keeps no page's bytes (an arena before this one, a transaction's) alive
	if cap(r.ids) > pageRoomIDsMax || cap(r.arena) > pageRoomArenaMax {
		return
	}
	pageRooms.Put(r)
}

// indexPage is one page of a list read from an index: the range [lo, hi) of the entries under
// prefix in bucket.
type indexPage struct {
	bucket, prefix, lo, hi []byte
	// byTime: the range is in time order (the day counters can skip whole days); residual: a
	// filter the index does not cover is left, which the walk checks and counts.
	byTime, residual bool
	desc             bool
	offset, limit    int
	// keyOf appends to dst the key in the records' bucket of the record an entry (k, v)
	// names: the page's keys are made in one arena, ready to read. Nil: the page is the
	// entries' values (the transaction's bytes), for an index that carries what a page shows.
	keyOf func(dst, k, v []byte) []byte
	// records, when set, is a bucket holding a record for each entry under prefix, in the
	// index's order, keyed by head and the entry's key past prefix (the index of all orders
	// and order_records: clustered.go). The page is walked there instead of in the index —
	// the records it shows, without an entry's step and a record's step each — and keyOf
	// reads records. The index still counts. Never with residual: a filter reads the index's
	// values.
	records, head []byte
	// room is where the walk puts the page's keys (pageRoom): the caller's, given back by the
	// page's last reader.
	room *pageRoom
}

// walked returns the bucket the page's entries are read from: records, else the index.
func (p *indexPage) walked() []byte {
	if p.records != nil {
		return p.records
	}
	return p.bucket
}

// walkKey returns the key in the walked bucket of k, a key under the page's prefix, the
// prefix itself or its end (prefixEnd; nil for the index's end).
func (p *indexPage) walkKey(k []byte) []byte {
	if p.records == nil {
		return k
	}
	return recordKey(p.prefix, p.head, k)
}

// recordKey returns the key in a bucket of records keyed by head and the rest of their index
// entries' keys past prefix (indexPage.records) of k, a key under prefix, prefix itself or
// its end (prefixEnd; nil for the index's end).
func recordKey(prefix, head, k []byte) []byte {
	if k == nil || len(k) == len(prefix) && !bytes.Equal(k, prefix) {
		return prefixEnd(head)
	}
	return cat(head, k[len(prefix):])
}

// page reads the page's ids and the range's total: by the day counters when nothing is left to
// filter and the range is in time order (but for a page near its start), by the prefix's
// counter when the range is all of it,
// else by walking it with the filter (its key and match, made only then).
func (s *DB) page(ctx context.Context, tx *bbolt.Tx, p indexPage, filter func() ([]byte, func(v []byte) bool)) ([][]byte, int, error) {
	reads := s.readsOf(tx)
	ranged := !bytes.Equal(p.lo, p.prefix) || p.hi != nil && !isPrefixEnd(p.hi, p.prefix)
	// A page at most seekEntries into a whole index is walked to from its end: the day
	// counters' descent would cost more than the entries it skips.
	near := !ranged && p.offset <= seekEntries
	switch {
	case !p.residual && p.byTime && !near && reads.days:
		known := -1
		if !ranged {
			known = reads.countOf(tx, p.bucket, p.prefix)
		}
		return pageDays(ctx, tx, reads, &p, known)
	case !p.residual && !ranged:
		total := reads.countOf(tx, p.bucket, p.prefix)
		ids, err := pageKnown(ctx, tx, reads, p.walked(), p.walkKey(p.lo), p.walkKey(p.hi), p.desc, p.offset, p.limit, total, p.keyOf, p.room)
		return ids, total, err
	}
	key, match := filter()
	if p.records != nil {
		match = nil // nothing is left to filter (records are walked only then): a range of a store without day counters
	}
	return s.pageFiltered(ctx, tx, p.walked(), p.walkKey(p.lo), p.walkKey(p.hi), key, p.desc, p.offset, p.limit, match, p.keyOf, p.room)
}

// pageFiltered is pageScan over a range with a filter its index does not cover, which the walk
// counts: filter names the filter's values, so that with the bucket and range it keys the
// count in s.walked. Once the count is known in the transaction's state, the walk stops at the
// end of its page instead of walking the whole range.
func (s *DB) pageFiltered(ctx context.Context, tx *bbolt.Tx, bucket, lo, hi, filter []byte, desc bool, offset, limit int, match func(v []byte) bool, keyOf func(dst, k, v []byte) []byte, room *pageRoom) ([][]byte, int, error) {
	key := make([]byte, 0, len(bucket)+len(lo)+len(hi)+len(filter)+8)
	for _, part := range [][]byte{bucket, lo, hi} {
		key = binary.AppendUvarint(key, uint64(len(part)))
		key = append(key, part...)
	}
	key = append(key, filter...)
	if n, ok := s.walked.get(tx, key); ok {
		if offset >= n {
			return [][]byte{}, n, nil
		}
		ids, err := pageScan(ctx, tx.Bucket(bucket), lo, hi, desc, offset, limit, match, nil, keyOf, room)
		return ids, n, err
	}
	var n int
	ids, err := pageScan(ctx, tx.Bucket(bucket), lo, hi, desc, offset, limit, match, &n, keyOf, room)
	if err != nil {
		return nil, 0, err
	}
	s.walked.put(tx, key, n)
	return ids, n, nil
}

// pageRecords reads and decodes the records a page names, by key, from one bucket (eachRecord),
// in one allocation for all the records. A record of another institution means the index that
// gave its key is stale.
func pageRecords[T any](tx *bbolt.Tx, bucket []byte, keys [][]byte, instID string, instOf func(*T) string, what string) ([]*T, error) {
	slab := make([]T, len(keys))
	out := make([]*T, len(keys))
	err := eachRecord(tx, bucket, keys, what, func(i int, raw []byte) error {
		if err := decodeRecord(raw, &slab[i]); err != nil {
			return fmt.Errorf("decode %s/%q: %w", bucket, keys[i], err)
		}
		if instOf(&slab[i]) != instID {
			return staleIndex(what)
		}
		out[i] = &slab[i]
		return nil
	})
	return out, err
}

// userItems reads the users a page names from user_records as their list items show them at
// prices: each decoded only as far as its item shows (decoder.userItem), their accounts in one
// slab and their user_account_ids in one string for the page; a user whose amounts are not
// valued exactly in int64 cents is decoded whole and valued in decimal (User.Item).
func userItems(tx *bbolt.Tx, keys [][]byte, instID string, in *pricedInstitution) ([]simulator.UserItem, error) {
	p := newItemPage(len(keys))
	defer p.release()
	err := eachRecord(tx, bUsers, keys, "user", func(i int, raw []byte) error {
		start := len(p.accounts)
		d := decoder{b: raw}
		var inst, uaid []byte
		if len(raw) > 0 && raw[0] == recordV1 {
			d.b = raw[1:]
			inst, uaid, p.accounts = d.userItem(&p.items[i], in.prices, p.accounts)
		}
		if uaid == nil { // a record of the JSON form, or an amount beyond int64: whole
			var u simulator.User
			if err := decodeRecord(raw, &u); err != nil {
				return fmt.Errorf("decode %s/%q: %w", bUsers, keys[i], err)
			}
			p.items[i] = u.Item(in.Prices, p.accounts[:start])
			p.accounts = p.items[i].Accounts
			inst, uaid = []byte(u.InstitutionID), []byte(u.UserAccountID)
		}
		if string(inst) != instID {
			return staleIndex("user")
		}
		p.end(i, uaid)
		return nil
	})
	if err != nil {
		return nil, err
	}
	return p.finish(), nil
}

// coveredRows reads a page's items from the values its index walk found (a store whose user
// index values carry the accounts: userIndexValue), in the transaction's pages, without a
// record: as rows (simulator.UserRows, from those released before) when every value is of tag
// 2 or 3 and valueFixedAccounts values each exactly — every user a fixture set has —, else nil
// and the page is read by coveredItems. A value of tag 3 valued at the institution's current
// price version is read as stored. A user_account_id that needs no escaping
// (simulator.PlainJSON: printable ASCII, so valid UTF-8 too) is checked once here, not again
// as it renders (UserRows.PlainUAIDs).
func coveredRows(values [][]byte, in *pricedInstitution) *simulator.UserRows {
	r := simulator.NewUserRows()
	// Room for three accounts a user and 32 bytes a user_account_id (a generated set's users
	// have 2.2 and 24, on average), where rows given back have less; the rows are given
	// them once read.
	items := slices.Grow(r.Items, len(values))[:len(values)]
	accounts := slices.Grow(r.Accounts, 3*len(values))
	uaids := slices.Grow(r.UAIDs, 32*len(values))
	for i, v := range values {
		// userIndexValue's: the summary, the user_account_id's length and bytes, the accounts'
		// tag (encoder.itemAccounts's) and, of tag 3, the version of the prices.
		n, j := uvarintAt(v, userSummaryLen)
		if j < 0 || n >= uint64(len(v)-j) { // the id and the tag cut short
			r.Release()
			return nil
		}
		uaid := v[j : j+int(n)]
		j += int(n) + 1
		var form accountsForm
		switch v[j-1] {
		case valuedTag:
			version, k := uvarintAt(v, j)
			if k < 0 {
				r.Release()
				return nil
			}
			j, form = k, valuedExact
			if version == in.version {
				form = valuedStored
			}
		case fixedTag:
		default:
			r.Release()
			return nil
		}
		var total simulator.Cents
		var ok bool
		if accounts, total, ok = valueFixedAccounts(v[j:], form, in.prices, accounts); !ok {
			r.Release()
			return nil
		}
		uaids = append(uaids, uaid...)
		items[i] = simulator.UserRow{UAIDEnd: int32(len(uaids)), AccountsEnd: int32(len(accounts)), Total: total}
	}
	// The ids are checked together (a call an id was most of the check of ids of 24 bytes);
	// a page with one that is not plain is checked again an id at a time.
	plain := simulator.PlainJSON(uaids)
	if !plain {
		uaids, items = validUAIDs(uaids, items)
	}
	r.Items, r.Accounts, r.UAIDs, r.PlainUAIDs = items, accounts, uaids, plain
	return r
}

// validUAIDs returns ids, the user_account_ids of items one after another as stored, each as
// its record keeps it (validUTF8: an id that is not valid UTF-8 is written with its bad bytes
// replaced), and items with their ends moved to match.
func validUAIDs(ids []byte, items []simulator.UserRow) ([]byte, []simulator.UserRow) {
	stored := bytes.Clone(ids)
	ids = ids[:0]
	var from int32
	for i, row := range items {
		if uaid := stored[from:row.UAIDEnd]; utf8.Valid(uaid) {
			ids = append(ids, uaid...)
		} else {
			ids = append(ids, validUTF8(string(uaid))...)
		}
		from, items[i].UAIDEnd = row.UAIDEnd, int32(len(ids))
	}
	return ids, items
}

// fixedTag and valuedTag are the accounts tags of a user index value whose amounts are
// fixed-width, and of one that also keeps each account's value (encoder.itemAccounts).
const fixedTag, valuedTag = 2, 3

// coveredItems is userItems for a store whose user index values carry the accounts
// (userIndexValue): a page's items are read from the values its index walk found, in the
// transaction's pages, without a record — for a page coveredRows does not read.
func coveredItems(values [][]byte, in *pricedInstitution) ([]simulator.UserItem, error) {
	p := newItemPage(len(values))
	defer p.release()
	for i, v := range values {
		start := len(p.accounts)
		d := decoder{b: v[userSummaryLen:]}
		uaid := d.raw(d.uvarint())
		if !utf8.Valid(uaid) {
			uaid = []byte(validUTF8(string(uaid))) // as the record keeps it
		}
		tag := d.raw(1) // encoder.itemAccounts's
		if len(tag) != 1 || tag[0] > 3 {
			return nil, fmt.Errorf("decode %s value: bad accounts tag", bUserIndex)
		}
		compact := tag[0] != 1
		d.fixed, d.valued = tag[0] >= 2, tag[0] == 3
		if d.valued {
			d.uvarint() // the price version: the values are not read here
		}
		rest := d.b
		var ok bool
		p.accounts, ok = d.userAccounts(&p.items[i], in.prices, p.accounts, nil, compact)
		if !ok {
			// An amount beyond int64 or a value it does not know: the accounts whole.
			d = decoder{b: rest, fixed: d.fixed, valued: d.valued}
			u := simulator.User{Accounts: d.accounts(compact)}
			if d.err != nil {
				return nil, fmt.Errorf("decode %s value: %w", bUserIndex, d.err)
			}
			p.items[i] = u.Item(in.Prices, p.accounts[:start])
			p.accounts = p.items[i].Accounts
		}
		p.end(i, uaid)
	}
	return p.finish(), nil
}

// itemPage gathers a user page's items: their accounts are decoded into reused room
// (itemScratch) and copied out once their number is known, their user_account_ids cut from one
// string.
type itemPage struct {
	items []simulator.UserItem
	*itemScratch
}

func newItemPage(n int) *itemPage {
	sc := userScratch.Get().(*itemScratch)
	sc.accounts, sc.uaids = sc.accounts[:0], sc.uaids[:0]
	sc.ends = append(sc.ends[:0], make([]itemEnd, n)...)
	return &itemPage{items: make([]simulator.UserItem, n), itemScratch: sc}
}

// end notes that item i, its accounts appended, has user_account_id uaid.
func (p *itemPage) end(i int, uaid []byte) {
	p.uaids = append(p.uaids, uaid...)
	p.ends[i] = itemEnd{accounts: len(p.accounts), uaid: len(p.uaids)}
}

// finish copies the page's accounts and user_account_ids once into room of their exact size
// and returns the items.
func (p *itemPage) finish() []simulator.UserItem {
	slab := make([]simulator.AccountItem, len(p.accounts)) // never nil: an item's accounts are a list
	copy(slab, p.accounts)
	all := string(p.uaids)
	var was itemEnd
	for i, end := range p.ends {
		p.items[i].Accounts = slab[was.accounts:end.accounts:end.accounts]
		p.items[i].UserAccountID = all[was.uaid:end.uaid]
		was = end
	}
	return p.items
}

func (p *itemPage) release() { userScratch.Put(p.itemScratch) }

// itemScratch is a user page's working room, kept between pages (userScratch): a page's accounts
// are decoded into it and copied out once their number is known. Room for an account a product
// was 3.5 KB a page of 25, zeroed and scanned by the collector and mostly unused; room for
// fewer grew (and copied) on pages of users with more.
type itemScratch struct {
	accounts []simulator.AccountItem
	uaids    []byte
	ends     []itemEnd
}

// itemEnd is where an item's accounts and user_account_id end in an itemScratch.
type itemEnd struct{ accounts, uaid int }

var userScratch = sync.Pool{New: func() any { return new(itemScratch) }}

// eachRecord steps to each record a page names, by key, in one bucket: one cursor for the page
// (a Get a record opened the bucket and grew a cursor's stack each time), and gives it to fn
// with its index. The bytes are the transaction's: fn copies what it keeps. A missing key means
// the index that gave it is stale.
func eachRecord(tx *bbolt.Tx, bucket []byte, keys [][]byte, what string, fn func(i int, raw []byte) error) error {
	c := tx.Bucket(bucket).Cursor()
	var at []byte
	for i, key := range keys {
		k, raw := stepTo(c, at, key)
		if raw == nil || !bytes.Equal(k, key) {
			return staleIndex(what)
		}
		at = k
		if err := fn(i, raw); err != nil {
			return err
		}
	}
	return nil
}

// staleIndex is the error of an index entry that names a record that is not there.
func staleIndex(what string) error {
	return fmt.Errorf("%s index is stale: %w", what, simulator.Errorf(simulator.ENOTFOUND, "%s not found", what))
}

// recordSteps is how many entries stepTo steps over, from where the cursor is, before it
// seeks instead.
const recordSteps = 4

// stepTo moves c, which stands at key at (nil: nowhere yet), to key and returns the entry
// there, or where a seek for key lands when key is missing. Records clustered in the order a
// page lists them (user_records, order_records: clustered.go) are reached by stepping to the
// next entry, or over a few, instead of a descent from the root per record.
func stepTo(c *bbolt.Cursor, at, key []byte) ([]byte, []byte) {
	if dir := bytes.Compare(key, at); at != nil && dir != 0 {
		step := c.Next
		if dir < 0 {
			step = c.Prev
		}
		for range recordSteps {
			k, v := step()
			if k == nil {
				break
			}
			if cmp := bytes.Compare(k, key); cmp == 0 {
				return k, v
			} else if cmp == dir { // stepped past it: missing
				break
			}
		}
	}
	return c.Seek(key)
}

// scanCheckEvery is how many index entries a walk reads between two looks at its context.
const scanCheckEvery = 4096

// pageKnown is pageScan for a range of bucket whose size is known (from the counters) and that
// needs no match: a page past the middle is walked from the far end, so a deep offset costs at
// most half the range; a page markEvery or more from the end it is walked from starts at the
// walks' last mark before it (pageReads.walks).
func pageKnown(ctx context.Context, tx *bbolt.Tx, reads *pageReads, bucket, lo, hi []byte, desc bool, offset, limit, total int, keyOf func(dst, k, v []byte) []byte, room *pageRoom) ([][]byte, error) {
	if offset >= total || limit <= 0 {
		return [][]byte{}, nil
	}
	// At most what the range holds past offset: the page is walked counted.
	limit = min(limit, total-offset)
	far := offset > total/2
	if far {
		offset, desc = total-offset-limit, !desc
	}
	var marks *marking
	if offset >= markEvery {
		marks = reads.marks(bucket, lo, hi, desc)
	}
	ids, err := pageWalk(ctx, tx.Bucket(bucket), lo, hi, desc, offset, limit, nil, nil, keyOf, marks, true, room, nil)
	if err == nil && marks != nil {
		reads.putMarks(marks)
	}
	if far {
		slices.Reverse(ids)
	}
	return ids, err
}

// markEvery is how many entries apart pageReads keeps a walk's marks: about what a descent to
// a mark costs in entries stepped over (seekEntries).
const markEvery = 64

// walkMarksMax bounds the marks a pageReads keeps, in keys (of under a hundred bytes each).
const walkMarksMax = 1 << 16

// marking is a walk's view of its range's marks: those known when it began and those it
// passed beyond them.
type marking struct {
	name         string
	known, fresh [][]byte
}

// before returns how many marks lie at or before entry offset (the walk starts at the last of
// them), 0 for none or no marking.
func (m *marking) before(offset int) int {
	if m == nil {
		return 0
	}
	return min(offset/markEvery, len(m.known))
}

// next returns the entry of the first mark past the known ones, math.MaxInt for no marking.
func (m *marking) next() int {
	if m == nil {
		return math.MaxInt
	}
	return (len(m.known) + 1) * markEvery
}

// marks returns the marks of range [lo, hi) of bucket walked in direction desc in r's state
// (none for a write transaction's r).
func (r *pageReads) marks(bucket, lo, hi []byte, desc bool) *marking {
	name := make([]byte, 0, len(bucket)+len(lo)+len(hi)+8)
	for _, part := range [][]byte{bucket, lo, hi} {
		name = binary.AppendUvarint(name, uint64(len(part)))
		name = append(name, part...)
	}
	if desc {
		name = append(name, 1)
	}
	m := &marking{name: string(name)}
	r.mu.Lock()
	if l := r.walks[m.name]; l != nil {
		m.known = l[:len(l):len(l)] // only ever appended to
	}
	r.mu.Unlock()
	return m
}

// putMarks adds the marks a walk took beyond those it knew.
func (r *pageReads) putMarks(m *marking) {
	if len(m.fresh) == 0 || r.walks == nil {
		return
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	l, ok := r.walks[m.name]
	if !ok {
		if len(m.known) > 0 {
			return // its marks are gone: the walks were emptied, full
		}
		if r.markKeys+len(m.fresh) > walkMarksMax {
			clear(r.walks)
			r.markKeys = 0
		}
	}
	if from := len(l) - len(m.known); from >= 0 && from < len(m.fresh) && r.markKeys+len(m.fresh) <= walkMarksMax {
		r.walks[m.name] = append(l, m.fresh[from:]...)
		r.markKeys += len(m.fresh) - from
	}
}

// pageReads is what list pages read of the store's marks (metaDays, metaHours, metaMinutes,
// metaUserItems, metaOrderItems) and of its per-prefix counters, and how far their walks went,
// kept for one store state — the file and its last committed transaction, as a read
// transaction sees them.
// Each of those reads is a descent from the root (a bucket's, then its key's): three to five
// a page, a tenth of a user page's instructions, for values that only a write moves. A write
// transaction reads its counters from the store itself (readsOf), so it sees its own writes.
type pageReads struct {
	db   *bbolt.DB
	txid int
	// The store's marks, read when the state is first seen.
	days, hours, minutes, userItems, orderItems bool

	mu     sync.Mutex
	counts map[string]int // countOf by countKey, as far as pages asked
	// tables holds the day counters of the prefixes read twice in this state, by
	// dayCountsPrefix, and their hour counters by hourCountsPrefix (dayRange.hourTable): nil
	// after the first ask (a doorkeeper — a state a write ends after a page or two never reads
	// them all), noTable past pageTableDaysMax days (or hours) kept.
	tables    map[string]*dayTable
	tableDays int // the days the tables hold
	// walks remembers how far whole-index walks (pageKnown) went in this state: for a range
	// walked in one direction (by its name, marks), the key of every markEvery-th entry from
	// the range's start, as far as pages have walked it. A page deep into a list that no
	// counter splits (a page sorted by user_account_id: the day counters serve the lists
	// sorted by time) then starts at the mark before its offset, one descent, instead of
	// stepping over every entry before it — the mix asks such pages up to a hundredth of the
	// users deep, ten thousand entries at a million users. Marks are read only in the state
	// they were taken in, so no write has to clear them; at most walkMarksMax keys
	// (markKeys), and it starts again empty when full.
	walks    map[string][][]byte
	markKeys int
}

// pageTableDaysMax bounds the days (and hours) a pageReads's tables hold (12 bytes each): a
// store's prefixes sorted by time over a few years of days hold a few hundred thousand, an
// institution's whole lists' hours 8,760 a year each.
const pageTableDaysMax = 1 << 20

// noTable marks a prefix whose day counters were asked for once the tables held their most.
var noTable = new(dayTable)

// dayTable returns the day counters under cp (dayCountsPrefix) of tx's bCounts, read whole the
// second time cp is asked for in this state (readDayTable); nil before then, past
// pageTableDaysMax days kept, or for a write transaction's r (it walks the counters).
func (r *pageReads) dayTable(tx *bbolt.Tx, cp []byte) *dayTable {
	if r.tables == nil {
		return nil
	}
	r.mu.Lock()
	t, asked := r.tables[string(cp)]
	if !asked && len(r.tables) < pageReadsMax {
		r.tables[string(cp)] = nil
	}
	r.mu.Unlock()
	if t == noTable {
		return nil
	}
	if t != nil || !asked {
		return t
	}
	t = readDayTable(tx.Bucket(bCounts), cp)
	r.mu.Lock()
	if r.tableDays+len(t.days) > pageTableDaysMax {
		t = noTable
	} else if r.tables[string(cp)] == nil {
		r.tableDays += len(t.days)
	}
	r.tables[string(cp)] = t
	r.mu.Unlock()
	if t == noTable {
		return nil
	}
	return t
}

// pageReadsMax bounds the counters a pageReads keeps (each a key of under a hundred bytes): an
// institution's list pages read a few dozen.
const pageReadsMax = 4096

// readsOf returns the reads of tx's state, its marks read now when the state is new. A write
// transaction's are its own, read now, and keep no counter: it reads them from tx, which it
// may be writing.
func (s *DB) readsOf(tx *bbolt.Tx) *pageReads {
	if r := s.reads.Load(); r != nil && r.db == tx.DB() && r.txid == tx.ID() && !tx.Writable() {
		return r
	}
	meta := tx.Bucket(bMeta)
	r := &pageReads{db: tx.DB(), txid: tx.ID(),
		days: meta.Get(metaDays) != nil, hours: meta.Get(metaHours) != nil, minutes: meta.Get(metaMinutes) != nil,
		userItems: meta.Get(metaUserItems) != nil, orderItems: meta.Get(metaOrderItems) != nil}
	if !tx.Writable() {
		r.counts, r.tables, r.walks = map[string]int{}, map[string]*dayTable{}, map[string][][]byte{}
		s.reads.Store(r)
	}
	return r
}

// countOf is countOf(tx, bucket, prefix) through r (nil, or a write transaction's: read from
// tx).
func (r *pageReads) countOf(tx *bbolt.Tx, bucket, prefix []byte) int {
	if r == nil || r.counts == nil {
		return countOf(tx, bucket, prefix)
	}
	var buf [96]byte
	key := append(append(append(buf[:0], bucket...), tagEntries), prefix...) // countKey, on the stack
	r.mu.Lock()
	n, ok := r.counts[string(key)]
	r.mu.Unlock()
	if ok {
		return n
	}
	n = countOf(tx, bucket, prefix)
	r.mu.Lock()
	if len(r.counts) < pageReadsMax {
		r.counts[string(key)] = n
	}
	r.mu.Unlock()
	return n
}

// orNil returns the page, or nil with the error when there is one.
func orNil[P any](page *P, err error) (*P, error) {
	if err != nil {
		return nil, err
	}
	return page, nil
}
