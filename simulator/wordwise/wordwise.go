package wordwise

import "math/bits"

const (
	ones  = 0x0101010101010101 // 1 in every byte
	highs = 0x8080808080808080 // every byte's high bit
)

// Mask flags bytes of a word, each by its high bit. A word is eight bytes loaded at once,
// little-endian (binary.LittleEndian.Uint64(b), which the compiler makes one load and the inliner
// counts as one): b[i] is its byte i, flagged when bit 8i+7 is set; the other bits mean nothing.
// Masks of one word combine with |, the union of their classes. Only a mask's lowest flag is
// exact: a borrow or a carry out of a byte in the class may flag bytes above it that are not,
// but never a byte below it, and the lowest byte in the class is always flagged. So a mask
// answers exactly whether its word holds a byte of the class (Any) and where the first is
// (First), and nothing about the bytes after that; the masks of several words may be gathered
// with | and asked Any once.
//
// The bits that mean nothing are left as they are, so a mask is asked Any, never compared with
// 0. A type that forbade the comparison would cost the hot callers: a struct combined by an Or
// method in place of | puts quoteOrEscape, printableASCII and asciiOnly past the inliner's
// budget (a call each) and leaves ten NOPs, the inliner's marks, in each word of PlainJSON's
// loop; clearing those bits in each class function costs an AND a class.
type Mask uint64

// Any reports whether m flags a byte.
func (m Mask) Any() bool { return m&highs != 0 }

// First returns the index in its word of the first byte m flags, 8 when it flags none.
func (m Mask) First() int { return bits.TrailingZeros64(uint64(m)&highs) >> 3 }

// Equal flags the bytes of w equal to c. They are the zero bytes of x = w^c…c: a zero byte
// minus one borrows into its high bit, which x's bytes with their own high bit set do not keep
// (&^ x), and a byte from 1 to 0x80 minus one does not reach.
func Equal(w uint64, c byte) Mask {
	w ^= ones * uint64(c)
	return Mask((w - ones) &^ w)
}

// Below flags the bytes of w below c, for c ≤ 0x80, and every byte past ASCII (a byte below c
// when read as a signed one). Subtracting c…c makes a byte below c borrow into its high bit; a
// byte past ASCII has it set already. Any other byte neither borrows nor has it, so it leaves
// the bytes above it as they are.
func Below(w uint64, c byte) Mask { return Mask((w - ones*uint64(c)) | w) }

// Above flags the bytes of w above c, for c ≤ 0x7f: adding 0x7f-c to every byte makes one above
// c carry into its high bit (or have it set already, past ASCII); any other byte neither carries
// nor has it. With c 0x7f, a constant as every caller's is, the compiler leaves w itself: the
// bytes past ASCII.
func Above(w uint64, c byte) Mask { return Mask((w + ones*uint64(0x7f-c)) | w) }

// Outside flags the bytes of w outside lo…hi, for lo ≤ hi ≤ 0x7f: Below(w, lo) | Above(w, hi),
// in one call the inliner counts as cheaper.
func Outside(w uint64, lo, hi byte) Mask {
	return Mask((w - ones*uint64(lo)) | (w + ones*uint64(0x7f-hi)) | w)
}
