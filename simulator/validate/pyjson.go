package validate

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math"
	"math/big"
	"slices"
	"sort"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/shopspring/decimal"
)

// The values a parsed JSON body is made of. They mirror what Python's
// json.loads builds, so that echoing them back renders as FastAPI would.
type (
	// pyInt is a JSON integer, as the canonical decimal text of the Python
	// int it becomes ("-0" is stored as "0"). Python ints have no size limit.
	pyInt string
	// pyStr is a JSON string decoded to WTF-8: valid UTF-8, except that the
	// lone surrogates Python strings may hold (from "\ud800" escapes or bytes
	// decoded with 'surrogatepass') are kept as their 3-byte encodings.
	pyStr string
	// pyBytes is a body that was not parsed as JSON (a content type other
	// than JSON): FastAPI hands the raw bytes to pydantic.
	pyBytes string
)

// jsonObject is a JSON object with Python dict semantics: keys keep the
// position of their first occurrence, a repeated key takes the last value.
type jsonObject struct {
	keys  []string
	vals  []any
	index map[string]int
}

func newJSONObject() *jsonObject { return &jsonObject{index: map[string]int{}} }

func (o *jsonObject) set(k string, v any) {
	if i, ok := o.index[k]; ok {
		o.vals[i] = v
		return
	}
	o.index[k] = len(o.keys)
	o.keys = append(o.keys, k)
	o.vals = append(o.vals, v)
}

func (o *jsonObject) get(k string) (any, bool) {
	i, ok := o.index[k]
	if !ok {
		return nil, false
	}
	return o.vals[i], true
}

// writePy renders v the way Python's json.dumps(ensure_ascii=False,
// separators=(",", ":")) renders the corresponding Python value.
func writePy(buf *bytes.Buffer, v any, depth int) {
	if depth > 20000 {
		// Deeper than anything the parser accepts; keeps hand-built cyclic
		// inputs from recursing forever.
		buf.WriteString("null")
		return
	}
	if writePyNumber(buf, v) {
		return
	}
	switch x := v.(type) {
	case nil:
		buf.WriteString("null")
	case bool:
		if x {
			buf.WriteString("true")
		} else {
			buf.WriteString("false")
		}
	case pyInt:
		buf.WriteString(string(x))
	case pyStr:
		// A lone surrogate makes FastAPI fail to encode its answer (500); the
		// sandbox renders what it cannot encode as null (decisions D19).
		writeStringOrNull(buf, string(x))
	case pyBytes:
		// jsonable_encoder renders bytes with bytes.decode(): bytes that are
		// not UTF-8 make FastAPI fail with 500, here they become null.
		writeStringOrNull(buf, string(x))
	case string:
		writeString(buf, x)
	case *jsonObject:
		if slices.ContainsFunc(x.keys, func(k string) bool { return !utf8.ValidString(k) }) {
			buf.WriteString("null") // a key FastAPI could not encode: the object cannot be rendered
			return
		}
		writeSeq(buf, '{', '}', len(x.keys), func(i int) {
			writeString(buf, x.keys[i])
			buf.WriteByte(':')
			writePy(buf, x.vals[i], depth+1)
		})
	case []any:
		writeSeq(buf, '[', ']', len(x), func(i int) { writePy(buf, x[i], depth+1) })
	case Loc:
		writePy(buf, []any(x), depth)
	case []string:
		writeSeq(buf, '[', ']', len(x), func(i int) { writeString(buf, x[i]) })
	case map[string]any:
		writePyMap(buf, x, depth)
	case fmt.Stringer:
		writeString(buf, x.String())
	default:
		writePyViaJSON(buf, x, depth)
	}
}

// writePyNumber renders v when it is a number (Go's, json.Number, decimal or big.Int) as
// Python renders the int or float it stands for; false when v is not a number.
func writePyNumber(buf *bytes.Buffer, v any) bool {
	switch x := v.(type) {
	case float64:
		buf.WriteString(pyFloatRepr(x))
	case float32:
		buf.WriteString(pyFloatRepr(float64(x)))
	case int, int8, int16, int32, int64, uint, uint8, uint16, uint32, uint64:
		fmt.Fprint(buf, x) // decimal digits, as Python writes an int
	case *big.Int:
		if x == nil {
			buf.WriteString("null")
		} else {
			buf.WriteString(x.String())
		}
	case json.Number:
		if strings.ContainsAny(string(x), ".eE") {
			f, _ := strconv.ParseFloat(string(x), 64)
			buf.WriteString(pyFloatRepr(f))
		} else {
			buf.WriteString(string(x))
		}
	case decimal.Decimal:
		// fastapi.encoders.decimal_encoder: int when the exponent is not
		// negative, else float.
		if x.Exponent() >= 0 {
			buf.WriteString(x.BigInt().String())
		} else {
			f, _ := x.Float64()
			buf.WriteString(pyFloatRepr(f))
		}
	default:
		return false
	}
	return true
}

// writePyMap renders a Go map as a dict with its keys sorted.
func writePyMap(buf *bytes.Buffer, x map[string]any, depth int) {
	keys := make([]string, 0, len(x))
	for k := range x {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	writeSeq(buf, '{', '}', len(keys), func(i int) {
		writeString(buf, keys[i])
		buf.WriteByte(':')
		writePy(buf, x[keys[i]], depth+1)
	})
}

// writeSeq writes start, the n items each writes separated by ',' (Python's separators), then
// end.
func writeSeq(buf *bytes.Buffer, start, end byte, n int, each func(i int)) {
	buf.WriteByte(start)
	for i := range n {
		if i > 0 {
			buf.WriteByte(',')
		}
		each(i)
	}
	buf.WriteByte(end)
}

// writePyViaJSON renders anything else through encoding/json, re-rendered with Python's
// escaping and separators; values encoding/json cannot render become their %v text.
func writePyViaJSON(buf *bytes.Buffer, x any, depth int) {
	b, err := json.Marshal(x)
	if err != nil {
		writeString(buf, fmt.Sprintf("%v", x))
		return
	}
	d := json.NewDecoder(bytes.NewReader(b))
	d.UseNumber()
	v, err := decodeOrdered(d)
	if err != nil {
		writeString(buf, fmt.Sprintf("%v", x))
		return
	}
	writePy(buf, v, depth+1)
}

// decodeOrdered decodes one JSON value keeping object key order.
func decodeOrdered(d *json.Decoder) (any, error) {
	t, err := d.Token()
	if err != nil {
		return nil, err
	}
	switch x := t.(type) {
	case json.Delim:
		switch x {
		case '{':
			o := newJSONObject()
			for d.More() {
				kt, err := d.Token()
				if err != nil {
					return nil, err
				}
				k, _ := kt.(string)
				v, err := decodeOrdered(d)
				if err != nil {
					return nil, err
				}
				o.set(k, v)
			}
			_, err := d.Token()
			return o, err
		case '[':
			var a []any
			for d.More() {
				v, err := decodeOrdered(d)
				if err != nil {
					return nil, err
				}
				a = append(a, v)
			}
			_, err := d.Token()
			if a == nil {
				a = []any{}
			}
			return a, err
		}
		return nil, fmt.Errorf("unexpected %v", x)
	default:
		return x, nil
	}
}

// writeGoString writes a Go string as a JSON string the way Python would
// write the str it stands for.
func writeGoString(buf *bytes.Buffer, s string) { writeString(buf, s) }

// writeStringOrNull writes s, a Python str in WTF-8 or bytes, as a JSON string, or null when
// it is not UTF-8: a str holding a lone surrogate, bytes bytes.decode() refuses — what
// FastAPI cannot render (decisions D19).
func writeStringOrNull(buf *bytes.Buffer, s string) {
	if !utf8.ValidString(s) {
		buf.WriteString("null")
		return
	}
	writeString(buf, s)
}

// writeString writes s as Python's encoder (ensure_ascii=False) does: only
// '"', '\\' and control characters below U+0020 are escaped; everything else,
// including <, >, &, U+007F and U+2028/2029, is written raw.
// Invalid bytes become U+FFFD, as Starlette's percent-decoding and
// bytes.decode(errors='replace') do; values that hold them as Python would
// (lone surrogates, undecodable bytes) go through writeStringOrNull.
func writeString(buf *bytes.Buffer, s string) {
	buf.WriteByte('"')
	for i := 0; i < len(s); {
		c := s[i]
		if c < utf8.RuneSelf {
			switch c {
			case '"':
				buf.WriteString(`\"`)
			case '\\':
				buf.WriteString(`\\`)
			case '\n':
				buf.WriteString(`\n`)
			case '\r':
				buf.WriteString(`\r`)
			case '\t':
				buf.WriteString(`\t`)
			case '\b':
				buf.WriteString(`\b`)
			case '\f':
				buf.WriteString(`\f`)
			default:
				if c < 0x20 {
					buf.WriteString(`\u00`)
					buf.WriteByte(hexLower[c>>4])
					buf.WriteByte(hexLower[c&0xf])
				} else {
					buf.WriteByte(c)
				}
			}
			i++
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		if r == utf8.RuneError && size == 1 {
			_, size = pyDecodeRune(s[i:])
			buf.WriteString("\uFFFD")
			i += size
			continue
		}
		buf.WriteString(s[i : i+size])
		i += size
	}
	buf.WriteByte('"')
}

const hexLower = "0123456789abcdef"

// surrogateAt reports whether s[i:] starts with the 3-byte generalized UTF-8
// encoding of a surrogate code point (ED A0..BF 80..BF) and returns it.
func surrogateAt(s string, i int) (rune, bool) {
	if i+2 < len(s) && s[i] == 0xED && s[i+1] >= 0xA0 && s[i+1] <= 0xBF && s[i+2] >= 0x80 && s[i+2] <= 0xBF {
		return rune(0xD000) | rune(s[i+1]&0x3F)<<6 | rune(s[i+2]&0x3F), true
	}
	return 0, false
}

// appendWTF8 appends code point r, writing surrogates as 3-byte sequences.
func appendWTF8(b []byte, r rune) []byte {
	if r >= 0xD800 && r <= 0xDFFF {
		return append(b, 0xED, byte(0x80|(r>>6)&0x3F), byte(0x80|r&0x3F))
	}
	return utf8.AppendRune(b, r)
}

// toValidUTF8 replaces each lone surrogate (and any other invalid byte) by
// U+FFFD, for values handed back to Go callers.
func toValidUTF8(s string) string {
	if utf8.ValidString(s) {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); {
		r, size := utf8.DecodeRuneInString(s[i:])
		if r == utf8.RuneError && size == 1 {
			if _, ok := surrogateAt(s, i); ok {
				size = 3
			}
			b.WriteRune(utf8.RuneError)
			i += size
			continue
		}
		b.WriteString(s[i : i+size])
		i += size
	}
	return b.String()
}

// pyFloatRepr is Python's repr(float): the shortest digits that round-trip,
// in fixed notation when the decimal point position is in (-4, 16], with
// ".0" added to integral values, else d.ddde±XX. Non-finite values return
// "null" (see Item).
func pyFloatRepr(f float64) string {
	if math.IsNaN(f) || math.IsInf(f, 0) {
		return "null"
	}
	if f == 0 {
		if math.Signbit(f) {
			return "-0.0"
		}
		return "0.0"
	}
	s := strconv.FormatFloat(f, 'e', -1, 64)
	neg := s[0] == '-'
	if neg {
		s = s[1:]
	}
	e := strings.IndexByte(s, 'e')
	mant, expPart := s[:e], s[e+1:]
	digits := strings.Replace(mant, ".", "", 1)
	exp, _ := strconv.Atoi(expPart)
	decpt := exp + 1
	var out strings.Builder
	if neg {
		out.WriteByte('-')
	}
	switch {
	case decpt > -4 && decpt <= 16:
		switch {
		case decpt <= 0:
			out.WriteString("0.")
			out.WriteString(strings.Repeat("0", -decpt))
			out.WriteString(digits)
		case decpt >= len(digits):
			out.WriteString(digits)
			out.WriteString(strings.Repeat("0", decpt-len(digits)))
			out.WriteString(".0")
		default:
			out.WriteString(digits[:decpt])
			out.WriteByte('.')
			out.WriteString(digits[decpt:])
		}
	default:
		out.WriteByte(digits[0])
		if len(digits) > 1 {
			out.WriteByte('.')
			out.WriteString(digits[1:])
		}
		out.WriteByte('e')
		x := decpt - 1
		if x < 0 {
			out.WriteByte('-')
			x = -x
		} else {
			out.WriteByte('+')
		}
		if x < 10 {
			out.WriteByte('0')
		}
		out.WriteString(strconv.Itoa(x))
	}
	return out.String()
}

// pyStrRepr is Python's repr(str): single quotes unless the text contains a
// single quote and no double quote; backslash, the quote, \t \n \r and
// non-printable characters escaped.
func pyStrRepr(s string) string {
	quote := byte('\'')
	if strings.ContainsRune(s, '\'') && !strings.ContainsRune(s, '"') {
		quote = '"'
	}
	var b strings.Builder
	b.WriteByte(quote)
	for _, r := range s {
		switch {
		case r == rune(quote) || r == '\\':
			b.WriteByte('\\')
			b.WriteRune(r)
		case r == '\t':
			b.WriteString(`\t`)
		case r == '\n':
			b.WriteString(`\n`)
		case r == '\r':
			b.WriteString(`\r`)
		case r < 0x20 || r == 0x7f:
			fmt.Fprintf(&b, `\x%02x`, r)
		case r < 0x7f:
			b.WriteRune(r)
		case isPyPrintable(r):
			b.WriteRune(r)
		case r <= 0xff:
			fmt.Fprintf(&b, `\x%02x`, r)
		case r <= 0xffff:
			fmt.Fprintf(&b, `\u%04x`, r)
		default:
			fmt.Fprintf(&b, `\U%08x`, r)
		}
	}
	b.WriteByte(quote)
	return b.String()
}
