package validate

import (
	"bytes"
	"errors"
	"math"
	"math/big"
	"strconv"
	"time"
)

// A port of what pydantic-core does with a datetime field in lax mode
// (src/validators/datetime.rs, src/input/datetime.rs, input_python.rs
// validate_datetime) on top of speedate (src/datetime.rs, date.rs, time.rs,
// numbers.rs, util.rs): RFC 3339-like text with T, t, _ or space between date
// and time, optional seconds, a fraction of any length (pydantic truncates
// beyond microseconds), Z/z or ±HH:MM/±HHMM (U+2212 minus too), or a unix
// timestamp in seconds, or milliseconds above 2e10. When the datetime parse
// fails the input is parsed as a date; for strings the date's error is the
// one reported, renamed datetime_from_date_parsing.

// speedate's ParseError documentation strings (src/lib.rs), which
// pydantic-core passes as ctx.error.
const (
	sdTooShort            = "input is too short"
	sdExtraCharacters     = "unexpected extra characters at the end of the input"
	sdInvalidDateTimeSep  = "invalid datetime separator, expected `T`, `t`, `_` or space"
	sdInvalidDateSep      = "invalid date separator, expected `-`"
	sdDateNotExact        = "Timestamp is not an exact date"
	sdInvalidCharYear     = "invalid character in year"
	sdInvalidCharMonth    = "invalid character in month"
	sdInvalidCharDay      = "invalid character in day"
	sdInvalidTimeSep      = "invalid time separator, expected `:`"
	sdInvalidCharHour     = "invalid character in hour"
	sdInvalidCharMinute   = "invalid character in minute"
	sdInvalidCharSecond   = "invalid character in second"
	sdInvalidCharFraction = "invalid character in second fraction"
	sdInvalidCharTzSign   = "invalid timezone sign"
	sdInvalidCharTzHour   = "invalid timezone hour"
	sdInvalidCharTzMinute = "invalid timezone minute"
	sdOutOfRangeTzMinute  = "timezone minute value is outside expected range of 0-59"
	sdOutOfRangeTz        = "timezone offset must be less than 24 hours"
	sdOutOfRangeMonth     = "month value is outside expected range of 1-12"
	sdOutOfRangeDay       = "day value is outside expected range"
	sdOutOfRangeHour      = "hour value is outside expected range of 0-23"
	sdOutOfRangeMinute    = "minute value is outside expected range of 0-59"
	sdOutOfRangeSecond    = "second value is outside expected range of 0-59"
	sdFractionMissing     = "second fraction digits missing after `.`"
	sdDateTooSmall        = "dates before 0000 are not supported as unix timestamps"
	sdDateTooLarge        = "dates after 9999 are not supported as unix timestamps"
	sdTimeTooLarge        = "numeric times may not exceed 86,399 seconds"
	// Added by pydantic-core (src/input/datetime.rs).
	pdNaN       = "NaN values not permitted"
	pdYearZero  = "year 0 is out of range"
	msWatershed = 20_000_000_000
	unix0000    = -62_167_219_200
	unix9999    = 253_402_300_799
)

// sdDate and sdDateTime are speedate's Date and DateTime.
type sdDate struct{ year, month, day int }

type sdDateTime struct {
	date                 sdDate
	hour, minute, second int
	microsecond          int
	tzOffset             int // seconds east of UTC
	hasTZ                bool
}

// validateDateTime validates a datetime from any body or parameter value and
// returns it in UTC (naive values are taken as UTC, decisions D6).
func validateDateTime(loc Loc, in any) (time.Time, *Item) {
	if it := unicodeItem(loc, in); it != nil {
		return time.Time{}, it
	}
	fail := func(typ, text string) (time.Time, *Item) {
		var it Item
		if typ == "datetime_type" {
			it = typeItem(typ, loc, in)
		} else {
			it = errorCtxItem(typ, loc, in, text)
		}
		return time.Time{}, &it
	}
	var dt sdDateTime
	var errText string
	switch x := in.(type) {
	case pyStr:
		dt, errText = sdParseDateTime([]byte(string(x)))
	case string:
		dt, errText = sdParseDateTime([]byte(x))
	case pyBytes:
		dt, errText = sdParseDateTime([]byte(x))
	case bool:
		return fail("datetime_type", "")
	case pyInt:
		n, _ := new(big.Int).SetString(string(x), 10)
		if n.IsInt64() {
			dt, errText = sdFromTimestamp(n.Int64(), 0)
		} else {
			f, _ := new(big.Float).SetInt(n).Float64()
			if math.IsInf(f, 0) {
				// float(int) overflows: pydantic falls through to
				// datetime_type.
				return fail("datetime_type", "")
			}
			dt, errText = sdFromFloat(f)
		}
		if errText != "" {
			return fail("datetime_parsing", errText)
		}
		return finishDateTime(dt, fail)
	case float64:
		if math.IsNaN(x) {
			return fail("datetime_parsing", pdNaN)
		}
		dt, errText = sdFromFloat(x)
		if errText != "" {
			return fail("datetime_parsing", errText)
		}
		return finishDateTime(dt, fail)
	default:
		return fail("datetime_type", "")
	}
	if errText == "" {
		return finishDateTime(dt, fail)
	}
	// Lax fallback: the input as a date at midnight (naive); a failed date
	// parse is what gets reported.
	var raw []byte
	switch x := in.(type) {
	case pyStr:
		raw = []byte(string(x))
	case string:
		raw = []byte(x)
	case pyBytes:
		raw = []byte(x)
	}
	d, dErr := sdParseDate(raw)
	if dErr != "" {
		return fail("datetime_from_date_parsing", dErr)
	}
	return finishDateTime(sdDateTime{date: d}, fail)
}

// finishDateTime is EitherDateTime::try_into_py: Python's datetime has no
// year 0.
func finishDateTime(dt sdDateTime, fail func(string, string) (time.Time, *Item)) (time.Time, *Item) {
	if dt.date.year == 0 {
		return fail("datetime_parsing", pdYearZero)
	}
	t := time.Date(dt.date.year, time.Month(dt.date.month), dt.date.day, dt.hour, dt.minute, dt.second,
		dt.microsecond*1000, time.UTC)
	if dt.hasTZ {
		t = t.Add(-time.Duration(dt.tzOffset) * time.Second)
	}
	return t, nil
}

// sdParseDateTime is DateTime::parse_bytes_with_config: RFC 3339 first, then
// a number as a unix timestamp; when both fail the RFC 3339 error stands.
func sdParseDateTime(b []byte) (sdDateTime, string) {
	dt, e := sdParseRFC3339(b)
	if e == "" {
		return dt, ""
	}
	i, f, kind := sdFloatParse(b)
	switch kind {
	case 'i':
		return sdFromTimestamp(i, 0)
	case 'f':
		return sdFromFloatString(f)
	}
	return sdDateTime{}, e
}

func sdParseRFC3339(b []byte) (sdDateTime, string) {
	d, e := sdParseDatePartial(b)
	if e != "" {
		return sdDateTime{}, e
	}
	if len(b) <= 10 {
		return sdDateTime{}, sdInvalidDateTimeSep
	}
	switch b[10] {
	case 'T', 't', ' ', '_':
	default:
		return sdDateTime{}, sdInvalidDateTimeSep
	}
	dt, e := sdParseTime(b, 11)
	if e != "" {
		return sdDateTime{}, e
	}
	dt.date = d
	return dt, ""
}

func digitAt(b []byte, i int) (int, bool) {
	if i < len(b) && b[i] >= '0' && b[i] <= '9' {
		return int(b[i] - '0'), true
	}
	return 0, false
}

// twoDigitsAt is the number the two digits at b[i] and b[i+1] make, and whether both are
// digits.
func twoDigitsAt(b []byte, i int) (int, bool) {
	d1, ok1 := digitAt(b, i)
	d2, ok2 := digitAt(b, i+1)
	return d1*10 + d2, ok1 && ok2
}

// sdParseDatePartial is Date::parse_bytes_partial: YYYY-MM-DD at the start.
func sdParseDatePartial(b []byte) (sdDate, string) {
	if len(b) < 10 {
		return sdDate{}, sdTooShort
	}
	year := 0
	for i := 0; i < 4; i++ {
		d, ok := digitAt(b, i)
		if !ok {
			return sdDate{}, sdInvalidCharYear
		}
		year = year*10 + d
	}
	if b[4] != '-' {
		return sdDate{}, sdInvalidDateSep
	}
	month, ok := twoDigitsAt(b, 5)
	if !ok {
		return sdDate{}, sdInvalidCharMonth
	}
	if b[7] != '-' {
		return sdDate{}, sdInvalidDateSep
	}
	day, ok := twoDigitsAt(b, 8)
	if !ok {
		return sdDate{}, sdInvalidCharDay
	}
	var maxDays int
	switch month {
	case 1, 3, 5, 7, 8, 10, 12:
		maxDays = 31
	case 4, 6, 9, 11:
		maxDays = 30
	case 2:
		if year%4 == 0 && (year%100 != 0 || year%400 == 0) {
			maxDays = 29
		} else {
			maxDays = 28
		}
	default:
		return sdDate{}, sdOutOfRangeMonth
	}
	if day < 1 || day > maxDays {
		return sdDate{}, sdOutOfRangeDay
	}
	return sdDate{year, month, day}, ""
}

// sdParseTime is Time::parse_bytes_offset (PureTime::parse plus the
// timezone), with pydantic's microseconds_precision "truncate".
func sdParseTime(b []byte, off int) (sdDateTime, string) {
	var t sdDateTime
	if len(b)-off < 5 {
		return t, sdTooShort
	}
	var ok bool
	if t.hour, ok = twoDigitsAt(b, off); !ok {
		return t, sdInvalidCharHour
	}
	if b[off+2] != ':' {
		return t, sdInvalidTimeSep
	}
	if t.minute, ok = twoDigitsAt(b, off+3); !ok {
		return t, sdInvalidCharMinute
	}
	if t.hour > 23 {
		return t, sdOutOfRangeHour
	}
	if t.minute > 59 {
		return t, sdOutOfRangeMinute
	}
	length := 5
	if off+5 < len(b) && b[off+5] == ':' {
		if t.second, ok = twoDigitsAt(b, off+6); !ok {
			return t, sdInvalidCharSecond
		}
		if t.second > 59 {
			return t, sdOutOfRangeSecond
		}
		length = 8
		if off+8 < len(b) && (b[off+8] == '.' || b[off+8] == ',') {
			micro, n := sdFraction(b, off+9)
			if n == 0 {
				return t, sdFractionMissing
			}
			t.microsecond = micro
			length = 9 + n
		}
	}
	pos := off + length
	if pos < len(b) {
		offset, end, e := sdParseTZ(b, pos)
		if e != "" {
			return t, e
		}
		t.hasTZ, t.tzOffset, pos = true, offset, end
	}
	if len(b) > pos {
		return t, sdExtraCharacters
	}
	return t, ""
}

// sdFraction reads the digits of a fraction of a second from b[at] on: the microseconds they
// make (digits past the sixth truncated) and how many there are.
func sdFraction(b []byte, at int) (micro, n int) {
	for {
		d, ok := digitAt(b, at+n)
		if !ok {
			break
		}
		if n < 6 {
			micro = micro*10 + d
		}
		n++
	}
	for k := n; k < 6; k++ {
		micro *= 10
	}
	return micro, n
}

// sdParseTZ parses the timezone at b[pos]: Z, or a sign (+, - or U+2212) and HH:MM or HHMM.
// It returns the offset in seconds east of UTC and where the timezone ends.
func sdParseTZ(b []byte, pos int) (offset, end int, e string) {
	c := b[pos]
	pos++
	if c == 'Z' || c == 'z' {
		return 0, pos, ""
	}
	sign := 0
	switch c {
	case '+':
		sign = 1
	case '-':
		sign = -1
	case 0xE2: // U+2212 MINUS SIGN, E2 88 92
		if pos >= len(b) || b[pos] != 0x88 || pos+1 >= len(b) || b[pos+1] != 0x92 {
			return 0, 0, sdInvalidCharTzSign
		}
		pos += 2
		sign = -1
	default:
		return 0, 0, sdInvalidCharTzSign
	}
	th, ok := twoDigitsAt(b, pos)
	if !ok {
		return 0, 0, sdInvalidCharTzHour
	}
	var tm1 int
	switch {
	case pos+2 < len(b) && b[pos+2] == ':':
		pos += 3
		tm1, ok = digitAt(b, pos)
		if !ok {
			return 0, 0, sdInvalidCharTzMinute
		}
	case pos+2 < len(b) && b[pos+2] >= '0' && b[pos+2] <= '9':
		pos += 2
		tm1 = int(b[pos] - '0')
	default:
		return 0, 0, sdInvalidCharTzMinute
	}
	tm2, ok := digitAt(b, pos+1)
	if !ok {
		return 0, 0, sdInvalidCharTzMinute
	}
	minuteSeconds := tm1*600 + tm2*60
	if minuteSeconds >= 3600 {
		return 0, 0, sdOutOfRangeTzMinute
	}
	offset = sign * (th*3600 + minuteSeconds)
	if offset >= 86400 || offset <= -86400 {
		return 0, 0, sdOutOfRangeTz
	}
	return offset, pos + 2, ""
}

// sdParseDate is Date::parse_bytes_with_config: YYYY-MM-DD exactly, else an
// integer unix timestamp that must fall on midnight.
func sdParseDate(b []byte) (sdDate, string) {
	d, e := sdParseDatePartial(b)
	if e == "" && len(b) > 10 {
		e = sdExtraCharacters
	}
	if e == "" {
		return d, ""
	}
	ts, ok := sdIntParse(b)
	if !ok {
		return sdDate{}, e
	}
	secs, micros, werr := sdWatershed(ts)
	if werr != "" {
		return sdDate{}, werr
	}
	date, rem, cerr := sdFromTimestampCalc(secs)
	if cerr != "" {
		return sdDate{}, cerr
	}
	if rem != 0 || micros != 0 {
		return sdDate{}, sdDateNotExact
	}
	return date, ""
}

// sdIntParse is speedate's int_parse_bytes: [+-]digits, no overflow.
func sdIntParse(b []byte) (int64, bool) {
	neg := false
	if len(b) >= 2 && b[0] == '-' {
		neg, b = true, b[1:]
	} else if len(b) >= 2 && b[0] == '+' {
		b = b[1:]
	}
	if len(b) == 0 {
		return 0, false
	}
	var n int64
	for _, c := range b {
		if c < '0' || c > '9' {
			return 0, false
		}
		if n > (math.MaxInt64-int64(c-'0'))/10 {
			return 0, false
		}
		n = n*10 + int64(c-'0')
	}
	if neg {
		n = -n
	}
	return n, true
}

// sdFloatParse is speedate's numeric-string parse (the behaviour of
// pydantic-core 2.46, probed): text holding a '.' is a Rust f64 literal
// ([+-](digits[.[digits]] | .digits)[(e|E)[+-]digits], overflowing to
// infinity); other text must be [+-]digits fitting an i64. kind is 'i', 'f'
// or 0 when the bytes are not such a number.
func sdFloatParse(b []byte) (int64, float64, byte) {
	if bytes.IndexByte(b, '.') < 0 {
		n, ok := sdIntParse(b)
		if !ok {
			return 0, 0, 0
		}
		return n, 0, 'i'
	}
	i := 0
	if i < len(b) && (b[i] == '+' || b[i] == '-') {
		i++
	}
	intDigits := 0
	for i < len(b) && isDigit(b[i]) {
		i, intDigits = i+1, intDigits+1
	}
	fracDigits := 0
	if i < len(b) && b[i] == '.' {
		i++
		for i < len(b) && isDigit(b[i]) {
			i, fracDigits = i+1, fracDigits+1
		}
	}
	if intDigits+fracDigits == 0 {
		return 0, 0, 0
	}
	if i < len(b) && (b[i] == 'e' || b[i] == 'E') {
		i++
		if i < len(b) && (b[i] == '+' || b[i] == '-') {
			i++
		}
		expDigits := 0
		for i < len(b) && isDigit(b[i]) {
			i, expDigits = i+1, expDigits+1
		}
		if expDigits == 0 {
			return 0, 0, 0
		}
	}
	if i != len(b) {
		return 0, 0, 0
	}
	f, err := strconv.ParseFloat(string(b), 64)
	if err != nil && !errors.Is(err, strconv.ErrRange) {
		return 0, 0, 0
	}
	return 0, f, 'f'
}

// rustF64ToI64 is Rust's saturating `f as i64`.
func rustF64ToI64(f float64) int64 {
	switch {
	case math.IsNaN(f):
		return 0
	case f >= 9223372036854775807.0:
		return math.MaxInt64
	case f <= -9223372036854775808.0:
		return math.MinInt64
	}
	return int64(f)
}

// rustF64ToU32 is Rust's saturating `f as u32`.
func rustF64ToU32(f float64) uint32 {
	switch {
	case math.IsNaN(f) || f <= 0:
		return 0
	case f >= 4294967295.0:
		return math.MaxUint32
	}
	return uint32(f)
}

// sdFromFloatString is the float branch of DateTime::parse_bytes_with_config
// for numeric text: milliseconds above the watershed are divided by 1000,
// the seconds floored, the microseconds rounded from the remainder.
func sdFromFloatString(f float64) (sdDateTime, string) {
	norm := f
	if math.Abs(f) > msWatershed {
		norm = f / 1000
	}
	secs := rustF64ToI64(math.Floor(norm))
	micros := rustF64ToU32(math.Round((norm - float64(secs)) * 1_000_000))
	return sdFromTimestamp(secs, micros)
}

// sdFromFloat is how pydantic-core 2.46 turns a float input into a datetime
// (probed: it differs from the numeric-text branch): the floored value is
// the timestamp (seconds, or milliseconds past the watershed, as for ints)
// and the absolute fractional part adds microseconds (×10⁶ for seconds, ×10³
// for milliseconds), so -1.25 gives -2 s + 250000 µs.
func sdFromFloat(f float64) (sdDateTime, string) {
	scale := 1_000_000.0
	if math.Abs(f) > msWatershed {
		scale = 1000
	}
	frac := f - math.Trunc(f)
	if math.IsInf(f, 0) {
		frac = math.NaN()
	}
	micros := rustF64ToU32(math.Round(math.Abs(frac) * scale))
	return sdFromTimestamp(rustF64ToI64(math.Floor(f)), micros)
}

// sdWatershed is speedate's timestamp_watershed: values above 2e10 in
// absolute value are milliseconds.
func sdWatershed(ts int64) (int64, uint32, string) {
	if ts == math.MinInt64 {
		return 0, 0, sdDateTooSmall
	}
	abs := ts
	if abs < 0 {
		abs = -abs
	}
	if abs <= msWatershed {
		return ts, 0, ""
	}
	secs := ts / 1000
	micros := (ts % 1000) * 1000
	if micros < 0 {
		secs--
		micros += 1_000_000
	}
	return secs, uint32(micros), ""
}

// sdFromTimestamp is DateTime::from_timestamp_with_config with pydantic's
// unix_timestamp_offset 0 (the result is UTC).
func sdFromTimestamp(ts int64, micro uint32) (sdDateTime, string) {
	secs, extra, e := sdWatershed(ts)
	if e != "" {
		return sdDateTime{}, e
	}
	total := uint64(micro) + uint64(extra)
	if total > math.MaxUint32 {
		return sdDateTime{}, sdTimeTooLarge
	}
	if total >= 1_000_000 {
		add := int64(total / 1_000_000)
		if (add > 0 && secs > math.MaxInt64-add) || (add < 0 && secs < math.MinInt64-add) {
			return sdDateTime{}, sdTimeTooLarge
		}
		secs += add
		total %= 1_000_000
	}
	date, rem, ce := sdFromTimestampCalc(secs)
	if ce != "" {
		return sdDateTime{}, ce
	}
	return sdDateTime{date: date, hour: rem / 3600, minute: rem % 3600 / 60, second: rem % 60,
		microsecond: int(total), hasTZ: true}, ""
}

// sdFromTimestampCalc is Date::from_timestamp_calc: the proleptic Gregorian
// date of a unix second within years 0000..9999, and the seconds into it.
func sdFromTimestampCalc(secs int64) (sdDate, int, string) {
	if secs < unix0000 {
		return sdDate{}, 0, sdDateTooSmall
	}
	if secs > unix9999 {
		return sdDate{}, 0, sdDateTooLarge
	}
	t := time.Unix(secs, 0).UTC()
	rem := int(((secs % 86400) + 86400) % 86400)
	return sdDate{t.Year(), int(t.Month()), t.Day()}, rem, ""
}
