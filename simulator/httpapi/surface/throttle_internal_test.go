package surface

import (
	"fmt"
	"net/netip"
	"testing"
	"time"
	"unsafe"

	"github.com/stretchr/testify/assert"
)

// The window: 20 failures in a clock minute throttle an address until the minute ends; then it
// starts afresh.
func TestTokenThrottleWindow(t *testing.T) {
	now := time.Unix(1_700_000_040, 0) // the start of a minute
	th := NewTokenThrottle(func() time.Time { return now })
	const addr = "203.0.113.7:5555"
	for i := range TokenFailureLimit {
		assert.Zero(t, th.RetryAfter(addr), "after %d failures", i)
		th.Fail(addr)
		now = now.Add(time.Second)
	}
	assert.Equal(t, 40*time.Second, th.RetryAfter(addr), "until the minute, begun 20 s ago, ends")
	assert.Equal(t, 40*time.Second, th.RetryAfter("203.0.113.7:1"), "any port of the address")
	assert.Zero(t, th.RetryAfter("203.0.113.8:5555"), "another address")
	now = now.Add(39 * time.Second)
	assert.Equal(t, time.Second, th.RetryAfter(addr))
	assert.Equal(t, "1", RetryAfterSeconds(th.RetryAfter(addr)))
	now = now.Add(time.Second)
	assert.Zero(t, th.RetryAfter(addr), "the window is over")
	th.Fail(addr)
	assert.Zero(t, th.RetryAfter(addr), "one failure in the new window")

	// IPv6 counts by /64; IPv4-mapped as IPv4.
	for i := range TokenFailureLimit {
		th.Fail(fmt.Sprintf("[2001:db8:1:2::%x]:443", i))
	}
	assert.NotZero(t, th.RetryAfter("[2001:db8:1:2:ffff::1]:1"))
	assert.Zero(t, th.RetryAfter("[2001:db8:1:3::1]:1"))
	for range TokenFailureLimit {
		th.Fail("[::ffff:198.51.100.1]:80")
	}
	assert.NotZero(t, th.RetryAfter("198.51.100.1:80"))
	assert.Zero(t, th.RetryAfter("not an address"), "no address, no throttle")
}

// Constant memory: a million addresses failing once each in one window do not grow the table,
// and a throttled address outlives the churn. Such a flood lifts the sets' floors, so that an
// address it never named may be refused early (never late); when the window ends, everything
// is forgotten.
func TestTokenThrottleUnderManyAddresses(t *testing.T) {
	now := time.Unix(1_700_000_040, 0)
	th := NewTokenThrottle(func() time.Time { return now })
	for range TokenFailureLimit {
		th.Fail("192.0.2.1:1")
	}
	size := unsafe.Sizeof(*th)
	for i := range 1_000_000 {
		a := netip.AddrFrom4([4]byte{10, byte(i >> 16), byte(i >> 8), byte(i)})
		th.Fail(netip.AddrPortFrom(a, 1).String())
	}
	assert.Equal(t, size, unsafe.Sizeof(*th))
	assert.Less(t, size, uintptr(256<<10), "the table's fixed size")
	assert.NotZero(t, th.RetryAfter("192.0.2.1:1"), "the throttled address is kept")
	now = now.Add(TokenFailureWindow)
	for _, a := range []string{"192.0.2.1:1", "10.0.0.1:1", "198.51.100.9:1"} {
		assert.Zero(t, th.RetryAfter(a), "%s in the next window", a)
	}
}

// No false positives while the table holds every address: 500 addresses with 19 failures each
// are none of them throttled (with 8,192 entries in sets of 8, a set overflows with odds of
// about one in a million).
func TestTokenThrottleUnderCapacity(t *testing.T) {
	now := time.Unix(1_700_000_040, 0)
	th := NewTokenThrottle(func() time.Time { return now })
	addr := func(i int) string {
		return netip.AddrPortFrom(netip.AddrFrom4([4]byte{198, 18, byte(i >> 8), byte(i)}), 1).String()
	}
	for range TokenFailureLimit - 1 {
		for i := range 500 {
			th.Fail(addr(i))
		}
	}
	for i := range 500 {
		assert.Zero(t, th.RetryAfter(addr(i)), addr(i))
	}
	th.Fail(addr(7))
	assert.NotZero(t, th.RetryAfter(addr(7)), "the 20th failure")
}

// The throttle's promise holds for every address however many there are (decisions D18): with
// a frozen clock (one window) and more addresses than the table holds, no address has more
// than TokenFailureLimit wrong tokens checked — an eviction may refuse an address early, never
// late. The figures are a tester's: 8,192 addresses × 100 rounds let 532,000 guesses through
// a table that forgot an address's count when its set filled, and 3,000 × 30 let 434
// addresses past 20.
func TestTokenThrottleNeverLate(t *testing.T) {
	for _, c := range []struct{ addrs, rounds int }{{8192, 100}, {3000, 30}} {
		now := time.Unix(1_700_000_040, 0)
		th := NewTokenThrottle(func() time.Time { return now })
		checked := make([]int, c.addrs)
		total := 0
		for range c.rounds {
			for i := range checked {
				a := netip.AddrPortFrom(netip.AddrFrom4([4]byte{127, 2, byte(i >> 8), byte(i)}), 40000).String()
				if th.RetryAfter(a) > 0 {
					continue
				}
				checked[i]++
				total++
				th.Fail(a)
			}
		}
		late := 0
		for _, n := range checked {
			if n > TokenFailureLimit {
				late++
			}
		}
		assert.Zero(t, late, "%d addresses × %d rounds: %d addresses had more than %d wrong tokens checked", c.addrs, c.rounds, late, TokenFailureLimit)
		assert.LessOrEqual(t, total, c.addrs*TokenFailureLimit, "%d addresses × %d rounds: checked guesses", c.addrs, c.rounds)
	}
}
