package bolt

import (
	"bytes"
	"context"
	"encoding/binary"
	"time"

	"go.etcd.io/bbolt"
)

// Every index sorted by time (sort byte sortCreated: the users' created_at indexes and every
// order index) also counts its entries per UTC day of their time, in bCounts under
// dayCountKey. With them a deep last_record_number seeks to the day holding its page instead of
// walking up to it, and a created_at / placed_at range counts its whole days from the counters,
// walking only the partial days at its two ends (issue 15 item 4): a page costs at most about
// two days' entries plus the day counters, whatever the offset or the range.
//
// The counters are kept by putIndex and deleteIndex like the per-prefix ones. A store written
// before them has no metaDays mark and is read by walking, as it always was.

// dayWidth is the width of a time bucket, in timeKey units (nanoseconds).
const dayWidth = uint64(24 * time.Hour)

// metaDays marks a store whose time-sorted indexes keep day counters (every store emptied or
// created since they exist).
var metaDays = []byte("day_counters")

// timed reports whether an index prefix sorts by time (its last byte is the sort byte).
func timed(prefix []byte) bool { return len(prefix) > 0 && prefix[len(prefix)-1] == sortCreated }

// dayOf returns the day of a timeKey.
func dayOf(tk []byte) uint32 { return uint32(binary.BigEndian.Uint64(tk) / dayWidth) }

// dayKey returns the timeKey of the first instant of day d.
func dayKey(d uint32) []byte { return u64(uint64(d) * dayWidth) }

// dayCountsPrefix is the prefix in bCounts of the day counters of an index prefix.
func dayCountsPrefix(bucket, prefix []byte) []byte { return cat(bucket, []byte{1}, prefix) }

// dayCountKey names the counter of the entries under prefix whose time falls on tk's day.
func dayCountKey(bucket, prefix, tk []byte) []byte {
	var d [4]byte
	binary.BigEndian.PutUint32(d[:], dayOf(tk))
	return cat(bucket, []byte{1}, prefix, d[:]) // dayCountsPrefix(bucket, prefix) + day, one allocation
}

// hasDays reports whether the store keeps day counters.
func hasDays(tx *bbolt.Tx) bool { return tx.Bucket(bMeta).Get(metaDays) != nil }

// segment is a run of an index's range in key order: [from, to) with n entries (n < 0: not
// counted yet; it is walked to count it).
type segment struct {
	from, to []byte
	n        int
}

// daySegments splits [lo, hi) of a time-sorted index under prefix into segments: the whole days
// between the bounds with their counts from the counters, and the partial days at bounds that
// carry a time (walked when counted). lo and hi are prefix, or prefix + timeKey; hi nil is the
// end of the index.
func daySegments(tx *bbolt.Tx, bucket, prefix, lo, hi []byte) []segment {
	end := prefixEnd(prefix)
	if hi == nil {
		hi = end
	}
	loT, hiT := len(lo) > len(prefix), len(hi) > len(prefix) && !bytes.Equal(hi, end)
	var segs []segment
	first, last := uint32(0), uint32(1<<32-1) // whole days first..last (inclusive)
	if loT {
		d := dayOf(lo[len(prefix):])
		if d == 1<<32-1 {
			return []segment{{from: lo, to: hi, n: -1}}
		}
		first = d + 1
		segs = append(segs, segment{from: lo, to: minKey(hi, cat(prefix, dayKey(d+1))), n: -1})
	}
	var tail *segment
	if hiT {
		d := dayOf(hi[len(prefix):])
		if loT && d < first {
			return segs // lo and hi on one day: the one partial segment
		}
		if d == 0 {
			return []segment{{from: lo, to: hi, n: -1}}
		}
		last = d - 1
		tail = &segment{from: cat(prefix, dayKey(d)), to: hi, n: -1}
	}
	cp := dayCountsPrefix(bucket, prefix)
	c := tx.Bucket(bCounts).Cursor()
	var seek [4]byte
	binary.BigEndian.PutUint32(seek[:], first)
	for k, v := c.Seek(cat(cp, seek[:])); k != nil && bytes.HasPrefix(k, cp) && len(k) == len(cp)+4; k, v = c.Next() {
		d := binary.BigEndian.Uint32(k[len(cp):])
		if d > last {
			break
		}
		to := end
		if d < 1<<32-1 {
			to = cat(prefix, dayKey(d+1))
		}
		segs = append(segs, segment{from: cat(prefix, dayKey(d)), to: to, n: int(binary.BigEndian.Uint64(v))})
	}
	if tail != nil {
		segs = append(segs, *tail)
	}
	return segs
}

func minKey(a, b []byte) []byte {
	if bytes.Compare(a, b) <= 0 {
		return a
	}
	return b
}

// countKeys walks [from, to) and counts its keys.
func countKeys(ctx context.Context, b *bbolt.Bucket, from, to []byte) (int, error) {
	n := 0
	c := b.Cursor()
	for k, _ := c.Seek(from); k != nil && bytes.Compare(k, to) < 0; k, _ = c.Next() {
		if n++; n%scanCheckEvery == 0 {
			if err := ctx.Err(); err != nil {
				return 0, err
			}
		}
	}
	return n, nil
}

// pageDays answers a page of [lo, hi) of a time-sorted index from its day counters: total is
// the range's size (known, when known >= 0, else counted from the segments) and the page is
// walked from the start of the segment that holds its first entry.
func pageDays(ctx context.Context, tx *bbolt.Tx, bucket, prefix, lo, hi []byte, desc bool, offset, limit, known int, idOf func(k, v []byte) []byte) ([][]byte, int, error) {
	b := tx.Bucket(bucket)
	segs := daySegments(tx, bucket, prefix, lo, hi)
	count := func(s *segment) error {
		if s.n < 0 {
			n, err := countKeys(ctx, b, s.from, s.to)
			if err != nil {
				return err
			}
			s.n = n
		}
		return nil
	}
	total := known
	if total < 0 {
		total = 0
		for i := range segs {
			if err := count(&segs[i]); err != nil {
				return nil, 0, err
			}
			total += segs[i].n
		}
	}
	if offset >= total || limit <= 0 {
		return [][]byte{}, total, nil
	}
	if hi == nil {
		hi = prefixEnd(prefix)
	}
	// Skip whole segments in scan order until the one holding the offset.
	skipped := 0
	for i := range segs {
		s := &segs[i]
		if desc {
			s = &segs[len(segs)-1-i]
		}
		if err := count(s); err != nil {
			return nil, 0, err
		}
		if skipped+s.n > offset {
			var ids [][]byte
			var err error
			if desc {
				ids, err = pageScan(ctx, b, lo, s.to, true, offset-skipped, limit, nil, nil, idOf)
			} else {
				ids, err = pageScan(ctx, b, s.from, hi, false, offset-skipped, limit, nil, nil, idOf)
			}
			return ids, total, err
		}
		skipped += s.n
	}
	return [][]byte{}, total, nil
}
