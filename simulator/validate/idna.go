package validate

import (
	"strings"
	"unicode/utf8"

	"golang.org/x/net/idna"
)

// whatwgIDNA is UTS #46 as the WHATWG URL standard's domain-to-ASCII runs it, and as rust-url
// (through the idna crate) runs it for pydantic's URL types: the lookup mapping,
// non-transitional (ß and ς are kept), the Bidi rule (RFC 5893) and the ContextJ rules for
// joiners checked; no STD3 ASCII rules (an underscore passes), no hyphen checks, no DNS length
// check. MapForLookup turns on STD3 rules and hyphen checks, so the options after it turn them
// off again; later options win. A Profile is immutable and safe for concurrent use.
var whatwgIDNA = idna.New(
	idna.MapForLookup(),
	idna.Transitional(false),
	idna.BidiRule(),
	idna.CheckJoiners(true),
	idna.CheckHyphens(false),
	idna.StrictDomainName(false),
	idna.VerifyDNSLength(false),
)

// unicode151 maps the six code points whose UTS #46 mapping Unicode 15.1 changed (x/net/idna
// holds Unicode 15.0 tables; the idna crate under pydantic-core 2.46, 15.1's): capital sharp s
// maps to ß, no longer to "ss", and five CJK compatibility ideographs map to their corrected
// decompositions. Mapping them first gives what 15.1's table gives, since each target is valid
// and maps to itself.
var unicode151 = strings.NewReplacer(
	"\u1E9E", "\u00DF",
	"\U0002F868", "\u36FC",
	"\U0002F874", "\u5F53",
	"\U0002F91F", "\U000243AB",
	"\U0002F95F", "\u7AEE",
	"\U0002F9BF", "\u45D7",
)

// domainToASCII is the URL standard's domain-to-ASCII with beStrict false: UTS #46 ToASCII as
// whatwgIDNA configures it, then a result holding a forbidden domain code point fails. An
// empty result is returned as it is: the caller reports it as an empty host, as rust-url does.
func domainToASCII(s string) (string, bool) {
	if !utf8.ValidString(s) {
		return "", false
	}
	s = unicode151.Replace(s)
	if !aLabelsValid(s) {
		return "", false
	}
	a, err := whatwgIDNA.ToASCII(s)
	if err != nil {
		return "", false
	}
	for i := 0; i < len(a); i++ {
		if c := a[i]; c <= 0x20 || c == 0x7f || strings.IndexByte("%#/:<>?@[\\]^|", c) >= 0 {
			return "", false
		}
	}
	return a, true
}

// aLabelsValid applies the checks UTS #46 (since Unicode 15.1) makes of a label that starts
// with "xn--" and that x/net/idna makes only with its Unicode 16 tables (Go 1.27 on): the
// Punycode after the prefix must not be empty, must decode, and must not decode to ASCII only.
// (Unicode 16's V4 — no "xn--" again once decoded — the idna crate does not apply; nor does
// this.)
func aLabelsValid(s string) bool {
	for label := range strings.FieldsFuncSeq(s, isLabelSeparator) {
		if len(label) < 4 || !strings.EqualFold(label[:4], "xn--") {
			continue
		}
		u, err := idna.Punycode.ToUnicode(strings.ToLower(label))
		if err != nil || u == "" || isASCII(u) {
			return false
		}
	}
	return true
}

// isLabelSeparator reports the characters UTS #46 maps to a full stop.
func isLabelSeparator(r rune) bool {
	return r == '.' || r == '\u3002' || r == '\uff0e' || r == '\uff61'
}

func isASCII(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] >= utf8.RuneSelf {
			return false
		}
	}
	return true
}
