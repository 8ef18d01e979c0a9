package bolt

import (
	"github.com/shopspring/decimal"

	"github.com/partnersim/partnersim/simulator"
)

// priceTable is an institution's prices in the form a list item values holdings in
// (decoder.userItem): each price's int64 coefficient and exponent, found by the symbol's stored
// bytes in a small open-addressed table. A list page looks up every holding of every user on
// it; looking each up in the prices' map and taking the decimal's digits apart was a seventh of
// the page's CPU.
type priceTable struct {
	slots []priceSlot // a power of two long, at most half full
	shift uint        // 64 − log2(len(slots))
}

type priceSlot struct {
	symbol string
	c      int64
	exp    int32
	used   bool
	small  bool // the price has at most 18 digits: c and exp hold it
}

// newPriceTable returns prices as a priceTable.
func newPriceTable(prices map[string]decimal.Decimal) *priceTable {
	size, shift := 8, uint(64-3)
	for size < 2*len(prices) {
		size, shift = size*2, shift-1
	}
	t := &priceTable{slots: make([]priceSlot, size), shift: shift}
	for sym, p := range prices {
		i := home(shift, sym)
		for t.slots[i].used {
			i = (i + 1) & (len(t.slots) - 1)
		}
		t.slots[i] = priceSlot{symbol: sym, used: true, small: p.NumDigits() <= 18, c: p.CoefficientInt64(), exp: p.Exponent()}
	}
	return t
}

// home is the slot where a symbol's probe starts, in a table of 64−shift bits. It takes the
// stored bytes as they are: a string made of them for a call would be an allocation.
func home[S string | []byte](shift uint, sym S) int {
	h := uint64(14695981039346656037) // FNV-1a
	for i := 0; i < len(sym); i++ {
		h = (h ^ uint64(sym[i])) * 1099511628211
	}
	return int((h * 0x9e3779b97f4a7c15) >> shift)
}

// addHolding adds a holding of quantity c×10^exp of symbol to value at its price (a missing
// price is zero, as in simulator.CentsSum.AddHolding), and to hint when it is not nil; ok is
// false when the price has more than 18 digits, which only the decimal path values.
func (t *priceTable) addHolding(value, hint *simulator.CentsSum, symbol []byte, c int64, exp int32) (ok bool) {
	var pc int64
	var pexp int32
	for i := home(t.shift, symbol); t.slots[i].used; i = (i + 1) & (len(t.slots) - 1) {
		if s := &t.slots[i]; s.symbol == string(symbol) {
			if !s.small {
				return false
			}
			pc, pexp = s.c, s.exp
			break
		}
	}
	value.AddHoldingAt(c, exp, pc, pexp)
	if hint != nil {
		hint.AddHoldingAt(c, exp, pc, pexp)
	}
	return true
}
