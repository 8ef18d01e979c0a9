package bolt

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// An entry's rest or value equal to the entry's before is referenced, not copied again, and
// counted once; every entry reads back whole: rests and values shared, one shared and not the
// other, a value shared with an entry whose rest was new, empty values, and a chunk filled up
// between two entries that would share (the second copies both into the new chunk).
func TestSpoolSharesWhatTheEntryBeforeHeld(t *testing.T) {
	sp := &spool{name: "order_index"}
	type entry struct{ prefix, rest, value string }
	var want []entry
	taken := 0
	add := func(prefix, rest, value string) int {
		n, err := sp.addParts([]byte(prefix), []byte(rest), len(prefix), []byte(value))
		require.NoError(t, err)
		want = append(want, entry{prefix, rest, value})
		taken += n
		return n
	}
	// A value is kept after its length, a byte here.
	assert.Equal(t, len("ins_a\x00Ac")+prefixCost+len("T1ord_1")+1+len("summary"), add("ins_a\x00Ac", "T1ord_1", "summary"),
		"a new prefix, rest and value")
	assert.Equal(t, len("ins_a\x00P\x01c")+prefixCost+1+len("item"), add("ins_a\x00P\x01c", "T1ord_1", "item"), "the rest shared")
	assert.Equal(t, 0, add("ins_a\x00Ac", "T1ord_1", "item"), "rest and value shared")
	assert.Equal(t, len("T2ord_2"), add("ins_a\x00Ac", "T2ord_2", "item"), "the value shared, the rest new")
	assert.Equal(t, 1+len("x"), add("ins_a\x00Ac", "T2ord_2", "x"), "the value new")
	assert.Equal(t, len("T2ord_3")+1+len("y"), add("ins_a\x00Ac", "T2ord_3", "y"), "a rest and a value as long as the ones before, not equal")
	assert.Equal(t, len("T3")+1, add("ins_a\x00Ac", "T3", ""), "an empty value")
	assert.Equal(t, 0, add("ins_a\x00Ac", "T3", ""), "twice")
	// Fill the first chunk to its last few bytes, then an entry sharing its rest and value
	// with the one before but not fitting beside them: both are copied again.
	room := cap(sp.chunks[0]) - len(sp.chunks[0])
	big := string(bytes.Repeat([]byte{'v'}, room-len("T4")-3-1)) // its length is 3 bytes
	add("ins_a\x00Ac", "T4", big)
	require.Len(t, sp.chunks, 1)
	assert.Equal(t, 0, add("ins_a\x00P\x01c", "T4", big), "shared within the chunk")
	assert.Equal(t, len("T4")+3+len(big)+1, add("ins_a\x00P\x01c", "T4", big+"w"),
		"a value past the chunk's end: the rest is not shared across chunks, both are copied into the new one")
	require.Len(t, sp.chunks, 2, "a new chunk")
	assert.Equal(t, 0, add("ins_a\x00Ac", "T4", big+"w"), "shared within the new chunk")

	require.Len(t, sp.ents, len(want))
	sum := 0
	for _, c := range sp.chunks {
		sum += len(c)
	}
	assert.Equal(t, sum+(len(sp.byID)*prefixCost)+len("ins_a\x00Ac")+len("ins_a\x00P\x01c"), taken, "what addParts counted is what the chunks hold")
	for i, e := range sp.ents {
		w := want[i]
		assert.Equal(t, w.prefix+w.rest, string(sp.keyOf(e)), "entry %d's key", i)
		p, rest := sp.keyParts(e)
		assert.Equal(t, w.prefix, string(p))
		assert.Equal(t, w.rest, string(rest))
		assert.Equal(t, w.value, string(sp.valueOf(e)), "entry %d's value", i)
		assert.Equal(t, headAt([]byte(w.rest), 0), e.head)
	}
}

// A value is kept after its length as a uvarint.
func TestKeptLenIsTheValueAfterItsUvarintLength(t *testing.T) {
	for _, n := range []int{0, 1, 127, 128, 16383, 16384, 1<<21 - 1, 1 << 21} {
		assert.Equal(t, len(binary.AppendUvarint(nil, uint64(n)))+n, keptLen(make([]byte, n)), "%d bytes", n)
	}
}

// compareSplit orders keys given in two parts as their joined bytes do, wherever the parts
// split them.
func TestCompareSplitIsCompareOfTheJoinedKeys(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	keys := [][]byte{nil, []byte("a"), []byte("ab"), []byte("abc"), []byte("abd"), []byte("b"), []byte("\xff"), []byte("ab\x00")}
	for range 200 {
		k := make([]byte, r.IntN(6))
		for i := range k {
			k[i] = "ab\x00\xff"[r.IntN(4)]
		}
		keys = append(keys, k)
	}
	for _, a := range keys {
		for _, b := range keys {
			want := bytes.Compare(a, b)
			for i := 0; i <= len(a); i++ {
				j := r.IntN(len(b) + 1)
				require.Equal(t, want, compareSplit(a[:i], a[i:], b[:j], b[j:]), "%q|%q against %q|%q", a[:i], a[i:], b[:j], b[j:])
			}
		}
	}
}

// A spilled run keeps each key as its difference from the key before and reads back exactly
// what was spilled: keys sharing nothing with the one before, keys that are all of the one
// before and more, keys sharing all but their last byte, entries larger than the run's
// buffers (so that keys and values cross where a buffer ends), empty values. The file holds
// the entries only (the last block's padding cut off). Where the file system's direct I/O
// skips the page cache, the run is written and read back past it: none of its pages is in
// the cache.
func TestSpilledRunReadsBackWhatWasSpilled(t *testing.T) {
	db := tempStore(t, nil)
	b, err := db.NewBuilder(t.Context())
	require.NoError(t, err)
	defer b.removeSpills()
	want := spilledEntries()
	sp := &spool{name: string(bOrderIndex)}
	for _, i := range rand.New(rand.NewPCG(3, 4)).Perm(len(want)) {
		plen := 0
		if want[i].k[0] == 'i' {
			plen = len("ins_0\x00U00000\x00c")
		}
		_, err := sp.addParts([]byte(want[i].k), nil, plen, []byte(want[i].v))
		require.NoError(t, err)
	}
	br := &bucketRuns{name: sp.name, runs: []*spool{sp}, n: len(sp.ents)}
	br.rank()
	sp.sort(br.ranked)
	require.NoError(t, b.spill(br))
	runs := b.spills[string(bOrderIndex)]
	require.Len(t, runs, 1)
	info, err := os.Stat(runs[0].path)
	require.NoError(t, err)
	raw := 0
	for _, e := range want {
		raw += len(e.k) + len(e.v)
	}
	assert.Less(t, info.Size(), int64(raw-30000), "the long keys' shared bytes are not written twice")
	skips := directIOSkipsTheCache(t, filepath.Dir(runs[0].path))
	if skips {
		assertNoneResident(t, runs[0].path, "written past the page cache")
	}

	rr, err := openRun(runs[0])
	require.NoError(t, err)
	got := readRun(t, rr)
	assert.Equal(t, len(want), len(got))
	assert.True(t, slices.Equal(want, got), "the run reads back what was spilled, in order")
	require.NoError(t, rr.close())
	assert.False(t, rr.indirect.Load(), "read without direct I/O refused")
	if !skips {
		t.Skip("direct I/O is refused or does not skip the page cache here: the run's pages in the cache are not checked")
	}
	assertNoneResident(t, runs[0].path, "read back past the page cache")
}

// assertNoneResident asserts that the page cache holds no page of the file at path.
func assertNoneResident(t *testing.T, path, msg string) {
	t.Helper()
	resident, ok := residentPages(t, path, directAlign)
	require.True(t, ok, "mincore answers where direct I/O skips the page cache")
	require.NotEmpty(t, resident)
	n := 0
	for _, r := range resident {
		if r {
			n++
		}
	}
	assert.Zero(t, n, "%s: of the file's %d pages, none is in the page cache", msg, len(resident))
}

type runKV struct{ k, v string }

// spilledEntries are the entries of the spilled-run tests, in key order (see
// TestSpilledRunReadsBackWhatWasSpilled).
func spilledEntries() []runKV {
	var want []runKV
	for i := range 3000 {
		want = append(want, runKV{fmt.Sprintf("ins_%d\x00U%05d\x00c%08d", i%3, i%71, i), fmt.Sprint(i)})
	}
	want = append(want,
		runKV{"a", ""}, runKV{"aa", "1"}, runKV{"aaa", ""}, runKV{"aab", "2"}, runKV{"b", "3"}, runKV{"\xff", ""}, runKV{"\xff\xff", "4"},
		runKV{"z" + string(bytes.Repeat([]byte{'k'}, 30000)), string(bytes.Repeat([]byte{'v'}, 3*spillBuffer/2))},
		runKV{"z" + string(bytes.Repeat([]byte{'k'}, 30001)), string(bytes.Repeat([]byte{'w'}, spillBuffer))},
		runKV{"zz", "5"})
	slices.SortFunc(want, func(a, b runKV) int { return bytes.Compare([]byte(a.k), []byte(b.k)) })
	return want
}

// readRun reads a run to its end.
func readRun(t *testing.T, rr *runReader) []runKV {
	var got []runKV
	for {
		p, k, v, ok, err := rr.next()
		require.NoError(t, err)
		if !ok {
			return got
		}
		assert.Nil(t, p)
		got = append(got, runKV{string(k), string(v)})
	}
}

// directIOWorksIn says whether the file system of dir takes direct I/O.
func directIOWorksIn(t *testing.T, dir string) bool { return directProbe(t, dir, nil) }

// directProbe writes a block with direct I/O to a new file in dir and says whether it was
// taken and then (when given) whether after(the file's path) holds.
func directProbe(t *testing.T, dir string, after func(path string) bool) bool {
	t.Helper()
	f, err := os.CreateTemp(dir, "direct-*")
	require.NoError(t, err)
	defer os.Remove(f.Name())
	defer f.Close()
	if directIO(f, true) != nil {
		return false
	}
	if _, err = f.Write(alignedBuffer(directAlign)[:directAlign]); err != nil {
		return false
	}
	return after == nil || after(f.Name())
}

// A file system that refuses a direct write or read (here: a buffer not on a block boundary,
// refused with EINVAL as a file system without direct I/O refuses any) gets it, and the rest,
// through the page cache: the run is written and read back whole.
func TestDirectIORefusedGoesThroughThePageCache(t *testing.T) {
	dir := t.TempDir()
	if !directIOWorksIn(t, dir) {
		t.Skip("no direct I/O here: nothing to refuse")
	}
	f, err := os.Create(filepath.Join(dir, "refused"))
	require.NoError(t, err)
	defer f.Close()
	require.NoError(t, directIO(f, true))
	w := &asyncWriter{f: f, direct: true}
	off := alignedBuffer(2 * directAlign)[1 : 1+directAlign] // off its block's boundary
	copy(off, "written")
	require.NoError(t, w.writeAll(off), "a direct write refused, then written through the page cache")
	assert.True(t, w.indirect.Load())
	require.NoError(t, w.writeAll(off[:7]), "and the next")
	written, err := os.ReadFile(f.Name())
	require.NoError(t, err)
	assert.Equal(t, append(slices.Clone(off), "written"...), written)

	f, err = os.Create(filepath.Join(dir, "run"))
	require.NoError(t, err)
	require.NoError(t, directIO(f, true))
	aw := newAsyncWriter(f, spillBuffer, true)
	want := spilledEntries()
	var prev []byte
	for _, e := range want {
		shared := sharedPrefix(prev, nil, []byte(e.k))
		_, err := aw.Write(binary.AppendUvarint(binary.AppendUvarint(binary.AppendUvarint(nil, uint64(shared)),
			uint64(len(e.k)-shared)), uint64(len(e.v))))
		require.NoError(t, err)
		_, err = aw.Write([]byte(e.k[shared:] + e.v))
		require.NoError(t, err)
		prev = []byte(e.k)
	}
	require.NoError(t, aw.Close())
	assert.False(t, aw.indirect.Load())
	require.NoError(t, f.Close())
	info, err := os.Stat(f.Name())
	require.NoError(t, err)
	assert.Equal(t, aw.n, info.Size(), "the last block's padding cut off")

	rr, err := openRunWith(spillRun{path: f.Name()}, func(size int) []byte { return alignedBuffer(size + 1)[1:1] })
	require.NoError(t, err)
	got := readRun(t, rr)
	require.NoError(t, rr.close())
	assert.True(t, rr.indirect.Load(), "the direct read was refused")
	assert.True(t, slices.Equal(want, got), "read back whole through the page cache")
}

// commonPrefix counts the first bytes two slices share, wherever they differ (within or past
// a word of 8) and whichever is shorter; sharedPrefix counts them across a key's two parts.
func TestCommonPrefixCountsTheSharedFirstBytes(t *testing.T) {
	naive := func(a, b []byte) int {
		i := 0
		for i < len(a) && i < len(b) && a[i] == b[i] {
			i++
		}
		return i
	}
	base := []byte("ins_gen_full\x00Ac\x98z+'U\x13\b\x00ord_EI9tLdRqv76qHgrI0000671W")
	for n := 0; n <= len(base); n++ {
		for _, cut := range []int{n, len(base)} {
			a, b := base[:cut], slices.Clone(base)
			if n < len(b) {
				b[n]++
			}
			require.Equal(t, naive(a, b), commonPrefix(a, b), "%d, cut at %d", n, cut)
			require.Equal(t, naive(a, b), commonPrefix(b, a), "%d, cut at %d", n, cut)
			for split := 0; split <= len(b); split += 7 {
				require.Equal(t, naive(a, b), sharedPrefix(a, b[:split], b[split:]), "%d, cut at %d, split at %d", n, cut, split)
			}
		}
	}
}

// mergeSources merges any number of sorted streams (none, one, empty ones, more than a power of
// two) into their keys in order; a key in two streams is refused, or, for the counters, one
// entry with the values summed.
func TestMergeSourcesMergesInKeyOrder(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 6))
	for n := range 18 {
		var all []string
		streams := make([][]string, n)
		for i := range 40 * n {
			k := fmt.Sprintf("k%06d", i*7%1000+1000*(i%3))
			s := rng.IntN(n)
			if rng.IntN(5) == 0 {
				s = n - 1 // some streams empty
			}
			streams[s] = append(streams[s], k)
			all = append(all, k)
		}
		slices.Sort(all)
		srcs := make([]source, n)
		for i := range streams {
			slices.Sort(streams[i])
			srcs[i] = sliceSource(streams[i], "v")
		}
		next := mergeSources("b", srcs, false)
		var got []string
		for {
			_, k, v, ok, err := next()
			require.NoError(t, err)
			if !ok {
				break
			}
			assert.Equal(t, "v", string(v))
			got = append(got, string(k))
		}
		require.Equal(t, all, got, "%d streams", n)
	}

	_, _, err := drain(mergeSources("b", []source{sliceSource([]string{"a", "c"}, "v"), sliceSource([]string{"b", "c"}, "v")}, false))
	assert.ErrorContains(t, err, `key "c" spooled twice`)

	var one [8]byte
	binary.BigEndian.PutUint64(one[:], 1)
	keys, vals, err := drain(mergeSources("counts", []source{sliceSource([]string{"a", "c"}, string(one[:])),
		sliceSource([]string{"b", "c"}, string(one[:])), sliceSource([]string{"c"}, string(one[:]))}, true))
	require.NoError(t, err)
	assert.Equal(t, []string{"a", "b", "c"}, keys)
	assert.Equal(t, []uint64{1, 1, 3}, vals)
}

// sliceSource is a source of keys, each with the value v.
func sliceSource(keys []string, v string) source {
	return func() ([]byte, []byte, []byte, bool, error) {
		if len(keys) == 0 {
			return nil, nil, nil, false, nil
		}
		k := keys[0]
		keys = keys[1:]
		return nil, []byte(k), []byte(v), true, nil
	}
}

// drain reads a source to its end or its first failure: its keys, and its values as counters.
func drain(src source) (keys []string, vals []uint64, err error) {
	for {
		p, k, v, ok, err := src()
		if err != nil || !ok {
			return keys, vals, err
		}
		keys = append(keys, string(joined(p, k)))
		if len(v) == 8 {
			vals = append(vals, binary.BigEndian.Uint64(v))
		}
	}
}

// A run read back with a key not after the one before (a damaged file: the spill writes them in
// strict order) is refused where it is read: the merge compares a run's keys only with other
// streams'.
func TestRunRefusesAKeyOutOfOrder(t *testing.T) {
	for name, keys := range map[string][]string{
		"before":       {"ab", "b", "aa"},
		"equal":        {"a", "b", "b"},
		"a prefix":     {"a", "bc", "b"},
		"shares none":  {"b", "a"},
		"shorter rest": {"abc", "abb"},
	} {
		t.Run(name, func(t *testing.T) {
			var raw []byte
			prev := ""
			for _, k := range keys {
				shared := commonPrefix([]byte(prev), []byte(k))
				raw = binary.AppendUvarint(raw, uint64(shared))
				raw = binary.AppendUvarint(raw, uint64(len(k)-shared))
				raw = binary.AppendUvarint(raw, 1)
				raw = append(append(raw, k[shared:]...), 'v')
				prev = k
			}
			path := filepath.Join(t.TempDir(), "run")
			require.NoError(t, os.WriteFile(path, raw, 0o600))
			rr, err := openRun(spillRun{path: path, n: len(keys)})
			require.NoError(t, err)
			defer rr.close()
			var got []string
			for {
				_, k, _, ok, err := rr.next()
				if err != nil {
					assert.ErrorContains(t, err, "a key out of order")
					break
				}
				require.True(t, ok, "the run ended without the key out of order refused")
				got = append(got, string(k))
			}
			assert.Equal(t, keys[:len(keys)-1], got, "the keys in order are read")
		})
	}
}

// mergeSources reads an entry of a stream only while the stream keeps it (until the stream's
// second call after it, as a run's reader): streams that overwrite what they returned two calls
// before are merged in order, and a key in two of them is still refused.
func TestMergeSourcesReadsAnEntryOnlyWhileItsStreamKeepsIt(t *testing.T) {
	reusing := func(keys ...string) source {
		var buf [2][]byte
		turn := 0
		return func() ([]byte, []byte, []byte, bool, error) {
			if len(keys) == 0 {
				return nil, nil, nil, false, nil
			}
			turn ^= 1
			for i := range buf[turn] {
				buf[turn][i] = 0xff // what was returned two calls before is gone
			}
			buf[turn] = append(buf[turn][:0], keys[0]...)
			keys = keys[1:]
			return nil, buf[turn], []byte("v"), true, nil
		}
	}
	keys, _, err := drain(mergeSources("b", []source{reusing("a", "d", "e", "h"), reusing("b", "c", "f"), reusing("g")}, false))
	require.NoError(t, err)
	assert.Equal(t, []string{"a", "b", "c", "d", "e", "f", "g", "h"}, keys)

	for _, srcs := range [][]source{
		{reusing("a", "b", "c", "x"), reusing("c", "d")},     // the second c right after the first
		{reusing("a", "c", "d", "e"), reusing("b", "c")},     // from the stream read last
		{reusing("a", "b", "c"), reusing("d"), reusing("c")}, // from a third stream
	} {
		_, _, err := drain(mergeSources("b", srcs, false))
		assert.ErrorContains(t, err, `key "c" spooled twice`)
	}
}
