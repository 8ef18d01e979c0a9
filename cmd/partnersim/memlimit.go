package main

import (
	"runtime"
	"runtime/debug"
	"runtime/metrics"
	"sync/atomic"
)

// serveMemoryFloor is the least soft memory limit serving runs with: the store is a memory
// map, so serving needs a small heap, and a limit makes the collector keep up with a burst of
// large requests on a busy machine instead of letting the heap grow without bound (decisions
// D17).
const serveMemoryFloor = 48 << 20

// serveHeadroom is what serving lets the heap grow by between two collections, over a live
// heap of at least serveLiveMin (the heap right after opening holds less than serving keeps
// live: the journal, the caches of rendered answers and keys, the connections' buffers). A
// store larger than that gets as much room as its file holds, up to serveHeadroomMax: its
// pages, mapped, are most of the process's memory anyway, and its random details and list
// pages allocate 8–46 KB a request whatever its size, so a 10,000-user store (170 MB) with
// 24 MiB of room spent 13–17 % of the server's CPU in the collector and one of 100,000 users
// with 96 MiB 2–3.6 %. The default set's store (under 1 MB) keeps 24 MiB: its RSS stays
// under 64 MB.
const (
	serveHeadroom    = 24 << 20
	serveHeadroomMax = 128 << 20
	serveLiveMin     = 8 << 20
)

// serveRoom is what serving lets the heap grow by between two collections over a store file of
// storeSize bytes (0 when unknown).
func serveRoom(storeSize int64) int64 {
	return min(max(storeSize, serveHeadroom), serveHeadroomMax)
}

// serveGC returns the soft memory limit and the collector's GOGC to serve with now, read from
// the runtime: the live heap the last collection found (heapFollower calls it after each
// one) and what the process holds (decisions D17). The binary sets them, not the sandbox: they
// are the process's, and tests open sandboxes in processes of their own tuning.
//
// GOGC: the live heap of a server is small (6–16 MiB: the store is a memory map) and every
// request allocates, so at Go's default (collect when the heap has doubled) the collector ran
// every few MiB — a third of the server's CPU on the default set's small answers. A collection
// costs about the same whatever the headroom, so GOGC is chosen to let the heap grow by room
// between collections: 100 × room ÷ live, between 100 and 1600.
//
// The limit: what the runtime holds besides the heap, plus the live heap, plus the room and a
// margin, never less than serveMemoryFloor. A build leaves metadata behind that the runtime
// never returns — about 25 MiB of span and bitmap structures after a 2.4 GB build of 100,000
// users — and a fixed 48 MiB counted it against the heap: the collector then ran continuously
// on the first serve after a build. Derived once, at start, from the ~7 MiB live then, the
// limit bound as soon as serving had doubled the live heap (a 10,000-user store: 14 MiB live
// under a 28 MiB goal, a collection every ~80 ms), so it is derived again after every
// collection. It sits above what GOGC lets a small live heap grow to; over a live heap larger
// than the room it is what binds. It is derived from the live heap, not from what the runtime
// holds: that counts the garbage of the cycle just ended, and a limit that counted it would
// climb by the room at every collection the limit paced. heapFollower never sets it above the
// first limit plus half the room: a burst of large requests (TestHostileInputsKeepRSSBounded's
// six 1 MiB bodies of 524,000 wrong items each, on the default set) peaked at 82 MB of RSS with
// the limit fixed at start, 109–122 MB with a limit that followed the live heap without that
// ceiling, 84 MB with it; serving's own live heap (6–16 MiB) moves far less than that.
func serveGC(s *gcSample, room int64) (limit int64, gcPercent int) {
	metrics.Read(s[:])
	var v [gcSampleLen]uint64
	for i := range s {
		if s[i].Value.Kind() == metrics.KindUint64 {
			v[i] = s[i].Value.Uint64()
		}
	}
	// What the runtime's own heap goal under a limit subtracts from it: all it holds but for
	// free heap pages and heap objects (live or not yet swept).
	nonHeap := int64(v[gcTotal] - min(v[gcReleased]+v[gcFree]+v[gcObjects], v[gcTotal]))
	live := max(int64(v[gcLive]), serveLiveMin)
	gcPercent = int(min(max(100*room/live, 100), 100*serveHeadroomMax/serveLiveMin))
	return max(serveMemoryFloor, nonHeap+int64(v[gcLive])+room+16<<20), gcPercent
}

// The runtime metrics serveGC reads, by their place in a gcSample.
const (
	gcTotal    = iota // /memory/classes/total:bytes
	gcReleased        // /memory/classes/heap/released:bytes
	gcFree            // /memory/classes/heap/free:bytes
	gcLive            // /gc/heap/live:bytes
	gcCycles          // /gc/cycles/total:gc-cycles
	gcObjects         // /memory/classes/heap/objects:bytes
	gcSampleLen
)

// gcSample holds serveGC's metrics, reused from one collection to the next.
type gcSample [gcSampleLen]metrics.Sample

func newGCSample() *gcSample {
	return &gcSample{{Name: "/memory/classes/total:bytes"}, {Name: "/memory/classes/heap/released:bytes"},
		{Name: "/memory/classes/heap/free:bytes"}, {Name: "/gc/heap/live:bytes"}, {Name: "/gc/cycles/total:gc-cycles"},
		{Name: "/memory/classes/heap/objects:bytes"}}
}

// cycles is the number of collections completed when s was last read.
func (s *gcSample) cycles() uint64 {
	if v := s[gcCycles].Value; v.Kind() == metrics.KindUint64 {
		return v.Uint64()
	}
	return 0
}

// heapFollower sets serving's soft memory limit and GOGC from serveGC at start and again after
// every collection, so both follow the live heap serving keeps (decisions D17).
type heapFollower struct {
	room            int64
	ceiling         int64 // the highest limit it sets: the first plus half the room
	setLimit, setGC bool
	sample          *gcSample     // read by one goroutine at a time: the caller of followHeap, then the runtime's cleanup goroutine
	followed        atomic.Uint64 // the collections completed when it last set them
	stopped         atomic.Bool
}

// gcMark is what heapFollower leaves unreferenced so that the next collection frees it and the
// runtime calls its cleanup: large enough to be an allocation of its own (the tiny allocator
// packs smaller pointer-free objects together, and they are freed together).
type gcMark [32]byte

// followHeap sets the limit (unless setLimit is false: GOMEMLIMIT given) and GOGC (unless
// setGC is false: GOGC given) for a store file of storeSize bytes now and after each
// collection until stop is called.
func followHeap(storeSize int64, setLimit, setGC bool) *heapFollower {
	f := &heapFollower{room: serveRoom(storeSize), setLimit: setLimit, setGC: setGC, sample: newGCSample()}
	if setLimit || setGC {
		f.follow()
	}
	return f
}

// follow sets the limit and GOGC from the runtime's figures now and arms itself for the next
// collection.
func (f *heapFollower) follow() {
	if f.stopped.Load() {
		return
	}
	limit, gcPercent := serveGC(f.sample, f.room)
	if f.ceiling == 0 {
		f.ceiling = limit + f.room/2
	}
	limit = min(limit, f.ceiling)
	if f.setLimit {
		debug.SetMemoryLimit(limit)
	}
	if f.setGC {
		debug.SetGCPercent(gcPercent)
	}
	f.followed.Store(f.sample.cycles())
	runtime.AddCleanup(new(gcMark), (*heapFollower).follow, f)
}

// stop ends the following; the limit and GOGC stay as last set.
func (f *heapFollower) stop() { f.stopped.Store(true) }
