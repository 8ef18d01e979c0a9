package bolt

import (
	"sync"

	"go.etcd.io/bbolt"
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
	c.mu.Unlock()
}

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
