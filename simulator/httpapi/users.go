package httpapi

import (
	"context"
	"math/big"
	"net/http"

	"github.com/labstack/echo/v4"

	"github.com/partnersim/partnersim/simulator"
	"github.com/partnersim/partnersim/simulator/validate"
)

// UserReader reads an institution's users (storage).
type UserReader interface {
	// UserDetail resolves id of type t to one of the institution's users, with its accounts
	// priced (ENOTFOUND when no member or user matches).
	UserDetail(ctx context.Context, instID, id string, t simulator.IDType) (*simulator.UserView, error)
	// ListUsers answers one page of Get User List; it returns the store's errors only.
	ListUsers(ctx context.Context, instID string, f simulator.UserFilter) (*simulator.UserPage, error)
}

// kycFilters are the KYC query parameters in the spec table's order.
var kycFilters = []simulator.Product{simulator.ProductCrypto, simulator.ProductSecurities, simulator.ProductRothIRA, simulator.ProductRobo}

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
	return handleList(userListQuery, func(f simulator.UserFilter) int { return f.Limit }, users.ListUsers, renderUserPage)
}

// userListQuery reads Get User List's filters, paging and sort, for the API and the control
// plane's per-institution list alike.
func userListQuery(q *validate.Params) (f simulator.UserFilter, cursor *big.Int) {
	f.UserAccountID = strParam(q, "user_account_id")
	f.Product = enumParam[simulator.Product](q, "product", products)
	for _, p := range kycFilters {
		if st := q.Enum(string(p)+"_kyc_status", false, "", kycValues...); st != "" {
			if f.KYC == nil {
				f.KYC = map[simulator.Product]simulator.KYCStatus{}
			}
			f.KYC[p] = simulator.KYCStatus(st)
		}
	}
	f.CreatedStart = timeParam(q, "created_at_start")
	f.CreatedEnd = timeParam(q, "created_at_end")
	f.Limit, f.Offset, cursor, f.Desc = pageParams(q)
	f.SortKey = simulator.UserSortKey(q.Enum("sort_key", false, "created_at", "created_at", "user_account_id"))
	return f, cursor
}

// ParseUserList reads Get User List's query string (the API's own validation) into a filter.
func ParseUserList(rawQuery string) (simulator.UserFilter, error) {
	f, _, err := parseList(rawQuery, userListQuery)
	return f, err
}
