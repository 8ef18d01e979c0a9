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
	return handleList(orderListQuery, func(f simulator.OrderFilter) int { return f.Limit }, orders.ListOrders, renderOrderPage)
}

// orderListQuery reads Get Order List's filters, paging and sort, for the API and the control
// plane's per-institution list alike.
func orderListQuery(q *validate.Params) (f simulator.OrderFilter, cursor *big.Int) {
	f.UserAccountID = strParam(q, "user_account_id")
	f.Product = enumParam[simulator.Product](q, "product", products)
	f.Side = enumParam[simulator.Side](q, "side", sides)
	f.Status = enumParam[simulator.OrderStatus](q, "status", orderStatuses)
	f.PlacedStart = timeParam(q, "placed_at_start")
	f.PlacedEnd = timeParam(q, "placed_at_end")
	f.Limit, f.Offset, cursor, f.Desc = pageParams(q)
	return f, cursor
}

// ParseOrderList reads Get Order List's query string (the API's own validation) into a filter.
func ParseOrderList(rawQuery string) (simulator.OrderFilter, error) {
	f, _, err := parseList(rawQuery, orderListQuery)
	return f, err
}
