package surface

import (
	"hash/maphash"
	"math"
	"net/netip"
	"strconv"
	"sync"
	"time"
)

// TokenThrottle counts failed sandbox-token checks per client address — the x-sandbox-token
// header and the console's sign-in alike — and refuses every token check from an address with
// TokenFailureLimit failures in the current TokenFailureWindow (a clock minute; decisions D18).
//
// Its memory is fixed whatever the number of addresses: a set-associative table of counters,
// each tagged with a keyed 64-bit hash of its address, so that a guesser cannot grow it and no
// address shares a counter with another while the table holds it. When a set is full, the
// entry with the fewest failures is evicted and the set remembers the most failures it has
// evicted this window (its floor): an address the set does not hold may be one it evicted, so
// it is counted from the floor. An eviction may therefore refuse an address early, never late —
// no address gets more than TokenFailureLimit failed checks in a window — and only a flood of
// failing addresses within one window (some 160 in a set of 8, 160,000 in all) lifts a floor to
// the limit; every floor is forgotten when the window ends. Windows are clock minutes rather
// than a minute from each address's first failure so that a floor and the entries it stands
// for end together. An IPv6 client counts by its /64 (one host's usual allocation). It is safe
// for concurrent use.
type TokenThrottle struct {
	mu   sync.Mutex
	now  func() time.Time
	seed maphash.Seed
	sets [throttleSets]throttleSet
}

const (
	// TokenFailureLimit failures in TokenFailureWindow throttle an address.
	TokenFailureLimit  = 20
	TokenFailureWindow = time.Minute
	// throttleSets × throttleWays addresses are counted at once: 8,192 entries of 16 bytes.
	throttleSets = 1024
	throttleWays = 8
)

// throttleSet is one set of the table and its floor.
type throttleSet struct {
	ways [throttleWays]throttleEntry
	// floorWindow and floorN are the most failures of an entry evicted in that window.
	floorWindow uint32
	floorN      uint32
}

// throttleEntry counts one address's failures in one window.
type throttleEntry struct {
	tag    uint64 // keyed hash of the address; 0 marks a free entry
	window uint32 // the window (minutes since the Unix epoch) the count is of
	n      uint32
}

// NewTokenThrottle returns an empty throttle on the clock now (nil: the wall clock; never the
// virtual clock, which a caller may advance).
func NewTokenThrottle(now func() time.Time) *TokenThrottle {
	if now == nil {
		now = time.Now
	}
	return &TokenThrottle{now: now, seed: maphash.MakeSeed()}
}

// key returns the address's tag; ok is false for a RemoteAddr that names no IP (a request that
// did not come over TCP from a client; it is not throttled).
func (t *TokenThrottle) key(remoteAddr string) (tag uint64, ok bool) {
	ap, err := netip.ParseAddrPort(remoteAddr)
	if err != nil {
		return 0, false
	}
	ip := ap.Addr().Unmap()
	b := ip.As16()
	key := b[:8]
	if ip.Is4() {
		key = b[12:]
	}
	return maphash.Bytes(t.seed, key) | 1, true
}

// window returns the window now falls in and when it ends.
func (t *TokenThrottle) window() (w uint32, end time.Time, now time.Time) {
	now = t.now()
	m := now.UnixNano() / int64(TokenFailureWindow)
	return uint32(m), time.Unix(0, (m+1)*int64(TokenFailureWindow)), now
}

// count returns the address's failures in window w (the set's floor when it holds no entry for
// it) and its entry, or nil.
func (s *throttleSet) count(tag uint64, w uint32) (uint32, *throttleEntry) {
	for i := range s.ways {
		if e := &s.ways[i]; e.tag == tag && e.window == w {
			return e.n, e
		}
	}
	if s.floorWindow == w {
		return s.floorN, nil
	}
	return 0, nil
}

// RetryAfter returns how long the address stays throttled, or 0 when it is not.
func (t *TokenThrottle) RetryAfter(remoteAddr string) time.Duration {
	if t == nil {
		return 0
	}
	tag, ok := t.key(remoteAddr)
	if !ok {
		return 0
	}
	w, end, now := t.window()
	t.mu.Lock()
	defer t.mu.Unlock()
	if n, _ := t.sets[tag%throttleSets].count(tag, w); n < TokenFailureLimit {
		return 0
	}
	return end.Sub(now)
}

// Fail counts one failed token check from the address.
func (t *TokenThrottle) Fail(remoteAddr string) {
	if t == nil {
		return
	}
	tag, ok := t.key(remoteAddr)
	if !ok {
		return
	}
	w, _, _ := t.window()
	t.mu.Lock()
	defer t.mu.Unlock()
	s := &t.sets[tag%throttleSets]
	n, e := s.count(tag, w)
	if e == nil {
		e = s.evict(w)
		*e = throttleEntry{tag: tag, window: w, n: n}
	}
	if e.n < math.MaxUint32 {
		e.n++
	}
}

// evict returns an entry to reuse in window w: one of an earlier window (or free), else the
// one with the fewest failures, whose count the set's floor then keeps.
func (s *throttleSet) evict(w uint32) *throttleEntry {
	victim := &s.ways[0]
	for i := range s.ways {
		e := &s.ways[i]
		if e.window != w || e.tag == 0 {
			return e
		}
		if e.n < victim.n {
			victim = e
		}
	}
	if s.floorWindow != w {
		s.floorWindow, s.floorN = w, 0
	}
	s.floorN = max(s.floorN, victim.n)
	return victim
}

// RetryAfterSeconds is d as a Retry-After header value: whole seconds, rounded up.
func RetryAfterSeconds(d time.Duration) string {
	return strconv.Itoa(int(math.Ceil(d.Seconds())))
}
