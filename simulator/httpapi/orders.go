package httpapi

import (
	"context"
	"io"
	"math/big"
	"net/http"

	"github.com/labstack/echo/v4"

	"partnersim/simulator"
	"partnersim/simulator/validate"
)

var (
	sides         = []string{string(simulator.SideBuy), string(simulator.SideSell)}
	orderStatuses = enumStrings(simulator.OrderStatuses)
)

// handleOrderList serves GET /{v}/orders/ (spec §4.3, decisions D6).
func (s *Server) handleOrderList() echo.HandlerFunc {
	return func(c echo.Context) error {
		v := validate.New()
		f, cursor := orderListQuery(v.Query(validate.ParseQuery(c.Request().URL.RawQuery)))
		if err := v.Err(); err != nil {
			return err
		}
		page, err := s.listOrders(c.Request().Context(), keyOf(c).InstitutionID, f)
		if err != nil {
			return err
		}
		items := make([]orderJSON, 0, len(page.Orders))
		for _, o := range page.Orders {
			items = append(items, renderOrder(o))
		}
		return s.jsonOK(c, http.StatusOK, pageJSON[orderJSON]{Items: items, TotalRecords: page.Total,
			LastRecordNumber: nextCursor(cursor, len(items)), PerPage: f.Limit})
	}
}

// orderListQuery reads Get Order List's filters and paging (spec §4.3), for the API and the
// control plane's institution order list alike.
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

// handleTransaction serves GET /{v}/transactions/{transaction_id}/ (decisions D7).
func (s *Server) handleTransaction() echo.HandlerFunc {
	return func(c echo.Context) error {
		v := validate.New()
		id := v.PathStr("transaction_id", c.Param("transaction_id"))
		if err := v.Err(); err != nil {
			return err
		}
		t, orders, err := s.store.Transaction(c.Request().Context(), keyOf(c).InstitutionID, id)
		if err != nil {
			return err
		}
		return s.jsonOK(c, http.StatusOK, renderTransaction(t, orders))
	}
}

// readBody reads the request body up to the configured limit (413 beyond it).
func (s *Server) readBody(c echo.Context) ([]byte, error) {
	r := c.Request()
	limit := s.cfg.MaxBodyBytes
	raw, err := io.ReadAll(io.LimitReader(r.Body, limit+1))
	if err != nil {
		return nil, simulator.Errorf(simulator.EINVALID, "There was an error parsing the body")
	}
	if int64(len(raw)) > limit {
		return nil, echo.NewHTTPError(http.StatusRequestEntityTooLarge)
	}
	if len(raw) > largeBody {
		// Decoding and validating a large body costs tens of bytes per JSON value: one at a
		// time, so six 1 MiB bodies at once cannot take hundreds of MB (decisions D17).
		select {
		case s.largeBodies <- struct{}{}:
			c.Response().After(func() { <-s.largeBodies })
		case <-r.Context().Done():
			return nil, r.Context().Err()
		}
	}
	return raw, nil
}

// largeBody is the size above which a body waits for one of the few large-body slots.
const largeBody = 64 << 10

// listOrders lists one page; an empty time window matches nothing without asking the store.
func (s *Server) listOrders(ctx context.Context, instID string, f simulator.OrderFilter) (*simulator.OrderPage, error) {
	if f.PlacedStart != nil && f.PlacedEnd != nil && !f.PlacedStart.Before(*f.PlacedEnd) {
		return &simulator.OrderPage{Orders: []*simulator.Order{}}, nil
	}
	return s.store.ListOrders(ctx, instID, f)
}
