package simulator

import (
	"maps"

	"github.com/shopspring/decimal"
)

// SetPrices merges prices into the institution's: each must be positive, and a refused call
// changes nothing (EINVALID naming the first bad symbol met).
func (in *Institution) SetPrices(prices map[string]decimal.Decimal) error {
	for sym, p := range prices {
		if !p.IsPositive() {
			return Errorf(EINVALID, "price of %s must be positive, got %s", sym, p)
		}
	}
	if in.Prices == nil {
		in.Prices = map[string]decimal.Decimal{}
	}
	maps.Copy(in.Prices, prices)
	return nil
}
