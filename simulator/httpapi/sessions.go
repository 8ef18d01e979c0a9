package httpapi

import (
	"context"
	"net/http"

	"github.com/labstack/echo/v4"

	"github.com/partnersim/partnersim/simulator"
	"github.com/partnersim/partnersim/simulator/validate"
)

// SessionRevoker ends a user's live sessions (storage).
type SessionRevoker interface {
	// RevokeSessions ends every live session of the users the member names (ENOTFOUND when
	// no member or user matches, EINVALID for an id type the institution has no vendor for).
	RevokeSessions(ctx context.Context, instID, id string, t simulator.IDType) error
}

// handleRevokeSessions serves POST /{v}/sessions/revoke/ (spec §4.4, decisions D5): 204, empty.
func handleRevokeSessions(sessions SessionRevoker, reader *bodyReader) echo.HandlerFunc {
	return func(c echo.Context) error {
		var id, typ string
		err := reader.fields(c, func(b *validate.Object, _ *validate.Collector) {
			id = b.Str("user_account_id")
			typ = b.Enum("user_account_id_type", idTypes...)
		})
		if err != nil {
			return err
		}
		if err := sessions.RevokeSessions(c.Request().Context(), keyOf(c).InstitutionID, id, simulator.IDType(typ)); err != nil {
			return err
		}
		return c.NoContent(http.StatusNoContent)
	}
}
