package simulator

import (
	"time"

	"github.com/shopspring/decimal"
)

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

// appendCents appends n cents as "units.cc" (no allocation: the history's ~280 amounts per
// Get User Detail are appended straight into the response).
func appendCents(b []byte, n int64) []byte {
	var buf [24]byte
	i := len(buf)
	neg := n < 0
	u := uint64(n)
	if neg {
		u = uint64(-n)
	}
	for k := 0; k < 2; k++ {
		i--
		buf[i] = byte('0' + u%10)
		u /= 10
	}
	i--
	buf[i] = '.'
	for {
		i--
		buf[i] = byte('0' + u%10)
		u /= 10
		if u == 0 {
			break
		}
	}
	if neg {
		i--
		buf[i] = '-'
	}
	return append(b, buf[i:]...)
}

// FormatQuantity renders a quantity with up to 8 decimals and no trailing zeros ("0.015").
func FormatQuantity(d decimal.Decimal) string { return d.RoundBank(8).String() }

// FormatTime renders a timestamp as pydantic v2 writes an aware UTC datetime (decisions D5):
// RFC 3339 with Z, and the microseconds as six digits only when they are not zero. Python's
// datetime holds no finer time, so nanoseconds are cut, not rounded, as its clock cuts them.
func FormatTime(t time.Time) string {
	return string(AppendTime(make([]byte, 0, len(timeLayoutMicro)), t))
}

// AppendTime appends FormatTime(t) to b.
func AppendTime(b []byte, t time.Time) []byte {
	t = t.UTC().Truncate(time.Microsecond)
	if t.Nanosecond() == 0 {
		return t.AppendFormat(b, timeLayout)
	}
	return t.AppendFormat(b, timeLayoutMicro)
}

const (
	timeLayout      = "2006-01-02T15:04:05Z07:00"
	timeLayoutMicro = "2006-01-02T15:04:05.000000Z07:00"
)

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

// ApplyHolding adds delta (possibly negative) to the account's position in symbol, dropping a
// position that reaches zero. It fails with EINVALID when the position would go negative.
func (a *Account) ApplyHolding(symbol string, delta decimal.Decimal) error {
	for i := range a.Holdings {
		if a.Holdings[i].Symbol != symbol {
			continue
		}
		q := a.Holdings[i].Quantity.Add(delta)
		if q.IsNegative() {
			return Errorf(EINVALID, "insufficient %s holdings: have %s, need %s", symbol, FormatQuantity(a.Holdings[i].Quantity), FormatQuantity(delta.Neg()))
		}
		if q.IsZero() {
			a.Holdings = append(a.Holdings[:i], a.Holdings[i+1:]...)
		} else {
			a.Holdings[i].Quantity = q
		}
		return nil
	}
	if delta.IsNegative() {
		return Errorf(EINVALID, "insufficient %s holdings: have 0, need %s", symbol, FormatQuantity(delta.Neg()))
	}
	if !delta.IsZero() {
		a.Holdings = append(a.Holdings, Holding{Symbol: symbol, Quantity: delta})
	}
	return nil
}
