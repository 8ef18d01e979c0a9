package wordwise_test

import (
	"encoding/binary"
	"fmt"

	"github.com/partnersim/partnersim/simulator/wordwise"
)

// stringEnd returns the index of the first byte of s that ends a plain JSON string's text — a
// quote, a backslash, a control byte or a byte past ASCII — or len(s): the whole words first,
// the bytes after them one at a time.
func stringEnd(s string) int {
	i := 0
	for ; i+8 <= len(s); i += 8 {
		w := binary.LittleEndian.Uint64([]byte(s[i:]))
		if m := wordwise.Equal(w, '"') | wordwise.Equal(w, '\\') | wordwise.Outside(w, 0x20, 0x7f); m.Any() {
			return i + m.First()
		}
	}
	for ; i < len(s); i++ {
		if c := s[i]; c == '"' || c == '\\' || c < 0x20 || c >= 0x80 {
			return i
		}
	}
	return i
}

func ExampleMask_First() {
	fmt.Println(stringEnd(`order "ord_1"`), stringEnd("caf\xc3\xa9 au lait"), stringEnd("plain text, no end"))
	// Output: 6 3 18
}
