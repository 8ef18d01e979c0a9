package simulator

import (
	"encoding/binary"
	"fmt"
	"math"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/shopspring/decimal"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// randomAmounts draws the amounts the int64 paths must agree with decimal on: ties to even,
// both signs, exponents from -20 to +2, int64's edges and beyond, and absent prices (the
// zero Decimal).
func randomAmounts(r *rand.Rand) func() decimal.Decimal {
	coefs := []int64{0, 1, -1, 5, -5, 15, 25, -25, 50, 99, 100, 12345, 1e9 + 5, math.MaxInt64, math.MinInt64, math.MaxInt64 / 10, 999999999999999999, -999999999999999999, 1 << 53, 1<<53 + 1}
	strs := []string{"0.005", "0.015", "-0.025", "1E+3", "123456789012345678901234.565", "0.00000000000000000001", "2.5", "-0.5", "0.05", "0.5"}
	return func() decimal.Decimal {
		switch r.IntN(6) {
		case 0:
			return decimal.New(coefs[r.IntN(len(coefs))], int32(r.IntN(23)-20))
		case 1:
			return decimal.RequireFromString(strs[r.IntN(len(strs))])
		case 2:
			return decimal.Decimal{} // a price that is not there
		}
		return decimal.New(r.Int64N(2e12)-1e12, -int32(r.IntN(12)))
	}
}

// AppendMoney and AppendQuantity compute in int64 what the decimal arithmetic computes: they
// must agree on every amount, ties to even and amounts near and beyond int64 included (there
// they fall back, never answer wrongly).
func TestIntegerMoneyMatchesDecimal(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 15))
	dec := randomAmounts(r)
	for i := range 200000 {
		a := Account{Cash: dec()}
		prices := map[string]decimal.Decimal{}
		for j := range r.IntN(4) {
			sym := fmt.Sprint("S", j)
			a.Holdings = append(a.Holdings, Holding{Symbol: sym, Quantity: dec()})
			if r.IntN(5) > 0 {
				prices[sym] = dec()
			}
		}
		want := FormatMoney(a.MarketValue(prices))
		require.Equal(t, want, string(AppendMoney(nil, a.MarketValue(prices))), "account %d", i)
		q := dec()
		require.Equal(t, FormatMoney(q), string(AppendMoney(nil, q)), "amount %s (coefficient %s, exponent %d)", q, q.Coefficient(), q.Exponent())
		require.Equal(t, FormatQuantity(q), string(AppendQuantity(nil, q)), "quantity %s (coefficient %s, exponent %d)", q, q.Coefficient(), q.Exponent())
	}
}

// The int64 sums are the decimal ones: market values, cost-basis hints and history seeds agree
// on every account of random amounts — ties to even, both signs, exponents from -20 to +2,
// int64's edges and absent prices — or decline (ok false), never answer differently.
func TestCentsMatchDecimal(t *testing.T) {
	r := rand.New(rand.NewPCG(7, 15))
	dec := randomAmounts(r)
	declined := 0
	now := time.Date(2026, 11, 25, 1, 10, 0, 0, time.UTC)
	for i := range 100000 {
		u := &User{PlatformID: fmt.Sprint("usr_", i), CreatedAt: now.Add(-time.Duration(r.IntN(1e6)) * time.Hour)}
		prices := map[string]decimal.Decimal{}
		for _, p := range Products[:r.IntN(len(Products)+1)] {
			a := Account{Product: p, Cash: dec()}
			for j := range r.IntN(4) {
				sym := fmt.Sprint("S", j)
				a.Holdings = append(a.Holdings, Holding{Symbol: sym, Quantity: dec()})
				if _, ok := prices[sym]; !ok && r.IntN(5) > 0 {
					prices[sym] = dec()
				}
			}
			u.Accounts = append(u.Accounts, a)
		}
		for j := range u.Accounts {
			a := &u.Accounts[j]
			if c, ok := a.MarketCents(prices); ok {
				want, _ := CentsOf(a.MarketValue(prices))
				require.Equal(t, want, c, "user %d account %d: %+v at %v", i, j, a, prices)
			} else {
				declined++
			}
			if c, ok := a.costBasisHintCents(prices); ok {
				want, _ := CentsOf(a.CostBasisHint(prices))
				require.Equal(t, want, c, "user %d account %d basis: %+v at %v", i, j, a, prices)
			}
		}
		if _, total, ok := u.MarketCents(prices, nil); ok {
			want, _ := CentsOf(u.TotalMarketValue(prices))
			require.Equal(t, want, total, "user %d", i)
		}
		require.Equal(t, newHistorySeedDecimal(u, prices, now), NewHistorySeed(u, prices, now), "user %d: %+v at %v", i, u.Accounts, prices)
	}
	require.Positive(t, declined, "amounts beyond int64 were tried")
}

// MulExact keeps a product of exactly math.MaxInt64 (2^63−1 = 64,897 × 142,123,242,012,031)
// and refuses one just over it.
func TestMulInt64AtTheBoundary(t *testing.T) {
	for _, c := range []struct {
		a, b, want int64
		ok         bool
	}{
		{64_897, 142_123_242_012_031, math.MaxInt64, true},
		{-64_897, 142_123_242_012_031, -math.MaxInt64, true},
		{64_897, -142_123_242_012_031, -math.MaxInt64, true},
		{1 << 32, 1 << 31, 0, false},            // 2^63
		{64_897, 142_123_242_012_032, 0, false}, // 2^63−1 + 64,897
		{math.MinInt64, 1, 0, false},            // |a| is 2^63 (refused though -2^63 fits: conservative)
	} {
		got, ok := MulExact(c.a, c.b)
		assert.Equal(t, c.ok, ok, "MulExact(%d, %d) fits: got %v, want %v", c.a, c.b, ok, c.ok)
		if c.ok {
			assert.Equal(t, c.want, got, "MulExact(%d, %d)", c.a, c.b)
		}
	}
}

// Cents render as decimal renders them at two places: every digit count and where it and the
// bit length change, both signs, int64's edges.
func TestCentsAppendToMatchesDecimal(t *testing.T) {
	r := rand.New(rand.NewPCG(7, 15))
	ns := []int64{0, 1, -1, 9, -9, 10, 99, -99, 100, -100, 101, 999, 1000, 1001, math.MaxInt64, math.MinInt64, math.MinInt64 + 1}
	for range 100000 {
		ns = append(ns, r.Int64N(1<<(1+r.IntN(62)))*int64(1-2*r.IntN(2)))
	}
	for p := int64(1); p <= math.MaxInt64/10; p *= 10 { // where the digits change
		ns = append(ns, p-1, p, p+1, -p+1, -p, -p-1)
	}
	for k := range 63 { // where the bit length does
		ns = append(ns, 1<<k-1, 1<<k, -(1 << k))
	}
	for _, n := range ns {
		require.Equal(t, decimal.New(n, -2).StringFixed(2), string(Cents(n).AppendTo([]byte("x"))[1:]), "%d cents", n)
	}
}

// digits8 makes the eight digits strconv writes, for every value of each half of four digits
// in either half (the halves are split before any reciprocal, and no lane's product reaches
// the next lane, so these are every case the reciprocals meet), and appendCents writes the
// text decimal writes for amounts of such units, leading zeros dropped.
func TestDigits8EveryLane(t *testing.T) {
	var us []uint64
	for x := range uint64(1e4) {
		us = append(us, x, x*1e4, x*1e4+(x*7919+13)%1e4, (x*7919+13)%1e4*1e4+x)
	}
	r := rand.New(rand.NewPCG(8, 8))
	for range 100000 {
		us = append(us, r.Uint64N(1e8))
	}
	for _, u := range us {
		var got [8]byte
		binary.LittleEndian.PutUint64(got[:], digits8(u)|0x3030303030303030)
		require.Equal(t, fmt.Sprintf("%08d", u), string(got[:]), "digits8(%d)", u)
		for _, n := range []int64{int64(u)*100 + int64(u%100), -int64(u)*100 - int64(u%97)} {
			require.Equal(t, decimal.New(n, -2).StringFixed(2), string(appendCents(nil, n)), "%d cents", n)
		}
	}
}

// randomStoredAmounts draws amounts as the store keeps them (Amount): cents (exponent -2), tenths
// and units (-1 and 0: a notional or fee whose trailing zeros were dropped), quantities of 0 to 8 decimals with and without
// trailing zeros, both signs, int64's edges, exponents outside the fast paths' and a few kept
// as decimals (Big).
func randomStoredAmounts(r *rand.Rand) func() Amount {
	edges := []int64{0, 1, -1, 9, 10, 99, 100, -100, 101, 1e8, -1e8, 1e8 + 1, 999999999999999999, -999999999999999999,
		1e18, -1e18, math.MaxInt64, math.MinInt64, math.MinInt64 + 1,
		math.MaxInt64 / 100, math.MaxInt64/100 - 1, math.MaxInt64/100 + 1, math.MinInt64 / 100, math.MinInt64/100 + 1, math.MinInt64/100 - 1,
		math.MaxInt64 / 10, math.MaxInt64/10 + 1, math.MinInt64 / 10, math.MinInt64/10 - 1}
	return func() Amount {
		switch r.IntN(8) {
		case 0:
			return Amount{Coef: edges[r.IntN(len(edges))], Exp: int32(r.IntN(13) - 10)}
		case 1:
			d := decimal.RequireFromString("123456789012345678901234.56789")
			if r.IntN(2) == 0 {
				d = d.Neg()
			}
			return Amount{Big: &d}
		case 2, 3:
			return Amount{Coef: r.Int64N(1<<(1+r.IntN(62))) * int64(1-2*r.IntN(2)), Exp: -2}
		}
		c := r.Int64N(1 << (1 + r.IntN(62)))
		for range r.IntN(4) { // trailing zeros
			c -= c % 10
		}
		return Amount{Coef: c * int64(1-2*r.IntN(2)), Exp: -int32(r.IntN(9))}
	}
}

// An Amount renders as its decimal does (FormatMoney, FormatQuantity): the fast paths for cents,
// tenths and units (up to and past the edge of their scaling in int64) and for quantities of up to 8 decimals agree with decimal's arithmetic on every amount.
func TestAmountAppendMatchesDecimal(t *testing.T) {
	r := rand.New(rand.NewPCG(11, 29))
	amount := randomStoredAmounts(r)
	for range 300000 {
		a := amount()
		d := a.Decimal()
		require.Equal(t, FormatMoney(d), string(a.AppendMoney([]byte("x"))[1:]), "money %s (%d, %d)", d, a.Coef, a.Exp)
		require.Equal(t, FormatQuantity(d), string(a.AppendQuantity([]byte("x"))[1:]), "quantity %s (%d, %d)", d, a.Coef, a.Exp)
	}
}

// FuzzAmountAppend holds an Amount's money and quantity to its decimal's on any coefficient
// and exponent.
func FuzzAmountAppend(f *testing.F) {
	for _, s := range []struct {
		c   int64
		exp int32
	}{{0, -2}, {61600, -2}, {1684649837, -8}, {15, 0}, {math.MinInt64, -2}, {math.MaxInt64, -8}, {5, -3}, {-25, -3}} {
		f.Add(s.c, s.exp)
	}
	f.Fuzz(func(t *testing.T, c int64, exp int32) {
		exp = exp%24 - 4 // decimal's own arithmetic is slow far from the point
		a := Amount{Coef: c, Exp: exp}
		d := a.Decimal()
		require.Equal(t, FormatMoney(d), string(a.AppendMoney(nil)), "money (%d, %d)", c, exp)
		require.Equal(t, FormatQuantity(d), string(a.AppendQuantity(nil)), "quantity (%d, %d)", c, exp)
	})
}

// BenchmarkAmountAppend renders an order item's amounts as a list page stores them: a
// quantity of 0 to 8 decimals, a notional and a fee in cents.
func BenchmarkAmountAppend(b *testing.B) {
	items := []struct{ q, n, f Amount }{
		{Amount{Coef: 15}, Amount{Coef: 0, Exp: -2}, Amount{Coef: 0, Exp: -2}},
		{Amount{Coef: 1684649837, Exp: -8}, Amount{Coef: 61600, Exp: -2}, Amount{Coef: 99, Exp: -2}},
		{Amount{Coef: 170221169, Exp: -7}, Amount{Coef: 24250, Exp: -2}, Amount{Coef: 0, Exp: -2}},
		{Amount{Coef: 834, Exp: -4}, Amount{Coef: 198700, Exp: -2}, Amount{Coef: 0, Exp: -2}},
	}
	buf := make([]byte, 0, 256)
	for b.Loop() {
		for _, it := range items {
			buf = it.q.AppendQuantity(buf[:0])
			buf = it.n.AppendMoney(buf)
			buf = it.f.AppendMoney(buf)
		}
	}
}

// civilDate writes the date time's own formatting writes, for every day of the years 1970–9999.
func TestCivilDateEveryDay(t *testing.T) {
	last := time.Date(9999, 12, 31, 0, 0, 0, 0, time.UTC).Unix() / 86400
	for day := int64(0); day <= last; day++ {
		if got := civilDate(day); string(got[:]) != time.Unix(day*86400, 0).UTC().Format("2006-01-02T") {
			require.Equal(t, time.Unix(day*86400, 0).UTC().Format("2006-01-02T"), string(got[:]), "day %d", day)
		}
	}
}
