package simulator

import (
	"bytes"
	"encoding/binary"
	"encoding/json"
	"unicode/utf8"

	"github.com/partnersim/partnersim/simulator/wordwise"
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
// thousand bytes of ids, and a byte at a time was a sixth of an order page's instructions. The
// masks of every word are gathered and asked once; the last word overlaps the ones before.
func PlainJSON[S ~string | ~[]byte](s S) bool {
	notPlain := func(w uint64) wordwise.Mask {
		return wordwise.Below(w, 0x20) | wordwise.Above(w, 0x7e) | wordwise.Equal(w, '"') | wordwise.Equal(w, '\\')
	}
	b := []byte(s) // its bytes, shared: b is only read
	if n := len(b); n >= 8 {
		var m wordwise.Mask
		for i := 0; i < n-8; i += 8 {
			m |= notPlain(binary.LittleEndian.Uint64(b[i:]))
		}
		m |= notPlain(binary.LittleEndian.Uint64(b[n-8:])) // the last eight, overlapping the words before
		return !m.Any()
	}
	for _, c := range b {
		if c < 0x20 || c == '"' || c == '\\' || c >= 0x7f {
			return false
		}
	}
	return true
}
