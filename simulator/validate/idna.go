package validate

import (
	"strings"
	"unicode"
	"unicode/utf8"
)

// domainToASCII approximates the WHATWG domain-to-ASCII that rust-url runs
// through the idna crate (UTS #46, non-transitional, with the URL standard's
// forbidden domain code points denied). Without the Unicode mapping tables
// (the standard library has none), non-ASCII text is mapped by lowercasing,
// folding full-width ASCII and ideographic full stops and dropping the
// default-ignorable characters; NFC normalisation, the bidi and joiner rules
// and the remaining compatibility mappings are not applied. ASCII domains,
// which are what callback URLs use, are handled exactly.
func domainToASCII(s string) (string, bool) {
	if !utf8.ValidString(s) {
		return "", false
	}
	var mapped strings.Builder
	for _, r := range s {
		switch {
		case r < utf8.RuneSelf:
			if r >= 'A' && r <= 'Z' {
				r += 'a' - 'A'
			}
			mapped.WriteRune(r)
		case r >= 0xFF01 && r <= 0xFF5E:
			mapped.WriteRune(unicode.ToLower(r - 0xFEE0))
		case r == 0x3002 || r == 0xFF0E || r == 0xFF61:
			mapped.WriteByte('.')
		case idnaIgnored(r):
		case idnaDisallowed(r):
			return "", false
		default:
			mapped.WriteRune(unicode.ToLower(r))
		}
	}
	m := mapped.String()
	for i := 0; i < len(m); i++ {
		c := m[i]
		if c <= 0x20 || c == 0x7f || strings.IndexByte("%#/:<>?@[\\]^|", c) >= 0 {
			return "", false
		}
	}
	labels := strings.Split(m, ".")
	for i, label := range labels {
		if rest, ok := strings.CutPrefix(label, "xn--"); ok {
			dec, ok := punycodeDecode(rest)
			if !ok || dec == "" || isASCII(dec) || !idnaValidLabel(dec) {
				return "", false
			}
			continue
		}
		if isASCII(label) {
			continue
		}
		if !idnaValidLabel(label) {
			return "", false
		}
		enc, ok := punycodeEncode(label)
		if !ok {
			return "", false
		}
		labels[i] = "xn--" + enc
	}
	return strings.Join(labels, "."), true
}

func isASCII(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] >= utf8.RuneSelf {
			return false
		}
	}
	return true
}

// idnaIgnored lists the code points UTS #46 maps to nothing.
func idnaIgnored(r rune) bool {
	switch {
	case r == 0xAD, r == 0x34F, r == 0x200B, r == 0x2060, r == 0xFEFF:
		return true
	case r >= 0x180B && r <= 0x180F, r >= 0xFE00 && r <= 0xFE0F, r >= 0x1BCA0 && r <= 0x1BCA3:
		return true
	case r >= 0xE0100 && r <= 0xE01EF:
		return true
	}
	return false
}

// idnaDisallowed approximates UTS #46's disallowed status: controls,
// surrogates, private use, unassigned, format characters and separators
// (which map to a space, a forbidden code point).
func idnaDisallowed(r rune) bool {
	if r == utf8.RuneError {
		return true
	}
	if unicode.In(r, unicode.Cc, unicode.Cs, unicode.Co, unicode.Cf, unicode.Zs, unicode.Zl, unicode.Zp) {
		return r != 0x200C && r != 0x200D // ZWNJ/ZWJ are deviations, kept
	}
	return !unicode.In(r, unicode.L, unicode.M, unicode.N, unicode.P, unicode.S)
}

// idnaValidLabel checks a Unicode label: it must not start with a combining
// mark and must already be in mapped form.
func idnaValidLabel(label string) bool {
	first, _ := utf8.DecodeRuneInString(label)
	if unicode.In(first, unicode.Mn, unicode.Mc, unicode.Me) {
		return false
	}
	for _, r := range label {
		if r >= 'A' && r <= 'Z' {
			return false
		}
		if r < utf8.RuneSelf {
			continue
		}
		if idnaIgnored(r) || idnaDisallowed(r) || unicode.ToLower(r) != r || (r >= 0xFF01 && r <= 0xFF5E) {
			return false
		}
	}
	return true
}

// Punycode (RFC 3492) parameters.
const (
	pcBase        = 36
	pcTMin        = 1
	pcTMax        = 26
	pcSkew        = 38
	pcDamp        = 700
	pcInitialBias = 72
	pcInitialN    = 128
)

func pcAdapt(delta, numPoints int, first bool) int {
	if first {
		delta /= pcDamp
	} else {
		delta /= 2
	}
	delta += delta / numPoints
	k := 0
	for delta > ((pcBase-pcTMin)*pcTMax)/2 {
		delta /= pcBase - pcTMin
		k += pcBase
	}
	return k + (pcBase-pcTMin+1)*delta/(delta+pcSkew)
}

func pcDigit(d int) byte {
	if d < 26 {
		return byte('a' + d)
	}
	return byte('0' + d - 26)
}

// punycodeEncode encodes a label's code points (without the xn-- prefix).
func punycodeEncode(s string) (string, bool) {
	runes := []rune(s)
	var out []byte
	for _, r := range runes {
		if r < 0x80 {
			out = append(out, byte(r))
		}
	}
	b := len(out)
	h := b
	if b > 0 {
		out = append(out, '-')
	}
	n, delta, bias := pcInitialN, 0, pcInitialBias
	for h < len(runes) {
		m := int(^uint32(0) >> 1)
		for _, r := range runes {
			if int(r) >= n && int(r) < m {
				m = int(r)
			}
		}
		if (m - n) > (int(^uint32(0)>>1)-delta)/(h+1) {
			return "", false
		}
		delta += (m - n) * (h + 1)
		n = m
		for _, r := range runes {
			if int(r) < n {
				delta++
			}
			if int(r) == n {
				q := delta
				for k := pcBase; ; k += pcBase {
					t := pcThreshold(k, bias)
					if q < t {
						break
					}
					out = append(out, pcDigit(t+(q-t)%(pcBase-t)))
					q = (q - t) / (pcBase - t)
				}
				out = append(out, pcDigit(q))
				bias = pcAdapt(delta, h+1, h == b)
				delta = 0
				h++
			}
		}
		delta++
		n++
	}
	return string(out), true
}

// pcThreshold is RFC 3492's threshold t for the digit at position k: k − bias, clamped to
// [tmin, tmax].
func pcThreshold(k, bias int) int {
	return min(max(k-bias, pcTMin), pcTMax)
}

// punycodeDecode decodes a label (without the xn-- prefix).
func punycodeDecode(s string) (string, bool) {
	var out []rune
	rest := s
	if i := strings.LastIndexByte(s, '-'); i >= 0 {
		for j := 0; j < i; j++ {
			if s[j] >= 0x80 {
				return "", false
			}
			out = append(out, rune(s[j]))
		}
		rest = s[i+1:]
	}
	n, i, bias := pcInitialN, 0, pcInitialBias
	for p := 0; p < len(rest); {
		oldi, w := i, 1
		for k := pcBase; ; k += pcBase {
			if p >= len(rest) {
				return "", false
			}
			c := rest[p]
			p++
			var digit int
			switch {
			case c >= 'a' && c <= 'z':
				digit = int(c - 'a')
			case c >= 'A' && c <= 'Z':
				digit = int(c - 'A')
			case c >= '0' && c <= '9':
				digit = int(c-'0') + 26
			default:
				return "", false
			}
			if digit > (int(^uint32(0)>>1)-i)/w {
				return "", false
			}
			i += digit * w
			t := pcThreshold(k, bias)
			if digit < t {
				break
			}
			if w > int(^uint32(0)>>1)/(pcBase-t) {
				return "", false
			}
			w *= pcBase - t
		}
		l := len(out) + 1
		bias = pcAdapt(i-oldi, l, oldi == 0)
		if i/l > int(^uint32(0)>>1)-n {
			return "", false
		}
		n += i / l
		i %= l
		if n > unicode.MaxRune || (n >= 0xD800 && n <= 0xDFFF) {
			return "", false
		}
		out = append(out, 0)
		copy(out[i+1:], out[i:])
		out[i] = rune(n)
		i++
	}
	return string(out), true
}
