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
