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
// TokenFailureLimit failures in the last TokenFailureWindow (decisions D18). Its memory is
// fixed whatever the number of addresses: a set-associative table of windowed counters, each
// tagged with a keyed 64-bit hash of its address, so a guesser cannot grow it and no other
// address shares a counter with it (a sketch that shares them would let many addresses
// throttle an innocent one). A full set gives up its expired or least-failed entry, so a
// throttled address is the last to be forgotten. An IPv6 client counts by its /64 (one host's
// usual allocation). It is safe for concurrent use.
type TokenThrottle struct {
	mu   sync.Mutex
	now  func() time.Time
	seed maphash.Seed
	sets [throttleSets][throttleWays]throttleEntry
}

const (
	// TokenFailureLimit failures in TokenFailureWindow throttle an address.
	TokenFailureLimit  = 20
	TokenFailureWindow = time.Minute
	// throttleSets × throttleWays addresses are counted at once: 8,192 entries of 24 bytes.
	throttleSets = 1024
	throttleWays = 8
)

// throttleEntry counts one address's failures since start.
type throttleEntry struct {
	tag   uint64 // keyed hash of the address; 0 marks a free entry
	start int64  // UnixNano of the window's first failure
	n     uint32
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

// find returns the address's live entry, or nil.
func (t *TokenThrottle) find(tag uint64, now int64) *throttleEntry {
	set := &t.sets[tag%throttleSets]
	for i := range set {
		if e := &set[i]; e.tag == tag && now-e.start < int64(TokenFailureWindow) {
			return e
		}
	}
	return nil
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
	now := t.now().UnixNano()
	t.mu.Lock()
	defer t.mu.Unlock()
	e := t.find(tag, now)
	if e == nil || e.n < TokenFailureLimit {
		return 0
	}
	return time.Duration(e.start + int64(TokenFailureWindow) - now)
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
	now := t.now().UnixNano()
	t.mu.Lock()
	defer t.mu.Unlock()
	e := t.find(tag, now)
	if e == nil {
		set := &t.sets[tag%throttleSets]
		e = &set[0]
		for i := range set {
			c := &set[i]
			if c.tag == tag || now-c.start >= int64(TokenFailureWindow) {
				e = c
				break
			}
			if c.n < e.n {
				e = c
			}
		}
		*e = throttleEntry{tag: tag, start: now}
	}
	if e.n < math.MaxUint32 {
		e.n++
	}
}

// RetryAfterSeconds is d as a Retry-After header value: whole seconds, rounded up.
func RetryAfterSeconds(d time.Duration) string {
	return strconv.Itoa(int(math.Ceil(d.Seconds())))
}
