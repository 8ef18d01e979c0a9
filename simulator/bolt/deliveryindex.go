package bolt

import (
	"bytes"
	"context"
	"fmt"
	"slices"

	"go.etcd.io/bbolt"

	"github.com/partnersim/partnersim/simulator"
)

// The delivery log's index (bDeliveryTime): one entry per delivery, keyed by its creation time
// and id so a walk from the end lists the newest first and a page starts where the last ended,
// valued with what the log filters by and the record does not hold (the event's type and the
// user it is about) or holds deep inside (institution, subscription). A page reads only the
// records of the entries that match, and walks at most deliveryScanMax entries.

// deliveryScanMax bounds the index entries one page walks: a filter that matches rarely returns
// a short page (even an empty one) with a cursor to go on from.
const deliveryScanMax = 10000

// deliveryIndexEntry is the value of a bDeliveryTime entry.
type deliveryIndexEntry struct {
	inst, eventType, platformID, subscription []byte
}

func indexEntryOf(d *simulator.Delivery, e *simulator.Event) deliveryIndexEntry {
	return deliveryIndexEntry{[]byte(d.InstitutionID), []byte(e.Type), []byte(e.Data.PlatformID), []byte(d.SubscriptionID)}
}

// encode joins the fields with 0 bytes (no id contains one).
func (e deliveryIndexEntry) encode() []byte {
	return bytes.Join([][]byte{e.inst, e.eventType, e.platformID, e.subscription}, []byte{0})
}

func decodeIndexEntry(v []byte) (deliveryIndexEntry, error) {
	parts := bytes.Split(v, []byte{0})
	if len(parts) != 4 {
		return deliveryIndexEntry{}, fmt.Errorf("delivery index entry %q: want 4 fields", v)
	}
	return deliveryIndexEntry{parts[0], parts[1], parts[2], parts[3]}, nil
}

// matches reports whether the entry passes f's filters that the index holds.
func (e deliveryIndexEntry) matches(f *simulator.DeliveryFilter) bool {
	eq := func(want string, got []byte) bool { return want == "" || string(got) == want }
	return eq(f.InstitutionID, e.inst) && eq(string(f.EventType), e.eventType) && eq(f.PlatformID, e.platformID) &&
		eq(f.SubscriptionID, e.subscription)
}

func deliveryTimeKey(d *simulator.Delivery) []byte { return cat(timeKey(d.CreatedAt), []byte(d.ID)) }

// describeDelivery fills the fields of d its index entry holds (a delivery without one, which
// no store opened since the index exists has, stays without them).
func describeDelivery(tx *bbolt.Tx, d *simulator.Delivery) {
	if e, err := decodeIndexEntry(tx.Bucket(bDeliveryTime).Get(deliveryTimeKey(d))); err == nil {
		d.EventType, d.PlatformID = simulator.EventType(e.eventType), string(e.platformID)
	}
}

// indexDeliveries writes the index of a store written before it: every delivery's entry, from
// its record and its event's. It does nothing when the index holds entries or there is no
// delivery.
func indexDeliveries(tx *bbolt.Tx) error {
	idx := tx.Bucket(bDeliveryTime)
	if k, _ := idx.Cursor().First(); k != nil {
		return nil
	}
	return tx.Bucket(bDeliveries).ForEach(func(_, raw []byte) error {
		var d simulator.Delivery
		if err := decodeRecord(raw, &d); err != nil {
			return err
		}
		var e simulator.Event
		if err := getRecord(tx, bEvents, []byte(d.EventID), &e, "event not found"); err != nil {
			return fmt.Errorf("index delivery %s: %w", d.ID, err)
		}
		return idx.Put(deliveryTimeKey(&d), indexEntryOf(&d, &e).encode())
	})
}

// Deliveries lists one page of the delivery log, newest first: at most f.Limit (100 when 0)
// deliveries matching f, with the cursor of the next page when more may follow.
func (s *DB) Deliveries(ctx context.Context, f simulator.DeliveryFilter) (*simulator.DeliveryPage, error) {
	limit := f.Limit
	if limit <= 0 {
		limit = 100
	}
	lo, hi, err := deliveryRange(f)
	if err != nil {
		return nil, err
	}
	page := &simulator.DeliveryPage{Deliveries: []*simulator.Delivery{}}
	err = s.view(ctx, func(tx *bbolt.Tx) error {
		idx := tx.Bucket(bDeliveryTime)
		walk := newestFirst(idx.Cursor(), hi)
		if f.EventID != "" {
			keys, err := eventDeliveryKeys(tx, f.EventID, hi)
			if err != nil {
				return err
			}
			walk = func() (k, v []byte) {
				if len(keys) == 0 {
					return nil, nil
				}
				k, keys = keys[0], keys[1:]
				return k, idx.Get(k)
			}
		}
		var last []byte // the last key walked: a next page starts after it
		for walked := 0; ; walked++ {
			k, v := walk()
			if k == nil || lo != nil && bytes.Compare(k[:8], lo) < 0 {
				return nil // the end of the range: no next page
			}
			if walked == deliveryScanMax {
				page.NextCursor = cursorAfter(last)
				return nil
			}
			if v == nil { // a delivery an older binary wrote into an indexed store: not listed
				last = slices.Clone(k)
				continue
			}
			e, err := decodeIndexEntry(v)
			if err != nil {
				return err
			}
			if e.matches(&f) {
				d, err := getDelivery(tx, k[8:])
				if simulator.IsNotFound(err) { // an entry without its record: nothing to list
					last = slices.Clone(k)
					continue
				}
				if err != nil {
					return err
				}
				if f.Status == "" || d.Status == f.Status {
					if len(page.Deliveries) == limit { // one more matches: there is a next page
						page.NextCursor = cursorAfter(last)
						return nil
					}
					d.EventType, d.PlatformID = simulator.EventType(e.eventType), string(e.platformID)
					page.Deliveries = append(page.Deliveries, d)
				}
			}
			last = slices.Clone(k)
		}
	})
	if err != nil {
		return nil, err
	}
	return page, nil
}

// deliveryRange is the range of the delivery-time index a listing walks: keys from lo
// (inclusive) to hi (exclusive; nil for the end), walked from hi down — the filter's creation
// window, and below the cursor of an earlier page.
func deliveryRange(f simulator.DeliveryFilter) (lo, hi []byte, err error) {
	if f.CreatedStart != nil {
		lo = timeKey(*f.CreatedStart)
	}
	if f.CreatedEnd != nil {
		hi = timeKey(*f.CreatedEnd)
	}
	if f.Cursor != "" {
		at, id, ok := simulator.ParseDeliveryCursor(f.Cursor)
		if !ok {
			return nil, nil, simulator.Errorf(simulator.EINVALID, "cursor %q: pass the next_cursor of an earlier page", f.Cursor)
		}
		if after := cat(timeKey(at), []byte(id)); hi == nil || bytes.Compare(after, hi) < 0 {
			hi = after
		}
	}
	return lo, hi, nil
}

// cursorAfter is the cursor of the position after the index key k.
func cursorAfter(k []byte) string {
	return simulator.DeliveryCursor(timeFromKey(k[:8]), string(k[8:]))
}

// newestFirst walks an index from its last key below hi (from its end when hi is nil) down.
func newestFirst(c *bbolt.Cursor, hi []byte) func() (k, v []byte) {
	started := false
	return func() ([]byte, []byte) {
		if started {
			return c.Prev()
		}
		started = true
		if hi == nil {
			return c.Last()
		}
		if k, _ := c.Seek(hi); k == nil {
			return c.Last()
		}
		return c.Prev()
	}
}

// eventDeliveryKeys returns the index keys of an event's deliveries below hi (all when nil),
// newest first; at most deliveryScanMax of them are read.
func eventDeliveryKeys(tx *bbolt.Tx, eventID string, hi []byte) ([][]byte, error) {
	var keys [][]byte
	prefix := cat([]byte(eventID), []byte{0})
	c := tx.Bucket(bDeliveryEvent).Cursor()
	read := 0
	for k, _ := c.Seek(prefix); k != nil && bytes.HasPrefix(k, prefix) && read < deliveryScanMax; k, _ = c.Next() {
		read++
		var d simulator.Delivery
		if err := getRecord(tx, bDeliveries, k[len(prefix):], &d, "delivery not found"); err != nil {
			return nil, err
		}
		if key := deliveryTimeKey(&d); hi == nil || bytes.Compare(key, hi) < 0 {
			keys = append(keys, key)
		}
	}
	slices.SortFunc(keys, func(a, b []byte) int { return bytes.Compare(b, a) })
	return keys, nil
}

// PendingDeliveries lists up to limit deliveries waiting for an attempt, soonest first (the
// outbox's own order), described as the delivery log describes them.
func (s *DB) PendingDeliveries(ctx context.Context, limit int) ([]*simulator.Delivery, error) {
	out, err := s.DueDeliveries(ctx, simulator.LastStorableTime, limit, nil)
	if err != nil {
		return nil, err
	}
	err = s.view(ctx, func(tx *bbolt.Tx) error {
		for _, d := range out {
			describeDelivery(tx, d)
		}
		return nil
	})
	if out == nil {
		out = []*simulator.Delivery{}
	}
	return out, err
}
