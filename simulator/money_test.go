package simulator_test

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/shopspring/decimal"
	"github.com/stretchr/testify/require"

	"github.com/partnersim/partnersim/simulator"
)

// AppendMoney and AppendQuantity compute in int64 what the decimal arithmetic computes: they
// must agree on every amount, ties to even and amounts near and beyond int64 included (there
// they fall back, never answer wrongly).
func TestIntegerMoneyMatchesDecimal(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 15))
	coefs := []int64{0, 1, -1, 5, -5, 15, 25, -25, 50, 99, 100, 12345, 1e9 + 5, math.MaxInt64, math.MinInt64, math.MaxInt64 / 10, 999999999999999999, -999999999999999999}
	dec := func() decimal.Decimal {
		switch r.IntN(6) {
		case 0:
			return decimal.New(coefs[r.IntN(len(coefs))], int32(r.IntN(23)-20))
		case 1:
			d, _ := decimal.NewFromString([]string{"0.005", "0.015", "-0.025", "1E+3", "123456789012345678901234.565", "0.00000000000000000001", "2.5", "-0.5"}[r.IntN(8)])
			return d
		case 2:
			return decimal.Decimal{} // a price that is not there
		}
		return decimal.New(r.Int64N(2e12)-1e12, -int32(r.IntN(12)))
	}
	for i := range 200000 {
		a := simulator.Account{Cash: dec()}
		prices := map[string]decimal.Decimal{}
		for j := range r.IntN(4) {
			sym := fmt.Sprint("S", j)
			a.Holdings = append(a.Holdings, simulator.Holding{Symbol: sym, Quantity: dec()})
			if r.IntN(5) > 0 {
				prices[sym] = dec()
			}
		}
		want := simulator.FormatMoney(a.MarketValue(prices))
		require.Equal(t, want, string(simulator.AppendMoney(nil, a.MarketValue(prices))), "account %d", i)
		q := dec()
		require.Equal(t, simulator.FormatMoney(q), string(simulator.AppendMoney(nil, q)), "amount %s (coefficient %s, exponent %d)", q, q.Coefficient(), q.Exponent())
		require.Equal(t, simulator.FormatQuantity(q), string(simulator.AppendQuantity(nil, q)), "quantity %s (coefficient %s, exponent %d)", q, q.Coefficient(), q.Exponent())
	}
}
