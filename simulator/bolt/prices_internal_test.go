package bolt

import (
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/shopspring/decimal"
	"github.com/stretchr/testify/assert"

	"github.com/partnersim/partnersim/simulator"
)

// A holding valued through the price table sums exactly what simulator.CentsSum.AddHolding sums
// at the prices' map, for tables of every size (probes that collide and wrap), symbols that
// are missing and prices beyond 18 digits (which the table declines).
func TestPriceTableMatchesPrices(t *testing.T) {
	r := rand.New(rand.NewPCG(34, 3))
	for _, n := range []int{0, 1, 3, 16, 17, 100, 1000} {
		prices := map[string]decimal.Decimal{}
		for i := range n {
			p := decimal.New(r.Int64N(1e9), -int32(r.IntN(6)))
			if r.IntN(20) == 0 {
				p = decimal.RequireFromString("1234567890123456789.5") // 20 digits
			}
			prices[fmt.Sprintf("S%d", i)] = p
		}
		table := newPriceTable(prices)
		for i := range n + 50 { // the last 50 have no price
			sym := fmt.Sprintf("S%d", i)
			c, exp := r.Int64N(1e12), -int32(r.IntN(9))
			var got, want simulator.CentsSum
			ok := table.addHolding(&got, nil, []byte(sym), c, exp)
			want.AddHolding(c, exp, prices[sym])
			wantCents, wantOK := want.Cents()
			if p, found := prices[sym]; found && p.NumDigits() > 18 {
				assert.False(t, ok, "%s at %s: declined", sym, p)
				assert.False(t, wantOK, "%s at %s: the map's sum is spoilt too", sym, p)
				continue
			}
			gotCents, gotOK := got.Cents()
			if assert.True(t, ok, "%s of %d prices", sym, n) {
				assert.Equal(t, wantOK, gotOK, "%s of %d prices", sym, n)
				assert.Equal(t, wantCents, gotCents, "%s of %d prices: %d×10^%d", sym, n, c, exp)
			}
		}
	}
}
