package bolt

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"math/rand/v2"
	"os"
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
// buffers (so that keys and values cross where a buffer ends), empty values.
func TestSpilledRunReadsBackWhatWasSpilled(t *testing.T) {
	db := tempStore(t, nil)
	b, err := db.NewBuilder(t.Context())
	require.NoError(t, err)
	defer b.removeSpills()
	type kv struct{ k, v string }
	var want []kv
	for i := range 3000 {
		want = append(want, kv{fmt.Sprintf("ins_%d\x00U%05d\x00c%08d", i%3, i%71, i), fmt.Sprint(i)})
	}
	want = append(want,
		kv{"a", ""}, kv{"aa", "1"}, kv{"aaa", ""}, kv{"aab", "2"}, kv{"b", "3"}, kv{"\xff", ""}, kv{"\xff\xff", "4"},
		kv{"z" + string(bytes.Repeat([]byte{'k'}, 30000)), string(bytes.Repeat([]byte{'v'}, 3*spillBuffer/2))},
		kv{"z" + string(bytes.Repeat([]byte{'k'}, 30001)), string(bytes.Repeat([]byte{'w'}, spillBuffer))},
		kv{"zz", "5"})
	slices.SortFunc(want, func(a, b kv) int { return bytes.Compare([]byte(a.k), []byte(b.k)) })
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

	rr, err := openRun(runs[0])
	require.NoError(t, err)
	defer rr.f.Close()
	var got []kv
	for {
		p, k, v, ok, err := rr.next()
		require.NoError(t, err)
		if !ok {
			break
		}
		assert.Nil(t, p)
		got = append(got, kv{string(k), string(v)})
	}
	assert.Equal(t, len(want), len(got))
	assert.True(t, slices.Equal(want, got), "the run reads back what was spilled, in order")
}
