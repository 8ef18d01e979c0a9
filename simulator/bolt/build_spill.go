package bolt

import (
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"math/bits"
	"os"
	"path/filepath"
	"sync/atomic"
	"syscall"
)

// A build past its memory budget spills each round to disk: every bucket's entries of the round,
// sorted, as one run file beside the store. Each entry is its key's difference from the key
// before (keys in order share long prefixes: the 100k-user store's entries in order, 18 % of
// their bytes) and its value: uvarint bytes shared with the key before, uvarint length of the
// rest of the key, uvarint value length, the rest of the key, the value. The last round is not
// spilled: Finish merges, bucket by bucket, its sorted spools with every run the bucket
// spilled, and writes the merged stream into the new file bottom-up like a build that fitted.
// So a build's memory is the budget whatever the set's size, and the file is written once, in
// order (an external merge sort).

// spillRun is one bucket's entries of one spilled round.
type spillRun struct {
	path string
	n    int // entries
}

// spillBuffer is the size of each buffer of a run's writer and of its readers.
const spillBuffer = 1 << 20

// spill writes the bucket's sorted runs as one run file and releases them. A run is written,
// and read back (runReader), with direct I/O where the file system has it: through the page
// cache, writing a million-user build's ~11 GB of runs cost ~1 s of the kernel's CPU a
// gigabyte (copying, dirtying and reclaiming cached pages; ~0.2 s direct), reading them back
// ~0.5 s (0.05 s direct), and the runs are read once (decisions D17).
func (b *Builder) spill(br *bucketRuns) error {
	f, err := os.CreateTemp(filepath.Dir(b.s.db.Path()), "."+filepath.Base(b.s.db.Path())+".run-*")
	if err != nil {
		return err
	}
	w := newAsyncWriter(f, spillBuffer, directIO(f, true) == nil)
	b.spills[br.name] = append(b.spills[br.name], spillRun{path: f.Name(), n: br.n})
	fail := func(err error) error {
		w.Close()
		f.Close()
		return err
	}
	next := br.merged()
	var (
		head [3 * binary.MaxVarintLen32]byte
		prev []byte // the key before
	)
	for {
		p, k, v, ok, err := next()
		if err != nil {
			return fail(err)
		}
		if !ok {
			break
		}
		shared := sharedPrefix(prev, p, k)
		n := binary.PutUvarint(head[:], uint64(shared))
		n += binary.PutUvarint(head[n:], uint64(len(p)+len(k)-shared))
		n += binary.PutUvarint(head[n:], uint64(len(v)))
		w.Write(head[:n])
		prev = prev[:shared]
		if shared < len(p) {
			w.Write(p[shared:])
			prev = append(prev, p[shared:]...)
			w.Write(k)
		} else {
			w.Write(k[shared-len(p):])
		}
		prev = append(prev, k[max(shared-len(p), 0):]...)
		if _, err := w.Write(v); err != nil {
			return fail(err)
		}
	}
	br.release()
	if err := w.Close(); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}

// removeSpills deletes every run file (a finished build's, or a failed one's).
func (b *Builder) removeSpills() {
	for _, runs := range b.spills {
		for _, r := range runs {
			os.Remove(r.path)
		}
	}
	clear(b.spills)
}

// sharedPrefix returns how many first bytes key p+k shares with prev.
func sharedPrefix(prev, p, k []byte) int {
	n := 0
	for _, part := range [2][]byte{p, k} {
		i := commonPrefix(prev[n:], part)
		n += i
		if i < len(part) {
			break
		}
	}
	return n
}

// commonPrefix returns how many first bytes a and b share, comparing 8 at a time (a byte at a
// time was a hundredth of a spilling build).
func commonPrefix(a, b []byte) int {
	m := min(len(a), len(b))
	i := 0
	for ; i+8 <= m; i += 8 {
		if x := binary.LittleEndian.Uint64(a[i:]) ^ binary.LittleEndian.Uint64(b[i:]); x != 0 {
			return i + bits.TrailingZeros64(x)/8
		}
	}
	for i < m && a[i] == b[i] {
		i++
	}
	return i
}

// runReader reads a run file's entries in order. A goroutine of its own reads the file in
// blocks ahead of the merge (with direct I/O, a read waits for the disk); each entry is copied
// out of the blocks into two buffers in turn: an entry it returns stays valid until the second
// call after it (long enough for mergeSources, whose consumer, a copying treeWriter, takes its
// own copy at once), and the key before, which the next key shares bytes with, is in the other
// buffer. Nothing is allocated an entry: a build spilling gigabytes through the heap spent a
// sixth of its CPU in the collector.
type runReader struct {
	f    *os.File
	name string
	// blocks come from the reading goroutine, full, and go back to it through free; stop
	// ends it, and it closes blocks as it ends.
	blocks chan runBlock
	free   chan []byte
	stop   chan struct{}
	block  []byte // the block being read, whole
	cur    []byte // what is left of it
	ended  error  // the reading goroutine's last word: io.EOF, or why it failed
	buf    [2][]byte
	turn   int
	prev   []byte // the key returned last
	// indirect: direct I/O was refused mid-file, and the rest was read through the page cache.
	indirect atomic.Bool
}

// runBlock is one read of a run file: its bytes, or why there are none.
type runBlock struct {
	b   []byte
	err error
}

// runBlocks is how many blocks of spillBuffer bytes a run's reader holds: the one being read,
// one the goroutine fills, one waiting.
const runBlocks = 3

func openRun(r spillRun) (*runReader, error) { return openRunWith(r, alignedBuffer) }

// openRunWith is openRun with the reader's buffers from buffer.
func openRunWith(r spillRun, buffer func(size int) []byte) (*runReader, error) {
	f, err := os.Open(r.path)
	if err != nil {
		return nil, err
	}
	rr := &runReader{f: f, name: r.path, blocks: make(chan runBlock, runBlocks), free: make(chan []byte, runBlocks),
		stop: make(chan struct{})}
	for range runBlocks {
		rr.free <- buffer(spillBuffer)
	}
	go rr.read(directIO(f, true) == nil)
	return rr, nil
}

// read reads the file a block at a time into the free buffers until its end, a failure or
// stop. Direct, every read is of a whole aligned buffer at an offset of whole buffers (only the
// file's last read comes back short); refused (EINVAL), it reads through the page cache.
func (rr *runReader) read(direct bool) {
	defer close(rr.blocks)
	send := func(blk runBlock) bool {
		select {
		case rr.blocks <- blk:
			return true
		case <-rr.stop:
			return false
		}
	}
	for {
		var b []byte
		select {
		case b = <-rr.free:
		case <-rr.stop:
			return
		}
		b = b[:cap(b)]
		n, err := io.ReadFull(rr.f, b)
		if err != nil && direct && errors.Is(err, syscall.EINVAL) && directIO(rr.f, false) == nil {
			direct = false
			rr.indirect.Store(true)
			var m int
			m, err = io.ReadFull(rr.f, b[n:])
			n += m
		}
		if err == io.ErrUnexpectedEOF {
			err = io.EOF
		}
		if n > 0 && !send(runBlock{b: b[:n]}) {
			return
		}
		if err != nil {
			send(runBlock{err: err})
			return
		}
	}
}

// close stops the reading goroutine and closes the file.
func (rr *runReader) close() error {
	close(rr.stop)
	for range rr.blocks { // wait for the goroutine's end
	}
	return rr.f.Close()
}

// more makes cur the next block: false at the run's end (ended io.EOF) or on a failure.
func (rr *runReader) more() bool {
	if rr.ended != nil {
		return false
	}
	if rr.block != nil {
		rr.free <- rr.block[:0]
	}
	rr.block, rr.cur = nil, nil
	blk, ok := <-rr.blocks
	switch {
	case !ok:
		rr.ended = io.ErrUnexpectedEOF // stopped: not read to its end
	case blk.err != nil:
		rr.ended = blk.err
	default:
		rr.block, rr.cur = blk.b, blk.b
		return true
	}
	return false
}

// uvarint reads a uvarint that may cross blocks.
func (rr *runReader) uvarint() (uint64, error) {
	var x uint64
	for s := uint(0); ; s += 7 {
		if len(rr.cur) == 0 && !rr.more() {
			return 0, rr.truncated()
		}
		c := rr.cur[0]
		rr.cur = rr.cur[1:]
		if s > 63 || s == 63 && c > 1 {
			return 0, errors.New("a length overflows 64 bits")
		}
		if c < 0x80 {
			return x | uint64(c)<<s, nil
		}
		x |= uint64(c&0x7f) << s
	}
}

// truncated is the error of an entry cut short by the run's end (or by its failure).
func (rr *runReader) truncated() error {
	if rr.ended == nil || rr.ended == io.EOF {
		return io.ErrUnexpectedEOF
	}
	return rr.ended
}

// next returns the run's next entry, ok false at its end.
func (rr *runReader) next() (p, k, v []byte, ok bool, err error) {
	if len(rr.cur) == 0 && !rr.more() {
		if rr.ended == io.EOF {
			return nil, nil, nil, false, nil
		}
		return nil, nil, nil, false, fmt.Errorf("build: run %s: %w", rr.name, rr.ended)
	}
	var lens [3]uint64 // shared with the key before, the key's rest, the value
	if c := rr.cur; len(c) >= 3*binary.MaxVarintLen64 {
		at := 0
		for i := range lens {
			x, w := binary.Uvarint(c[at:])
			if w <= 0 {
				return nil, nil, nil, false, fmt.Errorf("build: run %s: a length overflows 64 bits", rr.name)
			}
			lens[i], at = x, at+w
		}
		rr.cur = c[at:]
	} else {
		for i := range lens {
			if lens[i], err = rr.uvarint(); err != nil {
				return nil, nil, nil, false, fmt.Errorf("build: run %s: %w", rr.name, err)
			}
		}
	}
	shared := lens[0]
	if shared > uint64(len(rr.prev)) {
		return nil, nil, nil, false, fmt.Errorf("build: run %s: an entry shares %d bytes with a key of %d", rr.name, shared, len(rr.prev))
	}
	klen := int(shared + lens[1])
	n := klen + int(lens[2])
	rr.turn ^= 1
	b := rr.buf[rr.turn]
	if cap(b) < n {
		b = make([]byte, n)
		rr.buf[rr.turn] = b
	}
	e := b[:n:n]
	copy(e, rr.prev[:shared])
	for at := int(shared); at < n; {
		if len(rr.cur) == 0 && !rr.more() {
			return nil, nil, nil, false, fmt.Errorf("build: run %s: %w", rr.name, rr.truncated())
		}
		c := copy(e[at:], rr.cur)
		rr.cur, at = rr.cur[c:], at+c
	}
	// The spill wrote the keys in strict order, each sharing all it could with the one before:
	// the byte after the shared ones tells the order, and a run read back out of order (a
	// damaged file) is refused here, so the merge need not compare a run's keys with each other.
	if s := int(shared); rr.prev != nil && (klen == s || s < len(rr.prev) && e[s] <= rr.prev[s]) {
		return nil, nil, nil, false, fmt.Errorf("build: run %s: a key out of order", rr.name)
	}
	rr.prev = e[:klen:klen]
	return nil, rr.prev, e[klen:], true, nil
}

// source is one sorted stream of a bucket's entries, each key as two parts: p+k (p is a
// spool's interned prefix; nil from a run).
type source func() (p, k, v []byte, ok bool, err error)

// mergeSources merges sorted streams into one, in key order, and fails on a key found twice
// (sums: adds up its values instead, summed). A tree of losers keeps the streams by their next
// key: each entry costs one comparison a level, half what a binary heap's sifting costs. Each
// stream is in strict key order (a run's reader and a bucket's merged spools refuse a key out
// of order), so a key found twice comes from two streams, one right after the other: an entry
// is compared with the one returned before only when it comes from another stream, and that
// one is not copied (a stream's entry stays valid until its second next call; the copy and
// the comparison of every entry were a seventh of the 1M-user build's merge). An entry it returns
// is valid until the next call (a run's buffers are reused).
func mergeSources(name string, srcs []source, sums bool) source {
	type head struct {
		p, k, v []byte
		ok      bool // false once the stream has ended: after every key
	}
	n := len(srcs)
	heads := make([]head, n)
	// The tree's nodes 1..n-1 each hold the stream that lost the match played there, node 0
	// the winner; stream i is the leaf n+i, under node (n+i)/2.
	tree := make([]int, max(n, 1))
	less := func(i, j int) bool {
		a, b := &heads[i], &heads[j]
		if !a.ok || !b.ok {
			return a.ok
		}
		return compareSplit(a.p, a.k, b.p, b.k) < 0
	}
	var build func(node int) int // plays the subtree's matches, returns its winner
	build = func(node int) int {
		if node >= n {
			return node - n
		}
		l, r := build(2*node), build(2*node+1)
		if less(r, l) {
			l, r = r, l
		}
		tree[node] = r
		return l
	}
	started := false
	var (
		last         = -1 // the stream of the entry returned last
		lastP, lastK []byte
	)
	next := func() ([]byte, []byte, []byte, bool, error) {
		if !started {
			started = true
			if n == 0 {
				return nil, nil, nil, false, nil
			}
			for i, s := range srcs {
				p, k, v, ok, err := s()
				if err != nil {
					return nil, nil, nil, false, err
				}
				heads[i] = head{p, k, v, ok}
			}
			tree[0] = build(1)
		}
		if n == 0 {
			return nil, nil, nil, false, nil
		}
		w := tree[0]
		top := heads[w]
		if !top.ok {
			return nil, nil, nil, false, nil
		}
		// The entry returned last is still valid: its stream was read once since.
		if last >= 0 && last != w {
			if c := compareSplit(lastP, lastK, top.p, top.k); c > 0 || c == 0 && !sums {
				return nil, nil, nil, false, fmt.Errorf("build: %s: key %q spooled twice", name, joined(top.p, top.k))
			}
		}
		last, lastP, lastK = w, top.p, top.k
		p, k, v, ok, err := srcs[w]()
		if err != nil {
			return nil, nil, nil, false, err
		}
		heads[w] = head{p, k, v, ok}
		for node := (n + w) / 2; node > 0; node /= 2 { // its matches again, up to the root
			if less(tree[node], w) {
				tree[node], w = w, tree[node]
			}
		}
		tree[0] = w
		return top.p, top.k, top.v, true, nil
	}
	if sums {
		return summed(next)
	}
	return next
}

// summed is src, whose keys come in order, with the entries of one key made one: its value
// the sum of theirs, each a big-endian uint64 (an index counter, spooled by every shard and
// round that counted under it). An entry it returns stays valid until the second call after it
// (as a run's: mergeSources reads the next entry of a stream before it returns the last).
func summed(src source) source {
	var (
		k, v    [3][]byte // the pending key's slot and the last two returned
		p       int       // the pending key's slot
		pending bool      // k[p] holds the next key, its count in sum
		sum     uint64
		ended   bool
	)
	return func() ([]byte, []byte, []byte, bool, error) {
		for !ended {
			np, nk, nv, ok, err := src()
			if err != nil {
				return nil, nil, nil, false, err
			}
			if !ok {
				ended = true
				break
			}
			if len(nv) != 8 {
				return nil, nil, nil, false, fmt.Errorf("build: counter %q of %d bytes", joined(np, nk), len(nv))
			}
			if pending && compareSplit(np, nk, k[p], nil) == 0 {
				sum += binary.BigEndian.Uint64(nv)
				continue
			}
			out, was, wasSum := p, pending, sum
			p = (p + 1) % len(k)
			k[p] = append(append(k[p][:0], np...), nk...)
			pending, sum = true, binary.BigEndian.Uint64(nv)
			if was {
				v[out] = binary.BigEndian.AppendUint64(v[out][:0], wasSum)
				return nil, k[out], v[out], true, nil
			}
		}
		if !pending {
			return nil, nil, nil, false, nil
		}
		pending = false
		v[p] = binary.BigEndian.AppendUint64(v[p][:0], sum)
		return nil, k[p], v[p], true, nil
	}
}
