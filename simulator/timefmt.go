package simulator

import "time"

// FormatTime renders a timestamp as pydantic v2 writes an aware UTC datetime (decisions D5):
// RFC 3339 with Z, and the microseconds as six digits only when they are not zero. Python's
// datetime holds no finer time, so nanoseconds are cut, not rounded, as its clock cuts them.
func FormatTime(t time.Time) string {
	return string(AppendTime(make([]byte, 0, len(timeLayoutMicro)), t))
}

// AppendTime appends FormatTime(t) to b.
func AppendTime(b []byte, t time.Time) []byte {
	t = t.UTC().Truncate(time.Microsecond)
	if t.Nanosecond() == 0 {
		return t.AppendFormat(b, timeLayout)
	}
	return t.AppendFormat(b, timeLayoutMicro)
}

const (
	timeLayout      = "2006-01-02T15:04:05Z07:00"
	timeLayoutMicro = "2006-01-02T15:04:05.000000Z07:00"
)
