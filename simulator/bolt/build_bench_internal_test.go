package bolt

import (
	"fmt"
	"testing"
	"time"

	"github.com/partnersim/partnersim/simulator"
	"github.com/shopspring/decimal"
	"github.com/stretchr/testify/require"
)

// BenchmarkSpoolTransaction spools a transaction of two orders again and again through the
// builder's own Transaction and through a shard's, which spool it the same way: -benchmem
// shows the two allocating alike (the encoding's allocations, none of the call's own).
func BenchmarkSpoolTransaction(b *testing.B) {
	at := time.Date(2025, 3, 1, 0, 0, 0, 0, time.UTC)
	orders := make([]simulator.Order, 2)
	for i := range orders {
		orders[i] = simulator.Order{ID: fmt.Sprintf("ord_%d", i), InstitutionID: "ins_a", UserAccountID: "u1",
			Product: simulator.ProductSecurities, Side: simulator.SideBuy, Status: simulator.OrderStatuses[i%4],
			Symbol: "AAPL", Quantity: decimal.New(1, 0), PlacedAt: at.Add(time.Duration(i) * time.Hour)}
	}
	txn := simulator.Transaction{ID: "txn_1", InstitutionID: "ins_a", OrderIDs: []string{orders[0].ID, orders[1].ID}}
	for _, via := range []string{"builder", "shard"} {
		b.Run(via, func(b *testing.B) {
			bd, err := tempStore(b, nil).NewBuilder(b.Context())
			require.NoError(b, err)
			bd.Budget = 1 << 40 // no round: the spool only grows
			spool := bd.Transaction
			if via == "shard" {
				spool = bd.Shard().Transaction
			}
			b.ReportAllocs()
			for b.Loop() {
				if err := spool(txn, orders); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
