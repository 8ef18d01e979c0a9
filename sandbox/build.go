package sandbox

import (
	"context"
	"errors"
	"io/fs"
	"os"
	"sync"
	"sync/atomic"

	"partnersim/fixtures"
	"partnersim/simulator"
	"partnersim/simulator/bolt"
)

// Progress reports a long load: phase "read" counts the records checked and spooled (its total
// is unknown until the files end, 0), phase "write" the store entries written of total.
type Progress func(phase string, done, total int)

// Build checks the fixture set in fsys and writes it into db, which nothing else uses yet, the
// offline way (bolt.Builder): one pass over the files checks every record and spools it, then
// the store is written sorted and sequentially. On any problem the store is left empty and
// unmarked, so nothing half-loaded is ever served. It is how an empty store gets its set at
// start-up and what `partnersim fixtures build` runs.
func Build(ctx context.Context, db *bolt.DB, fsys fs.FS, progress Progress) (*fixtures.Set, error) {
	b, err := db.NewBuilder(ctx)
	if err != nil {
		return nil, err
	}
	// Checking the JSON and encoding the store's entries are both CPU-bound: check in this
	// goroutine, spool in another, so the pass runs on two cores.
	sp := &asyncSpool{b: b, work: make(chan func() error, 4096), done: make(chan struct{}), progress: progress}
	go sp.run()
	set, err := fixtures.OpenSpooled(fsys, sp)
	close(sp.work)
	<-sp.done
	if err != nil {
		return nil, err
	}
	if err := sp.firstErr(); err != nil {
		return nil, err
	}
	for _, in := range set.Institutions {
		if err := b.Institution(in); err != nil {
			return nil, err
		}
	}
	for _, k := range set.Keys {
		if err := b.Key(k.APIKey); err != nil {
			return nil, err
		}
	}
	for _, m := range set.Members {
		if err := b.Member(m); err != nil {
			return nil, err
		}
	}
	if progress != nil {
		b.Progress = func(done, total int) { progress("write", done, total) }
	}
	if err := b.Finish(ctx, set.SandboxToken); err != nil {
		return nil, err
	}
	return set, nil
}

// asyncSpool hands the records fixtures.OpenSpooled checks to the builder on another
// goroutine; the builder's first error stops the pass.
type asyncSpool struct {
	b        *bolt.Builder
	work     chan func() error
	done     chan struct{}
	progress Progress
	n        atomic.Int64
	mu       sync.Mutex
	err      error
}

func (s *asyncSpool) run() {
	defer close(s.done)
	for fn := range s.work {
		if s.firstErr() != nil {
			continue // drain
		}
		if err := fn(); err != nil {
			s.mu.Lock()
			s.err = err
			s.mu.Unlock()
		}
	}
}

func (s *asyncSpool) firstErr() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.err
}

func (s *asyncSpool) send(fn func() error) error {
	if err := s.firstErr(); err != nil {
		return err
	}
	s.work <- fn
	if n := s.n.Add(1); s.progress != nil && n%16384 == 0 {
		s.progress("read", int(n), 0)
	}
	return nil
}

func (s *asyncSpool) User(u simulator.User) error {
	return s.send(func() error { return s.b.User(u) })
}

func (s *asyncSpool) Transaction(t simulator.Transaction, orders []simulator.Order) error {
	return s.send(func() error { return s.b.Transaction(t, orders) })
}

// BuildFile builds the set in fsys into a new store file at path (`partnersim fixtures build`):
// written beside it first and renamed into place once complete, so path never holds a partial
// store. It returns the set and the file's size.
func BuildFile(ctx context.Context, fsys fs.FS, path string, progress Progress) (*fixtures.Set, int64, error) {
	tmp := path + ".building"
	if err := os.Remove(tmp); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return nil, 0, err
	}
	db, err := bolt.Open(tmp, nil, nil)
	if err != nil {
		return nil, 0, err
	}
	set, err := Build(ctx, db, fsys, progress)
	if cerr := db.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(tmp, path)
	}
	if err != nil {
		os.Remove(tmp)
		return nil, 0, err
	}
	st, err := os.Stat(path)
	if err != nil {
		return nil, 0, err
	}
	return set, st.Size(), nil
}
