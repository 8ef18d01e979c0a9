package bolt

import (
	"bytes"
	"fmt"
	"slices"

	"go.etcd.io/bbolt"

	"github.com/partnersim/partnersim/simulator"
)

// Users and orders are stored clustered: a record's key is its institution, a time (a user's
// created_at, an order's placed_at) and its id, so the records of a list page — every index
// lists them in that time's order — lie side by side in the file, and pageRecords reaches
// each from the one before by stepping a cursor instead of a descent from the root (when
// records were keyed by id, a page of 100 orders read 100 random pages of a 1.3 GB file). A second bucket
// finds a record by its id: id → the key's prefix (institution and time) — and, in a store
// with the mark named inline, the record after it, so that a read by id is one descent.
type clustered struct {
	records, keys []byte // prefix + id → record (codec.go); id → prefix (+ record: inline)
	// inline names the mark of a store whose keys keep each record after its prefix (a copy of
	// the one in records: lists walk records in their order); nil, never (orders).
	inline []byte
	// legacy is the bucket of stores written before (id → record), which Open and
	// RestoreSnapshot move into records and keys (migrate).
	legacy []byte
	what   string // "user", "order": the not-found message's noun
	// prefixOf returns the key prefix of a stored record.
	prefixOf func(raw []byte) ([]byte, error)
}

var (
	userRecords = clustered{records: bUsers, keys: bUserKeys, legacy: bLegacyUsers, what: "user", inline: metaUsersByID,
		prefixOf: func(raw []byte) ([]byte, error) {
			var u simulator.User
			err := decodeRecord(raw, &u)
			return userKeyPrefix(&u), err
		}}
	orderRecords = clustered{records: bOrders, keys: bOrderKeys, legacy: bLegacyOrders, what: "order",
		prefixOf: func(raw []byte) ([]byte, error) {
			var o simulator.Order
			err := decodeRecord(raw, &o)
			return orderKeyPrefix(&o), err
		}}
	clusteredRecords = []clustered{userRecords, orderRecords}
)

// userKeyPrefix is a user's key in user_records less its platform id.
func userKeyPrefix(u *simulator.User) []byte { return cat(inst(u.InstitutionID), timeKey(u.CreatedAt)) }

// orderKeyPrefix is an order's key in order_records less its id.
func orderKeyPrefix(o *simulator.Order) []byte {
	return cat(inst(o.InstitutionID), timeKey(o.PlacedAt))
}

// metaUsersByID marks a store whose user_keys values keep each user's record after its key's
// prefix (clustered.inline), and whose user_keys keep each of a user's member_user entries
// right after the user's own (memberKey): Get User Detail is then one descent, not three
// (decisions D6). A store written before keeps the prefix alone and member_user alone, and is
// read as before; writers keep the form the store has.
var metaUsersByID = []byte("users_by_id")

// put writes record v of id under prefix; was is the prefix it was stored under, nil for a
// new record.
func (c clustered) put(w *writeTx, id string, was, prefix []byte, v any) error {
	raw, err := w.encode(v)
	if err != nil {
		return fmt.Errorf("encode %s/%q: %w", c.records, id, err)
	}
	moved := !bytes.Equal(was, prefix)
	if moved {
		if was != nil {
			if err := w.Bucket(c.records).Delete(cat(was, []byte(id))); err != nil {
				return err
			}
		}
	}
	value, inline := prefix, w.keeps(c.inline)
	if inline {
		value = cat(prefix, raw)
	}
	if moved || inline {
		if err := w.put(c.keys, []byte(id), value); err != nil {
			return err
		}
	}
	// Split after the institution: a build's sort then compares the time without reading the
	// key (spool).
	return w.putSplit(c.records, cat(prefix, []byte(id)), len(prefix)-8, raw)
}

// keyValue splits a value of a keys bucket into the record's key prefix (its institution, the
// separator and 8 bytes of time) and what follows: the record in a store that keeps it there
// (inline), else nothing.
func keyValue(v []byte) (prefix, record []byte) {
	n := min(bytes.IndexByte(v, 0)+9, len(v))
	return v[:n], v[n:]
}

// getClustered reads the record of id from c as a new T (get).
func getClustered[T any](tx *bbolt.Tx, c clustered, instID, id string) (*T, error) {
	var v T
	if err := c.get(tx, instID, id, &v); err != nil {
		return nil, err
	}
	return &v, nil
}

// get decodes the record of id into v. instID "" finds any institution's record; otherwise
// another institution's record does not exist.
func (c clustered) get(tx *bbolt.Tx, instID, id string, v any) error {
	raw, err := c.raw(tx, instID, id)
	if err != nil {
		return err
	}
	if err := decodeRecord(raw, v); err != nil {
		prefix, _ := keyValue(tx.Bucket(c.keys).Get([]byte(id)))
		return fmt.Errorf("decode %s/%q: %w", c.records, cat(prefix, []byte(id)), err)
	}
	return nil
}

// raw returns the stored record of id (valid while tx is), as get finds it (find).
func (c clustered) raw(tx *bbolt.Tx, instID, id string) ([]byte, error) {
	raw, _, err := c.find(tx, instID, id)
	return raw, err
}

// find returns the stored record of id (valid while tx is), as get finds it: the copy beside
// its key's prefix where the store keeps one (inline) — with the cursor of keys at its entry —
// else the record in records and a nil cursor. Its key is made on the stack (bbolt keeps no
// key it is asked for): a random Get User Detail made it, and the institution's prefix, on
// the heap.
func (c clustered) find(tx *bbolt.Tx, instID, id string) ([]byte, *bbolt.Cursor, error) {
	cur := tx.Bucket(c.keys).Cursor()
	k, v := cur.Seek([]byte(id))
	var room [96]byte
	if string(k) != id || instID != "" && !bytes.HasPrefix(v, appendInst(room[:0], instID)) {
		return nil, nil, simulator.Errorf(simulator.ENOTFOUND, "%s not found", c.what)
	}
	prefix, raw := keyValue(v)
	if len(raw) > 0 {
		return raw, cur, nil
	}
	raw = tx.Bucket(c.records).Get(append(append(room[:0], prefix...), id...))
	if raw == nil {
		return nil, nil, simulator.Errorf(simulator.ENOTFOUND, "%s not found", c.what)
	}
	return raw, nil, nil
}

// migrate moves the records of legacy, a bucket of the layout before clustering (id →
// record), into records and keys of tx, their stored bytes unchanged. The records are put in
// key order: bbolt splits a node only at commit, so a million records put at random places of
// a new bucket were a million inserts into the middle of one ever-growing node.
func (c clustered) migrate(tx *bbolt.Tx, legacy *bbolt.Bucket) error {
	records, keys := tx.Bucket(c.records), tx.Bucket(c.keys)
	var moved []kv // values alias legacy's pages, valid until tx ends
	err := legacy.ForEach(func(id, raw []byte) error {
		prefix, err := c.prefixOf(raw)
		if err != nil {
			return fmt.Errorf("decode %s/%q: %w", c.legacy, id, err)
		}
		moved = append(moved, kv{cat(prefix, id), raw})
		return keys.Put(bytes.Clone(id), prefix) // in id order: appended
	})
	if err != nil {
		return err
	}
	slices.SortFunc(moved, func(a, b kv) int { return bytes.Compare(a.k, b.k) })
	for _, e := range moved {
		if err := records.Put(e.k, e.v); err != nil {
			return err
		}
	}
	return nil
}
