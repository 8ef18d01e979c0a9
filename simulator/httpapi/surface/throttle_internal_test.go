package surface

import (
	"fmt"
	"net/netip"
	"testing"
	"time"
	"unsafe"

	"github.com/stretchr/testify/assert"
)

// The window: 20 failures throttle an address until a minute after the first; then it starts
// afresh.
func TestTokenThrottleWindow(t *testing.T) {
	now := time.Unix(1_700_000_000, 0)
	th := NewTokenThrottle(func() time.Time { return now })
	const addr = "203.0.113.7:5555"
	for i := range TokenFailureLimit {
		assert.Zero(t, th.RetryAfter(addr), "after %d failures", i)
		th.Fail(addr)
		now = now.Add(time.Second)
	}
	assert.Equal(t, 40*time.Second, th.RetryAfter(addr), "a minute after the first failure, 20 s ago")
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

// Constant memory and no false positives: a million addresses failing once each neither grow
// the table nor throttle anyone, and a throttled address outlives the churn in its set.
func TestTokenThrottleUnderManyAddresses(t *testing.T) {
	now := time.Unix(1_700_000_000, 0)
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
	assert.Zero(t, th.RetryAfter("10.0.0.1:1"), "one failure is no throttle")
	assert.Zero(t, th.RetryAfter("198.51.100.9:1"), "an address that never failed")
}
