package bolt

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"

	"go.etcd.io/bbolt"

	"partnersim/simulator"
)

// Builder writes a whole fixture set into an empty store the fast way (issue 15): every record
// and index entry is spooled in memory as it arrives, then each bucket is sorted once across
// the whole set and appended in key order into pages filled to the brim (bbolt's FillPercent
// 1.0: an append-only bucket never splits a page it will write again), in a few large
// transactions without fsync, and the index counters are written once at the end. Nothing is
// visible as loaded until Finish marks the store, so a build cut short is wiped and redone at
// the next start, like Loader's.
//
// The same record encoders and index keys as every other write are used (writeTx's put
// methods, which spool instead of writing while a build runs), so a built store is the store a
// transactional load would have written.
type Builder struct {
	s   *DB
	w   *writeTx
	ctx context.Context
	// Progress, when set, is called as entries are written: done of the total of this round.
	Progress func(done, total int)
	// Budget bounds the bytes spooled before a round is written (0: buildBudget).
	Budget int
	// written names the buckets an earlier round wrote.
	written map[string]bool
	// fileWritten is set once the first round has written the store file (writeFile).
	fileWritten bool
}

// NewBuilder empties the store and returns a builder for it. Nothing else may use the store
// until Finish returns (start-up and `partnersim fixtures build`).
func (s *DB) NewBuilder(ctx context.Context) (*Builder, error) {
	if err := s.wipe(ctx); err != nil {
		return nil, err
	}
	return &Builder{s: s, ctx: ctx, w: &writeTx{db: s, counts: map[string]*int64{}, spool: map[string]*spool{}}, written: map[string]bool{}}, nil
}

// Institution spools an institution.
func (b *Builder) Institution(in simulator.Institution) error { return b.w.putInstitution(&in) }

// Key spools a key (already hashed).
func (b *Builder) Key(k simulator.APIKey) error { return b.w.putKey(&k) }

// Member spools a member.
func (b *Builder) Member(m simulator.Member) error { return b.w.putMember(&m) }

// User spools a user and its index entries.
func (b *Builder) User(u simulator.User) error {
	if err := b.w.putUser(nil, &u); err != nil {
		return err
	}
	return b.spooled(b.ctx)
}

// Transaction spools a transaction, its orders and their index entries.
func (b *Builder) Transaction(t simulator.Transaction, orders []simulator.Order) error {
	ptrs := make([]*simulator.Order, len(orders))
	for i := range orders {
		ptrs[i] = &orders[i]
	}
	if err := b.w.putTransaction(&t, ptrs); err != nil {
		return err
	}
	return b.spooled(b.ctx)
}

// Entries returns how many entries are spooled so far.
func (b *Builder) Entries() int {
	n := 0
	for _, sp := range b.w.spool {
		n += len(sp.ents)
	}
	return n
}

// buildTxEntries is how many entries one write transaction of Finish appends: large enough
// that commits are few, small enough that each time the file outgrows bbolt's memory map (which
// copies every dirty node of the open transaction out of the old map) little is copied: with a
// million entries a transaction, those copies were a fifth of a build's CPU.
const buildTxEntries = 1 << 17

// Finish sorts and writes everything spooled, syncs once and marks the store loaded with the
// set's sandbox token. A key spooled twice in one write (two records with one id: the fixture
// check prevents it) is refused rather than silently overwritten.
func (b *Builder) Finish(ctx context.Context, sandboxToken string) error {
	w := b.w
	for k, d := range w.counts {
		if *d > 0 {
			if err := w.spoolPut(bCounts, []byte(k), u64(uint64(*d))); err != nil {
				return err
			}
		}
	}
	if err := b.write(ctx); err != nil {
		return err
	}
	b.w = nil
	db := b.s.db
	if err := db.Sync(); err != nil {
		return err
	}
	return b.s.update(ctx, func(w *writeTx) error {
		w.written = map[string]bool{}
		for name := range w.db.caches { // written behind the caches' back
			w.written[name] = true
		}
		if err := w.Bucket(bMeta).Put(metaToken, []byte(sandboxToken)); err != nil {
			return err
		}
		return w.Bucket(bMeta).Put(metaFixtures, []byte("1"))
	})
}

// buildBudget bounds the memory a build spools before it writes what it has (decisions D17:
// no input costs unbounded memory). 100,000 users and 1,000,000 orders spool about 1.5 GB and
// are written once, in order; a larger set is written in several sorted rounds, the later
// ones inserting among the earlier ones' keys (slower, as a transactional load is, but bounded).
const buildBudget = 3 << 30

// spooled is called after each record: past the budget, what is spooled is written now.
func (b *Builder) spooled(ctx context.Context) error {
	budget := b.Budget
	if budget <= 0 {
		budget = buildBudget
	}
	if b.w.spoolBytes < budget {
		return nil
	}
	return b.write(ctx)
}

// write sorts every spooled bucket and writes it, then empties the spools. The first round
// writes a new store file bottom-up (writeFile); a later one inserts among the keys the earlier
// ones wrote, through bbolt's Put.
func (b *Builder) write(ctx context.Context) error {
	w := b.w
	first := !b.fileWritten
	var (
		buckets []string
		txid    uint64
	)
	if first {
		var err error
		if buckets, txid, err = b.absorb(); err != nil {
			return err
		}
	}
	names := make([]string, 0, len(w.spool))
	total := 0
	for name, sp := range w.spool {
		names = append(names, name)
		total += len(sp.ents)
	}
	slices.SortFunc(names, func(a, b string) int { return len(w.spool[b].ents) - len(w.spool[a].ents) })
	// Sort the buckets one after the other on their own goroutine, so that the next is sorted
	// while the one before is written (the writer is one goroutine: the other core would idle).
	sorted := make(chan *spool, len(names))
	go func() {
		for _, name := range names {
			sp := w.spool[name]
			sp.sort()
			sorted <- sp
		}
		close(sorted)
	}()
	defer func() {
		for range sorted { // a failed write still waits for the sorter
		}
	}()
	if first {
		if err := b.writeFile(ctx, buckets, txid, sorted, total); err != nil {
			return err
		}
		b.fileWritten = true
		clear(w.spool)
		w.spoolBytes = 0
		return nil
	}
	db := b.s.db
	db.NoSync = true
	defer func() { db.NoSync = false }()
	done := 0
	for _, name := range names {
		sp := <-sorted
		appendOnly := !b.written[name]
		for start := 0; start < len(sp.ents); start += buildTxEntries {
			if err := ctx.Err(); err != nil {
				return err
			}
			end := min(start+buildTxEntries, len(sp.ents))
			err := db.Update(func(tx *bbolt.Tx) error {
				bk := tx.Bucket([]byte(name))
				if appendOnly {
					bk.FillPercent = 1.0
				}
				var prev []byte
				if start > 0 {
					prev = sp.key(start - 1)
				}
				for i := start; i < end; i++ {
					k, v := sp.key(i), sp.value(i)
					if prev != nil && bytes.Compare(prev, k) >= 0 {
						return fmt.Errorf("build: %s: key %q spooled twice", name, k)
					}
					if err := bk.Put(k, v); err != nil {
						return err
					}
					prev = k
				}
				return nil
			})
			if err != nil {
				return err
			}
			done += end - start
			if b.Progress != nil {
				b.Progress(done, total)
			}
		}
		sp.release()
		b.written[name] = true
	}
	clear(w.spool)
	w.spoolBytes = 0
	return nil
}

// spool holds one bucket's entries for a build: keys and values copied into large chunks (a
// million orders make ~7 million entries; one allocation each would cost more than the data),
// and a small fixed-size reference per entry that the sort moves.
type spool struct {
	name   string // the bucket's
	chunks [][]byte
	ents   []spoolEnt
}

type spoolEnt struct {
	chunk, off, klen, vlen uint32
}

// spoolChunk is the size of a spool's chunks.
const spoolChunk = 32 << 20

var errEntryTooLarge = errors.New("build: an entry is larger than a spool chunk")

func (sp *spool) add(k, v []byte) error {
	n := len(k) + len(v)
	if n > spoolChunk {
		return errEntryTooLarge
	}
	if len(sp.chunks) == 0 || len(sp.chunks[len(sp.chunks)-1])+n > cap(sp.chunks[len(sp.chunks)-1]) {
		// Chunks grow from 64 KiB to spoolChunk: a small bucket stays small.
		size := 64 << 10
		if len(sp.chunks) > 0 {
			size = min(2*cap(sp.chunks[len(sp.chunks)-1]), spoolChunk)
		}
		sp.chunks = append(sp.chunks, make([]byte, 0, max(size, n)))
	}
	c := len(sp.chunks) - 1
	off := len(sp.chunks[c])
	sp.chunks[c] = append(append(sp.chunks[c], k...), v...)
	sp.ents = append(sp.ents, spoolEnt{chunk: uint32(c), off: uint32(off), klen: uint32(len(k)), vlen: uint32(len(v))})
	return nil
}

func (sp *spool) key(i int) []byte {
	e := sp.ents[i]
	return sp.chunks[e.chunk][e.off : e.off+e.klen : e.off+e.klen]
}

func (sp *spool) value(i int) []byte {
	e := sp.ents[i]
	start := e.off + e.klen
	return sp.chunks[e.chunk][start : start+e.vlen : start+e.vlen]
}

func (sp *spool) cmp(a, b spoolEnt) int {
	return bytes.Compare(sp.chunks[a.chunk][a.off:a.off+a.klen], sp.chunks[b.chunk][b.off:b.off+b.klen])
}

// sort sorts the entries by key, on two cores when there are many: each half sorted on its own
// goroutine, then merged.
func (sp *spool) sort() {
	if len(sp.ents) < 1<<16 {
		slices.SortFunc(sp.ents, sp.cmp)
		return
	}
	half := len(sp.ents) / 2
	a, b := sp.ents[:half], sp.ents[half:]
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		slices.SortFunc(a, sp.cmp)
	}()
	slices.SortFunc(b, sp.cmp)
	wg.Wait()
	out := make([]spoolEnt, 0, len(sp.ents))
	i, j := 0, 0
	for i < len(a) && j < len(b) {
		if sp.cmp(a[i], b[j]) <= 0 {
			out = append(out, a[i])
			i++
		} else {
			out = append(out, b[j])
			j++
		}
	}
	out = append(append(out, a[i:]...), b[j:]...)
	sp.ents = out
}

// release drops the spool's memory once written (bbolt keeps no reference after commit).
func (sp *spool) release() { sp.chunks, sp.ents = nil, nil }
