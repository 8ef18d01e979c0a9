package validate

import (
	"bytes"
	"math"
	"testing"

	"github.com/stretchr/testify/assert"
)

// json.detect_encoding's encodings decode to the same WTF-8 text: UTF-16 and UTF-32 in both
// byte orders, with a BOM or told by the zero bytes, surrogate pairs joined, a lone surrogate
// kept; a truncated unit or a code point above U+10FFFF fails.
func TestDecodeJSONBytes(t *testing.T) {
	for _, c := range []struct {
		name string
		in   string
		want string // "" when decoding fails
	}{
		{"utf-16 le bom", "\xff\xfe[\x00\"\x00=\xd8\x00\xde\"\x00]\x00", "[\"😀\"]"},
		{"utf-16 be bom", "\xfe\xff\x00[\x00\"\xd8=\xde\x00\x00\"\x00]", "[\"😀\"]"},
		{"utf-16 be", "\x00[\x00\"\x00\xe9\x00\"\x00]", "[\"é\"]"},
		{"utf-16 le", "[\x00\"\x00\xe9\x00\"\x00]\x00", "[\"é\"]"},
		{"utf-16 le lone surrogate", "\"\x00\x00\xd8\"\x00", "\"\xed\xa0\x80\""},
		{"utf-16 odd length", "\xff\xfe[\x00]", ""},
		{"utf-32 le bom", "\xff\xfe\x00\x00[\x00\x00\x00\x00\xf6\x01\x00]\x00\x00\x00", "[😀]"},
		{"utf-32 be bom", "\x00\x00\xfe\xff\x00\x00\x00[\x00\x01\xf6\x00\x00\x00\x00]", "[😀]"},
		{"utf-32 be", "\x00\x00\x00[\x00\x00\x00]", "[]"},
		{"utf-32 le", "[\x00\x00\x00]\x00\x00\x00", "[]"},
		{"utf-32 above U+10FFFF", "\x00\x00\xfe\xff\x00\x11\x00\x00", ""},
		{"utf-32 truncated", "\x00\x00\xfe\xff\x00\x00\x00", ""},
		{"utf-32 at 2^31", "\x00\x00\xfe\xff\x80\x00\x00\x00", ""},
	} {
		got, ok := decodeJSONBytes([]byte(c.in))
		assert.Equal(t, c.want != "", ok, "%s: decodes", c.name)
		if ok {
			assert.Equal(t, c.want, string(got), c.name)
		}
	}
}

// Go's integers render as Python's ints: their decimal digits, at every width and both ends.
func TestWritePyIntegers(t *testing.T) {
	var buf bytes.Buffer
	writePy(&buf, []any{int8(-128), int16(32767), int32(-5), int64(math.MinInt64), 7,
		uint8(255), uint16(0), uint32(4294967295), uint64(math.MaxUint64), uint(1)}, 0)
	assert.Equal(t, "[-128,32767,-5,-9223372036854775808,7,255,0,4294967295,18446744073709551615,1]", buf.String())
}
