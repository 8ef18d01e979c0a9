package bolt

import (
	"bytes"
	"cmp"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"maps"
	"math"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"unsafe"

	"github.com/partnersim/partnersim/simulator"
)

// Builder writes a whole fixture set into an empty store the fast way (docs/SCALING.md): every record
// and index entry is spooled in memory as it arrives, then each bucket is sorted once across
// the whole set and written in key order as a new store file, bottom-up, pages filled to the
// brim (bbolt's FillPercent 1.0), and the index counters are written once at the end. A set
// larger than the memory budget is sorted in rounds spilled to run files and merged as the
// file is written (build_spill.go). Nothing is
// visible as loaded until Finish marks the store, so a build cut short is wiped and redone at
// the next start, like Loader's.
//
// The same record encoders and index keys as every other write are used (writeTx's put
// methods, which spool instead of writing while a build runs), so a built store is the store a
// transactional load would have written.
type Builder struct {
	s   *DB
	w   *writeTx
	own *BuildShard // the builder's own User and Transaction, spooled into w as a shard's
	ctx context.Context
	// Progress, when set, is called as entries are written: done of the total of this round.
	Progress func(done, total int)
	// Budget bounds the bytes spooled before a round is spilled (0: buildBudget; Build sets it
	// by the set's size, budgetFor).
	Budget int
	// spills are the runs earlier rounds spilled, by bucket; absorbed is set once the
	// store's own entries are spooled, with every bucket's name and the store's transaction id.
	spills   map[string][]spillRun
	absorbed bool
	buckets  []string
	txid     uint64

	// Shards spool concurrently: each holds the read side of mu while it spools a record, and
	// a round takes the write side to write what they all hold.
	mu      sync.RWMutex
	shards  []*BuildShard
	spooled atomic.Int64 // bytes in every spool
	err     error        // a round's failure, under mu: every later record gets it
}

// NewBuilder empties the store and returns a builder for it. Nothing else may use the store
// until Finish returns (start-up and `partnersim fixtures build`).
func (s *DB) NewBuilder(ctx context.Context) (*Builder, error) {
	if err := s.wipe(ctx); err != nil {
		return nil, err
	}
	// Run files of a build cut short.
	if old, err := filepath.Glob(filepath.Join(filepath.Dir(s.db.Path()), "."+filepath.Base(s.db.Path())+".run-*")); err == nil {
		for _, f := range old {
			os.Remove(f)
		}
	}
	b := &Builder{s: s, ctx: ctx, w: newSpoolTx(s, map[string]*pricedInstitution{}), spills: map[string][]spillRun{}}
	b.own = newShard(b, b.w)
	return b, nil
}

// newSpoolTx returns a build's writer, valuing users at prices (the build's institutions,
// shared by its writers: Builder.Institution registers each before any user is spooled).
func newSpoolTx(s *DB, prices map[string]*pricedInstitution) *writeTx {
	return &writeTx{db: s, counts: map[string]*int64{}, sink: &spools{by: map[string]*spool{}}, prices: prices}
}

// spools are a build's sink (db.go): every put of a writeTx goes to its bucket's spool, and
// Finish sorts and writes them.
type spools struct {
	by    map[string]*spool
	bytes int // what the spools hold, entries' references included
}

// spools returns the spools of a build's writeTx.
func (w *writeTx) spools() *spools { return w.sink.(*spools) }

// BuildShard spools records for a Builder from one goroutine: several shards spool at once
// (encoding the store's entries on every core), and Finish merges them.
type BuildShard struct {
	b *Builder
	w *writeTx
	// t and orders are the transaction being spooled, which putTransaction spools: made once
	// a shard, where a closure over each transaction and its orders' pointers took two
	// allocations a transaction (decisions D17). The spool copies what it is given.
	t              simulator.Transaction
	orders         []*simulator.Order
	putTransaction func(*writeTx) error
}

// Shard returns a new shard of the builder, for one goroutine.
func (b *Builder) Shard() *BuildShard {
	b.mu.Lock()
	defer b.mu.Unlock()
	sh := newShard(b, newSpoolTx(b.s, b.w.prices))
	b.shards = append(b.shards, sh)
	return sh
}

// newShard returns a shard of b spooling into w: a new shard's own writer, or the builder's.
func newShard(b *Builder, w *writeTx) *BuildShard {
	sh := &BuildShard{b: b, w: w}
	sh.putTransaction = func(w *writeTx) error { return w.putTransaction(&sh.t, sh.orders) }
	return sh
}

// User spools a user and its index entries.
func (sh *BuildShard) User(u simulator.User) error {
	return sh.b.spool(sh.w, func(w *writeTx) error { return w.putUser(nil, &u) })
}

// Transaction spools a transaction, its orders and their index entries.
func (sh *BuildShard) Transaction(t simulator.Transaction, orders []simulator.Order) error {
	sh.t = t
	for i := range orders {
		sh.orders = append(sh.orders, &orders[i])
	}
	err := sh.b.spool(sh.w, sh.putTransaction)
	clear(sh.orders) // the caller's orders are not kept alive
	sh.orders = sh.orders[:0]
	return err
}

// spool runs fn on w (a shard's or the builder's own) and, past the budget, writes a round.
func (b *Builder) spool(w *writeTx, fn func(*writeTx) error) error {
	b.mu.RLock()
	if b.err != nil {
		b.mu.RUnlock()
		return b.err
	}
	sp := w.spools()
	before := sp.bytes
	err := fn(w)
	total := b.spooled.Add(int64(sp.bytes - before))
	b.mu.RUnlock()
	if err != nil {
		return err
	}
	budget := b.Budget
	if budget <= 0 {
		budget = buildBudget
	}
	if total < int64(budget) {
		return nil
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.err == nil && b.spooled.Load() >= int64(budget) { // not written by another shard meanwhile
		b.err = b.write(b.ctx, false)
		b.spooled.Store(0)
	}
	return b.err
}

// Institution spools an institution. Its users are valued at its prices as they are spooled
// (userIndexValue): write it before them.
func (b *Builder) Institution(in simulator.Institution) error { return b.w.putInstitution(&in) }

// Key spools a key (already hashed).
func (b *Builder) Key(k simulator.APIKey) error { return b.w.putKey(&k) }

// Member spools a member.
func (b *Builder) Member(m simulator.Member) error { return b.w.putMember(&m) }

// User spools a user and its index entries (as a shard's User, on the builder's own spool).
func (b *Builder) User(u simulator.User) error { return b.own.User(u) }

// Transaction spools a transaction, its orders and their index entries (as a shard's
// Transaction, on the builder's own spool).
func (b *Builder) Transaction(t simulator.Transaction, orders []simulator.Order) error {
	return b.own.Transaction(t, orders)
}

// buildTxEntries is how often a bucket's writing reports progress and looks at its context.
const buildTxEntries = 1 << 17

// Finish sorts and writes everything spooled, syncs once and marks the store loaded with the
// set's sandbox token. A key spooled twice in one write (two records with one id: the fixture
// check prevents it) is refused rather than silently overwritten.
func (b *Builder) Finish(ctx context.Context, sandboxToken string) error {
	b.mu.Lock()
	defer b.mu.Unlock()
	defer b.removeSpills()
	if b.err != nil {
		return b.err
	}
	if err := b.write(ctx, true); err != nil {
		return err
	}
	b.w, b.own = nil, nil
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

// buildBudget bounds the memory a build spools before it spills a round (decisions D17: no
// input costs unbounded memory): a round of 1 GiB keeps a build's peak RSS under 2 GiB
// whatever the set's size (1,000,000 users and 10,000,000 orders spool about fifteen).
const buildBudget = 1 << 30

// buildInMemory is how much a set expected to spool all of (spoolPerInputByte × its files'
// bytes) may spool before its first spill (Budget, budgetFor): spilling costs a set that
// nearly fits a round written to disk and a merge — 100,000 users and 1,000,000 orders (528 MB
// of files, ~1.5 GB spooled) took 18.8–21.6 s to build on the first serve with a 1 GiB
// budget against 10.7–11.5 s in memory, at a peak RSS of 1.94 GB.
const buildInMemory = 1800 << 20

// spoolPerInputByte is the spool's size per byte of a set's files, with room (the 100k + 1M
// set: 553 MB of JSON spool 0.96 GB; 1.6 GB before the spools shared what an entry repeats of
// the one before, spool.addParts).
const spoolPerInputByte = 3

// budgetFor returns the budget of a build of a set of files of setBytes in all: no spill for a
// set expected to fit buildInMemory, rounds of buildBudget for a larger one.
func budgetFor(setBytes int64) int {
	if setBytes > 0 && setBytes*spoolPerInputByte <= buildInMemory {
		return buildInMemory
	}
	return buildBudget
}

// write sorts every spooled bucket and empties the spools: into run files (spill) while the
// build goes on, into the new store file (writeFile, merging the runs) when final. The caller
// holds mu (or is Finish).
func (b *Builder) write(ctx context.Context, final bool) error {
	if !b.absorbed {
		var err error
		if b.buckets, b.txid, err = b.absorb(); err != nil {
			return err
		}
		b.absorbed = true
	}
	runs, total, err := b.takeRuns()
	if err != nil {
		return err
	}
	sorted := sortRuns(runs)
	defer func() {
		for range sorted { // a failed write still waits for the sorters
		}
	}()
	if final {
		for _, rs := range b.spills {
			for _, r := range rs {
				total += r.n
			}
		}
		return b.writeFile(ctx, b.buckets, b.txid, sorted, total)
	}
	done := 0
	for br := range sorted {
		if err := ctx.Err(); err != nil {
			return err
		}
		if err := b.spill(br); err != nil {
			return err
		}
		done += br.n
		if b.Progress != nil {
			b.Progress(done, total)
		}
	}
	return nil
}

// takeRuns takes every spool out of the builder and its shards, grouped by bucket, largest
// bucket first, and returns them with their number of entries. The caller holds mu.
func (b *Builder) takeRuns() ([]*bucketRuns, int, error) {
	byName := map[string]*bucketRuns{}
	var runs []*bucketRuns
	total := 0
	ws := append([]*writeTx{b.w}, b.shardTxs()...)
	if err := nameCounts(ws); err != nil {
		return nil, 0, err
	}
	for _, w := range ws {
		for name, sp := range w.spools().by {
			br := byName[name]
			if br == nil {
				br = &bucketRuns{name: name, sums: name == string(bCounts), sorted: make(chan struct{})}
				byName[name] = br
				runs = append(runs, br)
			}
			br.runs = append(br.runs, sp)
			br.n += len(sp.ents)
			total += len(sp.ents)
		}
		w.sink = &spools{by: map[string]*spool{}}
	}
	b.spooled.Store(0)
	slices.SortFunc(runs, func(a, b *bucketRuns) int { return b.n - a.n })
	return runs, total, nil
}

func (b *Builder) shardTxs() []*writeTx {
	ws := make([]*writeTx, len(b.shards))
	for i, sh := range b.shards {
		ws[i] = sh.w
	}
	return ws
}

// bucketRuns is one bucket's spools (the builder's own and each shard's): each is sorted on
// its own, and they are merged as they are written.
type bucketRuns struct {
	name   string
	runs   []*spool
	n      int           // entries
	ranked bool          // the runs' prefix ids are ranks, and no prefix is a prefix of another
	sums   bool          // bCounts: a key spooled more than once is one counter, its values summed
	sorted chan struct{} // closed once every run is sorted
}

// sortRuns sorts every run on two goroutines (the machine's cores; bbolt's page format is
// written by one), and sends each bucket once all its runs are sorted, in the order given.
func sortRuns(runs []*bucketRuns) <-chan *bucketRuns {
	type job struct {
		br  *bucketRuns
		sp  *spool
		end *sync.WaitGroup
	}
	jobs := make(chan job)
	go func() {
		defer close(jobs)
		for _, br := range runs {
			br.rank()
			end := &sync.WaitGroup{}
			end.Add(len(br.runs))
			go func() {
				end.Wait()
				close(br.sorted)
			}()
			for _, sp := range br.runs {
				jobs <- job{br, sp, end}
			}
		}
	}()
	for range 2 {
		go func() {
			for j := range jobs {
				j.sp.sort(j.br.ranked)
				j.end.Done()
			}
		}()
	}
	out := make(chan *bucketRuns)
	go func() {
		defer close(out)
		for _, br := range runs {
			<-br.sorted
			out <- br
		}
	}()
	return out
}

// rank gives every prefix of the bucket's runs its rank among them all, so that entries of
// different runs compare by rank, and notes whether the ranks order the keys (no prefix is a
// prefix of another).
func (br *bucketRuns) rank() {
	var all []string
	for _, sp := range br.runs {
		all = append(all, sp.byID...)
	}
	slices.Sort(all)
	all = slices.Compact(all)
	br.ranked = true
	for i := 1; i < len(all); i++ {
		// Sorted, a prefix of another sits just before one it prefixes.
		if strings.HasPrefix(all[i], all[i-1]) {
			br.ranked = false
			break
		}
	}
	ranks := make(map[string]uint32, len(all))
	for r, p := range all {
		ranks[p] = uint32(r)
	}
	for _, sp := range br.runs {
		ids := make([]uint32, len(sp.byID))
		for id, p := range sp.byID {
			ids[id] = ranks[p]
		}
		for i := range sp.ents {
			sp.ents[i].pfx = ids[sp.ents[i].pfx]
		}
		// The entries name their prefix by rank now: the bucket's list of prefixes by rank is
		// what keyParts reads it from.
		sp.prefixes, sp.byID = nil, all
	}
}

// merged returns the bucket's entries one at a time in key order, merging its sorted runs,
// and fails on a key spooled twice (sums: adds up its values instead, summed). Each entry is
// compared with the one before by the bytes the entries carry (compareEnts), not by reading
// both keys: that check, on every key of the file, was a twelfth of a build's CPU.
func (br *bucketRuns) merged() source {
	pos := make([]int, len(br.runs))
	var (
		prevSp *spool
		prev   spoolEnt
	)
	next := func() ([]byte, []byte, []byte, bool, error) {
		best := -1
		for r, sp := range br.runs {
			if pos[r] == len(sp.ents) {
				continue
			}
			if best < 0 || compareEnts(br.ranked, sp, sp.ents[pos[r]], br.runs[best], br.runs[best].ents[pos[best]]) < 0 {
				best = r
			}
		}
		if best < 0 {
			return nil, nil, nil, false, nil
		}
		sp := br.runs[best]
		e := sp.ents[pos[best]]
		pos[best]++
		if prevSp != nil {
			if c := compareEnts(br.ranked, prevSp, prev, sp, e); c > 0 || c == 0 && !br.sums {
				return nil, nil, nil, false, fmt.Errorf("build: %s: key %q spooled twice", br.name, sp.keyOf(e))
			}
		}
		prevSp, prev = sp, e
		p, rest := sp.keyParts(e)
		return p, rest, sp.valueOf(e), true, nil
	}
	if br.sums {
		return summed(next)
	}
	return next
}

func (br *bucketRuns) release() {
	for _, sp := range br.runs {
		sp.release()
	}
}

// spool holds one bucket's entries for a build: keys and values copied into large chunks (a
// million orders make ~7 million entries; one allocation each would cost more than the data),
// and a small fixed-size reference per entry that the sort moves.
//
// Sorting compares keys without reading them where it can (reading them is a cache miss each:
// that was most of the sort): an index key is its prefix, interned per spool, and the rest,
// whose first 8 bytes the reference keeps. When no prefix is a prefix of another, keys order
// by the prefixes' ranks, then by those 8 bytes, and only then by their bytes.
//
// The chunks hold only what is not already there: a key's rest without its interned prefix,
// and a rest or a value equal to the entry's before is not copied again but referenced (an
// order's six index entries share one rest, five of them one value; a user's index entries one
// value). Memory the spools touch is what a build pays for most in the kernel (each new page is
// zeroed; on a virtual machine, backed by its host first): the 100k-user set spools 40 % fewer
// bytes (0.96 GB, 1.61 GB before).
type spool struct {
	name     string // the bucket's
	chunks   [][]byte
	ents     []spoolEnt
	prefixes map[string]uint32 // index prefix → id (its rank once sorted)
	byID     []string          // the prefixes by id (by rank once sorted: the bucket's)
	last     uint32            // the prefix id of the entry added last
	// lastK and lastV are where the rest and the value of the entry added last lie in the last
	// chunk (addParts refers to them again when equal); lastAt is where the value's length is.
	lastK, lastV span
	lastAt       uint32
	// The index counters of the spooled entries by prefix id, and the prefix id and minute of
	// each timed one (see spools.putIndex).
	counts []int64
	times  []uint64
	// mapped holds the chunks mapped outside Go's heap (newChunk), and the rooms of the
	// entries and of the time notes when they are mapped too (growRoom), freed by release (the
	// notes' once counted, nameCounts) or, should a failed build drop the spool unreleased,
	// once the spool is collected.
	mapped *mappedChunks
}

type mappedChunks struct {
	list  [][]byte
	ents  []byte // the room of spool.ents, when mapped
	times []byte // the room of spool.times, when mapped
}

func (m *mappedChunks) free() {
	for _, b := range m.list {
		freeChunk(b)
	}
	m.list = nil
	freeRoom(&m.ents)
	freeRoom(&m.times)
}

// freeRoom unmaps *room, if mapped, and forgets it.
func freeRoom(room *[]byte) {
	if *room != nil {
		freeChunk(*room)
		*room = nil
	}
}

// mapping returns the spool's record of what it mapped, new if need be.
func (sp *spool) mapping() *mappedChunks {
	if sp.mapped == nil {
		sp.mapped = &mappedChunks{}
		runtime.AddCleanup(sp, (*mappedChunks).free, sp.mapped)
	}
	return sp.mapped
}

// growEnts doubles the room of the spool's entries (growRoom).
func (sp *spool) growEnts() {
	sp.ents = growRoom(sp.ents, &sp.mapping().ents, max(2*cap(sp.ents), 1024))
}

// growRoom returns s with room for n elements, its elements kept, and sets *room to the
// mapping that holds them (nil: Go's heap holds them). T holds no pointer. Past a huge page the
// room is mapped outside Go's heap (newChunk), like the chunks: a spool's entries and hour notes
// hold no pointer, and on the heap they were most of it — a million-user build's rounds left
// ~1.3 GB of heap spans resident for ~0.5 GB of entries (an append's old and new arrays, and
// the room doubling leaves unused, until the scavenger returned them), beside the chunks. A
// mapped room's pages are resident only once written, and go back to the system when it is
// freed (freeRoom).
//
// A mapped room grows where it lies (growChunk, mremap on Linux): its elements are not
// copied, and the pages they fill are neither freed nor faulted in and zeroed again in a new
// room (decisions D17) — doubling into fresh rooms touched as many bytes again as the final
// rooms, ~0.3 GB of the 100k + 1M set's build, and held a room's old and new copies resident at
// once.
func growRoom[T any](s []T, room *[]byte, n int) []T {
	size := n * int(unsafe.Sizeof(*new(T)))
	if *room != nil {
		if grown, ok := growChunk(*room, size); ok {
			*room = grown
			return unsafe.Slice((*T)(unsafe.Pointer(unsafe.SliceData(grown))), n)[:len(s)]
		}
	}
	var grown []T
	var mapped []byte
	if size >= hugeChunk {
		if b, ok := newChunk(size); ok {
			mapped = b[:size]
			grown = unsafe.Slice((*T)(unsafe.Pointer(unsafe.SliceData(mapped))), n)[:0]
		}
	}
	if grown == nil {
		grown = make([]T, 0, n)
	}
	grown = append(grown, s...)
	freeRoom(room)
	*room = mapped
	return grown
}

// hugeChunk is the smallest chunk mapped outside Go's heap (newChunk): a huge page.
const hugeChunk = 2 << 20

// spoolEnt is an entry's reference: 24 bytes, a quarter less than offsets and lengths of both
// its parts would take (a million orders make ~7 million), the value's length being kept in
// the chunk before it.
type spoolEnt struct {
	head  uint64 // the first 8 bytes after the prefix, big-endian, 0-padded
	pfx   uint32 // the prefix's id in its spool; its rank in the bucket once ranked
	koff  uint32 // where the key's rest (after its prefix) lies in the chunk
	vat   uint32 // where the value lies in the chunk: its length (uvarint), then its bytes
	chunk uint16 // the chunk of both
	klen  uint16 // the key's rest's length
}

// span is where bytes lie in a spool's chunk.
type span struct{ off, len uint32 }

func (s span) of(chunk []byte) []byte { return chunk[s.off : s.off+s.len : s.off+s.len] }

// spoolEntSize is what a spooled entry costs besides its bytes.
const spoolEntSize = int(unsafe.Sizeof(spoolEnt{}))

// spoolChunk is the size of a spool's chunks.
const spoolChunk = 32 << 20

var errEntryTooLarge = errors.New("build: an entry is larger than a spool chunk")

// maxSpoolChunks is the most chunks a spool holds (spoolEnt.chunk): 2 TiB.
const maxSpoolChunks = math.MaxUint16 + 1

func (sp *spool) add(k []byte, plen int, v []byte) error {
	_, err := sp.addParts(k, nil, plen, v)
	return err
}

// addParts spools the entry whose key is prefix+rest, the first plen bytes (at most prefix's)
// its index prefix, and returns how many bytes of the chunks it took.
func (sp *spool) addParts(prefix, rest []byte, plen int, v []byte) (int, error) {
	if plen > len(prefix) {
		return 0, fmt.Errorf("build: an index prefix of %d bytes in a key part of %d", plen, len(prefix))
	}
	more := prefix[plen:] // the key's rest is more+rest
	klen := len(more) + len(rest)
	if klen > math.MaxUint16 {
		return 0, fmt.Errorf("build: a key of %d bytes", len(prefix)+len(rest))
	}
	vn := keptLen(v)
	if klen+vn > spoolChunk {
		return 0, errEntryTooLarge
	}
	c := len(sp.chunks) - 1
	sameK, sameV := false, false
	if c >= 0 {
		chunk := sp.chunks[c]
		if k := sp.lastK.of(chunk); len(k) == klen && bytes.Equal(k[:len(more)], more) && bytes.Equal(k[len(more):], rest) {
			sameK = true
		}
		sameV = bytes.Equal(sp.lastV.of(chunk), v)
	}
	n := 0
	if !sameK {
		n += klen
	}
	if !sameV {
		n += vn
	}
	if c < 0 || len(sp.chunks[c])+n > cap(sp.chunks[c]) {
		if c+1 == maxSpoolChunks {
			return 0, fmt.Errorf("build: %s: a spool of more than %d chunks", sp.name, maxSpoolChunks)
		}
		// Chunks grow from 64 KiB to spoolChunk: a small bucket stays small. The entry's rest
		// and value lie in one chunk: both are copied into the new one.
		size := 64 << 10
		if c >= 0 {
			size = min(2*cap(sp.chunks[c]), spoolChunk)
		}
		n, sameK, sameV = klen+vn, false, false
		chunk, mapped := newChunk(max(size, n))
		if mapped {
			m := sp.mapping()
			m.list = append(m.list, chunk)
		}
		sp.chunks = append(sp.chunks, chunk)
		c++
	}
	chunk := sp.chunks[c]
	if !sameK {
		sp.lastK = span{uint32(len(chunk)), uint32(klen)}
		chunk = append(append(chunk, more...), rest...)
	}
	if !sameV {
		sp.lastAt = uint32(len(chunk))
		chunk = binary.AppendUvarint(chunk, uint64(len(v)))
		sp.lastV = span{uint32(len(chunk)), uint32(len(v))}
		chunk = append(chunk, v...)
	}
	sp.chunks[c] = chunk
	id, ok := sp.prefixes[string(prefix[:plen])]
	if !ok {
		if sp.prefixes == nil {
			sp.prefixes = map[string]uint32{}
		}
		id = uint32(len(sp.byID))
		p := string(prefix[:plen])
		sp.prefixes[p] = id
		sp.byID = append(sp.byID, p)
		n += len(p) + prefixCost
	}
	sp.last = id
	if len(sp.ents) == cap(sp.ents) {
		sp.growEnts()
	}
	sp.ents = append(sp.ents, spoolEnt{head: headAt(sp.lastK.of(chunk), 0), pfx: id,
		koff: sp.lastK.off, vat: sp.lastAt, chunk: uint16(c), klen: uint16(klen)})
	return n, nil
}

// keptLen is what a spool's chunk takes to keep the value v: its length (uvarint), its bytes.
func keptLen(v []byte) int {
	l := 1
	for n := len(v); n >= 0x80; n >>= 7 {
		l++
	}
	return l + len(v)
}

// prefixCost is what interning a prefix costs besides its bytes: its entry in the map and the
// list of prefixes, and its counter.
const prefixCost = 64

// headAt is the 8 bytes of k from at, big-endian, 0-padded: an entry's head.
func headAt(k []byte, at int) uint64 {
	var head [8]byte
	if at < len(k) {
		copy(head[:], k[at:])
	}
	return binary.BigEndian.Uint64(head[:])
}

// keyParts returns an entry's key as its prefix and its rest.
func (sp *spool) keyParts(e spoolEnt) (prefix, rest []byte) {
	p := sp.byID[e.pfx]
	return unsafe.Slice(unsafe.StringData(p), len(p)), sp.restOf(e)
}

// restOf returns an entry's key after its prefix.
func (sp *spool) restOf(e spoolEnt) []byte {
	return span{e.koff, uint32(e.klen)}.of(sp.chunks[e.chunk])
}

// keyOf returns an entry's key, in a new slice.
func (sp *spool) keyOf(e spoolEnt) []byte {
	p, rest := sp.keyParts(e)
	return append(slices.Clip(p), rest...)
}

func (sp *spool) valueOf(e spoolEnt) []byte {
	b := sp.chunks[e.chunk][e.vat:]
	n, w := binary.Uvarint(b)
	return b[w : w+int(n) : w+int(n)]
}

// spool returns the spool of bucket, new if need be.
func (s *spools) spool(bucket []byte) *spool {
	sp := s.by[string(bucket)]
	if sp == nil {
		sp = &spool{name: string(bucket)}
		s.by[string(bucket)] = sp
	}
	return sp
}

// put spools one entry of a build; the key's first plen bytes are its index prefix.
func (s *spools) put(bucket, key []byte, plen int, value []byte) error {
	n, err := s.spool(bucket).addParts(key, nil, plen, value)
	s.bytes += n + spoolEntSize
	return err
}

// putIndex is writeTx.putIndex in a build: it spools the entry and counts it under its prefix
// (and day, hour and minute), by the spool's id of the prefix instead of by the counter's name
// (a lookup of a long string per counter and entry was a tenth of a build); nameCounts names the
// counters. A minute is noted, not counted, here: a map of counters by prefix and day missed the
// cache on every entry (a twentieth of a build), so nameTimeCounts sorts the notes and counts
// their runs, by day and, for a prefix that keeps them, by hour and minute.
func (s *spools) putIndex(bucket, prefix, rest, value []byte) error {
	sp := s.spool(bucket)
	n, err := sp.addParts(prefix, rest, len(prefix), value)
	s.bytes += n + spoolEntSize
	if err != nil {
		return err
	}
	id := sp.last
	if int(id) == len(sp.counts) {
		sp.counts = append(sp.counts, 0)
	}
	sp.counts[id]++
	if timed(prefix) {
		if len(sp.times) == cap(sp.times) {
			sp.times = growRoom(sp.times, &sp.mapping().times, max(2*cap(sp.times), 1024))
		}
		sp.times = append(sp.times, uint64(id)<<32|uint64(minuteOf(rest[:8])))
	}
	return nil
}

// nameCounts spools the counters of every writeTx of a build, each on a goroutine of its own.
func nameCounts(ws []*writeTx) error {
	errs := make([]error, len(ws))
	var wg sync.WaitGroup
	for i, w := range ws {
		wg.Go(func() { errs[i] = w.nameCounts() })
	}
	wg.Wait()
	return errors.Join(errs...)
}

// nameCounts spools the counters of w's spools (spools.putIndex) into w's spool of bCounts by
// name, each as what its prefix (and day) counted in this round: the same counter spooled by
// other shards and rounds is summed as the bucket is written (bucketRuns.sums). They were kept
// in a map by name until the end of the build instead, which held a counter per user and day
// — a gigabyte of a 1M-user build's heap, then copied into the spool at once.
func (w *writeTx) nameCounts() error {
	sps := slices.Collect(maps.Values(w.spools().by)) // putting into bCounts may add its spool
	var n [8]byte
	for _, sp := range sps {
		bucket := []byte(sp.name)
		for id, c := range sp.counts {
			if c != 0 {
				binary.BigEndian.PutUint64(n[:], uint64(c))
				if err := w.sink.put(bCounts, countKey(bucket, []byte(sp.byID[id])), 0, n[:]); err != nil {
					return err
				}
			}
		}
		if err := w.nameTimeCounts(bucket, sp.byID, sp.times); err != nil {
			return err
		}
		sp.counts, sp.times = nil, nil
		if sp.mapped != nil {
			freeRoom(&sp.mapped.times)
		}
	}
	return nil
}

// compareEnts orders entry a of spool sa and entry b of spool sb by their keys: by prefix rank
// and head first when ranked (see spool), by their bytes otherwise.
func compareEnts(ranked bool, sa *spool, a spoolEnt, sb *spool, b spoolEnt) int {
	if ranked {
		if a.pfx != b.pfx {
			return cmp.Compare(a.pfx, b.pfx)
		}
		if a.head != b.head {
			return cmp.Compare(a.head, b.head)
		}
		return bytes.Compare(sa.restOf(a), sb.restOf(b)) // one prefix
	}
	pa, ra := sa.keyParts(a)
	pb, rb := sb.keyParts(b)
	return compareSplit(pa, ra, pb, rb)
}

// compareSplit compares the keys a0+a1 and b0+b1 as bytes.Compare compares them joined.
func compareSplit(a0, a1, b0, b1 []byte) int {
	if bytes.Equal(a0, b0) {
		return bytes.Compare(a1, b1)
	}
	la, lb := len(a0)+len(a1), len(b0)+len(b1)
	for {
		if len(a0) == 0 {
			a0, a1 = a1, nil
		}
		if len(b0) == 0 {
			b0, b1 = b1, nil
		}
		if len(a0) == 0 || len(b0) == 0 {
			return cmp.Compare(la, lb)
		}
		n := min(len(a0), len(b0))
		if c := bytes.Compare(a0[:n], b0[:n]); c != 0 {
			return c
		}
		a0, b0 = a0[n:], b0[n:]
	}
}

// sort sorts the entries by key (ranked: see compareEnts). Ranked, it is a radix sort on the
// 12 bytes the entries carry (prefix rank, then head) that compares keys only within a run of
// entries equal in those bytes: a comparison sort of a million entries was twenty compares
// each, and a compare that reached the key's bytes a cache miss (a fifth of a build's CPU).
func (sp *spool) sort(ranked bool) {
	if !ranked {
		slices.SortFunc(sp.ents, func(a, b spoolEnt) int { return compareEnts(false, sp, a, sp, b) })
		return
	}
	if len(sp.ents) < 2 {
		return
	}
	sp.radixSort(sp.ents, radixDigitsOf(sp.ents, 0), 0)
}

// radixDigits is how many bytes of an entry the radix sort orders by: the prefix rank's 4,
// then the head's 8, most significant first (radixDigit).
const radixDigits = 12

// radixDigitsOf returns the digits from first on that tell some of ents apart (the bytes no
// two entries differ in order nothing: they are skipped).
func radixDigitsOf(ents []spoolEnt, first int) []int {
	var diff spoolEnt
	for _, e := range ents {
		diff.pfx |= e.pfx ^ ents[0].pfx
		diff.head |= e.head ^ ents[0].head
	}
	var digits []int
	for d := first; d < radixDigits; d++ {
		if radixDigit(&diff, d) != 0 {
			digits = append(digits, d)
		}
	}
	return digits
}

func radixDigit(e *spoolEnt, d int) byte {
	if d < 4 {
		return byte(e.pfx >> (24 - 8*d))
	}
	return byte(e.head >> (56 - 8*(d-4)))
}

// radixSmall is the run below which the radix sort hands over to a comparison sort.
const radixSmall = 32

// radixSort sorts ents, ranked entries of sp equal in the bytes before digits[0], by the bytes
// digits name and then by their keys: an in-place MSD radix sort (American flag sort), one
// counting pass and one permuting pass per byte that tells entries apart. Entries equal in all
// 12 bytes (keys alike in their first 8 bytes after the prefix: a count's key, a member's)
// are sorted by the next 8 bytes of their keys the same way (deeper: how many such rounds
// came before), and by comparing keys only when fewer than radixSmall are left alike.
func (sp *spool) radixSort(ents []spoolEnt, digits []int, deeper int) {
	for len(ents) > radixSmall && len(digits) > 0 {
		d := digits[0]
		digits = digits[1:]
		var count [256]int
		for i := range ents {
			count[radixDigit(&ents[i], d)]++
		}
		if count[radixDigit(&ents[0], d)] == len(ents) {
			continue // one value of this byte here
		}
		var start, next [256]int
		sum := 0
		for b, n := range count {
			start[b], next[b] = sum, sum
			sum += n
		}
		for b := range 256 {
			end := start[b] + count[b]
			for next[b] < end {
				e := ents[next[b]]
				db := int(radixDigit(&e, d))
				for db != b { // move e to its bin, taking up what was there
					ents[next[db]], e = e, ents[next[db]]
					next[db]++
					db = int(radixDigit(&e, d))
				}
				ents[next[b]] = e
				next[b]++
			}
		}
		for b, n := range count {
			if n > 1 {
				sp.radixSort(ents[start[b]:start[b]+n], digits, deeper)
			}
		}
		return
	}
	if len(ents) > radixSmall {
		// Alike in every byte the entries carry: their heads become the next 8 bytes of
		// their keys for the rest of the sort, and then are what they were (all alike).
		head := ents[0].head
		at := 8 * (deeper + 1)
		longer := false
		for i := range ents {
			k := sp.restOf(ents[i])
			ents[i].head = headAt(k, at)
			longer = longer || len(k) > at
		}
		if longer {
			sp.radixSort(ents, radixDigitsOf(ents, 4), deeper+1)
		} else {
			slices.SortFunc(ents, func(a, b spoolEnt) int { return compareEnts(true, sp, a, sp, b) })
		}
		for i := range ents {
			ents[i].head = head
		}
		return
	}
	if len(ents) > 1 {
		slices.SortFunc(ents, func(a, b spoolEnt) int { return compareEnts(true, sp, a, sp, b) })
	}
}

// release drops the spool's memory once written (bbolt keeps no reference after commit).
func (sp *spool) release() {
	if sp.mapped != nil {
		sp.mapped.free()
	}
	sp.chunks, sp.ents = nil, nil
}
