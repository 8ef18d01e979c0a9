package bolt

import (
	"context"
	"fmt"

	"go.etcd.io/bbolt"

	"partnersim/simulator"
)

// Loader writes a fixture set in batches of write transactions. The store is marked loaded only
// by Finish, so a load cut short (a crash) is wiped and redone at the next start: nothing is
// half-loaded.
type Loader struct {
	s       *DB
	ctx     context.Context
	pending []func(w *writeTx) error
	// Batch is how many records go into one write transaction.
	Batch int
}

// NewLoader empties the store and returns a loader for a fixture set. With exclusive (nothing
// else uses the store yet, as at start-up) batches skip fsync and one sync ends the load.
func (s *DB) NewLoader(ctx context.Context, exclusive bool) (*Loader, error) {
	if err := s.wipe(ctx); err != nil {
		return nil, err
	}
	// bbolt splits nodes only at commit, so very large write transactions of random keys
	// degrade into memmoves; a few thousand records per transaction keeps inserts cheap. The
	// load skips fsync per batch (NoSync) and syncs once at Finish: a crash mid-load leaves the
	// store unmarked, and the next start wipes and reloads it.
	s.db.NoSync = exclusive
	return &Loader{s: s, ctx: ctx, Batch: 10000}, nil
}

func (l *Loader) add(fn func(w *writeTx) error) error {
	l.pending = append(l.pending, fn)
	if len(l.pending) >= l.Batch {
		return l.flush()
	}
	return nil
}

func (l *Loader) flush() error {
	if len(l.pending) == 0 {
		return nil
	}
	err := l.s.update(l.ctx, func(w *writeTx) error {
		w.bulk = map[string][]kv{}
		for _, fn := range l.pending {
			if err := fn(w); err != nil {
				return err
			}
		}
		return w.flushBulk()
	})
	l.pending = l.pending[:0]
	return err
}

// Institution queues an institution.
func (l *Loader) Institution(in simulator.Institution) error {
	return l.add(func(w *writeTx) error { return w.putInstitution(&in) })
}

// Key queues a key (already hashed).
func (l *Loader) Key(k simulator.APIKey) error {
	return l.add(func(w *writeTx) error { return w.putKey(&k) })
}

// Member queues a member.
func (l *Loader) Member(m simulator.Member) error {
	return l.add(func(w *writeTx) error { return w.putMember(&m) })
}

// User queues a user.
func (l *Loader) User(u simulator.User) error {
	return l.add(func(w *writeTx) error { return w.putUser(nil, &u) })
}

// Transaction queues a transaction with its orders.
func (l *Loader) Transaction(t simulator.Transaction, orders []simulator.Order) error {
	ptrs := make([]*simulator.Order, len(orders))
	for i := range orders {
		ptrs[i] = &orders[i]
	}
	return l.add(func(w *writeTx) error { return w.putTransaction(&t, ptrs) })
}

// Finish writes what is queued, syncs, and marks the store loaded with the set's sandbox
// token (durably).
func (l *Loader) Finish(sandboxToken string) error {
	if err := l.flush(); err != nil {
		return err
	}
	if l.s.db.NoSync {
		l.s.db.NoSync = false
		if err := l.s.db.Sync(); err != nil {
			return err
		}
	}
	return l.s.update(l.ctx, func(w *writeTx) error {
		if err := w.Bucket(bMeta).Put(metaToken, []byte(sandboxToken)); err != nil {
			return err
		}
		return w.Bucket(bMeta).Put(metaFixtures, []byte("1"))
	})
}

// Loaded reports whether a fixture set was wholly loaded, and its sandbox token.
func (s *DB) Loaded(ctx context.Context) (bool, string, error) {
	var (
		ok    bool
		token string
	)
	err := s.view(ctx, func(tx *bbolt.Tx) error {
		b := tx.Bucket(bMeta)
		ok = b.Get(metaFixtures) != nil
		token = string(b.Get(metaToken))
		return nil
	})
	return ok, token, err
}

// wipe empties every bucket.
func (s *DB) wipe(ctx context.Context) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	var txid int
	defer func() { s.invalidateAll(txid) }()
	return s.db.Update(func(tx *bbolt.Tx) error {
		txid = tx.ID()
		for _, b := range allBuckets {
			if err := tx.DeleteBucket(b); err != nil && err != bbolt.ErrBucketNotFound {
				return fmt.Errorf("wipe %s: %w", b, err)
			}
			if _, err := tx.CreateBucket(b); err != nil {
				return err
			}
		}
		return nil
	})
}
