package laws

import (
	"fmt"
	"time"

	"github.com/tidwall/gjson"
)

// WallClock: a timestamp that leaves the sandbox (a record's time, an event's created_at, the
// signature's t) is wall-clock time however far the virtual clock was advanced (decisions D8),
// so receivers' tolerance checks keep working: within tolerance of now, either side.
func WallClock(name string, v gjson.Result, now time.Time, tolerance time.Duration) error {
	t, err := time.Parse(time.RFC3339Nano, v.String())
	if v.Type != gjson.String || err != nil {
		return fmt.Errorf("expected %s to be an RFC 3339 timestamp, got %s", name, orAbsent(v))
	}
	return WallClockAt(name, v.String(), t, now, tolerance)
}

// WallClockAt is WallClock of a time already read (the signature's t, unix seconds), written
// as it was sent.
func WallClockAt(name, sent string, t, now time.Time, tolerance time.Duration) error {
	if off := t.Sub(now); off > tolerance || off < -tolerance {
		return fmt.Errorf("expected %s within %s of the wall clock (decisions D8: timestamps stay wall-clock however far the virtual clock moved), got %s (%s off)",
			name, tolerance, sent, off.Round(time.Second))
	}
	return nil
}
