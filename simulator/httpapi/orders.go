package httpapi

import (
	"context"
	"math/big"

	"github.com/labstack/echo/v4"

	"github.com/partnersim/partnersim/simulator"
	"github.com/partnersim/partnersim/simulator/validate"
)

// OrderReader lists an institution's orders (storage).
type OrderReader interface {
	// ListOrders answers one page of Get Order List; it returns the store's errors only.
	ListOrders(ctx context.Context, instID string, f simulator.OrderFilter) (*simulator.OrderPage, error)
}

var (
	sides         = []string{string(simulator.SideBuy), string(simulator.SideSell)}
	orderStatuses = enumStrings(simulator.OrderStatuses)
)

// handleOrderList serves GET /{v}/orders/ (spec §4.3, decisions D6).
func handleOrderList(orders OrderReader) echo.HandlerFunc {
	return handleList(orderListQuery, func(f simulator.OrderFilter) int { return f.Limit },
		func(ctx context.Context, instID string, f simulator.OrderFilter) (*simulator.OrderPage, error) {
			return listOrders(ctx, orders, instID, f)
		}, renderOrderPage)
}

// orderListQuery reads Get Order List's filters, paging and sort, for the API and the control
// plane's per-institution list alike.
func orderListQuery(q *validate.Params) (f simulator.OrderFilter, cursor *big.Int) {
	if id, ok := q.Str("user_account_id"); ok {
		f.UserAccountID = &id
	}
	if p := q.Enum("product", false, "", products...); p != "" {
		pp := simulator.Product(p)
		f.Product = &pp
	}
	if sd := q.Enum("side", false, "", sides...); sd != "" {
		ss := simulator.Side(sd)
		f.Side = &ss
	}
	if st := q.Enum("status", false, "", orderStatuses...); st != "" {
		ss := simulator.OrderStatus(st)
		f.Status = &ss
	}
	if t, ok := q.DateTime("placed_at_start"); ok {
		f.PlacedStart = &t
	}
	if t, ok := q.DateTime("placed_at_end"); ok {
		f.PlacedEnd = &t
	}
	f.Limit, f.Offset, cursor, f.Desc = pageParams(q)
	return f, cursor
}

// ParseOrderList reads Get Order List's query string (the API's own validation) into a filter.
func ParseOrderList(rawQuery string) (simulator.OrderFilter, error) {
	v := validate.New()
	f, _ := orderListQuery(v.Query(validate.ParseQuery(rawQuery)))
	return f, v.Err()
}

// listOrders lists one page; an empty time window matches nothing without asking the store.
func listOrders(ctx context.Context, r OrderReader, instID string, f simulator.OrderFilter) (*simulator.OrderPage, error) {
	if f.MatchesNothing() {
		return &simulator.OrderPage{Orders: []*simulator.Order{}}, nil
	}
	return r.ListOrders(ctx, instID, f)
}
