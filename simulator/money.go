package simulator

import (
	"encoding/binary"
	"math"
	"math/bits"
	"strconv"

	"github.com/shopspring/decimal"
)

// Money in one place: how amounts and quantities are rendered (FormatMoney, FormatQuantity and
// their Append forms for the hand-written bodies), market values (decisions D5: Σ quantity ×
// price + cash, exact, rounded half-even to cents) in decimal, and the same sums in whole
// cents for the read path (Cents).

// FormatMoney renders an amount with exactly two decimals, rounded half-even ("1520.07").
func FormatMoney(d decimal.Decimal) string {
	if d.Exponent() != -2 {
		d = d.RoundBank(2)
	}
	if d.Exponent() == -2 && d.Coefficient().IsInt64() {
		// Fast path for the common case: whole cents that fit an int64.
		return formatCents(d.CoefficientInt64())
	}
	return d.StringFixedBank(2)
}

// FormatPrice renders a price as money is rendered, with two decimals at least
// ("64000.00"), keeping any finer precision it was given ("3120.12345").
func FormatPrice(p decimal.Decimal) string {
	if p.Exponent() < -2 {
		return p.String()
	}
	return p.StringFixed(2)
}

// Cents is an amount in whole cents.
type Cents int64

// CentsOf converts an amount to cents, rounding half-even; ok is false when it does not fit.
func CentsOf(d decimal.Decimal) (c Cents, ok bool) {
	b := d.RoundBank(2).Shift(2).BigInt()
	if !b.IsInt64() {
		return 0, false
	}
	return Cents(b.Int64()), true
}

// String renders the amount as "units.cc".
func (c Cents) String() string { return formatCents(int64(c)) }

// AppendTo appends the amount as "units.cc".
func (c Cents) AppendTo(b []byte) []byte { return appendCents(b, int64(c)) }

// formatCents renders n cents as "units.cc".
func formatCents(n int64) string { return string(appendCents(nil, n)) }

// appendCents appends n cents as "units.cc" (no allocation: the history's ~250 amounts per
// Get User Detail and a list page's few hundred are appended straight into the response),
// written in place: units under 10^8 (nearly every amount) as eight digits made at once
// (digits8) less their leading zeros, larger ones two digits a step once their digits are
// counted.
func appendCents(b []byte, n int64) []byte {
	u := uint64(n)
	if n < 0 {
		b = append(b, '-')
		u = -u
	}
	at := len(b)
	b = grow(b, 20) // room for any amount; d+1 bytes kept
	out := (*[20]byte)(b[at:])
	units := u / 100
	c := u - units*100
	if units < 1e8 {
		return b[:at+putSmallCents((*[12]byte)(out[:12]), digits8(units), c)]
	}
	c *= 2
	// u's digits are t, or t+1 when u ≥ 10^t, for t = ⌊bits(u)·1233/4096⌋ (1233/4096 is log10 2
	// from below): one comparison where a loop a digit counted them. u is 2^63 at most (19
	// digits), so t = 19 needs none.
	t := bits.Len64(u) * 1233 >> 12
	d := t
	if t < len(pow10s) && u >= uint64(pow10s[t]) {
		d++
	}
	out[d-2], out[d-1], out[d] = '.', digitPairs[c], digitPairs[c+1]
	putDigits(out[:d-2], units)
	return b[:at+d+1]
}

// putSmallCents writes an amount of under 10^8 units given as its units' digits8 v and its
// cents c (under 100) at the start of out, and returns its length: the units' digits less
// their leading zeros, which are v's low zero bytes (units 0 keeps one "0"), then the cents as
// one word, '.' and the pair (its fourth byte is room, not kept).
func putSmallCents(out *[12]byte, v, c uint64) int {
	lz := min(bits.TrailingZeros64(v)>>3, 7)
	d := (8 - lz) & 15
	binary.LittleEndian.PutUint64(out[:8], (v|0x3030303030303030)>>(8*lz))
	binary.LittleEndian.PutUint32(out[d:d+4], '.'|uint32(centPairs[c&127])<<8)
	return d + 3
}

// digits8 returns the eight decimal digits of u < 10^8 as the bytes of a little-endian word,
// the most significant first, each byte the digit's value (0–9, not yet ASCII): u split in
// halves of four digits, each half in pairs, each pair in digits, every lane at once by a
// multiplication by a reciprocal that is exact in its range (x·10486>>20 = x/100 for x < 10^4,
// x·103>>10 = x/10 for x < 100).
func digits8(u uint64) uint64 {
	hi := u / 10000
	v := hi | (u-hi*10000)<<32
	q := v * 10486 >> 20 & 0x0000007f0000007f
	v = q | (v-q*100)<<16
	q = v * 103 >> 10 & 0x000f000f000f000f
	return q | (v-q*10)<<8
}

// putDigits writes u's last len(dst) decimal digits into dst, two a step.
func putDigits(dst []byte, u uint64) {
	i := len(dst) - 1
	for ; i >= 1; i -= 2 {
		c := u % 100 * 2
		dst[i-1], dst[i] = digitPairs[c], digitPairs[c+1]
		u /= 100
	}
	if i == 0 {
		dst[0] = byte('0' + u%10)
	}
}

// grow returns b lengthened by n bytes, to be written.
func grow(b []byte, n int) []byte {
	if cap(b)-len(b) < n {
		b = append(b, make([]byte, n)...)
		return b
	}
	return b[:len(b)+n]
}

// centPairs holds digitPairs' pairs as little-endian words, k's at k (and room to 128, so an
// index masked to 7 bits needs no check).
var centPairs = func() (t [128]uint16) {
	for k := range 100 {
		t[k] = uint16(digitPairs[2*k]) | uint16(digitPairs[2*k+1])<<8
	}
	return t
}()

// digitPairs holds "00" to "99": two decimal digits at 2k.
const digitPairs = "00010203040506070809101112131415161718192021222324252627282930313233343536373839" +
	"40414243444546474849505152535455565758596061626364656667686970717273747576777879" +
	"8081828384858687888990919293949596979899"

// FormatQuantity renders a quantity with up to 8 decimals and no trailing zeros ("0.015").
func FormatQuantity(d decimal.Decimal) string { return d.RoundBank(8).String() }

// MarketValue is Σ holdings quantity × current price + cash, rounded half-even to cents
// (decisions D5). A symbol without a price counts as zero.
func (a *Account) MarketValue(prices map[string]decimal.Decimal) decimal.Decimal {
	v := a.Cash
	for _, h := range a.Holdings {
		v = v.Add(h.Quantity.Mul(prices[h.Symbol]))
	}
	return v.RoundBank(2)
}

// CostBasisHint estimates an account's cost basis for generated history: its cash plus its
// holdings at 90% of today's price. It only shapes the synthetic series.
func (a *Account) CostBasisHint(prices map[string]decimal.Decimal) decimal.Decimal {
	v := a.Cash
	for _, h := range a.Holdings {
		v = v.Add(h.Quantity.Mul(prices[h.Symbol]).Mul(decimal.New(9, -1)))
	}
	return v.RoundBank(2)
}

// TotalMarketValue sums the accounts' market values.
func (u *User) TotalMarketValue(prices map[string]decimal.Decimal) decimal.Decimal {
	t := decimal.Zero
	for i := range u.Accounts {
		t = t.Add(u.Accounts[i].MarketValue(prices))
	}
	return t
}

// AppendMoney appends FormatMoney(d) — d rounded half-even to cents — without
// allocating when d and its cents fit an int64.
func AppendMoney(b []byte, d decimal.Decimal) []byte {
	if d.NumDigits() <= 18 {
		if c, ok := RoundCents(d.CoefficientInt64(), d.Exponent()); ok {
			return c.AppendTo(b)
		}
	}
	return append(b, FormatMoney(d)...)
}

// Amount is an amount as the read path renders it: Coef×10^Exp, the form the store keeps
// nearly every amount in (an int64 coefficient), or Big when the coefficient does not fit one.
// A list page renders its amounts from it without a decimal.Decimal (two allocations each).
type Amount struct {
	Coef int64
	Exp  int32
	Big  *decimal.Decimal // set: the amount, Coef and Exp unused
}

// AmountOf returns d as an Amount.
func AmountOf(d decimal.Decimal) Amount {
	if d.NumDigits() > 18 {
		return Amount{Big: &d}
	}
	return Amount{Coef: d.CoefficientInt64(), Exp: d.Exponent()}
}

// CentsAmount returns c as an Amount.
func CentsAmount(c Cents) Amount { return Amount{Coef: int64(c), Exp: -2} }

// Decimal returns the amount as a decimal.
func (a Amount) Decimal() decimal.Decimal {
	if a.Big != nil {
		return *a.Big
	}
	return decimal.New(a.Coef, a.Exp)
}

// small reports whether the amount has at most 18 digits, the int64 fast paths' domain.
func (a Amount) small() bool { return a.Big == nil && absInt64(a.Coef) < uint64(pow10s[18]) }

// AppendMoney appends FormatMoney of the amount (AppendMoney). An amount kept in cents
// (exponent -2) is its coefficient in cents, of any size: nothing to round or check (decisions
// D5); one kept in tenths or units (exponent -1 or 0, as a stored amount's trailing zeros are
// dropped: "25.5", "0") is its coefficient times 10 or 100, when that surely fits.
func (a Amount) AppendMoney(b []byte) []byte {
	if a.Big == nil && a.Exp <= 0 && a.Exp >= -2 {
		if a.Exp == -2 {
			return appendCents(b, a.Coef)
		}
		if c := a.Coef; c < math.MaxInt64/100 && c > math.MinInt64/100 {
			return appendCents(b, c*centsPerUnit[a.Exp+1])
		}
	}
	if a.small() {
		if c, ok := RoundCents(a.Coef, a.Exp); ok {
			return c.AppendTo(b)
		}
	}
	return AppendMoney(b, a.Decimal())
}

// centsPerUnit are the cents of a tenth and of a unit.
var centsPerUnit = [2]int64{10, 100}

// AppendQuantity appends FormatQuantity of the amount (AppendQuantity).
func (a Amount) AppendQuantity(b []byte) []byte {
	if a.small() && a.Exp <= 0 && a.Exp >= -8 {
		return appendQuantity(b, a.Coef, a.Exp)
	}
	return AppendQuantity(b, a.Decimal())
}

// AppendQuantity appends FormatQuantity(d). A quantity of at most 8
// decimals that fits an int64 needs no rounding: it is its digits with the point placed and
// trailing fractional zeros dropped, as decimal's String renders it.
func AppendQuantity(b []byte, d decimal.Decimal) []byte {
	exp := d.Exponent()
	if exp > 0 || exp < -8 || d.NumDigits() > 18 {
		return append(b, FormatQuantity(d)...)
	}
	return appendQuantity(b, d.CoefficientInt64(), exp)
}

// appendQuantity appends the quantity c×10^exp (exp in [-8, 0]): its whole part, then the
// point and its fraction's digits when the fraction is not zero, trailing zeros dropped. The
// parts come from one division by a constant power of ten (quantityParts), the fraction's
// digits two at a time: a list page writes a quantity an order, and formatting the whole
// coefficient before trimming it was most of an item's amounts.
func appendQuantity(b []byte, c int64, exp int32) []byte {
	u := absInt64(c)
	if c < 0 {
		b = append(b, '-')
	}
	whole, frac, k := quantityParts(u, exp)
	b = strconv.AppendUint(b, whole, 10)
	if frac == 0 {
		return b
	}
	for frac%100 == 0 {
		frac, k = frac/100, k-2
	}
	if frac%10 == 0 {
		frac, k = frac/10, k-1
	}
	at := len(b)
	b = grow(b, 9) // '.' and up to 8 digits; k+1 bytes kept
	out := (*[9]byte)(b[at:])
	out[0] = '.'
	putDigits(out[1:k+1], frac)
	return b[:at+k+1]
}

// quantityParts splits u×10^exp (exp in [-8, 0]) into its whole part and its fraction's k =
// -exp digits, dividing by a constant power of ten for each of k's bits.
func quantityParts(u uint64, exp int32) (whole, frac uint64, k int) {
	k = int(-exp)
	whole = u
	if k&8 != 0 {
		whole /= 1e8
	}
	if k&4 != 0 {
		whole /= 1e4
	}
	if k&2 != 0 {
		whole /= 100
	}
	if k&1 != 0 {
		whole /= 10
	}
	return whole, u - whole*uint64(pow10s[k&15]), k
}

// Whole-cent arithmetic for the read path. Every list item and Get User Detail shows market
// values (decisions D5: Σ quantity × price + cash, exact, rounded half-even to cents); the
// decimal arithmetic allocated a dozen big integers an account. Here the same sums are exact
// int64 arithmetic when every amount and every step fits one, and report ok false otherwise,
// where callers take the decimal path (MarketValue, CostBasisHint). TestCentsMatchDecimal
// holds them to it.

// MarketCents is the account's MarketValue in cents; ok is false when it is not computed
// exactly in int64.
func (a *Account) MarketCents(prices map[string]decimal.Decimal) (Cents, bool) {
	var s CentsSum
	return a.sumCents(&s, prices)
}

// costBasisHintCents is CostBasisHint in cents (ok as MarketCents').
func (a *Account) costBasisHintCents(prices map[string]decimal.Decimal) (Cents, bool) {
	s := CostBasisSum()
	return a.sumCents(&s, prices)
}

// CostBasisSum returns a CentsSum of an account's CostBasisHint: its holdings at 90% of their
// price.
func CostBasisSum() CentsSum { return CentsSum{factor: 9, factorExp: -1} }

// MarketCents appends each account's MarketCents to into and returns them with their sum
// (TotalMarketValue); ok is false when any of them is not computed exactly in int64.
func (u *User) MarketCents(prices map[string]decimal.Decimal, into []Cents) (values []Cents, total Cents, ok bool) {
	values = into
	for i := range u.Accounts {
		v, ok := u.Accounts[i].MarketCents(prices)
		if ok {
			total, ok = addCents(total, v)
		}
		if !ok {
			return values, 0, false
		}
		values = append(values, v)
	}
	return values, total, true
}

// costBasisCents is the sum of the accounts' CostBasisHint in cents (ok as MarketCents').
func (u *User) costBasisCents(prices map[string]decimal.Decimal) (total Cents, ok bool) {
	for i := range u.Accounts {
		v, ok := u.Accounts[i].costBasisHintCents(prices)
		if ok {
			total, ok = addCents(total, v)
		}
		if !ok {
			return 0, false
		}
	}
	return total, true
}

// sumCents adds cash + Σ quantity × price to s (which weighs the holdings) and returns it
// rounded half-even to cents.
func (a *Account) sumCents(s *CentsSum, prices map[string]decimal.Decimal) (Cents, bool) {
	if a.Cash.NumDigits() > 18 {
		return 0, false
	}
	s.Add(a.Cash.CoefficientInt64(), a.Cash.Exponent())
	for _, h := range a.Holdings {
		if h.Quantity.NumDigits() > 18 {
			return 0, false
		}
		s.AddHolding(h.Quantity.CoefficientInt64(), h.Quantity.Exponent(), prices[h.Symbol]) // none: zero
	}
	return s.Cents()
}

// CentsSum is an account's market value summed term by term in exact int64 arithmetic: cash +
// Σ quantity × price (× factor×10^factorExp for a cost basis hint), each amount given as its
// coefficient and exponent, so that the store can value a list item from the stored amounts
// without a decimal. The zero value sums a market value. Terms are kept at the finest exponent
// seen (cents at least); a term or step that does not fit an int64 spoils the sum (Cents' ok
// false), and the caller takes the decimal path. Either path is exact, so both render the same
// digits (TestCentsMatchDecimal).
type CentsSum struct {
	factor    int64 // 0: 1
	factorExp int32
	sum       int64
	exp       int32 // the sum is sum×10^exp (at)
	begun     bool
	spoilt    bool
}

// at returns the sum's exponent: cents until a finer term comes.
func (s *CentsSum) at() int32 {
	if !s.begun {
		s.begun, s.exp = true, -2
	}
	return s.exp
}

// Add adds the amount c×10^exp.
func (s *CentsSum) Add(c int64, exp int32) {
	at := s.at()
	if s.spoilt || c == 0 {
		return
	}
	if exp < at { // a finer term: the sum moves to its exponent
		if s.sum != 0 {
			v, ok := ScaleExact(s.sum, int64(at)-int64(exp))
			if !ok {
				s.spoilt = true
				return
			}
			s.sum = v
		}
		s.exp, at = exp, exp
	}
	v, ok := ScaleExact(c, int64(exp)-int64(at))
	if ok {
		s.sum, ok = AddExact(s.sum, v)
	}
	if !ok {
		s.spoilt = true
	}
}

// AddHolding adds a holding of quantity c×10^exp at price p (a missing price is zero).
func (s *CentsSum) AddHolding(c int64, exp int32, p decimal.Decimal) {
	if p.NumDigits() > 18 {
		s.spoilt = true
		return
	}
	s.AddHoldingAt(c, exp, p.CoefficientInt64(), p.Exponent())
}

// AddHoldingAt is AddHolding at the price pc×10^pexp, a price already in coefficient form (at
// most 18 digits).
func (s *CentsSum) AddHoldingAt(c int64, exp int32, pc int64, pexp int32) {
	v, ok := MulExact(c, pc)
	if ok && s.factor != 0 {
		v, ok = MulExact(v, s.factor)
	}
	if !ok {
		s.spoilt = true
		return
	}
	s.Add(v, exp+pexp+s.factorExp)
}

// Cents returns the sum rounded half-even to cents; ok is false when it was not computed
// exactly in int64.
func (s *CentsSum) Cents() (Cents, bool) {
	if s.spoilt {
		return 0, false
	}
	return RoundCents(s.sum, s.at())
}

// RoundCents returns c×10^exp rounded half-even to cents, and whether that fits an int64.
func RoundCents(c int64, exp int32) (Cents, bool) {
	if exp >= -2 { // whole cents already: scale up
		v, ok := ScaleExact(c, int64(exp)+2)
		return Cents(v), ok
	}
	k := int64(-2) - int64(exp) // digits below a cent
	if k >= int64(len(pow10s)) {
		return 0, false
	}
	unit := pow10s[k]
	q, r := c/unit, c%unit // truncated toward zero; r has c's sign
	if r != 0 {
		half := absInt64(r) * 2
		if half > uint64(unit) || half == uint64(unit) && q%2 != 0 {
			if c < 0 {
				q--
			} else {
				q++
			}
		}
	}
	return Cents(q), true
}

// pow10s are the powers of ten that fit an int64.
var pow10s = func() (p [19]int64) {
	p[0] = 1
	for i := 1; i < len(p); i++ {
		p[i] = p[i-1] * 10
	}
	return p
}()

func absInt64(n int64) uint64 {
	if n < 0 {
		return uint64(-n) // math.MinInt64 too: -n wraps to itself, whose uint64 is 2^63
	}
	return uint64(n)
}

// ScaleExact returns c×10^k when k >= 0 and that is an exact int64 (any k for a zero c). It,
// MulExact and AddExact are the one home of exact int64 money arithmetic: a result that does not
// fit, math.MinInt64 included, is refused, and the caller falls back to exact decimals.
func ScaleExact(c int64, k int64) (int64, bool) {
	if c == 0 {
		return 0, true
	}
	if k < 0 || k >= int64(len(pow10s)) {
		return 0, false
	}
	return MulExact(c, pow10s[k])
}

// MulExact returns a×b and whether it fits an int64.
func MulExact(a, b int64) (int64, bool) {
	hi, lo := bits.Mul64(absInt64(a), absInt64(b))
	if hi != 0 || lo > math.MaxInt64 {
		return 0, false
	}
	if a < 0 != (b < 0) {
		return -int64(lo), true
	}
	return int64(lo), true
}

// AddExact returns a+b and whether it fits an int64.
func AddExact(a, b int64) (int64, bool) {
	s := a + b
	return s, (s > a) == (b > 0) || b == 0
}

func addCents(a, b Cents) (Cents, bool) {
	s, ok := AddExact(int64(a), int64(b))
	return Cents(s), ok
}
