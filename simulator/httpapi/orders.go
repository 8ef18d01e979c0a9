package httpapi

import (
	"context"

	"github.com/labstack/echo/v4"

	"github.com/partnersim/partnersim/simulator"
	"github.com/partnersim/partnersim/simulator/httpapi/surface"
)

// OrderReader lists an institution's orders (storage).
type OrderReader interface {
	// ListOrderItems answers one page of Get Order List, each order as its item shows it; it
	// returns the store's errors only.
	ListOrderItems(ctx context.Context, instID string, f simulator.OrderFilter) (*simulator.OrderItemPage, error)
}

// handleOrderList serves GET /{v}/orders/ (spec §4.3, decisions D6).
func handleOrderList(orders OrderReader) echo.HandlerFunc {
	return handleList(surface.ParseOrderListQuery, func(f simulator.OrderFilter) int { return f.Limit }, orders.ListOrderItems, renderOrderList)
}
