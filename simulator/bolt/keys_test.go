package bolt

import (
	"bytes"
	"testing"
	"time"

	"github.com/partnersim/partnersim/simulator"
)

// validRange is every instant the validator accepts (Python's datetime: years 1 to 9999).
var (
	validFirst = time.Date(1, 1, 1, 0, 0, 0, 0, time.UTC)
	validLast  = time.Date(9999, 12, 31, 23, 59, 59, 999999000, time.UTC)
)

// instant maps any int64 onto the validator's whole range, microsecond precision.
func instant(n int64) time.Time {
	micros := validLast.UnixMicro() - validFirst.UnixMicro() + 1
	m := n % micros
	if m < 0 {
		m += micros
	}
	return time.UnixMicro(validFirst.UnixMicro() + m).UTC()
}

// FuzzTimeKeyOrder checks that time keys never invert: for any two instants the validator
// accepts, the keys compare as the instants do, or equal where both lie beyond the storable
// range on the same side (where a filter bound then includes or excludes everything stored, as
// it should). Before the clamp, year 3000 wrapped below 1970 and a filter from 3000 listed
// every user.
func FuzzTimeKeyOrder(f *testing.F) {
	for _, seed := range [][2]int64{{0, 1}, {-1, 1}, {1 << 62, 1 << 61}, {-(1 << 62), 42}, {253402300799000000, 0}} {
		f.Add(seed[0], seed[1])
	}
	f.Fuzz(func(t *testing.T, x, y int64) {
		a, b := instant(x), instant(y)
		checkKeyOrder(t, a, b)
	})
}

func checkKeyOrder(t *testing.T, a, b time.Time) {
	t.Helper()
	got := bytes.Compare(timeKey(a), timeKey(b))
	want := a.Compare(b)
	if got == want {
		return
	}
	if got == 0 && (simulator.CheckStorable(a) != nil && simulator.CheckStorable(b) != nil && a.Before(simulator.FirstStorableTime) == b.Before(simulator.FirstStorableTime)) {
		return // both clamped to the same end
	}
	t.Errorf("timeKey order of %v and %v is %d, want %d", a, b, got, want)
}

// The edges and a few absurd values, checked on every run (the fuzz seeds run too).
func TestTimeKeyOrderEdges(t *testing.T) {
	edges := []time.Time{validFirst, time.Date(1500, 1, 1, 0, 0, 0, 0, time.UTC), simulator.FirstStorableTime.Add(-time.Microsecond), simulator.FirstStorableTime,
		simulator.FirstStorableTime.Add(time.Microsecond), time.Unix(0, 0).UTC(), time.Date(2026, 11, 24, 0, 0, 0, 0, time.UTC), simulator.LastStorableTime.Add(-time.Microsecond),
		simulator.LastStorableTime, simulator.LastStorableTime.Add(time.Microsecond), time.Date(3000, 1, 1, 0, 0, 0, 0, time.UTC), validLast}
	for _, a := range edges {
		for _, b := range edges {
			checkKeyOrder(t, a, b)
		}
	}
	for _, in := range []time.Time{simulator.FirstStorableTime, time.Unix(0, 0), simulator.LastStorableTime} {
		if simulator.CheckStorable(in) != nil {
			t.Errorf("%v should be storable", in)
		}
	}
	for _, out := range []time.Time{validFirst, simulator.FirstStorableTime.Add(-time.Nanosecond), simulator.LastStorableTime.Add(time.Nanosecond), validLast} {
		if simulator.CheckStorable(out) == nil {
			t.Errorf("%v should not be storable", out)
		}
	}
}
