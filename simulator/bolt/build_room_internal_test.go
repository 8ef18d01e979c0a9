package bolt

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"runtime"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/partnersim/partnersim/simulator"
)

// growRoom keeps what a room held as it grows, on Go's heap and mapped (past a huge page: grown
// where it lies on Linux), and two rooms grown in turn never share bytes: each reads back what
// was written into it, after every growth.
func TestGrowRoomKeepsWhatItHeldAndSharesNothing(t *testing.T) {
	var a, b []uint64
	var roomA, roomB []byte
	const n = 1 << 20 // 8 MiB each: mapped past 2 MiB, then grown twice
	for i := range n {
		if len(a) == cap(a) {
			a = growRoom(a, &roomA, max(2*cap(a), 1024))
		}
		a = append(a, uint64(i))
		if len(b) == cap(b) {
			b = growRoom(b, &roomB, max(2*cap(b), 1024))
		}
		b = append(b, ^uint64(i))
	}
	if runtime.GOOS == "linux" {
		require.NotNil(t, roomA, "a room past a huge page is mapped")
		assert.Len(t, roomA, cap(a)*8)
		assert.NotEqual(t, &roomA[0], &roomB[0])
	}
	for i := range n {
		require.Equal(t, uint64(i), a[i], "a[%d]", i)
		require.Equal(t, ^uint64(i), b[i], "b[%d]", i)
	}
	freeRoom(&roomA)
	freeRoom(&roomB)
	assert.Nil(t, roomA)
	assert.Nil(t, roomB)
}

// growChunk keeps a mapped chunk's bytes and gives the grown chunk's new bytes as zeros; the
// old slice is not read after (it may be unmapped).
func TestGrowChunkKeepsTheBytes(t *testing.T) {
	b, mapped := newChunk(hugeChunk)
	if !mapped {
		t.Skip("no mapped chunks here")
	}
	b = b[:hugeChunk]
	for i := range b {
		b[i] = byte(i * 7)
	}
	grown, ok := growChunk(b, 4*hugeChunk)
	require.True(t, ok)
	require.Len(t, grown, 4*hugeChunk)
	for i := range hugeChunk {
		require.Equal(t, byte(i*7), grown[i], "byte %d", i)
	}
	assert.Equal(t, make([]byte, 3*hugeChunk), grown[hugeChunk:], "the new bytes")
	freeChunk(grown)
}

// A spool's time notes past a huge page are mapped (growRoom) and read back whole as they grow;
// naming the counters counts them all, in their days, hours and minutes, and frees their room.
func TestSpoolTimeNotesMappedCountedAndFreed(t *testing.T) {
	w := newSpoolTx(nil, nil)
	prefix := []byte("ins_a\x00Ac") // timed: it ends in sortCreated
	require.True(t, timed(prefix))
	require.True(t, hourly(prefix))
	start := time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC)
	const n = 400_000 // 3.2 MB of notes
	for i := range n {
		rest := cat(timeKey(start.Add(time.Duration(i)*time.Minute)), fmt.Appendf(nil, "ord_%07d", i))
		require.NoError(t, w.sink.putIndex(bOrderIndex, prefix, rest, []byte("v")))
	}
	sp := w.spools().by[string(bOrderIndex)]
	require.Len(t, sp.times, n)
	if runtime.GOOS == "linux" {
		require.NotNil(t, sp.mapped)
		assert.Len(t, sp.mapped.times, cap(sp.times)*8)
	}
	for i, m := range sp.times {
		require.Equal(t, minuteOf(timeKey(start.Add(time.Duration(i)*time.Minute))), uint32(m), "note %d", i)
	}
	require.NoError(t, w.nameCounts())
	assert.Nil(t, sp.times)
	if sp.mapped != nil {
		assert.Nil(t, sp.mapped.times)
	}
	// Every note is counted in its day, its hour and its minute: each kind of counter adds up
	// to all of them, a counter for every day, hour and minute the notes fall in.
	counts := w.spools().by[string(bCounts)]
	require.NotNil(t, counts)
	for _, kind := range []struct {
		cp    []byte
		units int
	}{{dayCountsPrefix(bOrderIndex, prefix), n/(24*60) + 2}, {hourCountsPrefix(bOrderIndex, prefix), n/60 + 1}, {minuteCountsPrefix(bOrderIndex, prefix), n}} {
		total, keys := 0, 0
		for _, e := range counts.ents {
			if k := counts.keyOf(e); bytes.HasPrefix(k, kind.cp) && len(k) == len(kind.cp)+4 {
				total += int(binary.BigEndian.Uint64(counts.valueOf(e)))
				keys++
			}
		}
		assert.Equal(t, n, total, "counters under %q", kind.cp)
		assert.InDelta(t, kind.units, keys, 1, "counters under %q", kind.cp)
	}
}

// partition keeps each side in the order given, and the kept side has no room past its end:
// appending to it cannot overwrite the others.
func TestPartitionKeepsEachSideInOrder(t *testing.T) {
	e := func(s string) [2][]byte { return [2][]byte{[]byte(s), nil} }
	names := func(es [][2][]byte) (out []string) {
		for _, x := range es {
			out = append(out, string(x[0]))
		}
		return out
	}
	for _, tc := range []struct{ in, kept, others []string }{
		{[]string{"a1", "b1", "b2", "a2", "b3", "a3"}, []string{"a1", "a2", "a3"}, []string{"b1", "b2", "b3"}},
		{[]string{"b1", "b2"}, nil, []string{"b1", "b2"}},
		{[]string{"a1", "a2"}, []string{"a1", "a2"}, nil},
		{nil, nil, nil},
	} {
		var in [][2][]byte
		for _, s := range tc.in {
			in = append(in, e(s))
		}
		kept, others := partition(in, func(x [2][]byte) bool { return x[0][0] == 'a' })
		assert.Equal(t, tc.kept, names(kept), "kept of %v", tc.in)
		assert.Equal(t, tc.others, names(others), "others of %v", tc.in)
		assert.Equal(t, len(kept), cap(kept), "kept of %v has no room past its end", tc.in)
	}
}

// orderIndexEntries makes each index entry's prefix of its parts (the institution, the kind and
// its bytes, sortCreated) and the rest of placed_at and the id, each part capped to its own
// bytes: appending to one leaves the others as they were.
func TestOrderIndexEntriesAreEachPartAlone(t *testing.T) {
	o := &simulator.Order{ID: "ord_1", InstitutionID: "ins_a", UserAccountID: "ua_9", Product: "ETF",
		Status: "filled", Side: "sell", PlacedAt: time.Date(2025, 3, 4, 5, 6, 7, 0, time.UTC)}
	in, rest := inst(o.InstitutionID), cat(timeKey(o.PlacedAt), []byte(o.ID))
	p, s, sd := byte(simulator.ProductIndex(o.Product)), byte(simulator.OrderStatusIndex(o.Status)), sideByte(o.Side)
	want := [][2][]byte{
		{cat(in, []byte{kindAll, sortCreated}), rest},
		{cat(in, []byte{kindUser}, []byte(o.UserAccountID), []byte{0, sortCreated}), rest},
		{cat(in, []byte{kindProduct, p, sortCreated}), rest},
		{cat(in, []byte{kindStatus, s, sortCreated}), rest},
		{cat(in, []byte{kindStatSide, s, sd, sortCreated}), rest},
		{cat(in, []byte{kindProdSide, p, sd, sortCreated}), rest},
	}
	got := orderIndexEntries(o)
	require.Equal(t, want, got)
	for i := range got {
		for j := range got[i] {
			_ = append(got[i][j], 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff)
		}
	}
	assert.Equal(t, want, got, "appending to one part changed another")
}
