package httpapi

import (
	"context"
	"fmt"
	"math/big"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/shopspring/decimal"
	"github.com/stretchr/testify/require"

	"github.com/partnersim/partnersim/simulator"
)

// Every Get Order List page a store answers as rows read as it is rendered — from covered index
// entries (a page filtered by status, product and side, or user) and from order_records' copies
// (a page of the index of all orders) — renders byte for byte as the same page of whole orders
// (the control plane's ListOrders) rendered through renderOrder's structs and the one encoder:
// products, sides and statuses the spec lists and ones it does not, amounts stored at every
// scale (whole, tenths, cents, finer, beyond 18 digits, negative), fractional quantities,
// strings that need escaping or not, times with and without fractions and with zones.
func TestOrderPagesRenderAsWholeOrders(t *testing.T) {
	ctx := context.Background()
	db, l := mustLoadStore(t, simulator.Institution{ID: "ins_a", Name: "a"})
	r := rand.New(rand.NewPCG(34, 21))
	str := func() string { return renderStrings[r.IntN(len(renderStrings))] }
	big20, _ := decimal.NewFromString("-98765432109876543210.123456789")
	amount := func() decimal.Decimal {
		switch r.IntN(8) {
		case 0:
			return big20 // stored as text
		case 1:
			return decimal.New(r.Int64N(1e6)*10, -1) // tenths, trailing zero
		case 2:
			return decimal.New(r.Int64N(1e4), int32(r.IntN(4))) // whole, a positive exponent
		case 3:
			return decimal.New(-r.Int64N(1e9), -2) // negative cents
		case 4:
			return decimal.New(r.Int64N(1e17), -int32(r.IntN(19))) // up to 17 digits at any scale
		case 5:
			return decimal.New(5+10*r.Int64N(1e6), -3) // a half cent, rounded half-even
		}
		return decimal.New(r.Int64N(1e12), -int32(r.IntN(12)))
	}
	users := []string{"ua_1", "ua_2", `ua"3`, "ua\u2028", "émigré", "usr_hfcu_0001"}
	at := time.Date(2025, 3, 1, 0, 0, 0, 0, time.UTC)
	for i := range 900 {
		o := simulator.Order{ID: fmt.Sprintf("ord_%04d", i), InstitutionID: "ins_a", TransactionID: fmt.Sprintf("txn_%04d", i),
			UserAccountID: users[r.IntN(len(users))], Product: simulator.Products[r.IntN(len(simulator.Products))],
			Side: simulator.Sides[r.IntN(2)], Status: simulator.OrderStatuses[r.IntN(len(simulator.OrderStatuses))],
			Symbol: []string{"AAPL", "BTC", "VTI", str()}[r.IntN(4)], Quantity: amount(), Notional: amount(), Fee: amount(),
			PlacedAt: at.Add(time.Duration(r.Int64N(int64(400 * 24 * time.Hour)))), IsRecurringOrder: r.IntN(3) == 0}
		if r.IntN(4) == 0 {
			o.ID += str()
		}
		if r.IntN(2) == 0 {
			o.PlacedAt = o.PlacedAt.Truncate(time.Second)
		}
		if r.IntN(3) == 0 {
			o.PlacedAt = o.PlacedAt.In(time.FixedZone("x", 3600*(r.IntN(25)-12)))
		}
		if r.IntN(3) > 0 {
			c := o.PlacedAt.Add(time.Duration(r.Int64N(int64(time.Hour)))).In(time.FixedZone("y", 1800*(r.IntN(9)-4)))
			o.CompletedAt = &c
		}
		if o.IsRecurringOrder || r.IntN(4) == 0 {
			o.RecurringOrderID = []string{"", "rec_1", str()}[r.IntN(3)]
		}
		switch i % 50 { // a few values the spec does not list
		case 7:
			o.Product = simulator.Product([]string{"bonds", `b"d`}[r.IntN(2)])
		case 8:
			o.Side = "short"
		case 9:
			o.Status = simulator.OrderStatus([]string{"settled", "sett\nled"}[r.IntN(2)])
		}
		require.NoError(t, l.Transaction(simulator.Transaction{ID: o.TransactionID, InstitutionID: "ins_a", OrderIDs: []string{o.ID}}, []simulator.Order{o}))
	}
	require.NoError(t, l.Finish("tok"))

	for q := range 400 {
		f := simulator.OrderFilter{Limit: 1 + r.IntN(100), Offset: r.IntN(300), Desc: r.IntN(2) == 0}
		switch q % 6 {
		case 0: // the index of all orders: its records
		case 1:
			f.PlacedStart = ptr(at.Add(time.Duration(r.IntN(300)) * 24 * time.Hour))
			f.PlacedEnd = ptr(f.PlacedStart.Add(time.Duration(1+r.IntN(60)) * 24 * time.Hour))
			f.Offset = r.IntN(30)
		case 2:
			f.Status = ptr(simulator.OrderStatuses[r.IntN(len(simulator.OrderStatuses))])
		case 3:
			f.Product, f.Side = ptr(simulator.Products[r.IntN(len(simulator.Products))]), ptr(simulator.Sides[r.IntN(2)])
			f.Offset = r.IntN(60)
		case 4:
			f.UserAccountID = ptr(users[r.IntN(len(users))])
			f.Offset = r.IntN(60)
		case 5:
			f.Status, f.Side = ptr(simulator.OrderCompleted), ptr(simulator.Sides[r.IntN(2)])
			f.Offset = r.IntN(60)
		}
		whole, err := db.ListOrders(ctx, "ins_a", f)
		require.NoError(t, err)
		items := make([]orderJSON, 0, len(whole.Orders))
		for _, o := range whole.Orders {
			items = append(items, renderOrder(o))
		}
		cursor := big.NewInt(int64(f.Offset))
		want, err := simulator.EncodeJSON(pageJSON[orderJSON]{Items: items, TotalRecords: whole.Total, LastRecordNumber: nextCursor(cursor, len(items)), PerPage: f.Limit})
		require.NoError(t, err)
		page, err := db.ListOrderItems(ctx, "ins_a", f)
		require.NoError(t, err)
		require.NotNil(t, page.Read, "query %d: a page read as it is rendered", q)
		got, err := renderOrderList(nil, page, cursor, f.Limit)
		require.NoError(t, err)
		require.Equal(t, string(want), string(got), "query %d: %+v", q, f)
	}
}

func ptr[T any](v T) *T { return &v }
