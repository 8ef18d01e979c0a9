package bolt

import (
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"hash/fnv"
	"os"
	"path/filepath"
	"slices"
	"sync/atomic"
	"syscall"
	"unsafe"

	"go.etcd.io/bbolt"
)

// The bbolt file format (version 2), as go.etcd.io/bbolt writes it: the builder writes a whole
// store file bottom-up from its sorted spools instead of through bbolt's Put (bbolt has no bulk
// load), so these constants mirror bbolt's internal/common. A file written here is held to
// bbolt's own check (Tx.Check) by TestBuiltFilePassesBboltCheck and to the transactional load
// by TestBuiltStoreEqualsLoadedStore.
const (
	pageHeaderSize   = 16 // page id u64, flags u16, count u16, overflow u32
	leafElementSize  = 16 // flags u32, pos u32, key size u32, value size u32
	branchElemSize   = 16 // pos u32, key size u32, child page id u64
	bucketHeaderSize = 16 // root page id u64, sequence u64

	branchPageFlag   = 0x01
	leafPageFlag     = 0x02
	metaPageFlag     = 0x04
	freelistPageFlag = 0x10
	bucketLeafFlag   = 0x01

	boltMagic   = 0xED0CDAED
	boltVersion = 2
	// minKeysPerPage is the fewest elements bbolt puts on a page before it may split.
	minKeysPerPage = 2
	// maxPageCount is the most elements one page holds (its count is 16 bits).
	maxPageCount = 0xFFFF
)

// fileWriter appends pages to a new store file, numbering them as it goes; pages 0 and 1 (the
// meta pages) are written last, by finish.
type fileWriter struct {
	f        *os.File
	w        *asyncWriter
	pageSize int
	next     uint64 // the next page's id
	page     []byte // the page being assembled
	// warm are the runs of pages to read back into the page cache once the file is written
	// past it (keepWarm, warmUp), in order.
	warm []pageSpan
}

// pageSpan is n pages from the page id.
type pageSpan struct{ id, n uint64 }

// newFileWriter returns a writer of a new store file at path. direct: its pages are written
// past the page cache where the file system takes it (directIO; through the cache where it
// refuses), as a build that spilled writes its file (writeFile).
func newFileWriter(path string, pageSize int, direct bool) (*fileWriter, error) {
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE|os.O_TRUNC, 0o600)
	if err != nil {
		return nil, err
	}
	if _, err := f.Seek(int64(2*pageSize), 0); err != nil {
		f.Close()
		return nil, err
	}
	// Direct I/O writes whole aligned blocks at aligned offsets: the pages start after the two
	// meta pages, and are whole pages of the system's size.
	direct = direct && pageSize%directAlign == 0 && directIO(f, true) == nil
	w := newAsyncWriter(f, asyncWriterBuf, direct)
	w.n = int64(2 * pageSize)
	return &fileWriter{f: f, w: w, pageSize: pageSize, next: 2}, nil
}

// asyncWriter writes to a file from a goroutine of its own, so that assembling pages (reads
// from the spools all over memory) and the kernel's copying of them run on two cores.
type asyncWriter struct {
	f      *os.File
	buf    []byte
	full   chan []byte
	free   chan []byte
	done   chan error
	failed atomic.Pointer[error]
	closed bool
	// direct: the file is open for direct I/O (a spilled run, a spilled build's store file;
	// directIO): each write is of whole directAlign blocks from an aligned buffer, the last
	// one padded, and Close cuts the file back to n, where the writes started plus the bytes
	// written.
	direct bool
	n      int64
	// indirect: a direct write was refused, and it and the rest went through the page cache.
	indirect atomic.Bool
}

const asyncWriterBuf = 4 << 20

// newAsyncWriter returns a writer to f with three buffers of size bytes (a multiple of
// directAlign when direct).
func newAsyncWriter(f *os.File, size int, direct bool) *asyncWriter {
	w := &asyncWriter{f: f, full: make(chan []byte, 2), free: make(chan []byte, 3), done: make(chan error, 1), direct: direct}
	for range 3 {
		w.free <- alignedBuffer(size)
	}
	w.buf = <-w.free
	go func() {
		var err error
		for b := range w.full {
			if err == nil {
				if err = w.writeAll(b); err != nil {
					w.failed.Store(&err)
				}
			}
			w.free <- b[:0]
		}
		w.done <- err
	}()
	return w
}

// writeAll writes b to the file. A file system that refuses a direct write (EINVAL: it takes direct
// I/O only in some cases, or not at all) gets it, and every later one, through the page cache.
func (w *asyncWriter) writeAll(b []byte) error {
	n, err := w.f.Write(b)
	if err != nil && w.direct && !w.indirect.Load() && errors.Is(err, syscall.EINVAL) && directIO(w.f, false) == nil {
		w.indirect.Store(true)
		_, err = w.f.Write(b[n:])
	}
	return err
}

// wentDirect says whether every write went past the page cache (direct, none refused).
func (w *asyncWriter) wentDirect() bool { return w.direct && !w.indirect.Load() }

// Write buffers p; a write that failed is returned by a later call.
func (w *asyncWriter) Write(p []byte) (int, error) {
	n := len(p)
	w.n += int64(n)
	for len(p) > 0 {
		if len(w.buf) == cap(w.buf) {
			if err := w.failed.Load(); err != nil {
				return 0, *err
			}
			w.full <- w.buf
			w.buf = <-w.free
		}
		c := copy(w.buf[len(w.buf):cap(w.buf)], p)
		w.buf, p = w.buf[:len(w.buf)+c], p[c:]
	}
	return n, nil
}

// Close writes what is buffered, waits for every write and returns the first error.
func (w *asyncWriter) Close() error {
	if w.closed {
		return nil
	}
	w.closed = true
	if w.direct {
		n := len(w.buf)
		w.buf = w.buf[:(n+directAlign-1)&^(directAlign-1)]
		clear(w.buf[n:])
	}
	w.full <- w.buf
	close(w.full)
	err := <-w.done
	if err == nil && w.direct {
		err = w.f.Truncate(w.n)
	}
	return err
}

// directAlign is the alignment direct I/O asks of a buffer's address, a write's length and a
// file offset (the file system's block; 4 KiB covers the disks' logical blocks too).
const directAlign = 4096

// alignedBuffer returns an empty buffer of capacity size that starts on a directAlign boundary.
func alignedBuffer(size int) []byte {
	b := make([]byte, size+directAlign)
	off := int(-uintptr(unsafe.Pointer(unsafe.SliceData(b))) & (directAlign - 1))
	return b[off : off : off+size]
}

// elem is one element of a page being assembled: a leaf's key and value (flags for a bucket
// entry) or a branch's key and child page. The key is p+k: a spool's entry comes as its
// interned prefix and its rest (spool.keyParts), written onto the page joined.
type elem struct {
	p, k, v []byte
	flags   uint32
	child   uint64
}

// keyLen is the length of the element's key.
func (e *elem) keyLen() int { return len(e.p) + len(e.k) }

// writePage writes elems as one leaf or branch page (with overflow pages when it is larger than
// a page) and returns its id.
func (fw *fileWriter) writePage(leaf bool, elems []elem) (uint64, error) {
	size := pageHeaderSize
	for _, e := range elems {
		size += leafElementSize + e.keyLen() + len(e.v)
	}
	n := (size + fw.pageSize - 1) / fw.pageSize
	if cap(fw.page) < n*fw.pageSize {
		fw.page = make([]byte, n*fw.pageSize)
	}
	p := fw.page[:n*fw.pageSize]
	clear(p)
	id := fw.next
	flags := uint16(branchPageFlag)
	if leaf {
		flags = leafPageFlag
	}
	binary.LittleEndian.PutUint64(p[0:], id)
	binary.LittleEndian.PutUint16(p[8:], flags)
	binary.LittleEndian.PutUint16(p[10:], uint16(len(elems)))
	binary.LittleEndian.PutUint32(p[12:], uint32(n-1))
	off := pageHeaderSize + len(elems)*leafElementSize
	for i, e := range elems {
		at := pageHeaderSize + i*leafElementSize
		el := p[at : at+leafElementSize]
		pos := uint32(off - at) // from the element to its key
		if leaf {
			binary.LittleEndian.PutUint32(el[0:], e.flags)
			binary.LittleEndian.PutUint32(el[4:], pos)
			binary.LittleEndian.PutUint32(el[8:], uint32(e.keyLen()))
			binary.LittleEndian.PutUint32(el[12:], uint32(len(e.v)))
		} else {
			binary.LittleEndian.PutUint32(el[0:], pos)
			binary.LittleEndian.PutUint32(el[4:], uint32(e.keyLen()))
			binary.LittleEndian.PutUint64(el[8:], e.child)
		}
		off += copy(p[off:], e.p)
		off += copy(p[off:], e.k)
		off += copy(p[off:], e.v)
	}
	if _, err := fw.w.Write(p); err != nil {
		return 0, err
	}
	fw.next += uint64(n)
	return id, nil
}

// finish writes the root bucket's page (the buckets by name, each pointing at its root page),
// an empty freelist and the two meta pages, and syncs the file. txid is the transaction id
// the file starts from.
func (fw *fileWriter) finish(roots map[string]uint64, txid uint64) error {
	names := make([]string, 0, len(roots))
	for name := range roots {
		names = append(names, name)
	}
	slices.Sort(names)
	from := fw.next // the root bucket's pages and the freelist, which every open reads
	tw := &treeWriter{fw: fw}
	for _, name := range names {
		v := make([]byte, bucketHeaderSize)
		binary.LittleEndian.PutUint64(v, roots[name])
		if err := tw.add([]byte(name), v, bucketLeafFlag); err != nil {
			return err
		}
	}
	root, err := tw.finish()
	if err != nil {
		return err
	}
	freelist := fw.next
	p := make([]byte, fw.pageSize)
	binary.LittleEndian.PutUint64(p[0:], freelist)
	binary.LittleEndian.PutUint16(p[8:], freelistPageFlag)
	if _, err := fw.w.Write(p); err != nil {
		return err
	}
	fw.next++
	fw.keepWarm(from, fw.next-from)
	if err := fw.w.Close(); err != nil {
		return err
	}
	if fw.w.direct { // the meta pages go through the page cache, like any later write
		if err := directIO(fw.f, false); err != nil {
			return err
		}
	}
	metas := make([]byte, 2*fw.pageSize)
	for i := range 2 {
		// bbolt reads the meta page with the higher txid; a page's id is its txid's parity.
		tid := txid + uint64(i)
		m := metas[int(tid%2)*fw.pageSize:][:fw.pageSize]
		binary.LittleEndian.PutUint64(m[0:], tid%2)
		binary.LittleEndian.PutUint16(m[8:], metaPageFlag)
		d := m[pageHeaderSize:]
		binary.LittleEndian.PutUint32(d[0:], boltMagic)
		binary.LittleEndian.PutUint32(d[4:], boltVersion)
		binary.LittleEndian.PutUint32(d[8:], uint32(fw.pageSize))
		binary.LittleEndian.PutUint32(d[12:], 0)    // flags
		binary.LittleEndian.PutUint64(d[16:], root) // root bucket: page, sequence 0
		binary.LittleEndian.PutUint64(d[32:], freelist)
		binary.LittleEndian.PutUint64(d[40:], fw.next) // the high-water mark: pages in the file
		binary.LittleEndian.PutUint64(d[48:], tid)
		h := fnv.New64a()
		h.Write(d[:56])
		binary.LittleEndian.PutUint64(d[56:], h.Sum64())
	}
	if _, err := fw.f.WriteAt(metas, 0); err != nil {
		return err
	}
	return fw.f.Sync()
}

// keepWarm notes the n pages from id as pages to read back into the page cache (warmUp). Runs
// come in order of their first page; one that covers runs noted before replaces them.
func (fw *fileWriter) keepWarm(id, n uint64) {
	for len(fw.warm) > 0 && fw.warm[len(fw.warm)-1].id >= id {
		fw.warm = fw.warm[:len(fw.warm)-1]
	}
	if k := len(fw.warm) - 1; k >= 0 && fw.warm[k].id+fw.warm[k].n >= id {
		fw.warm[k].n = max(fw.warm[k].n, id+n-fw.warm[k].id)
		return
	}
	fw.warm = append(fw.warm, pageSpan{id, n})
}

// warmBucket notes the bucket whose tree was just written, from the page from on, as pages to
// read back whole when warmWhole names it or it is small (warmBucketBytes).
func (fw *fileWriter) warmBucket(name string, from uint64) {
	if n := fw.next - from; warmWhole(name) || n*uint64(fw.pageSize) <= warmBucketBytes {
		fw.keepWarm(from, n)
	}
}

// warmWhole says whether a bucket is read back whole into the page cache after a direct write,
// whatever its size: Get User Detail is one descent of user_keys (which keeps the user's record
// and members, decisions D6), after one of user_uaid when the user is named by its
// user_account_id.
func warmWhole(name string) bool { return name == string(bUserKeys) || name == string(bUserUAID) }

// warmBucketBytes bounds the buckets read back whole for being small: the institutions, keys,
// prices and meta a request or the store's open reads are a page or a few.
const warmBucketBytes = 1 << 20

// warmUp has the pages keepWarm noted read back into the page cache, in the background, once
// the file is written and synced past it: the upper levels of every tree (every read descends
// through them), user_keys and user_uaid whole (warmWhole) and the small buckets, the root
// bucket and the freelist (decisions D17).
func (fw *fileWriter) warmUp() {
	readAhead(fw.f, fw.pageSize, fw.warm)
}

func (fw *fileWriter) close() error {
	fw.w.Close() // after a failure: its error is the one already returned
	return fw.f.Close()
}

// treeWriter writes one bucket's B+tree bottom-up from its entries in key order: leaves filled
// to the brim (bbolt's FillPercent 1.0), each level's pages indexed by the level above.
type treeWriter struct {
	fw     *fileWriter
	levels []treeLevel // 0: leaves
	prev   []byte      // the last key added
	// ordered: the keys come from bucketRuns.merged, which checked their order already.
	ordered bool
	// copying: the entries given are valid only until the next add (mergeSources over spilled
	// runs), so each is copied into staged until its leaf page is written.
	copying bool
	staged  []byte
}

type treeLevel struct {
	elems   []elem
	size    int // the page the elements would make
	flushed int // pages written at this level
}

// add appends key → value (flags: bucketLeafFlag for a bucket's entry in the root bucket). Keys
// must come in strictly increasing order: a key given twice or out of order is refused.
func (t *treeWriter) add(k, v []byte, flags uint32) error { return t.addSplit(nil, k, v, flags) }

// addSplit is add of the key p+k.
func (t *treeWriter) addSplit(p, k, v []byte, flags uint32) error {
	if n := len(p) + len(k); n == 0 || n > bbolt.MaxKeySize {
		return fmt.Errorf("build: key of %d bytes", n)
	}
	if len(v) > bbolt.MaxValueSize {
		return fmt.Errorf("build: value of %d bytes", len(v))
	}
	if !t.ordered {
		if t.prev != nil && compareSplit(t.prev, nil, p, k) >= 0 {
			return fmt.Errorf("build: key %q spooled twice", joined(p, k)) // or out of order: a builder's bug
		}
		t.prev = joined(p, k)
	}
	return t.push(0, elem{p: p, k: k, v: v, flags: flags})
}

// joined returns p+k: k itself when p is empty, else a new slice.
func joined(p, k []byte) []byte {
	if len(p) == 0 {
		return k
	}
	return append(slices.Clip(p), k...)
}

// stage copies a leaf entry into staged (copying): once the leaf level has no pending entry,
// nothing points into staged (flush copies the key it indexes) and it is reused.
func (t *treeWriter) stage(lv *treeLevel, e elem) elem {
	if len(lv.elems) == 0 {
		t.staged = t.staged[:0]
	}
	klen := e.keyLen()
	if n := klen + len(e.v); len(t.staged)+n > cap(t.staged) {
		// Pending entries may point into the old buffer: a new one, not a reuse.
		t.staged = make([]byte, 0, max(4*t.fw.pageSize, 2*n, 2*cap(t.staged)))
	}
	at := len(t.staged)
	t.staged = append(append(append(t.staged, e.p...), e.k...), e.v...)
	b := t.staged[at:len(t.staged):len(t.staged)]
	e.p, e.k, e.v = nil, b[:klen:klen], b[klen:]
	return e
}

// push adds e to level l, writing the level's page first when e would not fit on it.
func (t *treeWriter) push(l int, e elem) error {
	if l == len(t.levels) {
		t.levels = append(t.levels, treeLevel{size: pageHeaderSize})
	}
	lv := &t.levels[l]
	esize := leafElementSize + e.keyLen() + len(e.v)
	if len(lv.elems) >= maxPageCount || len(lv.elems) >= minKeysPerPage && lv.size+esize > t.fw.pageSize {
		if err := t.flush(l); err != nil {
			return err
		}
		lv = &t.levels[l] // flush may have grown t.levels
	}
	if l == 0 && t.copying {
		e = t.stage(lv, e)
	}
	lv.elems = append(lv.elems, e)
	lv.size += esize
	return nil
}

// flush writes level l's pending elements as a page and indexes it in the level above.
func (t *treeWriter) flush(l int) error {
	lv := &t.levels[l]
	id, err := t.fw.writePage(l == 0, lv.elems)
	if err != nil {
		return err
	}
	first := elem{child: id}
	if len(lv.elems) > 0 {
		e := &lv.elems[0]
		first.p, first.k = e.p, e.k
		if l == 0 && t.copying {
			first.k = bytes.Clone(first.k) // staged is reused once the leaf is written
		}
	}
	if l > 0 {
		t.fw.keepWarm(id, t.fw.next-id)
	}
	lv.elems, lv.size = lv.elems[:0], pageHeaderSize
	lv.flushed++
	return t.push(l+1, first)
}

// finish writes what is pending and returns the tree's root page.
func (t *treeWriter) finish() (uint64, error) {
	if len(t.levels) == 0 {
		return t.fw.writePage(true, nil) // an empty bucket: one empty leaf
	}
	for l := 0; ; l++ {
		lv := &t.levels[l]
		if lv.flushed == 0 {
			if l > 0 && len(lv.elems) == 1 {
				return lv.elems[0].child, nil
			}
			id, err := t.fw.writePage(l == 0, lv.elems)
			if err == nil && l > 0 {
				t.fw.keepWarm(id, t.fw.next-id)
			}
			return id, err
		}
		if len(lv.elems) > 0 {
			if err := t.flush(l); err != nil {
				return 0, err
			}
		}
	}
}

// absorb spools what the store holds now (an emptied store's few entries), so that the new
// file holds it too, and returns every bucket's name and the store's transaction id.
func (b *Builder) absorb() (buckets []string, txid uint64, err error) {
	err = b.s.db.View(func(tx *bbolt.Tx) error {
		txid = uint64(tx.ID())
		return tx.ForEach(func(name []byte, bk *bbolt.Bucket) error {
			buckets = append(buckets, string(name))
			return bk.ForEach(func(k, v []byte) error {
				if v == nil {
					return fmt.Errorf("build: bucket %s holds a nested bucket", name)
				}
				return b.w.sink.put(name, k, 0, v)
			})
		})
	})
	return buckets, txid, err
}

// writeBucket writes one bucket's entries, in key order from next, as a tree of the file and
// returns its root page, reporting progress every buildTxEntries entries (done of total before
// it).
func (b *Builder) writeBucket(ctx context.Context, fw *fileWriter, name string, next source, copying bool, done, total int) (uint64, error) {
	tw := &treeWriter{fw: fw, ordered: true, copying: copying}
	from := fw.next
	for i := 0; ; i++ {
		if i%buildTxEntries == 0 {
			if err := ctx.Err(); err != nil {
				return 0, err
			}
			if i > 0 && b.Progress != nil {
				b.Progress(done+i, total)
			}
		}
		p, k, v, ok, err := next()
		if err != nil {
			return 0, err
		}
		if !ok {
			break
		}
		if err := tw.addSplit(p, k, v, 0); err != nil {
			return 0, fmt.Errorf("%s: %w", name, err)
		}
	}
	root, err := tw.finish()
	if err != nil {
		return 0, err
	}
	fw.warmBucket(name, from)
	return root, nil
}

// bucketSource is a bucket's entries in key order: first (the last round's sorted spools, nil
// when it spooled none of the bucket) merged with the runs earlier rounds spilled (n entries;
// then an entry is valid only until the next, as is every entry of bCounts, whose counters
// are summed). close closes the runs' readers.
func (b *Builder) bucketSource(name string, first source) (next source, n int, close func(), err error) {
	var srcs []source
	var readers []*runReader
	close = func() {
		for _, rr := range readers {
			rr.close()
		}
	}
	if first != nil {
		srcs = append(srcs, first)
	}
	for _, r := range b.spills[name] {
		rr, err := openRun(r)
		if err != nil {
			close()
			return nil, 0, nil, err
		}
		readers = append(readers, rr)
		srcs = append(srcs, rr.next)
		n += r.n
	}
	if len(srcs) == 1 && first != nil {
		return first, 0, close, nil // merged() checked the order already
	}
	return mergeSources(name, srcs, name == string(bCounts)), n, close, nil
}

// writeFile writes the sorted spools as a new store file beside the open one, bottom-up, and
// swaps it in: the first round of a build into an empty store. buckets names every bucket the
// file holds (those without entries get an empty root page); txid is the store's transaction
// id, which the new file continues.
func (b *Builder) writeFile(ctx context.Context, buckets []string, txid uint64, sorted <-chan *bucketRuns, total int) error {
	db := b.s.db
	path := db.Path()
	pageSize := db.Info().PageSize
	tmp := filepath.Join(filepath.Dir(path), "."+filepath.Base(path)+".bulk")
	// A build that spilled writes its file past the page cache: written through it, the
	// kernel's copying and reclaiming of a million-user build's 16 GB file was the largest
	// share of its CPU that grows with the set. The pages a first serve reads before the ones
	// it looks for are read back once it is written (warmUp; decisions D17). One that fitted
	// writes through the cache, which then holds the store its first serve reads.
	fw, err := newFileWriter(tmp, pageSize, len(b.spills) > 0)
	if err != nil {
		return err
	}
	ok := false
	defer func() {
		if !ok {
			fw.close()
			os.Remove(tmp)
		}
	}()
	roots := map[string]uint64{}
	done := 0
	write := func(name string, first source, n int) error {
		next, spilled, closeRuns, err := b.bucketSource(name, first)
		if err != nil {
			return err
		}
		// A merge of spilled runs, and the counters' sums, are valid only until the next entry.
		copying := spilled > 0 || name == string(bCounts)
		root, err := b.writeBucket(ctx, fw, name, next, copying, done, total)
		closeRuns()
		if err != nil {
			return err
		}
		// Its runs are done with: a disk that holds the runs and the new file at once is
		// no longer needed (at 1M users, 11 GB of runs and a 13 GB file).
		for _, r := range b.spills[name] {
			os.Remove(r.path)
		}
		roots[name] = root
		done += n + spilled
		if b.Progress != nil {
			b.Progress(done, total)
		}
		return nil
	}
	for br := range sorted {
		if err := write(br.name, br.merged(), br.n); err != nil {
			return err
		}
		br.release()
	}
	for name := range b.spills { // buckets the last round spooled nothing of
		if _, ok := roots[name]; !ok {
			if err := write(name, nil, 0); err != nil {
				return err
			}
		}
	}
	for _, name := range buckets {
		if _, ok := roots[name]; !ok {
			root, err := (&treeWriter{fw: fw}).finish()
			if err != nil {
				return err
			}
			fw.warmBucket(name, root) // its one page
			roots[name] = root
		}
	}
	if err := fw.finish(roots, txid+1); err != nil {
		return err
	}
	if fw.w.wentDirect() {
		fw.warmUp()
	}
	if err := fw.close(); err != nil {
		return err
	}
	// Swap the file in: nothing else uses the store while it is built (NewBuilder).
	if err := db.Close(); err != nil {
		return err
	}
	if err := os.Rename(tmp, path); err != nil {
		return err
	}
	ok = true
	if d, err := os.Open(filepath.Dir(path)); err == nil {
		d.Sync()
		d.Close()
	}
	ndb, err := openBolt(path)
	if err != nil {
		return err
	}
	b.s.db = ndb
	b.s.gen.Add(1)
	return nil
}
