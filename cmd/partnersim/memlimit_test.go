package main

import (
	"runtime"
	"runtime/metrics"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// liveHeap is the live heap the last collection found.
func liveHeap() int64 {
	s := []metrics.Sample{{Name: "/gc/heap/live:bytes"}}
	metrics.Read(s)
	return int64(s[0].Value.Uint64())
}

// Serving lets the heap grow by a fixed headroom between collections, and the limit leaves it
// that room above what the runtime holds: a fixed 48 MiB under a live heap of 40 MiB (or under
// the metadata a large build leaves behind) made the collector run without pause, and GOGC=100
// over a small live heap made it run every few MiB. The limit is never under the floor.
func TestServeGCLeavesTheHeapRoom(t *testing.T) {
	runtime.GC()
	limit, gogc := serveGC(0)
	require.GreaterOrEqual(t, limit, int64(serveMemoryFloor))
	if liveHeap() < 8<<20 {
		require.Equal(t, 300, gogc, "a small live heap may grow by 24 MiB over the 8 MiB serving keeps live")
	}

	held := make([][]byte, 40)
	for i := range held {
		held[i] = make([]byte, 1<<20)
	}
	runtime.GC()
	live := liveHeap()
	require.Greater(t, live, int64(40<<20))
	limit, gogc = serveGC(0)
	require.Equal(t, 100, gogc, "a large live heap: Go's default pace")
	require.GreaterOrEqual(t, limit, 2*live+16<<20, "room for the live heap to double, and a margin")
	runtime.KeepAlive(held)
}

// A large store lets the heap grow by a sixteenth of its file between collections (its mapped
// pages dwarf that anyway), up to 128 MiB; a small one by 24 MiB, as before.
func TestServeGCGivesALargeStoreMoreRoom(t *testing.T) {
	runtime.GC()
	if liveHeap() >= 8<<20 {
		t.Skip("the live heap is past what serving keeps live: GOGC is Go's default whatever the store")
	}
	_, small := serveGC(5 << 20)
	_, large := serveGC(1300 << 20)
	_, huge := serveGC(13 << 30)
	assert.Equal(t, 300, small, "24 MiB over the 8 MiB serving keeps live")
	assert.Equal(t, 1015, large, "1300 MiB ÷ 16 = 81.25 MiB over 8 MiB")
	assert.Equal(t, 1600, huge, "128 MiB at most")
}
