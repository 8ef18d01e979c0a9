package bolt

import (
	"context"
	"errors"
	"io/fs"
	"os"
	"runtime/debug"
	"sync/atomic"

	"github.com/partnersim/partnersim/fixtures"
	"github.com/partnersim/partnersim/simulator"
)

// This file writes a fixture set into the store: Build (the offline Builder, build.go, fed by
// the set's one checking pass), BuildFile (`partnersim fixtures build`) and Seed (the
// transactional Loader, seed.go, which a reset uses). They live beside the two writers they
// drive rather than in the wiring: what they do is the store's — which records go first, how
// the checking goroutines feed the builder's shards, when the store is marked loaded, how the
// collector runs while the spools fill — and the format they read (fixtures) imports only the
// domain (docs/decisions.md, "How the code is arranged").

// Progress reports a long load: phase "read" counts the records checked and spooled (its total
// is unknown until the files end, 0), phase "write" the store entries written of total.
// It may be called from several goroutines at once.
type Progress func(phase string, done, total int)

// DefaultsOf are the defaults a set gives new institutions, and its model portfolios.
func DefaultsOf(set *fixtures.Set) Defaults {
	return Defaults{Prices: set.DefaultPrices, Fees: set.DefaultFees, Portfolios: set.Portfolios}
}

// Build checks the fixture set in fsys and writes it into the store, which nothing else uses
// yet, the offline way (Builder): one pass over the files checks every record and spools it,
// then the store is written sorted and sequentially. On any problem the store is left empty
// and unmarked, so nothing half-loaded is ever served. It is how an empty store gets its set at
// start-up and what `partnersim fixtures build` runs.
func (s *DB) Build(ctx context.Context, fsys fs.FS, progress Progress) (*fixtures.Set, error) {
	budget := budgetFor(setBytes(fsys))
	return s.build(ctx, fsys, progress, func(b *Builder) { b.Budget = budget })
}

// build is Build with the builder set up by configure (its budget, its progress while the set
// is read).
func (s *DB) build(ctx context.Context, fsys fs.FS, progress Progress, configure func(*Builder)) (*fixtures.Set, error) {
	b, err := s.NewBuilder(ctx)
	if err != nil {
		return nil, err
	}
	configure(b)
	// The spools are most of the heap and live until written: collecting at half the live heap
	// (not Go's default, all of it) keeps a 100k-user set's peak well under its 3 GiB cap, at
	// little cost, since the spools hold no pointers to mark.
	defer debug.SetGCPercent(debug.SetGCPercent(buildGCPercent))
	// Checking the JSON and encoding the store's entries are both CPU-bound: each goroutine
	// that checks records spools them into a shard of its own, so the pass runs on every core.
	// The institutions go first: users are valued at their prices as they are spooled.
	var n atomic.Int64
	set, err := fixtures.OpenSpooled(fsys, func(ins []simulator.Institution) error { return writeInstitutions(b, ins) }, func() fixtures.Spool {
		return &shardSpool{sh: b.Shard(), n: &n, progress: progress}
	})
	if err != nil {
		return nil, err
	}
	if err := writeAccess(b, set); err != nil {
		return nil, err
	}
	if progress != nil {
		b.Progress = func(done, total int) { progress("write", done, total) }
	}
	if err := b.Finish(ctx, set.SandboxToken); err != nil {
		return nil, err
	}
	return set, nil
}

// setBytes returns the size of the set's files in all, or 0 when they cannot be listed.
func setBytes(fsys fs.FS) int64 {
	entries, err := fs.ReadDir(fsys, ".")
	if err != nil {
		return 0
	}
	var n int64
	for _, e := range entries {
		if info, err := e.Info(); err == nil && info.Mode().IsRegular() {
			n += info.Size()
		}
	}
	return n
}

// buildGCPercent is the garbage collector's GOGC while a set is built.
const buildGCPercent = 50

// tenantWriter writes a set's institutions, keys and members: the offline Builder or the
// Loader.
type tenantWriter interface {
	Institution(in simulator.Institution) error
	Key(k simulator.APIKey) error
	Member(m simulator.Member) error
}

// writeTenants writes the set's institutions, keys and members, in that order (a key and a
// member name their institution, and a user is valued at its institution's prices).
func writeTenants(w tenantWriter, set *fixtures.Set) error {
	if err := writeInstitutions(w, set.Institutions); err != nil {
		return err
	}
	return writeAccess(w, set)
}

// writeInstitutions writes institutions.
func writeInstitutions(w tenantWriter, institutions []simulator.Institution) error {
	for _, in := range institutions {
		if err := w.Institution(in); err != nil {
			return err
		}
	}
	return nil
}

// writeAccess writes the set's keys and members, once its institutions are written.
func writeAccess(w tenantWriter, set *fixtures.Set) error {
	for _, k := range set.Keys {
		if err := w.Key(k.APIKey); err != nil {
			return err
		}
	}
	for _, m := range set.Members {
		if err := w.Member(m); err != nil {
			return err
		}
	}
	return nil
}

// shardSpool hands the records one checking goroutine found clean to its shard of the
// builder, counting them for the progress report.
type shardSpool struct {
	sh       *BuildShard
	n        *atomic.Int64
	progress Progress
}

func (s *shardSpool) counted() {
	if n := s.n.Add(1); s.progress != nil && n%16384 == 0 {
		s.progress("read", int(n), 0)
	}
}

func (s *shardSpool) User(u simulator.User) error {
	s.counted()
	return s.sh.User(u)
}

func (s *shardSpool) Transaction(t simulator.Transaction, orders []simulator.Order) error {
	s.counted()
	return s.sh.Transaction(t, orders)
}

// BuildFile builds the set in fsys into a new store file at path (`partnersim fixtures build`):
// written beside it first and renamed into place once complete, so path never holds a partial
// store. It returns the set and the file's size.
func BuildFile(ctx context.Context, fsys fs.FS, path string, progress Progress) (*fixtures.Set, int64, error) {
	tmp := path + ".building"
	if err := os.Remove(tmp); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return nil, 0, err
	}
	db, err := Open(tmp, nil, nil)
	if err != nil {
		return nil, 0, err
	}
	set, err := db.Build(ctx, fsys, progress)
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

// Seed empties the store and loads the fixture set into it through the Loader; exclusive when
// nothing else uses the store yet (see NewLoader).
func (s *DB) Seed(ctx context.Context, set *fixtures.Set, exclusive bool) error {
	l, err := s.NewLoader(ctx, exclusive)
	if err != nil {
		return err
	}
	if err := writeTenants(l, set); err != nil {
		return err
	}
	// Decoding the streamed files and writing bbolt are both CPU-bound: decode in one goroutine
	// and write in this one, so a large set loads on two cores.
	records := make(chan func() error, 4096)
	decoded := make(chan error, 1)
	stop := make(chan struct{})
	go func() {
		send := func(fn func() error) error {
			select {
			case records <- fn:
				return nil
			case <-stop:
				return context.Canceled
			}
		}
		err := set.EachUser(func(u simulator.User) error { return send(func() error { return l.User(u) }) })
		if err == nil {
			err = set.EachTransaction(func(t simulator.Transaction, os []simulator.Order) error {
				return send(func() error { return l.Transaction(t, os) })
			})
		}
		close(records)
		decoded <- err
	}()
	for fn := range records {
		if err := fn(); err != nil {
			close(stop)
			for range records {
			}
			<-decoded
			return err
		}
	}
	if err := <-decoded; err != nil {
		return err
	}
	return l.Finish(set.SandboxToken)
}
