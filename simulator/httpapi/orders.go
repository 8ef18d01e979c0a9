package httpapi

import (
	"context"

	"github.com/labstack/echo/v4"

	"github.com/partnersim/partnersim/simulator"
	"github.com/partnersim/partnersim/simulator/httpapi/surface"
)

// OrderReader lists an institution's orders (storage).
type OrderReader interface {
	// ListOrders answers one page of Get Order List; it returns the store's errors only.
	ListOrders(ctx context.Context, instID string, f simulator.OrderFilter) (*simulator.OrderPage, error)
}

// handleOrderList serves GET /{v}/orders/ (spec §4.3, decisions D6).
func handleOrderList(orders OrderReader) echo.HandlerFunc {
	return handleList(surface.OrderListQuery, func(f simulator.OrderFilter) int { return f.Limit }, orders.ListOrders, renderOrderPage)
}
