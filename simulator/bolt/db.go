package bolt

import (
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"hash/fnv"
	"io/fs"
	"os"
	"slices"
	"strings"
	"sync/atomic"
	"syscall"
	"time"

	"go.etcd.io/bbolt"
	bbolterrors "go.etcd.io/bbolt/errors"

	"github.com/partnersim/partnersim/simulator"
)

// DB is the sandbox store.
type DB struct {
	db    *bbolt.DB
	Clock *simulator.Clock
	IDs   *simulator.IDs
	// defaults seed new institutions and hold the model portfolios (Options.Defaults).
	defaults Defaults
	// caches hold decoded records of the buckets read on every request (see readCache).
	caches map[string]*readCache
	// walked remembers the totals of filtered walks (see countCache).
	walked countCache
	// reads keeps what list pages read of the marks and counters, for the last store state a
	// page read (see pageReads).
	reads atomic.Pointer[pageReads]
	// gen counts the write transactions committed (and stores swapped in): a value read for
	// one count is current until it moves (see viewCache).
	gen atomic.Uint64
	// views keeps Get User Detail's answers for the current gen (see viewCache).
	views viewCache
	// keyCache is caches' cache of the keys bucket, which every request reads (Authenticate).
	keyCache *readCache
	// keyMemos remembers the keys found for API keys' plaintexts (see keyMemos).
	keyMemos keyMemos
	// notify, when set, is called after a transaction that enqueued deliveries commits
	// (Options.Notify).
	notify func()
	// rehearse, set by tests only (export_test.go), makes every update run its function twice,
	// the first time in a transaction that is rolled back — what bbolt's Batch does to a call
	// whose group another call failed — so a function that keeps state outside its
	// transaction shows it on every run instead of one run in several.
	rehearse bool
}

// ErrDamaged marks a store file that failed its consistency check at open.
var ErrDamaged = errors.New("store file is damaged")

// fullCheckMax is the largest file Open checks page by page (bbolt's Tx.Check) on every start:
// a few milliseconds for the default fixtures' store. Larger files get the cheap checks only
// (valid meta pages, a file as long as its own page count) unless Options.Check asks.
const fullCheckMax = 64 << 20

// Options tune Open. They are given at Open and never change while the store is open.
type Options struct {
	// Check runs bbolt's full consistency check at open whatever the file's size.
	Check bool
	// Notify, when set, is called after a transaction that enqueued deliveries commits, so the
	// dispatcher can start them at once (webhook.Waker's Wake).
	Notify func()
	// Defaults seed new institutions and hold the model portfolios (DefaultsOf a set).
	Defaults Defaults
}

// Open opens (creating if needed) the bbolt file at path and its buckets. A file that fails the
// consistency check is refused with an error wrapping ErrDamaged; other failures say what
// happened (locked by another process, disk full, permissions). opts is at most one Options
// (none: the zero value).
func Open(path string, clock *simulator.Clock, ids *simulator.IDs, opts ...Options) (*DB, error) {
	var o Options
	if len(opts) > 1 {
		return nil, errors.New("bolt.Open: more than one Options")
	}
	if len(opts) == 1 {
		o = opts[0]
	}
	if err := checkLength(path); err != nil {
		return nil, fmt.Errorf("store %s: %w: %v", path, ErrDamaged, err)
	}
	db, err := openBolt(path)
	if err != nil {
		return nil, openError(path, err)
	}
	if err := check(db, o.Check); err != nil {
		db.Close()
		return nil, fmt.Errorf("store %s: %w: %v", path, ErrDamaged, err)
	}
	if err := db.View(func(tx *bbolt.Tx) error { return checkFormat(tx.Bucket(bMeta), "store "+path) }); err != nil {
		db.Close()
		return nil, err
	}
	if err := db.Update(func(tx *bbolt.Tx) error {
		for _, b := range allBuckets {
			if _, err := tx.CreateBucketIfNotExists(b); err != nil {
				return err
			}
		}
		// A store written before user and order records were clustered has them keyed by id.
		for _, c := range clusteredRecords {
			if legacy := tx.Bucket(c.legacy); legacy != nil {
				if err := c.migrate(tx, legacy); err != nil {
					return err
				}
				if err := tx.DeleteBucket(c.legacy); err != nil {
					return err
				}
			}
		}
		// A store written before the delivery log's index gets it.
		if err := indexDeliveries(tx); err != nil {
			return err
		}
		// A new file keeps day counters and list items in its user index from its first write.
		if k, _ := tx.Bucket(bCounts).Cursor().First(); k == nil {
			if k, _ := tx.Bucket(bMeta).Cursor().First(); k == nil {
				return markNew(tx)
			}
		}
		return nil
	}); err != nil {
		db.Close()
		return nil, fmt.Errorf("create buckets: %w", err)
	}
	if clock == nil {
		clock = simulator.NewClock(nil)
	}
	if ids == nil {
		ids = simulator.NewIDs(nil)
	}
	caches := map[string]*readCache{string(bInstitutions): {}, string(bKeys): {}, string(bSecrets): {}}
	return &DB{db: db, Clock: clock, IDs: ids, defaults: o.Defaults, notify: o.Notify, caches: caches, keyCache: caches[string(bKeys)]}, nil
}

// openBolt opens the bbolt file at path as the store uses it.
func openBolt(path string) (*bbolt.DB, error) {
	db, err := bbolt.Open(path, 0o600, &bbolt.Options{Timeout: 2 * time.Second, FreelistType: bbolt.FreelistMapType})
	if err != nil {
		return nil, err
	}
	// A lone writer waits at most this long for company before committing.
	db.MaxBatchDelay = time.Millisecond
	return db, nil
}

// openError says why bbolt could not open the file.
func openError(path string, err error) error {
	var errno syscall.Errno
	switch {
	case errors.Is(err, bbolterrors.ErrTimeout):
		return fmt.Errorf("store %s is in use by another process (bbolt's file lock): stop it, or pass --db with another file", path)
	case errors.Is(err, bbolterrors.ErrInvalid), errors.Is(err, bbolterrors.ErrChecksum), errors.Is(err, bbolterrors.ErrVersionMismatch),
		strings.Contains(err.Error(), "file size too small"):
		return fmt.Errorf("store %s: %w: %v", path, ErrDamaged, err)
	case errors.As(err, &errno) && errno == syscall.ENOSPC:
		return fmt.Errorf("store %s: the disk is full: free some space, or pass --db with a file on another disk", path)
	case errors.Is(err, fs.ErrPermission):
		return fmt.Errorf("store %s: permission denied: pass --db with a file you may write", path)
	}
	return fmt.Errorf("open store %s: %w", path, err)
}

// checkLength refuses, before bbolt maps it, a file shorter than the pages its newest valid
// meta page counts: bbolt reads the freelist page at open and panics on one cut off (a built
// store keeps its freelist at the end of the file). A file with no valid meta page is left to
// bbolt, which refuses it.
func checkLength(path string) error {
	f, err := os.Open(path)
	if err != nil {
		return nil // missing (created by bbolt) or unreadable (bbolt says why)
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return nil
	}
	// The meta page's fields after its 16-byte page header: magic, version, page size, flags
	// (4 bytes each), root bucket (16), freelist page, page count, txid, checksum (8 each).
	meta := func(off int64) (pages, pageSize, txid uint64, ok bool) {
		var b [80]byte
		if _, err := f.ReadAt(b[:], off); err != nil {
			return 0, 0, 0, false
		}
		h := fnv.New64a()
		h.Write(b[16:72])
		if binary.LittleEndian.Uint32(b[16:]) != 0xED0CDAED || h.Sum64() != binary.LittleEndian.Uint64(b[72:]) {
			return 0, 0, 0, false
		}
		return binary.LittleEndian.Uint64(b[56:]), uint64(binary.LittleEndian.Uint32(b[24:])), binary.LittleEndian.Uint64(b[64:]), true
	}
	pages, size, txid, ok := meta(0)
	if ok && size >= 1024 {
		if p1, s1, t1, ok1 := meta(int64(size)); ok1 && t1 > txid {
			pages, size = p1, s1
		}
	} else if p1, s1, _, ok1 := meta(4096); ok1 {
		pages, size, ok = p1, s1, true
	}
	if ok && uint64(st.Size()) < pages*size {
		return fmt.Errorf("the file is %d bytes but its pages need %d: truncated", st.Size(), pages*size)
	}
	return nil
}

// check refuses a file shorter than its own page count (pages beyond the end would fault
// when mapped) and, for a small file or when full is set, runs bbolt's page-by-page check.
func check(db *bbolt.DB, full bool) error {
	st, err := os.Stat(db.Path())
	if err != nil {
		return err
	}
	return db.View(func(tx *bbolt.Tx) error {
		if st.Size() < tx.Size() {
			return fmt.Errorf("the file is %d bytes but its pages need %d: truncated", st.Size(), tx.Size())
		}
		if !full && st.Size() > fullCheckMax {
			return nil
		}
		var first error
		for err := range tx.Check() { // drained whole: the checker reads the tx until it closes
			if first == nil {
				first = err
			}
		}
		return first
	})
}

// Close closes the file.
func (s *DB) Close() error { return s.db.Close() }

// Path returns the file's path.
func (s *DB) Path() string { return s.db.Path() }

func (s *DB) view(ctx context.Context, fn func(tx *bbolt.Tx) error) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	return s.db.View(fn)
}

// update runs fn in a write transaction and notifies the dispatcher when fn queued deliveries.
func (s *DB) update(ctx context.Context, fn func(w *writeTx) error) error {
	// Concurrent writers are group-committed (bbolt Batch: one fsync for all of them). Batch
	// runs fn again when another call of its group fails: the group's transaction was rolled
	// back, and fn runs in a new one. So fn must start from what it reads in its transaction:
	// a variable it assigns outside it is assigned again, never appended to or read back.
	if s.rehearse {
		return s.write(ctx, s.rehearsed, fn)
	}
	return s.write(ctx, s.db.Batch, fn)
}

// rehearsed runs fn in a write transaction that is rolled back, then in one that commits.
func (s *DB) rehearsed(fn func(*bbolt.Tx) error) error {
	tx, err := s.db.Begin(true)
	if err != nil {
		return err
	}
	_ = fn(tx)
	if err := tx.Rollback(); err != nil {
		return err
	}
	return s.db.Update(fn)
}

// updateNow is update for a caller that groups its own writes (the dispatcher's attempt
// records): it commits at once instead of waiting bbolt's batch delay for company.
func (s *DB) updateNow(ctx context.Context, fn func(w *writeTx) error) error {
	return s.write(ctx, s.db.Update, fn)
}

func (s *DB) write(ctx context.Context, commit func(func(*bbolt.Tx) error) error, fn func(w *writeTx) error) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	var w *writeTx
	err := commit(func(tx *bbolt.Tx) error {
		w = &writeTx{Tx: tx, db: s, txid: tx.ID(), counts: map[string]*int64{}}
		if err := fn(w); err != nil {
			return err
		}
		return w.flushCounts()
	})
	if w != nil {
		for name := range w.written {
			s.caches[name].invalidate(w.txid)
		}
	}
	// After the caches it read through are cleared (a view read at the new count must not
	// hold their old values); whether it committed or not: a view is only dropped too early.
	s.gen.Add(1)
	if err == nil && w.enqueued > 0 && s.notify != nil {
		s.notify()
	}
	return err
}

// writeTx is a write transaction with the index counters it changes, written once at commit.
type writeTx struct {
	*bbolt.Tx
	// bulk, when set (fixture loading into an empty store), collects puts to write them sorted
	// by key at the end of the transaction: bbolt then appends to each page in order instead of
	// scattering inserts, and never revisits a page in one transaction.
	bulk map[string][]kv
	// sink, when set (a Builder's spools, build.go), takes every put instead of the
	// transaction: there is no transaction then.
	sink     sink
	counts   map[string]*int64 // by pointer: a lookup by string(prefix) allocates nothing
	enqueued int
	db       *DB
	// txid is the transaction's id (kept: a committed Tx forgets it).
	txid int
	// written names the cached buckets this transaction wrote.
	written map[string]bool
	// deliveries lists the ids of the deliveries this transaction enqueued.
	deliveries []string
	// prices are the institutions this writer values users at (writeTx.pricing), by id: a
	// build's and a load's, shared by all their writers, are registered as they are written.
	prices map[string]*pricedInstitution
	// room is where a build's writer encodes its records (encode), one after the other.
	room []byte
}

// sink takes a write transaction's puts in place of bbolt: a build's spools (build.go). It
// keeps none of the slices it is given (it copies their bytes): a build's writer encodes
// every record in one room (encode).
type sink interface {
	// put takes key → value in bucket; the key's first plen bytes are an index prefix.
	put(bucket, key []byte, plen int, value []byte) error
	// putIndex takes an index entry (prefix + rest → value) and counts it under its prefix.
	putIndex(bucket, prefix, rest, value []byte) error
}

func (w *writeTx) count(prefix []byte, delta int64) {
	if n, ok := w.counts[string(prefix)]; ok {
		*n += delta
		return
	}
	w.counts[string(prefix)] = &delta
}

// kv is one deferred put.
type kv struct{ k, v []byte }

// put writes key → value in bucket (deferred and sorted in bulk mode).
func (w *writeTx) put(bucket, key, value []byte) error { return w.putSplit(bucket, key, 0, value) }

// coversUsers reports whether the store written keeps list items in its user index values
// (metaUserItems). A build's spools always do: a build writes into an emptied store.
func (w *writeTx) coversUsers() bool { return w.sink != nil || coversUsers(w.Tx) }

// keeps reports whether the store written keeps what mark names (nil: nothing). A build's
// spools always do: a build writes into an emptied store.
func (w *writeTx) keeps(mark []byte) bool {
	return mark != nil && (w.sink != nil || w.Bucket(bMeta).Get(mark) != nil)
}

// putSplit is put for a key whose first plen bytes are an index prefix (putIndex), which a
// build's sink sorts by.
func (w *writeTx) putSplit(bucket, key []byte, plen int, value []byte) error {
	if _, cached := w.db.caches[string(bucket)]; cached {
		if w.written == nil {
			w.written = map[string]bool{}
		}
		w.written[string(bucket)] = true
	}
	if w.sink != nil {
		return w.sink.put(bucket, key, plen, value)
	}
	if w.bulk != nil {
		w.bulk[string(bucket)] = append(w.bulk[string(bucket)], kv{key, value})
		return nil
	}
	return w.Bucket(bucket).Put(key, value)
}

// encode returns v's stored form (encodeRecord). A build's writer encodes it in its room,
// which the next record reuses: its sink copies what it takes, and a new slice a record was a
// tenth of the bytes a build allocates (decisions D17). Elsewhere bbolt (or bulk) keeps the
// slice until the transaction ends: each record gets its own.
func (w *writeTx) encode(v any) ([]byte, error) {
	if w.sink == nil {
		return encodeRecord(v)
	}
	raw, err := appendRecord(w.room[:0], v)
	w.room = raw
	return raw, err
}

// putRecord writes v in its stored form (codec.go).
func (w *writeTx) putRecord(bucket, key []byte, v any) error {
	raw, err := w.encode(v)
	if err != nil {
		return fmt.Errorf("encode %s/%q: %w", bucket, key, err)
	}
	return w.put(bucket, key, raw)
}

// flushBulk writes the deferred puts, each bucket's in key order.
func (w *writeTx) flushBulk() error {
	for name, kvs := range w.bulk {
		slices.SortFunc(kvs, func(a, b kv) int { return bytes.Compare(a.k, b.k) })
		b := w.Bucket([]byte(name))
		b.FillPercent = 0.9
		for _, e := range kvs {
			if err := b.Put(e.k, e.v); err != nil {
				return err
			}
		}
	}
	w.bulk = nil
	return nil
}

func (w *writeTx) flushCounts() error {
	b := w.Bucket(bCounts)
	for k, dp := range w.counts {
		d := *dp
		if d == 0 {
			continue
		}
		n := int64(0)
		if v := b.Get([]byte(k)); v != nil {
			n = int64(binary.BigEndian.Uint64(v))
		}
		n += d
		if n <= 0 {
			if err := b.Delete([]byte(k)); err != nil {
				return err
			}
			continue
		}
		if err := b.Put([]byte(k), u64(uint64(n))); err != nil {
			return err
		}
	}
	clear(w.counts)
	return nil
}

// putIndex adds an index entry and counts it under its prefix. In bulk mode and in a build (the
// sink's putIndex) the store was empty and fixture ids are unique, so every entry is new.
func (w *writeTx) putIndex(bucket, prefix, rest, value []byte) error {
	if w.sink != nil {
		return w.sink.putIndex(bucket, prefix, rest, value)
	}
	k := cat(prefix, rest)
	if w.bulk != nil || w.Bucket(bucket).Get(k) == nil {
		w.count(countKey(bucket, prefix), 1)
		w.countTime(bucket, prefix, rest, 1)
	}
	return w.putSplit(bucket, k, len(prefix), value)
}

// reindex replaces a record's index entries (prefix, rest) in bucket: it removes those of the
// stored version (olds; none for a new record) and adds the new ones, each with value sum.
func (w *writeTx) reindex(bucket []byte, olds, news [][2][]byte, sum []byte) error {
	for _, e := range olds {
		if err := w.deleteIndex(bucket, e[0], e[1]); err != nil {
			return err
		}
	}
	for _, e := range news {
		if err := w.putIndex(bucket, e[0], e[1], sum); err != nil {
			return err
		}
	}
	return nil
}

// deleteIndex removes an index entry and uncounts it.
func (w *writeTx) deleteIndex(bucket, prefix, rest []byte) error {
	b := w.Bucket(bucket)
	k := cat(prefix, rest)
	if b.Get(k) == nil {
		return nil
	}
	w.count(countKey(bucket, prefix), -1)
	w.countTime(bucket, prefix, rest, -1)
	return b.Delete(k)
}

// countKey names the counter of the index entries under prefix in bucket.
func countKey(bucket, prefix []byte) []byte { return cat(bucket, []byte{tagEntries}, prefix) }

// countOf returns how many entries of an index bucket lie under prefix.
func countOf(tx *bbolt.Tx, bucket, prefix []byte) int {
	if v := tx.Bucket(bCounts).Get(countKey(bucket, prefix)); v != nil {
		return int(binary.BigEndian.Uint64(v))
	}
	return 0
}

// readInstitution is getInstitution through the read cache: the result is shared and must
// not be modified (writers use getInstitution).
func (s *DB) readInstitution(tx *bbolt.Tx, id string) (*simulator.Institution, error) {
	r, err := s.readPriced(tx, id)
	if err != nil {
		return nil, err
	}
	return r.Institution, nil
}

// pricedInstitution is an institution as the read cache keeps it: with its prices as a
// priceTable, made once for every list page read until the institution is written again, and
// their version (priceVersion).
type pricedInstitution struct {
	*simulator.Institution
	prices  *priceTable
	version uint64
	raw     []byte // the stored record it was read from (writeTx.pricing), nil for one written
}

// readPriced is readInstitution with the institution's price table.
func (s *DB) readPriced(tx *bbolt.Tx, id string) (*pricedInstitution, error) {
	v, err := s.caches[string(bInstitutions)].get(tx, id, func() (any, error) {
		raw := tx.Bucket(bInstitutions).Get([]byte(id))
		in, err := getInstitution(tx, id)
		if err != nil {
			return nil, err
		}
		return &pricedInstitution{in, newPriceTable(in.Prices), priceVersion(tx, id), bytes.Clone(raw)}, nil
	})
	if err != nil {
		return nil, err
	}
	return v.(*pricedInstitution), nil
}

// getRecord decodes the value at key into v; a missing key is an ENOTFOUND error with msg.
func getRecord(tx *bbolt.Tx, bucket, key []byte, v any, msg string) error {
	raw := tx.Bucket(bucket).Get(key)
	if raw == nil {
		return &simulator.Error{Code: simulator.ENOTFOUND, Message: msg}
	}
	if err := decodeRecord(raw, v); err != nil {
		return fmt.Errorf("decode %s/%q: %w", bucket, key, err)
	}
	return nil
}
