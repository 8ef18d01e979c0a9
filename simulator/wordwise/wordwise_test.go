package wordwise_test

import (
	"encoding/binary"
	"math/rand/v2"
	"testing"

	"github.com/partnersim/partnersim/simulator/wordwise"
)

// word is eight bytes: below in the lanes under at, c at at, above in the lanes over it.
func word(below, c, above byte, at int) uint64 {
	var b [8]byte
	for i := range b {
		switch {
		case i < at:
			b[i] = below
		case i == at:
			b[i] = c
		default:
			b[i] = above
		}
	}
	return binary.LittleEndian.Uint64(b[:])
}

// first is the reference: the index of w's first byte in the class, 8 when none is, a byte at
// a time.
func first(w uint64, in func(byte) bool) int {
	for i := range 8 {
		if in(byte(w >> (8 * i))) {
			return i
		}
	}
	return 8
}

// check fails unless m answers for w as the byte-wise reference does.
func check(t *testing.T, m wordwise.Mask, w uint64, in func(byte) bool, what string) {
	t.Helper()
	want := first(w, in)
	if m.Any() != (want < 8) || m.First() != want {
		t.Fatalf("%s of %#016x: Any %v, First %d; want %v, %d", what, w, m.Any(), m.First(), want < 8, want)
	}
}

// Equal flags exactly the first byte equal to c: every value c, every byte value in every lane,
// under bytes next to c (which a stray borrow would flag) and over them or another c.
func TestEqualFlagsTheFirstEqualByte(t *testing.T) {
	for c := range 256 {
		c := byte(c)
		in := func(b byte) bool { return b == c }
		belows := []byte{c + 1, c - 1, c ^ 0x80, 0xff}
		aboves := []byte{c, c - 1, c ^ 0x80}
		for v := range 256 {
			for at := range 8 {
				for _, below := range belows {
					if below == c {
						continue
					}
					for _, above := range aboves {
						w := word(below, byte(v), above, at)
						check(t, wordwise.Equal(w, c), w, in, "Equal")
					}
				}
			}
		}
	}
}

// outsideRanges are the ranges TestOutsideFlagsTheFirstByteOutside tries: every lower end
// with the ASCII top, every upper end from 0, every single byte, and pairs of the ends where a
// borrow or carry would first go wrong.
func outsideRanges() [][2]byte {
	seen := map[[2]byte]bool{}
	var out [][2]byte
	add := func(lo, hi byte) {
		if lo <= hi && hi <= 0x7f && !seen[[2]byte{lo, hi}] {
			seen[[2]byte{lo, hi}] = true
			out = append(out, [2]byte{lo, hi})
		}
	}
	for b := range byte(0x80) {
		add(b, 0x7f)
		add(0, b)
		add(b, b)
	}
	ends := []byte{0, 1, 0x1f, 0x20, 0x21, 0x40, 0x7e, 0x7f}
	for _, lo := range ends {
		for _, hi := range ends {
			add(lo, hi)
		}
	}
	return out
}

// Outside flags exactly the first byte outside lo…hi, Below the first under lo or past ASCII,
// Above the first over hi: every byte value in every lane, under the range's ends (in it) or
// the bytes just outside them, and over bytes in or out of it.
func TestOutsideFlagsTheFirstByteOutside(t *testing.T) {
	for _, r := range outsideRanges() {
		lo, hi := r[0], r[1]
		in := func(b byte) bool { return b < lo || b > hi }
		belows, aboves := []byte{lo, hi}, []byte{lo, hi + 1, 0xff}
		if lo > 0 {
			belows = append(belows, lo-1)
		}
		for v := range 256 {
			for at := range 8 {
				for _, below := range belows {
					for _, above := range aboves {
						w := word(below, byte(v), above, at)
						check(t, wordwise.Outside(w, lo, hi), w, in, "Outside")
						if hi == 0x7f {
							check(t, wordwise.Below(w, lo), w, in, "Below")
						}
						if lo == 0 {
							check(t, wordwise.Above(w, hi), w, in, "Above")
						}
					}
				}
			}
		}
	}
}

// Masks of random words, alone and joined with |, answer as the reference does for their union.
func TestMasksOfRandomWords(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	for range 1 << 18 {
		w, c := r.Uint64(), byte(r.Uint64())
		if r.IntN(2) == 0 { // bytes mostly in ASCII, as text is
			w &= 0x7f7f7f7f7f7f7f7f
		}
		lo, hi := byte(r.IntN(0x80)), byte(r.IntN(0x80))
		lo, hi = min(lo, hi), max(lo, hi)
		check(t, wordwise.Equal(w, c), w, func(b byte) bool { return b == c }, "Equal")
		check(t, wordwise.Outside(w, lo, hi), w, func(b byte) bool { return b < lo || b > hi }, "Outside")
		check(t, wordwise.Equal(w, c)|wordwise.Outside(w, lo, hi), w, func(b byte) bool { return b == c || b < lo || b > hi }, "Equal|Outside")
		check(t, wordwise.Below(w, lo), w, func(b byte) bool { return b < lo || b >= 0x80 }, "Below")
		check(t, wordwise.Above(w, hi), w, func(b byte) bool { return b > hi }, "Above")
	}
}

// A scanner built on the masks (stringEnd, the example's) stops where a byte at a time stops,
// on strings of every length from 0 to 16 (no word, a word and a tail, two words) with every
// byte value at every place, and with a second stop after the first.
func TestScannerMatchesBytewise(t *testing.T) {
	bytewise := func(s string) int {
		for i := 0; i < len(s); i++ {
			if c := s[i]; c == '"' || c == '\\' || c < 0x20 || c >= 0x80 {
				return i
			}
		}
		return len(s)
	}
	for n := 0; n <= 16; n++ {
		for at := range n {
			for c := range 256 {
				b := []byte("abcdefghijklmnop"[:n])
				b[at] = byte(c)
				if got, want := stringEnd(string(b)), bytewise(string(b)); got != want {
					t.Fatalf("stringEnd(%q) = %d, want %d", b, got, want)
				}
				for _, after := range []byte{'"', '\\', 0, 0x1f, 0x80, 0xff} {
					for at2 := at + 1; at2 < n; at2++ {
						b2 := append([]byte(nil), b...)
						b2[at2] = after
						if got, want := stringEnd(string(b2)), bytewise(string(b2)); got != want {
							t.Fatalf("stringEnd(%q) = %d, want %d", b2, got, want)
						}
					}
				}
			}
		}
	}
}

func FuzzMasks(f *testing.F) {
	f.Add(uint64(0x2222222222222222), byte('"'), byte(0x20), byte(0x7e))
	f.Add(uint64(0x8000000000000000), byte(0), byte(0), byte(0x7f))
	f.Fuzz(func(t *testing.T, w uint64, c, lo, hi byte) {
		lo, hi = min(lo&0x7f, hi&0x7f), max(lo&0x7f, hi&0x7f)
		check(t, wordwise.Equal(w, c), w, func(b byte) bool { return b == c }, "Equal")
		check(t, wordwise.Outside(w, lo, hi), w, func(b byte) bool { return b < lo || b > hi }, "Outside")
		check(t, wordwise.Equal(w, c)|wordwise.Outside(w, lo, hi), w, func(b byte) bool { return b == c || b < lo || b > hi }, "Equal|Outside")
		check(t, wordwise.Below(w, lo), w, func(b byte) bool { return b < lo || b >= 0x80 }, "Below")
		check(t, wordwise.Below(w, 0x80), w, func(b byte) bool { return true }, "Below 0x80")
		check(t, wordwise.Above(w, hi), w, func(b byte) bool { return b > hi }, "Above")
	})
}
