package laws

import (
	"fmt"
	"regexp"
	"strconv"
	"strings"
	"time"
)

var (
	// Decimal is the form of a decimal string: digits, optionally a point and more digits.
	Decimal = regexp.MustCompile(`^-?[0-9]+(\.[0-9]+)?$`)
	// Money is the form of a money string: exactly two decimals.
	Money = regexp.MustCompile(`^-?[0-9]+\.[0-9]{2}$`)
)

// ParseCents reads a decimal string with at most two decimals (more only if they are zeros) as
// an integer number of cents.
func ParseCents(s string) (int64, bool) {
	if !Decimal.MatchString(s) {
		return 0, false
	}
	neg := strings.HasPrefix(s, "-")
	s = strings.TrimPrefix(s, "-")
	whole, frac, _ := strings.Cut(s, ".")
	if len(frac) > 2 {
		if strings.Trim(frac[2:], "0") != "" {
			return 0, false
		}
		frac = frac[:2]
	}
	for len(frac) < 2 {
		frac += "0"
	}
	n, err := strconv.ParseInt(whole+frac, 10, 64)
	if err != nil {
		return 0, false
	}
	if neg {
		n = -n
	}
	return n, true
}

// MoneyCents reads a money string (exactly two decimals) as an integer number of cents.
func MoneyCents(s string) (int64, bool) {
	if !Money.MatchString(s) {
		return 0, false
	}
	return ParseCents(s)
}

// CentsString writes cents as a money string.
func CentsString(c int64) string {
	sign := ""
	if c < 0 {
		sign, c = "-", -c
	}
	return fmt.Sprintf("%s%d.%02d", sign, c/100, c%100)
}

// UTCTimestamp accepts ISO 8601 / RFC 3339 date-times in UTC (Z or +00:00).
func UTCTimestamp(s string) bool {
	t, err := time.Parse(time.RFC3339Nano, s)
	if err != nil {
		return false
	}
	_, off := t.Zone()
	return off == 0
}
