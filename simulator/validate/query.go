package validate

import (
	"net/url"
	"strings"
	"unicode/utf8"
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
	const ones, highs = 0x0101010101010101, 0x8080808080808080
	// For a word of bytes below 0x80, (w - ones) &^ w & highs is nonzero exactly when one of
	// its bytes is zero; w ^ ones*c has a zero byte where w has a c.
	hasZero := func(w uint64) bool { return (w-ones)&^w&highs != 0 }
	for ; len(s) >= 8; s = s[8:] {
		w := uint64(s[0]) | uint64(s[1])<<8 | uint64(s[2])<<16 | uint64(s[3])<<24 |
			uint64(s[4])<<32 | uint64(s[5])<<40 | uint64(s[6])<<48 | uint64(s[7])<<56
		if w&highs != 0 || hasZero(w^(ones*'+')) || hasZero(w^(ones*'%')) {
			return false
		}
	}
	for i := 0; i < len(s); i++ {
		if c := s[i]; c >= utf8.RuneSelf || c == '+' || c == '%' {
			return false
		}
	}
	return true
}
