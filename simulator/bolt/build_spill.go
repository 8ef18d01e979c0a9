package bolt

import (
	"bufio"
	"bytes"
	"encoding/binary"
	"fmt"
	"io"
	"os"
	"path/filepath"
)

// A build past its memory budget spills each round to disk: every bucket's entries of the round,
// sorted, as one run file beside the store (uvarint key length, uvarint value length, key,
// value). The last round is not spilled: Finish merges, bucket by bucket, its sorted spools
// with every run the bucket spilled, and writes the merged stream into the new file bottom-up
// like a build that fitted. So a build's memory is the budget whatever the set's size, and the
// file is written once, in order (an external merge sort).

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
	var head [2 * binary.MaxVarintLen32]byte
	for {
		k, v, ok, err := next()
		if err != nil {
			f.Close()
			return err
		}
		if !ok {
			break
		}
		n := binary.PutUvarint(head[:], uint64(len(k)))
		n += binary.PutUvarint(head[n:], uint64(len(v)))
		w.Write(head[:n])
		w.Write(k)
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

// runReader reads a run file's entries in order into two buffers in turn: an entry it returns
// stays valid until the second call after it (long enough for mergeSources, whose consumer, a
// copying treeWriter, takes its own copy at once). Nothing is allocated an entry: a build
// spilling gigabytes through the heap spent a sixth of its CPU in the collector.
type runReader struct {
	f    *os.File
	r    *bufio.Reader
	buf  [2][]byte
	turn int
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
func (rr *runReader) next() (k, v []byte, ok bool, err error) {
	klen, err := binary.ReadUvarint(rr.r)
	if err == io.EOF {
		return nil, nil, false, nil
	}
	if err != nil {
		return nil, nil, false, fmt.Errorf("build: run %s: %w", rr.name, err)
	}
	vlen, err := binary.ReadUvarint(rr.r)
	if err != nil {
		return nil, nil, false, fmt.Errorf("build: run %s: %w", rr.name, err)
	}
	n := int(klen + vlen)
	rr.turn ^= 1
	b := rr.buf[rr.turn]
	if cap(b) < n {
		b = make([]byte, n)
		rr.buf[rr.turn] = b
	}
	e := b[:n:n]
	if _, err := io.ReadFull(rr.r, e); err != nil {
		return nil, nil, false, fmt.Errorf("build: run %s: %w", rr.name, err)
	}
	return e[:klen:klen], e[klen:], true, nil
}

// source is one sorted stream of a bucket's entries.
type source func() (k, v []byte, ok bool, err error)

// mergeSources merges sorted streams into one, in key order, and fails on a key found twice
// (sums: adds up its values instead, summed). A small binary heap keeps the streams by their
// next key. An entry it returns is valid until the next call (a run's buffers are reused).
func mergeSources(name string, srcs []source, sums bool) source {
	type head struct {
		k, v []byte
		src  int
	}
	var h []head
	less := func(i, j int) bool { return bytes.Compare(h[i].k, h[j].k) < 0 }
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
	next := func() ([]byte, []byte, bool, error) {
		if !started {
			started = true
			for i, s := range srcs {
				k, v, ok, err := s()
				if err != nil {
					return nil, nil, false, err
				}
				if ok {
					h = append(h, head{k, v, i})
				}
			}
			for i := len(h)/2 - 1; i >= 0; i-- {
				down(i)
			}
		}
		if len(h) == 0 {
			return nil, nil, false, nil
		}
		top := h[0]
		k, v, ok, err := srcs[top.src]()
		if err != nil {
			return nil, nil, false, err
		}
		if ok {
			h[0] = head{k, v, top.src}
		} else {
			h[0] = h[len(h)-1]
			h = h[:len(h)-1]
		}
		down(0)
		if prev != nil {
			if c := bytes.Compare(prev, top.k); c > 0 || c == 0 && !sums {
				return nil, nil, false, fmt.Errorf("build: %s: key %q spooled twice", name, top.k)
			}
		}
		prev = append(prev[:0], top.k...)
		return top.k, top.v, true, nil
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
	return func() ([]byte, []byte, bool, error) {
		for !ended {
			nk, nv, ok, err := src()
			if err != nil {
				return nil, nil, false, err
			}
			if !ok {
				ended = true
				break
			}
			if len(nv) != 8 {
				return nil, nil, false, fmt.Errorf("build: counter %q of %d bytes", nk, len(nv))
			}
			if pending && bytes.Equal(nk, k[p]) {
				sum += binary.BigEndian.Uint64(nv)
				continue
			}
			out, was, wasSum := p, pending, sum
			p = (p + 1) % len(k)
			k[p] = append(k[p][:0], nk...)
			pending, sum = true, binary.BigEndian.Uint64(nv)
			if was {
				v[out] = binary.BigEndian.AppendUint64(v[out][:0], wasSum)
				return k[out], v[out], true, nil
			}
		}
		if !pending {
			return nil, nil, false, nil
		}
		pending = false
		v[p] = binary.BigEndian.AppendUint64(v[p][:0], sum)
		return k[p], v[p], true, nil
	}
}
