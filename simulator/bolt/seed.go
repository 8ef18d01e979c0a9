package bolt

import (
	"context"
	"errors"
	"fmt"

	"go.etcd.io/bbolt"
	berrors "go.etcd.io/bbolt/errors"

	"github.com/partnersim/partnersim/simulator"
)

// Loader writes a fixture set. At start-up (exclusive) it writes batches of write transactions
// and the store is marked loaded only by Finish, so a load cut short (a crash) is wiped and
// redone at the next start: nothing is half-loaded. At run time (a reset, with readers about)
// everything — emptying the store included — is one transaction committed by Finish, so
// readers see the old state or the new one, never a store half-emptied or half-loaded.
type Loader struct {
	s       *DB
	ctx     context.Context
	pending []func(w *writeTx) error
	// Batch is how many records go into one write transaction (exclusive loads only).
	Batch int
	// atomic loads write everything in Finish's transaction.
	atomic bool
	// prices are the institutions written, their users valued at them (writeTx.pricing).
	prices map[string]*pricedInstitution
}

// NewLoader returns a loader for a fixture set that replaces the store's contents. With
// exclusive (nothing else uses the store yet, as at start-up) the store is emptied now, batches
// skip fsync and one sync ends the load; otherwise the load is atomic (see Loader).
func (s *DB) NewLoader(ctx context.Context, exclusive bool) (*Loader, error) {
	if !exclusive {
		return &Loader{s: s, ctx: ctx, atomic: true, prices: map[string]*pricedInstitution{}}, nil
	}
	if err := s.wipe(ctx); err != nil {
		return nil, err
	}
	// bbolt splits nodes only at commit, so very large write transactions of random keys
	// degrade into memmoves; a few thousand records per transaction keeps inserts cheap. The
	// load skips fsync per batch (NoSync) and syncs once at Finish: a crash mid-load leaves the
	// store unmarked, and the next start wipes and reloads it.
	s.db.NoSync = true
	return &Loader{s: s, ctx: ctx, Batch: 10000, prices: map[string]*pricedInstitution{}}, nil
}

func (l *Loader) add(fn func(w *writeTx) error) error {
	l.pending = append(l.pending, fn)
	if !l.atomic && len(l.pending) >= l.Batch {
		return l.flush()
	}
	return nil
}

func (l *Loader) flush() error {
	if len(l.pending) == 0 {
		return nil
	}
	err := l.s.update(l.ctx, l.write)
	l.pending = l.pending[:0]
	return err
}

// write runs the queued records in w as one bulk write.
func (l *Loader) write(w *writeTx) error {
	w.bulk, w.prices = map[string][]kv{}, l.prices
	for _, fn := range l.pending {
		if err := fn(w); err != nil {
			return err
		}
	}
	return w.flushBulk()
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
	mark := func(w *writeTx) error {
		if err := w.Bucket(bMeta).Put(metaToken, []byte(sandboxToken)); err != nil {
			return err
		}
		return w.Bucket(bMeta).Put(metaFixtures, []byte("1"))
	}
	if l.atomic {
		err := l.s.update(l.ctx, func(w *writeTx) error {
			if err := w.emptyAll(); err != nil {
				return err
			}
			if err := l.write(w); err != nil {
				return err
			}
			return mark(w)
		})
		l.pending = nil
		return err
	}
	if err := l.flush(); err != nil {
		return err
	}
	l.s.db.NoSync = false
	if err := l.s.db.Sync(); err != nil {
		return err
	}
	return l.s.update(l.ctx, mark)
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

// wipe empties every bucket in a transaction of its own.
func (s *DB) wipe(ctx context.Context) error {
	return s.update(ctx, (*writeTx).emptyAll)
}

// emptyAll empties every bucket inside w's transaction and marks every read cache stale at
// its commit (a reset, a restore and a wipe all replace the whole store).
func (w *writeTx) emptyAll() error {
	for _, b := range allBuckets {
		if err := w.DeleteBucket(b); err != nil && !errors.Is(err, berrors.ErrBucketNotFound) {
			return fmt.Errorf("empty %s: %w", b, err)
		}
		if _, err := w.CreateBucket(b); err != nil {
			return err
		}
	}
	w.written = map[string]bool{}
	for name := range w.db.caches {
		w.written[name] = true
	}
	// Everything written from now on keeps the day counters and list items in the user index.
	return markNew(w.Tx)
}
