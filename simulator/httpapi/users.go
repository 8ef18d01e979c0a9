package httpapi

import (
	"context"
	"net/http"

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
		v := validate.New()
		id := v.PathStr("user_account_id", c.Param("user_account_id"))
		typ := v.Query(validate.ParseQuery(c.Request().URL.RawQuery)).Enum("user_account_id_type", true, "", idTypes...)
		if err := v.Err(); err != nil {
			return err
		}
		view, err := users.UserDetail(c.Request().Context(), keyOf(c).InstitutionID, id, simulator.IDType(typ))
		if err != nil {
			return err
		}
		body := appendUserDetail(bodies.get(), view, clock, histories)
		writeRaw(c, http.StatusOK, body)
		bodies.put(body)
		return nil
	}
}

// handleUserList serves GET /{v}/users/ (spec §4.2, decisions D6).
func handleUserList(users UserReader) echo.HandlerFunc {
	return handleList(surface.UserListQuery, func(f simulator.UserFilter) int { return f.Limit }, users.ListUserItems, renderUserPage)
}
