package httpapi

import (
	"context"
	"slices"

	"github.com/labstack/echo/v4"

	"github.com/partnersim/partnersim/simulator"
	"github.com/partnersim/partnersim/simulator/httpapi/surface"
	"github.com/partnersim/partnersim/simulator/validate"
)

// UserReader reads an institution's users (storage).
type UserReader interface {
	// UserDetail resolves id of type t to one of the institution's users, with its accounts
	// priced (ENOTFOUND when no member or user matches).
	UserDetail(ctx context.Context, instID, id string, t simulator.IDType) (*simulator.UserView, error)
	// ListUserItems answers one page of Get User List, each user as its item shows it; it
	// returns the store's errors only.
	ListUserItems(ctx context.Context, instID string, f simulator.UserFilter) (*simulator.UserItemPage, error)
}

// handleUserDetail serves GET /{v}/users/{user_account_id}/ (spec §4.1).
func handleUserDetail(users UserReader, clock *simulator.Clock) echo.HandlerFunc {
	histories := newHistoryCache()
	var bodies bodyPool
	return func(c echo.Context) error {
		// The one parameter read where it is, without a collector or the query's map: any
		// user_account_id is a str, and the type is valid exactly when it is one of idTypes.
		raw := c.Request().URL.RawQuery
		typ, _ := validate.QueryValue(raw, "user_account_id_type")
		if !slices.Contains(idTypes, typ) {
			// Not sent, or none of them: FastAPI's 422, as the collector words it (never nil here).
			v := validate.New()
			v.Query(validate.ParseQuery(raw)).Enum("user_account_id_type", true, "", idTypes...)
			return v.Err()
		}
		view, err := users.UserDetail(c.Request().Context(), keyOf(c).InstitutionID, c.Param("user_account_id"), simulator.IDType(typ))
		if err != nil {
			return err
		}
		bodies.write(c, func(b []byte) []byte { return appendUserDetail(b, view, clock, histories) })
		return nil
	}
}

// handleUserList serves GET /{v}/users/ (spec §4.2, decisions D6).
func handleUserList(users UserReader) echo.HandlerFunc {
	return handleList(surface.ParseUserListQuery, func(f simulator.UserFilter) int { return f.Limit }, users.ListUserItems, infallible(renderUserList))
}
