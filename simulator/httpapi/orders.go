package httpapi

import (
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
		q := v.Query(validate.ParseQuery(c.Request().URL.RawQuery))
		var f simulator.OrderFilter
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
		var cursor *big.Int
		f.Limit, f.Offset, cursor, f.Desc = pageParams(q)
		if err := v.Err(); err != nil {
			return err
		}
		page := &simulator.OrderPage{Orders: []*simulator.Order{}}
		if f.PlacedStart == nil || f.PlacedEnd == nil || f.PlacedStart.Before(*f.PlacedEnd) {
			var err error
			if page, err = s.store.ListOrders(c.Request().Context(), keyOf(c).InstitutionID, f); err != nil {
				return err
			}
		}
		items := make([]orderJSON, 0, len(page.Orders))
		for _, o := range page.Orders {
			items = append(items, renderOrder(o))
		}
		return s.jsonOK(c, http.StatusOK, pageJSON[orderJSON]{Items: items, TotalRecords: page.Total,
			LastRecordNumber: nextCursor(cursor, len(items)), PerPage: f.Limit})
	}
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
