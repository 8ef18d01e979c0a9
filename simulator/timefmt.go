package simulator

import "time"

// FormatTime renders a timestamp as pydantic v2 writes an aware UTC datetime (decisions D5):
// RFC 3339 with Z, and the microseconds as six digits only when they are not zero. Python's
// datetime holds no finer time, so nanoseconds are cut, not rounded, as its clock cuts them.
func FormatTime(t time.Time) string {
	return string(AppendTime(make([]byte, 0, len(timeLayoutMicro)), t))
}

// AppendTime appends FormatTime(t) to b. An instant of the years 1970–9999 is written digit by
// digit from its Unix seconds (a list page writes a few hundred times, and AppendFormat's
// layout walk was most of that); any other goes through AppendFormat.
func AppendTime(b []byte, t time.Time) []byte { return AppendUnix(b, t.Unix(), int32(t.Nanosecond())) }

// AppendUnix appends FormatTime(time.Unix(sec, nsec)) to b, nsec in [0, 1e9), without making
// the time first: a list page keeps kyc_approved_at as Unix seconds (UserRows).
func AppendUnix(b []byte, sec int64, nsec int32) []byte {
	var w TimeAppender
	return w.AppendUnix(b, sec, nsec)
}

// TimeAppender appends times as AppendTime does, keeping the date of the last day it wrote: a
// page of orders, sorted by placed_at, writes dozens of times of the same day or two, and the
// civil date of each was a third of writing it. The zero value is ready; one TimeAppender is
// one writer's.
type TimeAppender struct {
	day  int64    // ^ the day of date since 1970-01-01 (never zero, so the zero value has none)
	date [11]byte // "YYYY-MM-DDT"
}

// Append appends FormatTime(t) to b.
func (w *TimeAppender) Append(b []byte, t time.Time) []byte {
	return w.AppendUnix(b, t.Unix(), int32(t.Nanosecond()))
}

// AppendUnix appends FormatTime(time.Unix(sec, nsec)) to b, nsec in [0, 1e9).
func (w *TimeAppender) AppendUnix(b []byte, sec int64, nsec int32) []byte {
	micros := nsec / 1000
	if sec < 0 || sec > maxFastUnix {
		t := time.Unix(sec, int64(nsec)).UTC().Truncate(time.Microsecond)
		if t.Nanosecond() == 0 {
			return t.AppendFormat(b, timeLayout)
		}
		return t.AppendFormat(b, timeLayoutMicro)
	}
	days, rem := sec/86400, int(sec%86400)
	if key := ^days; key != w.day {
		w.day, w.date = key, civilDate(days)
	}
	at := len(b)
	b = grow(b, len(timeLayoutMicro)-len("07:00")) // "YYYY-MM-DDThh:mm:ss.ffffffZ", written in place
	buf := (*[len(timeLayoutMicro) - len("07:00")]byte)(b[at:])
	*(*[11]byte)(buf[:11]) = w.date
	h, m, s := rem/3600*2, rem/60%60*2, rem%60*2
	buf[11], buf[12], buf[13], buf[14], buf[15], buf[16], buf[17], buf[18] = digitPairs[h], digitPairs[h+1], ':', digitPairs[m], digitPairs[m+1], ':', digitPairs[s], digitPairs[s+1]
	n := 19
	if micros != 0 {
		a, c, e := micros/10000*2, micros/100%100*2, micros%100*2
		buf[19], buf[20], buf[21], buf[22], buf[23], buf[24], buf[25] = '.', digitPairs[a], digitPairs[a+1], digitPairs[c], digitPairs[c+1], digitPairs[e], digitPairs[e+1]
		n = 26
	}
	buf[n] = 'Z'
	return b[:at+n+1]
}

// civilDate is "YYYY-MM-DDT" of a day count since 1970-01-01 of the years 1970–9999, by Neri
// and Schneider's Euclidean affine functions ("Euclidean affine functions and their application
// to calendar algorithms", 2022: to_date, for days from 0000-03-01): three multiplications by
// constants where Hinnant's days_from_civil, inverted, took seven divisions, and a user page
// writes a civil date for most of its accounts (their approvals lie on different days).
func civilDate(days int64) (date [11]byte) {
	n := uint32(days) + 719468 // days since 0000-03-01
	// The century and the day of it.
	n1 := 4*n + 3
	c, nc := n1/146097, n1%146097/4
	// The year of the century and the day of the year (from March 1st).
	p2 := uint64(2939745) * uint64(4*nc+3)
	z, ny := uint32(p2>>32), uint32(p2)/2939745/4
	// The month (from March) and the day of it.
	n3 := 2141*ny + 197913
	month, day := n3>>16, n3&0xffff/2141+1
	year := 100*c + z
	if ny >= 306 { // January or February: the next year's
		year, month = year+1, month-12
	}
	cy, y, mo, d := year/100*2, year%100*2, month*2, day*2
	return [11]byte{digitPairs[cy], digitPairs[cy+1], digitPairs[y], digitPairs[y+1], '-', digitPairs[mo], digitPairs[mo+1], '-', digitPairs[d], digitPairs[d+1], 'T'}
}

// maxFastUnix is the last second of the year 9999, the last AppendTime writes digit by digit.
const maxFastUnix = 253402300799

const (
	timeLayout      = "2006-01-02T15:04:05Z07:00"
	timeLayoutMicro = "2006-01-02T15:04:05.000000Z07:00"
)
