package bolt

import (
	"hash/maphash"
	"strings"
	"sync"
	"sync/atomic"

	"go.etcd.io/bbolt"

	"github.com/partnersim/partnersim/simulator"
)

// readCache holds decoded records of one bucket for the read path (institutions: prices on
// every detail and list; keys: every authenticated request; signing secrets: every webhook
// attempt). Values are shared and must not
// be modified. A transaction that writes the bucket clears the cache when it commits, and a
// reader whose snapshot predates the last such write never fills it, so a cached value is
// never older than the newest committed one.
type readCache struct {
	m         sync.Map // key → decoded value
	mu        sync.Mutex
	lastWrite int // id of the last transaction that wrote the bucket
	// gen counts the clearings: a value read from the cache (or for it, in a transaction) after
	// gen was read is current while gen has not moved since (keyMemos).
	gen atomic.Uint64
}

// get returns the cached value for key, or decodes it with load inside tx and caches it.
func (c *readCache) get(tx *bbolt.Tx, key string, load func() (any, error)) (any, error) {
	if v, ok := c.m.Load(key); ok {
		return v, nil
	}
	v, err := load()
	if err != nil {
		return nil, err
	}
	c.mu.Lock()
	if tx.ID() >= c.lastWrite {
		c.m.Store(key, v)
	}
	c.mu.Unlock()
	return v, nil
}

// peek returns a cached value without a transaction. Clearing happens once a write commits, so
// a value seen here is as fresh as one seen inside a transaction begun at the same moment.
func (c *readCache) peek(key string) (any, bool) { return c.m.Load(key) }

// invalidate drops everything after transaction txid wrote the bucket.
func (c *readCache) invalidate(txid int) {
	c.mu.Lock()
	c.lastWrite = max(c.lastWrite, txid)
	c.m.Clear()
	c.gen.Add(1) // after the values are gone: a reader that saw the old gen may have read them
	c.mu.Unlock()
}

// generation returns the count of clearings so far.
func (c *readCache) generation() uint64 { return c.gen.Load() }

// countCache remembers how many entries matched a filtered walk (a filter no index covers, so
// the total of its list is counted by walking the chosen index), by the walk's range and
// filter and the store state it was counted in: a hit needs the reader's transaction to see
// exactly that state (the same last committed transaction id), so a count is never stale and
// no write has to clear it. Paging through one filtered list then walks only to each page. It
// holds at most countCacheMax entries and starts again empty when full.
type countCache struct {
	mu sync.Mutex
	m  map[string]countEntry
}

type countEntry struct{ txid, n int }

// countCacheMax bounds the count cache (each entry is a key of under a hundred bytes).
const countCacheMax = 4096

// get returns the count remembered for key in tx's state.
func (c *countCache) get(tx *bbolt.Tx, key []byte) (int, bool) {
	c.mu.Lock()
	e, ok := c.m[string(key)]
	c.mu.Unlock()
	return e.n, ok && e.txid == tx.ID()
}

// put remembers n for key in tx's state.
func (c *countCache) put(tx *bbolt.Tx, key []byte, n int) {
	c.mu.Lock()
	if c.m == nil || len(c.m) >= countCacheMax {
		c.m = make(map[string]countEntry)
	}
	c.m[string(key)] = countEntry{txid: tx.ID(), n: n}
	c.mu.Unlock()
}

// viewCache keeps Get User Detail's views by institution, id and id type for one store state:
// DB.gen, read before the view's transaction began, must not have moved since (every write
// transaction moves it once it returns, committed or not). A view read at gen g reflects every
// write that had returned when g was read, so serving it while gen is still g is as fresh as a
// transaction begun at that moment. Views are shared and must not be modified.
//
// A view is kept only when its key was asked for before in the same state (a doorkeeper: one
// bit a key hash), so a load over many users at random keeps nothing it would not read again;
// at most viewCacheMax views, and it starts again empty when full or when the state moves.
type viewCache struct {
	mu   sync.RWMutex
	gen  uint64
	m    map[viewKey]*simulator.UserView
	seen []uint64 // viewSeenBits bits
	hash maphash.Seed
}

type viewKey struct {
	inst, id string
	t        simulator.IDType
}

const (
	viewCacheMax = 4096
	viewSeenBits = 1 << 16
)

// get returns the view of key read in state gen, or nil.
func (c *viewCache) get(gen uint64, key viewKey) *simulator.UserView {
	c.mu.RLock()
	defer c.mu.RUnlock()
	if c.gen != gen {
		return nil
	}
	return c.m[key]
}

// put keeps v, read in state gen, when key was asked for before in that state.
func (c *viewCache) put(gen uint64, key viewKey, v *simulator.UserView) {
	c.mu.Lock()
	defer c.mu.Unlock()
	switch {
	case gen < c.gen:
		return // read in a state already left
	case gen > c.gen || c.m == nil || len(c.m) >= viewCacheMax:
		if c.m == nil {
			c.m, c.seen, c.hash = map[viewKey]*simulator.UserView{}, make([]uint64, viewSeenBits/64), maphash.MakeSeed()
		}
		clear(c.m)
		clear(c.seen)
		c.gen = gen
	}
	var h maphash.Hash
	h.SetSeed(c.hash)
	h.WriteString(key.inst)
	h.WriteByte(0)
	h.WriteString(key.id)
	h.WriteByte(0)
	h.WriteString(string(key.t))
	bit := h.Sum64() % viewSeenBits
	w, m := &c.seen[bit/64], uint64(1)<<(bit%64)
	if *w&m == 0 {
		*w |= m
		return
	}
	key.inst, key.id = strings.Clone(key.inst), strings.Clone(key.id) // not the request's bytes
	c.m[key] = v
}
