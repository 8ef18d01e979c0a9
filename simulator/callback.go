package simulator

import "strings"

// CallbackTarget is the URL a subscription's callback is checked and sent as: its URL as
// stored (echoed as sent, decisions D8) with what the WHATWG URL standard, and so pydantic,
// does to control characters — leading and trailing C0 controls and spaces trimmed, tabs and
// newlines removed, any other C0 control or DEL percent-encoded (decisions D19). A URL pydantic
// accepts holds them only where the standard encodes them (userinfo, path, query, fragment),
// so the result is a URL an HTTP request can carry, naming the same host.
func CallbackTarget(raw string) string {
	s := strings.TrimFunc(raw, func(r rune) bool { return r <= ' ' })
	if !strings.ContainsFunc(s, func(r rune) bool { return r < ' ' || r == 0x7f }) {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		switch c := s[i]; {
		case c == '\t' || c == '\n' || c == '\r':
		case c < ' ' || c == 0x7f:
			b.WriteByte('%')
			b.WriteByte("0123456789ABCDEF"[c>>4])
			b.WriteByte("0123456789ABCDEF"[c&0xf])
		default:
			b.WriteByte(c)
		}
	}
	return b.String()
}
