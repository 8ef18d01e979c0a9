package httpapi

import (
	"context"
	"net/http"
	"time"

	"github.com/labstack/echo/v4"

	"github.com/partnersim/partnersim/simulator"
	"github.com/partnersim/partnersim/simulator/validate"
)

// The control plane's bounds (decisions D17), one home for the handlers here and the QA console.
const (
	// MaxAdvanceSeconds bounds one advance of the virtual clock (the domain's MaxAdvance).
	MaxAdvanceSeconds = int(simulator.MaxAdvance / time.Second)
	// MaxOverlapSeconds bounds a signing-secret rotation's overlap (thirty days).
	MaxOverlapSeconds = 30 * 24 * 3600
	// MaxSessions bounds a created user's live sessions.
	MaxSessions = 1000
	// MaxFaultLatencyMS bounds an injected latency (one minute).
	MaxFaultLatencyMS = 60000
	// MaxRateLimit bounds the rate limit's requests a second and its burst.
	MaxRateLimit = 1000000
	// MaxPendingListed bounds GET /_sandbox/clock's list of due deliveries.
	MaxPendingListed = 100
	// MaxKeyDescription bounds an issued key's description, in characters.
	MaxKeyDescription = 200
	// MaxDeliveryPage bounds a page of the delivery log (GET /_sandbox/deliveries).
	MaxDeliveryPage = 1000
)

// JournalEntry is one request of the journal (GET /_sandbox/requests).
type JournalEntry = journalEntry

// The control plane's reads: what an institution holds (its users and orders with the API's own
// filters and paging, its keys without plaintexts, its subscriptions), the virtual clock with
// the deliveries it will make due, the DNS overrides and the rate limit. The QA console
// (simulator/httpapi/console) calls the same services, and the server's own journal, faults
// and rate limit through the methods below.

// addControlReads registers the read endpoints of this file; c is the control plane's prefix.
func (s *Server) addControlReads(c string, t echo.MiddlewareFunc) {
	d := s.deps
	s.handle(http.MethodGet, c+"/institutions/:institution_id", handleInstitution(d.Institutions.Institution), t)
	s.handle(http.MethodGet, c+"/institutions/:institution_id/users", handleInstitutionUsers(d.Institutions.InstitutionUsers), t)
	s.handle(http.MethodGet, c+"/institutions/:institution_id/orders", handleInstitutionOrders(d.Institutions.InstitutionOrders), t)
	s.handle(http.MethodGet, c+"/institutions/:institution_id/keys", handleInstitutionKeys(d.Institutions.InstitutionKeys), t)
	s.handle(http.MethodGet, c+"/institutions/:institution_id/subscriptions", handleInstitutionSubscriptions(d.Institutions.InstitutionSubscriptions), t)
	s.handle(http.MethodGet, c+"/clock", handleClock(d.Deliveries, s.clock), t)
	s.handle(http.MethodGet, c+"/dns", handleDNS(d.Sandbox), t)
	s.handle(http.MethodGet, c+"/rate-limit", handleRateLimit(s.faults), t)
}

// Mount serves h for every method under prefix (which ends in "/"), behind the server's own
// request-id, head-bound and path middleware. The sandbox mounts the QA console with it.
func (s *Server) Mount(prefix string, h http.Handler) {
	wrapped := echo.WrapHandler(h)
	for _, m := range []string{http.MethodGet, http.MethodHead, http.MethodPost} {
		s.handle(m, prefix, wrapped)
		s.handle(m, prefix+"*", wrapped)
	}
}

// Clock is the server's clock: the stamped time and the virtual clock.
func (s *Server) Clock() *simulator.Clock { return s.clock }

// Requests returns up to n journal entries, newest first.
func (s *Server) Requests(n int) []JournalEntry { return s.journal.last(n) }

// Faults returns the fault rules in force.
func (s *Server) Faults() []FaultRule { return s.faults.get() }

// SetFaults replaces the fault rules (bounded as PUT /_sandbox/faults bounds them).
func (s *Server) SetFaults(rules []FaultRule) { s.faults.set(rules) }

// RateLimit returns the per-key rate limit (0: off) and its burst.
func (s *Server) RateLimit() (rps float64, burst int) { return s.faults.rate() }

// rate returns the rate limit in force and its burst.
func (f *faults) rate() (rps float64, burst int) {
	f.mu.RLock()
	defer f.mu.RUnlock()
	return f.rps, max(f.burst, 1)
}

// SetRateLimit sets the per-key rate limit; 0 switches it off.
func (s *Server) SetRateLimit(rps float64, burst int) { s.faults.setRate(rps, burst) }

// ClearJournal empties the request journal (a reset does, through the control service's
// AfterReset).
func (s *Server) ClearJournal() { s.journal.reset() }

// ParseUserList reads Get User List's query string (the API's own validation) into a filter.
func ParseUserList(rawQuery string) (simulator.UserFilter, error) {
	v := validate.New()
	f, _ := userListQuery(v.Query(validate.ParseQuery(rawQuery)))
	return f, v.Err()
}

// ParseOrderList reads Get Order List's query string (the API's own validation) into a filter.
func ParseOrderList(rawQuery string) (simulator.OrderFilter, error) {
	v := validate.New()
	f, _ := orderListQuery(v.Query(validate.ParseQuery(rawQuery)))
	return f, v.Err()
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

// handleInstitutionUsers serves GET /_sandbox/institutions/{id}/users: Get User List's filters,
// paging and sort over the institution's users as stored (platform ids, sessions, cash).
func handleInstitutionUsers(list func(ctx context.Context, instID string, f simulator.UserFilter) (*simulator.UserPage, error)) echo.HandlerFunc {
	return func(c echo.Context) error {
		v := validate.New()
		inst := v.PathStr("institution_id", c.Param("institution_id"))
		f, cursor := userListQuery(v.Query(validate.ParseQuery(c.Request().URL.RawQuery)))
		if err := v.Err(); err != nil {
			return err
		}
		page, err := list(c.Request().Context(), inst, f)
		if err != nil {
			return err
		}
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
		return writeJSON(c, http.StatusOK, pageJSON[storedUserItemJSON]{Items: items, TotalRecords: page.Total,
			LastRecordNumber: nextCursor(cursor, len(items)), PerPage: f.Limit})
	}
}

// handleInstitutionOrders serves GET /_sandbox/institutions/{id}/orders: Get Order List's
// filters and paging, each order with its transaction and platform ids.
func handleInstitutionOrders(list func(ctx context.Context, instID string, f simulator.OrderFilter) (*simulator.OrderPage, error)) echo.HandlerFunc {
	type item struct {
		orderJSON
		TransactionID string `json:"transaction_id"`
		PlatformID    string `json:"platform_id"`
	}
	return func(c echo.Context) error {
		v := validate.New()
		inst := v.PathStr("institution_id", c.Param("institution_id"))
		f, cursor := orderListQuery(v.Query(validate.ParseQuery(c.Request().URL.RawQuery)))
		if err := v.Err(); err != nil {
			return err
		}
		page, err := list(c.Request().Context(), inst, f)
		if err != nil {
			return err
		}
		items := make([]item, 0, len(page.Orders))
		for _, o := range page.Orders {
			items = append(items, item{orderJSON: renderOrder(o), TransactionID: o.TransactionID, PlatformID: o.PlatformID})
		}
		return writeJSON(c, http.StatusOK, pageJSON[item]{Items: items, TotalRecords: page.Total,
			LastRecordNumber: nextCursor(cursor, len(items)), PerPage: f.Limit})
	}
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

// handleClock serves GET /_sandbox/clock: the stamped time, the virtual (scheduler) time and
// the next deliveries waiting for an attempt, soonest first (?limit, default 20).
func handleClock(deliveries Deliveries, clock *simulator.Clock) echo.HandlerFunc {
	type response struct {
		Now        string         `json:"now"`
		VirtualNow string         `json:"virtual_now"`
		Frozen     bool           `json:"frozen"`
		NextDue    []deliveryJSON `json:"next_due"`
	}
	return func(c echo.Context) error {
		v := validate.New()
		limit := v.Query(validate.ParseQuery(c.Request().URL.RawQuery)).Int("limit", 20, validate.Ge(1), validate.Le(MaxPendingListed))
		if err := v.Err(); err != nil {
			return err
		}
		due, err := deliveries.PendingDeliveries(c.Request().Context(), limit)
		if err != nil {
			return err
		}
		return writeJSON(c, http.StatusOK, response{Now: simulator.FormatTime(clock.Now()), VirtualNow: simulator.FormatTime(clock.SchedulerNow()),
			Frozen: clock.Frozen(), NextDue: renderDeliveries(due).Deliveries})
	}
}

// handleDNS serves GET /_sandbox/dns: the callback-host overrides in force.
func handleDNS(ops SandboxOps) echo.HandlerFunc {
	type response struct {
		Overrides map[string][]string `json:"overrides"`
	}
	return func(c echo.Context) error {
		return writeJSON(c, http.StatusOK, response{Overrides: ops.DNS(c.Request().Context())})
	}
}

// handleRateLimit serves GET /_sandbox/rate-limit: the per-key limit in force (0: off).
func handleRateLimit(f *faults) echo.HandlerFunc {
	type response struct {
		RequestsPerSecond float64 `json:"requests_per_second"`
		Burst             int     `json:"burst"`
	}
	return func(c echo.Context) error {
		rps, burst := f.rate()
		return writeJSON(c, http.StatusOK, response{RequestsPerSecond: rps, Burst: burst})
	}
}

// ValidSnapshotName reports whether a snapshot name is letters, digits, '-' and '_' (at most 64).
func ValidSnapshotName(n string) bool { return validSnapshotName(n) }
