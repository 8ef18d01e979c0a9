package httpapi

import (
	"context"
	"math/big"
	"net/http"

	"github.com/labstack/echo/v4"

	"github.com/partnersim/partnersim/simulator"
	"github.com/partnersim/partnersim/simulator/httpapi/surface"
	"github.com/partnersim/partnersim/simulator/validate"
)

// The control plane's reads of what the institutions hold (Institutions): the institutions,
// one with its prices and fees, its users and orders with the partner API's own filters and
// paging, its keys without plaintexts, its subscriptions, and any user as stored.

// handleListInstitutions serves GET /_sandbox/institutions.
func handleListInstitutions(institutions surface.Institutions) echo.HandlerFunc {
	type response struct {
		Institutions []institutionJSON `json:"institutions"`
	}
	return func(c echo.Context) error {
		list, counts, err := institutions.Institutions(c.Request().Context())
		if err != nil {
			return err
		}
		out := response{Institutions: make([]institutionJSON, 0, len(list))}
		for i, in := range list {
			j := renderInstitution(in)
			j.Users = &counts[i]
			out.Institutions = append(out.Institutions, j)
		}
		return writeJSON(c, http.StatusOK, out)
	}
}

type storedUserItemJSON struct {
	PlatformID         string          `json:"platform_id"`
	UserAccountID      string          `json:"user_account_id"`
	CreatedAt          string          `json:"created_at"`
	LiveSessions       int             `json:"live_sessions"`
	CurrentMarketValue string          `json:"current_market_value"`
	Accounts           []storedKYCJSON `json:"accounts"`
}

type storedKYCJSON struct {
	Product            simulator.Product   `json:"product"`
	KYCStatus          simulator.KYCStatus `json:"kyc_status"`
	Cash               string              `json:"cash"`
	CurrentMarketValue string              `json:"current_market_value"`
}

// handleInstitution serves GET /_sandbox/institutions/{id}: the institution with its prices
// and fee schedule.
func handleInstitution(institution func(ctx context.Context, id string) (*simulator.Institution, error)) echo.HandlerFunc {
	type feeJSON struct {
		Rate    string `json:"rate"`
		Minimum string `json:"minimum"`
	}
	type response struct {
		institutionJSON
		Prices map[string]string  `json:"prices"`
		Fees   map[string]feeJSON `json:"fees"`
	}
	return func(c echo.Context) error {
		in, err := institution(c.Request().Context(), c.Param("institution_id"))
		if err != nil {
			return err
		}
		out := response{institutionJSON: renderInstitution(in), Prices: map[string]string{}, Fees: map[string]feeJSON{}}
		for sym, p := range in.Prices {
			out.Prices[sym] = simulator.FormatPrice(p)
		}
		for p, r := range in.Fees {
			out.Fees[string(p)] = feeJSON{Rate: r.Rate.String(), Minimum: simulator.FormatMoney(r.Minimum)}
		}
		return writeJSON(c, http.StatusOK, out)
	}
}

// handleInstitutionList serves one of an institution's lists on the control plane: the partner
// API's filters, paging and sort (query, as it reads them), the page of the institution in the
// path, its items rendered as stored with the count of every match (items).
func handleInstitutionList[F, P, I any](
	query func(*validate.Params) (F, *big.Int),
	perPage func(F) int,
	list func(ctx context.Context, instID string, f F) (P, error),
	items func(P) ([]I, int),
) echo.HandlerFunc {
	return func(c echo.Context) error {
		f, cursor, err := surface.ParseList(c.Request().URL.RawQuery, query)
		if err != nil {
			return err
		}
		page, err := list(c.Request().Context(), c.Param("institution_id"), f)
		if err != nil {
			return err
		}
		out, total := items(page)
		return writeJSON(c, http.StatusOK, newPageJSON(out, total, cursor, perPage(f)))
	}
}

// handleInstitutionUsers serves GET /_sandbox/institutions/{id}/users: Get User List's filters,
// paging and sort over the institution's users as stored (platform ids, sessions, cash).
func handleInstitutionUsers(list func(ctx context.Context, instID string, f simulator.UserFilter) (*simulator.UserPage, error)) echo.HandlerFunc {
	return handleInstitutionList(surface.UserListQuery, func(f simulator.UserFilter) int { return f.Limit }, list, renderStoredUsers)
}

func renderStoredUsers(page *simulator.UserPage) ([]storedUserItemJSON, int) {
	items := make([]storedUserItemJSON, 0, len(page.Users))
	for _, u := range page.Users {
		it := storedUserItemJSON{PlatformID: u.PlatformID, UserAccountID: u.UserAccountID, CreatedAt: simulator.FormatTime(u.CreatedAt),
			LiveSessions: u.LiveSessions, CurrentMarketValue: simulator.FormatMoney(u.TotalMarketValue(page.Prices)), Accounts: []storedKYCJSON{}}
		for i := range u.Accounts {
			a := &u.Accounts[i]
			it.Accounts = append(it.Accounts, storedKYCJSON{Product: a.Product, KYCStatus: a.KYCStatus, Cash: simulator.FormatMoney(a.Cash),
				CurrentMarketValue: simulator.FormatMoney(a.MarketValue(page.Prices))})
		}
		items = append(items, it)
	}
	return items, page.Total
}

// handleInstitutionOrders serves GET /_sandbox/institutions/{id}/orders: Get Order List's
// filters and paging, each order with its transaction and platform ids.
func handleInstitutionOrders(list func(ctx context.Context, instID string, f simulator.OrderFilter) (*simulator.OrderPage, error)) echo.HandlerFunc {
	type item struct {
		orderJSON
		TransactionID string `json:"transaction_id"`
		PlatformID    string `json:"platform_id"`
	}
	return handleInstitutionList(surface.OrderListQuery, func(f simulator.OrderFilter) int { return f.Limit }, list,
		func(page *simulator.OrderPage) ([]item, int) {
			items := make([]item, 0, len(page.Orders))
			for _, o := range page.Orders {
				items = append(items, item{orderJSON: renderOrder(o), TransactionID: o.TransactionID, PlatformID: o.PlatformID})
			}
			return items, page.Total
		})
}

// handleInstitutionKeys serves GET /_sandbox/institutions/{id}/keys: ids, prefixes, scopes and
// dates; a plaintext is shown only once, when the key is issued (decisions D15).
func handleInstitutionKeys(list func(ctx context.Context, instID string) ([]*simulator.APIKey, error)) echo.HandlerFunc {
	type keyJSON struct {
		KeyID       string            `json:"key_id"`
		Prefix      string            `json:"prefix"`
		Last4       string            `json:"last4,omitempty"`
		Scopes      []simulator.Scope `json:"scopes"`
		Description string            `json:"description,omitempty"`
		CreatedAt   string            `json:"created_at"`
		RevokedAt   *string           `json:"revoked_at"`
	}
	type response struct {
		Keys []keyJSON `json:"keys"`
	}
	return func(c echo.Context) error {
		keys, err := list(c.Request().Context(), c.Param("institution_id"))
		if err != nil {
			return err
		}
		out := response{Keys: make([]keyJSON, 0, len(keys))}
		for _, k := range keys {
			kj := keyJSON{KeyID: k.ID, Prefix: k.Prefix, Last4: k.Last4, Scopes: k.Scopes, Description: k.Description, CreatedAt: simulator.FormatTime(k.CreatedAt)}
			if k.RevokedAt != nil {
				t := simulator.FormatTime(*k.RevokedAt)
				kj.RevokedAt = &t
			}
			out.Keys = append(out.Keys, kj)
		}
		return writeJSON(c, http.StatusOK, out)
	}
}

// handleInstitutionSubscriptions serves GET /_sandbox/institutions/{id}/subscriptions: what
// the partner's List Subscriptions shows, without a key.
func handleInstitutionSubscriptions(list func(ctx context.Context, instID string) ([]*simulator.Subscription, error)) echo.HandlerFunc {
	return func(c echo.Context) error {
		subs, err := list(c.Request().Context(), c.Param("institution_id"))
		if err != nil {
			return err
		}
		return writeJSON(c, http.StatusOK, renderSubscriptions(subs))
	}
}

type storedAccountJSON struct {
	Product       simulator.Product   `json:"product"`
	KYCStatus     simulator.KYCStatus `json:"kyc_status"`
	KYCApprovedAt string              `json:"kyc_approved_at,omitempty"`
	Cash          string              `json:"cash"`
	Holdings      []holdingJSON       `json:"holdings"`
	Portfolio     string              `json:"portfolio,omitempty"`
}

type holdingJSON struct {
	Symbol   string `json:"symbol"`
	Quantity string `json:"quantity"`
}

// handleGetUser serves GET /_sandbox/users/:platform_id.
func handleGetUser(institutions surface.Institutions) echo.HandlerFunc {
	type response struct {
		PlatformID    string              `json:"platform_id"`
		InstitutionID string              `json:"institution_id"`
		UserAccountID string              `json:"user_account_id"`
		CreatedAt     string              `json:"created_at"`
		LiveSessions  int                 `json:"live_sessions"`
		Terms         termsJSON           `json:"terms_and_conditions"`
		Accounts      []storedAccountJSON `json:"accounts"`
	}
	return func(c echo.Context) error {
		u, err := institutions.User(c.Request().Context(), c.Param("platform_id"))
		if err != nil {
			return err
		}
		out := response{PlatformID: u.PlatformID, InstitutionID: u.InstitutionID, UserAccountID: u.UserAccountID,
			CreatedAt: simulator.FormatTime(u.CreatedAt), LiveSessions: u.LiveSessions,
			Terms:    termsJSON{AcceptedAt: simulator.FormatTime(u.Terms.AcceptedAt), Version: u.Terms.Version},
			Accounts: []storedAccountJSON{}}
		for _, a := range u.Accounts {
			aj := storedAccountJSON{Product: a.Product, KYCStatus: a.KYCStatus, Cash: simulator.FormatMoney(a.Cash), Holdings: []holdingJSON{}, Portfolio: a.Portfolio}
			if a.KYCApprovedAt != nil {
				aj.KYCApprovedAt = simulator.FormatTime(*a.KYCApprovedAt)
			}
			for _, h := range a.Holdings {
				aj.Holdings = append(aj.Holdings, holdingJSON{Symbol: h.Symbol, Quantity: simulator.FormatQuantity(h.Quantity)})
			}
			out.Accounts = append(out.Accounts, aj)
		}
		return writeJSON(c, http.StatusOK, out)
	}
}
