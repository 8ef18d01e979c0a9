package validate

import (
	"testing"
	"unicode/utf8"
)

// plainASCII, eight bytes at a time, answers as a byte at a time does for a byte that is not
// plain at each position of strings of every length up to three words and a tail.
func TestPlainASCIIMatchesBytewise(t *testing.T) {
	bytewise := func(s string) bool {
		for i := 0; i < len(s); i++ {
			if c := s[i]; c >= utf8.RuneSelf || c == '+' || c == '%' {
				return false
			}
		}
		return true
	}
	// Bytes next to the ones that are not plain ('*', ',', '$', '&', DEL, 0) catch a borrow or a
	// carry that spills into a neighbour.
	for _, c := range []byte{'+', '%', 0x80, 0xff, 0xc3, '*', ',', '$', '&', 0x7f, 0, '=', 'a'} {
		for n := 0; n <= 27; n++ {
			for at := 0; at < n; at++ {
				b := make([]byte, 0, n)
				for i := range n {
					b = append(b, "user_account_id_type=platform"[i%29])
				}
				b[at] = c
				s := string(b)
				if got, want := plainASCII(s), bytewise(s); got != want {
					t.Errorf("plainASCII(%q) = %v, want %v", s, got, want)
				}
			}
		}
	}
	for _, s := range []string{"", "a", "platform", "user_account_id_type", "%2B", "a+b", "caf\xe9"} {
		if got, want := plainASCII(s), bytewise(s); got != want {
			t.Errorf("plainASCII(%q) = %v, want %v", s, got, want)
		}
	}
}
