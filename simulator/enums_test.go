package simulator_test

import (
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/partnersim/partnersim/simulator"
)

// Each list's index function gives each value its position in the list, and -1 to any other
// string, near misses (a case, a space, a prefix, one byte more) included.
func TestEnumIndexes(t *testing.T) {
	others := []string{"", "bonds", "Robo", "robo ", "securitie", "short", "Buy", "settled", "complete", "pendingx", "approve"}
	for i, p := range simulator.Products {
		assert.Equal(t, i, simulator.ProductIndex(p), "ProductIndex(%q)", p)
	}
	for i, sd := range simulator.Sides {
		assert.Equal(t, i, simulator.SideIndex(sd), "SideIndex(%q)", sd)
	}
	for i, st := range simulator.OrderStatuses {
		assert.Equal(t, i, simulator.OrderStatusIndex(st), "OrderStatusIndex(%q)", st)
	}
	for i, k := range simulator.KYCStatuses {
		assert.Equal(t, i, simulator.KYCIndex(k), "KYCIndex(%q)", k)
	}
	for _, s := range others {
		got := [4]int{simulator.ProductIndex(simulator.Product(s)), simulator.SideIndex(simulator.Side(s)),
			simulator.OrderStatusIndex(simulator.OrderStatus(s)), simulator.KYCIndex(simulator.KYCStatus(s))}
		assert.Equal(t, [4]int{-1, -1, -1, -1}, got, "%q", s)
	}
}
