package simulator

import (
	"bytes"
	"encoding/json"
	"unicode/utf8"
)

// EncodeJSON encodes v as the Python service writes every body it sends — API responses
// (Starlette's JSONResponse, decisions D4) and webhook event bodies (decisions D8) alike:
// json.dumps(v, ensure_ascii=False, separators=(",", ":")). That is encoding/json's compact
// output without HTML escaping (<, & and > as they are), without the trailing newline, and with
// U+2028 and U+2029 written as they are. It is the one JSON encoder of every body.
func EncodeJSON(v any) ([]byte, error) {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return nil, err
	}
	return rawLineSeparators(bytes.TrimSuffix(buf.Bytes(), []byte("\n"))), nil
}

// rawLineSeparators undoes the one escape encoding/json adds beyond Python's json.dumps
// (ensure_ascii=False): U+2028 and U+2029, which Go writes as \u2028 and \u2029 and Python as
// they are.
func rawLineSeparators(b []byte) []byte {
	if !bytes.Contains(b, []byte(`\u202`)) {
		return b
	}
	out := make([]byte, 0, len(b))
	for i := 0; i < len(b); {
		switch {
		case b[i] != '\\': // in JSON a backslash only ever starts an escape
			out = append(out, b[i])
			i++
		case b[i+1] != 'u':
			out = append(out, b[i:i+2]...)
			i += 2
		case string(b[i+2:i+6]) == "2028" || string(b[i+2:i+6]) == "2029":
			out = utf8.AppendRune(out, 0x2020+rune(b[i+5]-'0'))
			i += 6
		default:
			out = append(out, b[i:i+6]...)
			i += 6
		}
	}
	return out
}

// PlainJSON reports whether every byte of s is printable ASCII other than '"' and '\\' (what
// EncodeJSON writes as is, between quotes), eight bytes at a time: a list page checks a few
// thousand bytes of ids, and a byte at a time was a sixth of an order page's instructions.
func PlainJSON[S ~string | ~[]byte](s S) bool {
	const ones, highs = 0x0101010101010101, 0x8080808080808080
	// plain has the top bit of each byte of w set exactly when the byte is plain. No byte of a
	// term below borrows from or carries into the next: with its top bit set first, a byte minus
	// 0x20 or 1 keeps its top bit exactly when its low seven bits are at least 0x20, or not 0;
	// its low seven bits plus 1 set the top bit exactly when they are 0x7f. A word's bits are
	// gathered, and s is plain when every byte's top bit stays set, tested once.
	plain := func(w uint64) uint64 {
		atLeastSpace := (w | highs) - ones*0x20
		notQuote := (w ^ ones*'"' | highs) - ones
		notBackslash := (w ^ ones*'\\' | highs) - ones
		del := w&^highs + ones
		return atLeastSpace & notQuote & notBackslash &^ del &^ w
	}
	word := func(s S) uint64 { // s's first eight bytes, in one load
		_ = s[7]
		return uint64(s[0]) | uint64(s[1])<<8 | uint64(s[2])<<16 | uint64(s[3])<<24 |
			uint64(s[4])<<32 | uint64(s[5])<<40 | uint64(s[6])<<48 | uint64(s[7])<<56
	}
	if n := len(s); n >= 8 {
		all := uint64(highs)
		for i := 0; i < n-8; i += 8 {
			all &= plain(word(s[i:]))
		}
		all &= plain(word(s[n-8:])) // the last eight, overlapping the words before
		return all&highs == highs
	}
	for i := 0; i < len(s); i++ {
		if c := s[i]; c < 0x20 || c == '"' || c == '\\' || c >= 0x7f {
			return false
		}
	}
	return true
}
