package main

import (
	"runtime/metrics"
)

// serveMemoryFloor is the least soft memory limit serving runs with: the store is a memory
// map, so serving needs a small heap, and a limit makes the collector keep up with a burst of
// large requests on a busy machine instead of letting the heap grow without bound (decisions
// D17).
const serveMemoryFloor = 48 << 20

// serveHeadroom is what serving lets the heap grow by between two collections, over a live
// heap of at least serveLiveMin (what serving itself keeps live: the journal, the caches of
// rendered answers and keys; the heap right after opening holds less). A large store gets more,
// a sixteenth of its file up to serveHeadroomMax: its pages, mapped, are most of the
// process's memory anyway (a 1.3 GB store of 100,000 users: ~80 MiB), and its list pages and
// random details allocate 20–130 KB a request, so 24 MiB made the collector a sixth of the
// server's CPU under load.
const (
	serveHeadroom    = 24 << 20
	serveHeadroomMax = 128 << 20
	serveLiveMin     = 8 << 20
)

// serveGC returns the soft memory limit and the collector's GOGC to serve with, read from the
// runtime once the store is open (and its fixtures built), so call it then (decisions D17).
// The binary sets them, not the sandbox: they are the process's, and tests open sandboxes in
// processes of their own tuning.
//
// GOGC: the live heap of a server is small (6–10 MiB: the store is a memory map) and every
// request allocates, so at Go's default (collect when the heap has doubled) the collector ran
// every few MiB — a third of the server's CPU on the default set's small answers. A collection
// costs about the same whatever the headroom, so GOGC is chosen to let the heap grow by
// serveHeadroom between collections: 100 × headroom ÷ live, between 100 and 400.
//
// The limit: what the runtime holds now, plus that headroom and a margin, and never less than
// serveMemoryFloor. A build leaves metadata behind that the runtime never returns — about
// 25 MiB of span and bitmap structures after a 2.4 GB build of 100,000 users — and a fixed
// 48 MiB counted it against the heap: the collector then ran continuously on the first serve
// after a build.
//
// storeSize is the store file's size in bytes (0 when unknown): it sets the headroom.
func serveGC(storeSize int64) (limit int64, gcPercent int) {
	s := []metrics.Sample{{Name: "/memory/classes/total:bytes"}, {Name: "/memory/classes/heap/released:bytes"}, {Name: "/gc/heap/live:bytes"}}
	metrics.Read(s)
	var v [3]uint64
	for i := range s {
		if s[i].Value.Kind() == metrics.KindUint64 {
			v[i] = s[i].Value.Uint64()
		}
	}
	held := int64(v[0] - min(v[1], v[0])) // what the limit counts
	live := max(int64(v[2]), serveLiveMin)
	room := min(max(storeSize/16, serveHeadroom), serveHeadroomMax)
	gcPercent = int(min(max(100*room/live, 100), 100*serveHeadroomMax/serveLiveMin))
	headroom := live * int64(gcPercent) / 100
	return max(serveMemoryFloor, held+headroom+16<<20), gcPercent
}
