package validate

import (
	"encoding/binary"
	"net/url"
	"strings"
	"unicode/utf8"

	"github.com/partnersim/partnersim/simulator/wordwise"
)

// ParseQuery parses a raw query string the way Starlette builds
// request.query_params: the bytes decoded as latin-1, then
// urllib.parse.parse_qsl(keep_blank_values=True): fields split on '&' only
// (not ';'), empty fields skipped, a field without '=' has an empty value,
// '+' is a space, %XX sequences are decoded as UTF-8 with invalid bytes
// replaced by U+FFFD and malformed escapes kept literally.
//
// net/url.ParseQuery differs: it drops fields containing ';' or a bad
// escape, which Starlette keeps (and then validates).
func ParseQuery(raw string) url.Values {
	out := url.Values{}
	for rest := raw; rest != ""; {
		var field string
		field, rest, _ = strings.Cut(rest, "&")
		if field == "" {
			continue
		}
		name, value, _ := strings.Cut(field, "=")
		name = pyUnquotePlus(name)
		out[name] = append(out[name], pyUnquotePlus(value))
	}
	return out
}

// QueryValue is the value ParseQuery(raw) gives name (not empty) last, and whether it gives
// one: a handler that reads a single parameter finds it without building the map (a plain
// query, nothing to unquote, costs no allocation). An empty field, which ParseQuery skips,
// names nothing but "".
func QueryValue(raw, name string) (value string, ok bool) {
	var last string
	for rest := raw; rest != ""; {
		var field string
		field, rest, _ = strings.Cut(rest, "&")
		if n, v, _ := strings.Cut(field, "="); pyUnquotePlus(n) == name {
			last, ok = v, true
		}
	}
	if !ok {
		return "", false
	}
	return pyUnquotePlus(last), true
}

// UnquoteQuery is a query field's name or value as ParseQuery decodes it: a reader of the raw
// query that keeps only some fields decodes them with it, as ParseQuery would.
func UnquoteQuery(s string) string { return pyUnquotePlus(s) }

// pyUnquotePlus is urllib.parse.unquote_plus on a latin-1 decoded string.
func pyUnquotePlus(s string) string {
	if plainASCII(s) {
		return s // what decoding it gives: no allocation on the common query
	}
	s = strings.ReplaceAll(s, "+", " ")
	var out strings.Builder
	var pending []byte // decoded %XX bytes awaiting UTF-8 decoding
	flush := func() {
		// One conversion per run: decoding from a fresh string(pending) per rune made a long
		// run quadratic (D17).
		for rest := string(pending); len(rest) > 0; {
			r, size := pyDecodeRune(rest)
			out.WriteRune(r) // U+FFFD per maximal invalid subpart, like errors='replace'
			rest = rest[size:]
		}
		pending = pending[:0]
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if b, ok := escapeAt(s, i); ok {
			pending = append(pending, b)
			i += 2
			continue
		}
		if c < utf8.RuneSelf {
			// ASCII text joins the pending bytes: Python decodes each run
			// of ASCII (escapes included) as one bytes object.
			pending = append(pending, c)
			continue
		}
		flush()
		out.WriteRune(rune(c)) // a raw byte is its latin-1 character
	}
	flush()
	return out.String()
}

// plainASCII reports whether s is ASCII with no '+' or '%': text unquote_plus leaves as it is.
// It looks at eight bytes at a time: every request's query names and values pass here, and a
// byte at a time was most of reading Get User Detail's one parameter.
func plainASCII(s string) bool {
	b := []byte(s) // s's bytes, shared: b is only read
	for ; len(b) >= 8; b = b[8:] {
		w := binary.LittleEndian.Uint64(b)
		if (wordwise.Above(w, 0x7f) | wordwise.Equal(w, '+') | wordwise.Equal(w, '%')).Any() {
			return false
		}
	}
	for _, c := range b {
		if c >= utf8.RuneSelf || c == '+' || c == '%' {
			return false
		}
	}
	return true
}
