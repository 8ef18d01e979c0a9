package validate

import (
	"math"
	"unicode"
	"unicode/utf8"
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

// pyDecodeRune decodes one character like CPython's UTF-8 decoder with
// errors='replace': an invalid sequence yields U+FFFD for its maximal
// subpart (the longest prefix that could start a valid sequence), so a
// truncated "E2 82" is one replacement character, as in Python.
func pyDecodeRune(s string) (rune, int) {
	r, size := utf8.DecodeRuneInString(s)
	if r != utf8.RuneError || size != 1 {
		return r, size
	}
	return utf8.RuneError, invalidPrefixLen(s)
}

// invalidPrefixLen is the length of the maximal subpart at the start of s,
// which does not begin with a valid UTF-8 sequence.
func invalidPrefixLen(s string) int {
	c := s[0]
	var n int
	lo, hi := byte(0x80), byte(0xBF)
	switch {
	case c >= 0xC2 && c <= 0xDF:
		n = 1
	case c == 0xE0:
		n, lo = 2, 0xA0
	case c >= 0xE1 && c <= 0xEC, c == 0xEE, c == 0xEF:
		n = 2
	case c == 0xED:
		n, hi = 2, 0x9F
	case c == 0xF0:
		n, lo = 3, 0x90
	case c >= 0xF1 && c <= 0xF3:
		n = 3
	case c == 0xF4:
		n, hi = 3, 0x8F
	default:
		return 1
	}
	i := 1
	for ; i <= n && i < len(s); i++ {
		b := s[i]
		if i == 1 {
			if b < lo || b > hi {
				break
			}
		} else if b < 0x80 || b > 0xBF {
			break
		}
	}
	return i
}

// PyDecodeUTF8 returns s as CPython's s.decode("utf-8", "replace") gives it: each maximal
// ill-formed subpart becomes one U+FFFD (urllib.parse.unquote decodes a request path so).
func PyDecodeUTF8(s string) string {
	if utf8.ValidString(s) {
		return s
	}
	b := make([]byte, 0, len(s)+8)
	for i := 0; i < len(s); {
		r, size := pyDecodeRune(s[i:])
		if r == utf8.RuneError { // a replacement, or U+FFFD as sent: the same bytes
			b = utf8.AppendRune(b, utf8.RuneError)
		} else {
			b = append(b, s[i:i+size]...)
		}
		i += size
	}
	return string(b)
}
