package httpapi

import (
	"context"
	"net/http"

	"github.com/labstack/echo/v4"

	"github.com/partnersim/partnersim/simulator"
)

// TransactionReader reads one of an institution's transactions with its orders (storage).
type TransactionReader interface {
	// Transaction returns the institution's transaction with its orders (ENOTFOUND when
	// unknown, or another institution's).
	Transaction(ctx context.Context, instID, id string) (*simulator.Transaction, []*simulator.Order, error)
}

// handleTransaction serves GET /{v}/transactions/{transaction_id}/ (decisions D7).
func handleTransaction(txns TransactionReader) echo.HandlerFunc {
	return func(c echo.Context) error {
		t, orders, err := txns.Transaction(c.Request().Context(), keyOf(c).InstitutionID, c.Param("transaction_id"))
		if err != nil {
			return err
		}
		return writeJSON(c, http.StatusOK, renderTransaction(t, orders))
	}
}
