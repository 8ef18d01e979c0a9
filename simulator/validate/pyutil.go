package validate

import (
	"math"
	"unicode"
)

func nan() float64              { return math.NaN() }
func inf(sign int) float64      { return math.Inf(sign) }
func isPyPrintable(r rune) bool { return unicode.IsPrint(r) }

// isPySpace is Python's str.isspace for one character (Py_UNICODE_ISSPACE):
// Go's unicode.IsSpace plus the information separators U+001C..U+001F.
func isPySpace(r rune) bool {
	return unicode.IsSpace(r) || (r >= 0x1C && r <= 0x1F)
}

// pyStrip is Python's str.strip() with no argument.
func pyStrip(s string) string {
	start, end := 0, len(s)
	for start < end {
		r, size := decodeRune(s[start:])
		if !isPySpace(r) {
			break
		}
		start += size
	}
	for end > start {
		r, size := decodeLastRune(s[start:end])
		if !isPySpace(r) {
			break
		}
		end -= size
	}
	return s[start:end]
}
