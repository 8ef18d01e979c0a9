package bolt

import (
	"bufio"
	"encoding/binary"
	"fmt"
	"io"
	"os"
	"path/filepath"
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

// spillBuffer is the buffer of a run's writer and of each of its readers.
const spillBuffer = 1 << 20

// spill writes the bucket's sorted runs as one run file and releases them.
func (b *Builder) spill(br *bucketRuns) error {
	f, err := os.CreateTemp(filepath.Dir(b.s.db.Path()), "."+filepath.Base(b.s.db.Path())+".run-*")
	if err != nil {
		return err
	}
	b.spills[br.name] = append(b.spills[br.name], spillRun{path: f.Name(), n: br.n})
	w := bufio.NewWriterSize(f, spillBuffer)
	next := br.merged()
	var (
		head [3 * binary.MaxVarintLen32]byte
		prev []byte // the key before
	)
	for {
		p, k, v, ok, err := next()
		if err != nil {
			f.Close()
			return err
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
			f.Close()
			return err
		}
	}
	br.release()
	if err := w.Flush(); err != nil {
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
		rest := prev[n:]
		m := min(len(rest), len(part))
		i := 0
		for i < m && rest[i] == part[i] {
			i++
		}
		n += i
		if i < len(part) {
			break
		}
	}
	return n
}

// runReader reads a run file's entries in order into two buffers in turn: an entry it returns
// stays valid until the second call after it (long enough for mergeSources, whose consumer, a
// copying treeWriter, takes its own copy at once), and the key before, which the next key
// shares bytes with, is in the other buffer. Nothing is allocated an entry: a build spilling
// gigabytes through the heap spent a sixth of its CPU in the collector.
type runReader struct {
	f    *os.File
	r    *bufio.Reader
	buf  [2][]byte
	turn int
	prev []byte // the key returned last
	name string
}

func openRun(r spillRun) (*runReader, error) {
	f, err := os.Open(r.path)
	if err != nil {
		return nil, err
	}
	return &runReader{f: f, r: bufio.NewReaderSize(f, spillBuffer), name: r.path}, nil
}

// next returns the run's next entry, ok false at its end.
func (rr *runReader) next() (p, k, v []byte, ok bool, err error) {
	shared, err := binary.ReadUvarint(rr.r)
	if err == io.EOF {
		return nil, nil, nil, false, nil
	}
	var lens [2]uint64 // the key's rest, the value
	for i := range lens {
		if err == nil {
			lens[i], err = binary.ReadUvarint(rr.r)
		}
	}
	if err == nil && shared > uint64(len(rr.prev)) {
		err = fmt.Errorf("an entry shares %d bytes with a key of %d", shared, len(rr.prev))
	}
	if err != nil {
		return nil, nil, nil, false, fmt.Errorf("build: run %s: %w", rr.name, err)
	}
	klen := int(shared + lens[0])
	n := klen + int(lens[1])
	rr.turn ^= 1
	b := rr.buf[rr.turn]
	if cap(b) < n {
		b = make([]byte, n)
		rr.buf[rr.turn] = b
	}
	e := b[:n:n]
	copy(e, rr.prev[:shared])
	if _, err := io.ReadFull(rr.r, e[shared:]); err != nil {
		return nil, nil, nil, false, fmt.Errorf("build: run %s: %w", rr.name, err)
	}
	rr.prev = e[:klen:klen]
	return nil, rr.prev, e[klen:], true, nil
}

// source is one sorted stream of a bucket's entries, each key as two parts: p+k (p is a
// spool's interned prefix; nil from a run).
type source func() (p, k, v []byte, ok bool, err error)

// mergeSources merges sorted streams into one, in key order, and fails on a key found twice
// (sums: adds up its values instead, summed). A small binary heap keeps the streams by their
// next key. An entry it returns is valid until the next call (a run's buffers are reused).
func mergeSources(name string, srcs []source, sums bool) source {
	type head struct {
		p, k, v []byte
		src     int
	}
	var h []head
	less := func(i, j int) bool { return compareSplit(h[i].p, h[i].k, h[j].p, h[j].k) < 0 }
	down := func(i int) {
		for {
			l := 2*i + 1
			if l >= len(h) {
				return
			}
			if r := l + 1; r < len(h) && less(r, l) {
				l = r
			}
			if !less(l, i) {
				return
			}
			h[i], h[l] = h[l], h[i]
			i = l
		}
	}
	started := false
	var prev []byte
	next := func() ([]byte, []byte, []byte, bool, error) {
		if !started {
			started = true
			for i, s := range srcs {
				p, k, v, ok, err := s()
				if err != nil {
					return nil, nil, nil, false, err
				}
				if ok {
					h = append(h, head{p, k, v, i})
				}
			}
			for i := len(h)/2 - 1; i >= 0; i-- {
				down(i)
			}
		}
		if len(h) == 0 {
			return nil, nil, nil, false, nil
		}
		top := h[0]
		p, k, v, ok, err := srcs[top.src]()
		if err != nil {
			return nil, nil, nil, false, err
		}
		if ok {
			h[0] = head{p, k, v, top.src}
		} else {
			h[0] = h[len(h)-1]
			h = h[:len(h)-1]
		}
		down(0)
		if prev != nil {
			if c := compareSplit(prev, nil, top.p, top.k); c > 0 || c == 0 && !sums {
				return nil, nil, nil, false, fmt.Errorf("build: %s: key %q spooled twice", name, joined(top.p, top.k))
			}
		}
		prev = append(append(prev[:0], top.p...), top.k...)
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
