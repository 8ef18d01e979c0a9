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
	micros := nsec / 1000
	if sec < 0 || sec > maxFastUnix {
		t := time.Unix(sec, int64(nsec)).UTC().Truncate(time.Microsecond)
		if t.Nanosecond() == 0 {
			return t.AppendFormat(b, timeLayout)
		}
		return t.AppendFormat(b, timeLayoutMicro)
	}
	// The civil date of a day count (Howard Hinnant's days_from_civil, inverted), with eras
	// of 400 years starting on March 1st.
	days, rem := sec/86400, sec%86400
	z := days + 719468
	era := z / 146097
	doe := z - era*146097
	yoe := (doe - doe/1460 + doe/36524 - doe/146096) / 365
	doy := doe - (365*yoe + yoe/4 - yoe/100)
	mp := (5*doy + 2) / 153
	day := doy - (153*mp+2)/5 + 1
	month := mp + 3
	if month > 12 {
		month -= 12
	}
	year := yoe + era*400
	if month <= 2 {
		year++
	}
	b = append(b, digitPairs[year/100*2:year/100*2+2]...)
	b = append(b, digitPairs[year%100*2:year%100*2+2]...)
	b = append(b, '-', digitPairs[month*2], digitPairs[month*2+1], '-', digitPairs[day*2], digitPairs[day*2+1], 'T')
	h, m, s := rem/3600, rem/60%60, rem%60
	b = append(b, digitPairs[h*2], digitPairs[h*2+1], ':', digitPairs[m*2], digitPairs[m*2+1], ':', digitPairs[s*2], digitPairs[s*2+1])
	if micros != 0 {
		b = append(b, '.', digitPairs[micros/10000*2], digitPairs[micros/10000*2+1],
			digitPairs[micros/100%100*2], digitPairs[micros/100%100*2+1], digitPairs[micros%100*2], digitPairs[micros%100*2+1])
	}
	return append(b, 'Z')
}

// maxFastUnix is the last second of the year 9999, the last AppendTime writes digit by digit.
const maxFastUnix = 253402300799

const (
	timeLayout      = "2006-01-02T15:04:05Z07:00"
	timeLayoutMicro = "2006-01-02T15:04:05.000000Z07:00"
)
