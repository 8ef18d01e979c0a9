package httpapi

import (
	"context"
	"crypto/subtle"
	"net/http"
	"time"

	"github.com/labstack/echo/v4"
	"github.com/shopspring/decimal"

	"partnersim/simulator"
	"partnersim/simulator/validate"
)

// The control plane's dependencies (/_sandbox/, decisions D9), one small interface per concern,
// declared here where they are used; the sandbox hands one implementation to all of them.

// Tenants creates institutions, their keys, members and users, prices and signing secrets.
type Tenants interface {
	CreateInstitution(ctx context.Context, name string, v simulator.Vendors) (*simulator.Institution, error)
	Institutions(ctx context.Context) ([]*simulator.Institution, []int, error)
	IssueKey(ctx context.Context, instID string, scopes []simulator.Scope) (*simulator.APIKey, string, error)
	// Keys lists an institution's keys: ids, prefixes and scopes, never a plaintext.
	Keys(ctx context.Context, instID string) ([]*simulator.APIKey, error)
	RevokeKey(ctx context.Context, keyID string) error
	CreateMember(ctx context.Context, m *simulator.Member) error
	CreateUser(ctx context.Context, u *simulator.User) error
	User(ctx context.Context, platformID string) (*simulator.User, error)
	SetPrices(ctx context.Context, instID string, prices map[string]decimal.Decimal) (map[string]decimal.Decimal, error)
	RotateSecret(ctx context.Context, instID string, overlap time.Duration) (string, error)
}

// Trading moves KYC states and places, fills, cancels and fails transactions.
type Trading interface {
	TransitionKYC(ctx context.Context, platformID string, p simulator.Product, to simulator.KYCStatus) (*simulator.Account, *simulator.Event, error)
	PlaceOrder(ctx context.Context, r simulator.OrderRequest) (*simulator.Transaction, []*simulator.Order, error)
	PlaceRobo(ctx context.Context, platformID string, typ simulator.TransactionType, amount decimal.Decimal) (*simulator.Transaction, []*simulator.Order, error)
	FillTransaction(ctx context.Context, txnID string, prices map[string]decimal.Decimal) (*simulator.Transaction, []*simulator.Order, *simulator.Event, error)
	EndTransaction(ctx context.Context, txnID string, to simulator.OrderStatus) (*simulator.Transaction, []*simulator.Order, error)
	TransactionAny(ctx context.Context, id string) (*simulator.Transaction, []*simulator.Order, error)
}

// Deliveries lists webhook deliveries with their attempts and redelivers events.
type Deliveries interface {
	Deliveries(ctx context.Context, subscriptionID, eventID string, limit int) ([]*simulator.Delivery, error)
	Redeliver(ctx context.Context, eventID string) ([]*simulator.Delivery, error)
	// PendingDeliveries lists up to limit deliveries waiting for an attempt, soonest first.
	PendingDeliveries(ctx context.Context, limit int) ([]*simulator.Delivery, error)
}

// SandboxOps are the process-wide operations: the virtual clock, DNS overrides, snapshots and
// reset.
type SandboxOps interface {
	AdvanceClock(ctx context.Context, d time.Duration) time.Time
	SetDNS(ctx context.Context, overrides map[string][]string) (map[string][]string, error)
	DNS(ctx context.Context) map[string][]string
	Reset(ctx context.Context) error
	SaveSnapshot(ctx context.Context, name string) error
	RestoreSnapshot(ctx context.Context, name string) error
}

// Scenarios plays the fixture scenarios and reports their runs.
type Scenarios interface {
	RunScenario(ctx context.Context, name, instID string) (*ScenarioRun, error)
	ScenarioRun(ctx context.Context, id string) (*ScenarioRun, error)
	Scenarios(ctx context.Context) ([]ScenarioInfo, error)
}

// Control is every concern of the control plane at once: what the sandbox implements.
type Control interface {
	Tenants
	Trading
	Deliveries
	SandboxOps
	Scenarios
}

// ScenarioRun reports a scenario run: the ids each step bound and what it did.
type ScenarioRun struct {
	Scenario string            `json:"scenario"`
	RunID    string            `json:"run_id"`
	Status   string            `json:"status"` // running (waiting on the virtual clock) or completed
	Bound    map[string]string `json:"bound"`
	Steps    []ScenarioStep    `json:"steps"`
}

// ScenarioInfo describes a fixture scenario.
type ScenarioInfo struct {
	Name        string `json:"name"`
	Description string `json:"description"`
	Steps       int    `json:"steps"`
}

// ScenarioStep is one step's outcome.
type ScenarioStep struct {
	Action  string `json:"action"`
	DueAt   string `json:"due_at"`
	Status  string `json:"status"` // pending, done, failed
	Result  string `json:"result,omitempty"`
	EventID string `json:"event_id,omitempty"`
	Error   string `json:"error,omitempty"`
}

// requireToken guards the control plane with x-sandbox-token (decisions D9).
func (s *Server) requireToken(next echo.HandlerFunc) echo.HandlerFunc {
	return func(c echo.Context) error {
		tok := c.Request().Header.Get("x-sandbox-token")
		if tok == "" {
			return simulator.Errorf(simulator.EUNAUTHORIZED, "Not authenticated")
		}
		if subtle.ConstantTimeCompare([]byte(tok), []byte(s.cfg.SandboxToken)) != 1 {
			return simulator.Errorf(simulator.EUNAUTHORIZED, "Invalid sandbox token")
		}
		return next(c)
	}
}

// body reads and opens the request's JSON body for validation.
func (s *Server) body(c echo.Context, v *validate.Collector) (*validate.Object, error) {
	raw, err := s.readBody(c)
	if err != nil {
		return nil, err
	}
	return v.Body(c.Request().Header.Get(echo.HeaderContentType), raw), nil
}

type vendorsJSON struct {
	Core *string `json:"core"`
	DBP  *string `json:"dbp"`
}

type institutionJSON struct {
	InstitutionID string      `json:"institution_id"`
	Name          string      `json:"name"`
	Vendors       vendorsJSON `json:"vendors"`
	CreatedAt     string      `json:"created_at"`
	Users         *int        `json:"users,omitempty"`
}

func renderInstitution(in *simulator.Institution) institutionJSON {
	return institutionJSON{InstitutionID: in.ID, Name: in.Name, Vendors: vendorsJSON{in.Vendors.Core, in.Vendors.DBP}, CreatedAt: simulator.FormatTime(in.CreatedAt)}
}

func (s *Server) handleCreateInstitution() echo.HandlerFunc {
	return func(c echo.Context) error {
		v := validate.New()
		b, err := s.body(c, v)
		if err != nil {
			return err
		}
		name := b.Str("name")
		vend := b.Object("vendors")
		core := nullableStr(vend, "core")
		dbp := nullableStr(vend, "dbp")
		if err := v.Err(); err != nil {
			return err
		}
		in, err := s.deps.Tenants.CreateInstitution(c.Request().Context(), name, simulator.Vendors{Core: core, DBP: dbp})
		if err != nil {
			return err
		}
		return s.jsonOK(c, http.StatusCreated, renderInstitution(in))
	}
}

func (s *Server) handleListInstitutions() echo.HandlerFunc {
	type response struct {
		Institutions []institutionJSON `json:"institutions"`
	}
	return func(c echo.Context) error {
		list, counts, err := s.deps.Tenants.Institutions(c.Request().Context())
		if err != nil {
			return err
		}
		out := response{Institutions: make([]institutionJSON, 0, len(list))}
		for i, in := range list {
			j := renderInstitution(in)
			j.Users = &counts[i]
			out.Institutions = append(out.Institutions, j)
		}
		return s.jsonOK(c, http.StatusOK, out)
	}
}

func (s *Server) handleIssueKey() echo.HandlerFunc {
	type response struct {
		KeyID         string            `json:"key_id"`
		Key           string            `json:"key"`
		Scopes        []simulator.Scope `json:"scopes"`
		InstitutionID string            `json:"institution_id"`
	}
	return func(c echo.Context) error {
		v := validate.New()
		inst := v.PathStr("institution_id", c.Param("institution_id"))
		b, err := s.body(c, v)
		if err != nil {
			return err
		}
		var scopes []simulator.Scope
		b.List("scopes").Each(func(_ int, s validate.Value) {
			scopes = append(scopes, simulator.Scope(s.Enum(enumStrings(simulator.Scopes)...)))
		})
		if err := v.Err(); err != nil {
			return err
		}
		k, plain, err := s.deps.Tenants.IssueKey(c.Request().Context(), inst, scopes)
		if err != nil {
			return err
		}
		return s.jsonOK(c, http.StatusCreated, response{KeyID: k.ID, Key: plain, Scopes: k.Scopes, InstitutionID: k.InstitutionID})
	}
}

func (s *Server) handleRevokeKey() echo.HandlerFunc {
	return func(c echo.Context) error {
		if err := s.deps.Tenants.RevokeKey(c.Request().Context(), c.Param("key_id")); err != nil {
			return err
		}
		return c.NoContent(http.StatusNoContent)
	}
}

type memberJSON struct {
	InstitutionID string   `json:"institution_id"`
	CoreID        string   `json:"core_id"`
	CoreIDType    string   `json:"core_id_type"`
	DBPID         *string  `json:"dbp_id"`
	UserIDs       []string `json:"user_ids"`
	CreatedAt     string   `json:"created_at"`
}

func (s *Server) handleCreateMember() echo.HandlerFunc {
	return func(c echo.Context) error {
		v := validate.New()
		inst := v.PathStr("institution_id", c.Param("institution_id"))
		b, err := s.body(c, v)
		if err != nil {
			return err
		}
		m := &simulator.Member{InstitutionID: inst}
		m.CoreID = b.Str("core_id")
		m.CoreIDType = b.Enum("core_id_type", simulator.CoreIDMemberNumber, simulator.CoreIDCIF)
		m.DBPID = nullableStr(b, "dbp_id")
		m.UserIDs = b.StrList("user_ids")
		if err := v.Err(); err != nil {
			return err
		}
		if err := s.deps.Tenants.CreateMember(c.Request().Context(), m); err != nil {
			return err
		}
		return s.jsonOK(c, http.StatusCreated, memberJSON{InstitutionID: m.InstitutionID, CoreID: m.CoreID, CoreIDType: m.CoreIDType,
			DBPID: m.DBPID, UserIDs: m.UserIDs, CreatedAt: simulator.FormatTime(m.CreatedAt)})
	}
}

func (s *Server) handleCreateUser() echo.HandlerFunc {
	type response struct {
		PlatformID    string `json:"platform_id"`
		UserAccountID string `json:"user_account_id"`
		InstitutionID string `json:"institution_id"`
	}
	return func(c echo.Context) error {
		v := validate.New()
		inst := v.PathStr("institution_id", c.Param("institution_id"))
		b, err := s.body(c, v)
		if err != nil {
			return err
		}
		var r simulator.UserRequest
		r.UserAccountID = b.Str("user_account_id")
		if t, ok := b.OptDateTime("created_at"); ok {
			r.CreatedAt = &t
			if err := simulator.CheckStorable(t); err != nil {
				v.Add(validate.ValueError(b.Loc().With("created_at"), b.Field("created_at").Raw(), simulator.ErrorMessage(err)))
			}
		}
		r.Sessions = optInt(b, "sessions", 0, validate.Ge(0), validate.Le(MaxSessions))
		terms, _ := b.OptObject("terms_and_conditions")
		if t, ok := terms.OptDateTime("accepted_at"); ok {
			r.TermsAcceptedAt = &t
		}
		r.TermsVersion = optStr(terms, "version", "")
		seen := map[simulator.Product]bool{}
		for _, a := range objects(b, "accounts") {
			acct := simulator.AccountRequest{Product: simulator.Product(a.Enum("product", products...))}
			if st, ok := a.OptEnum("kyc_status", kycValues...); ok {
				acct.KYCStatus = simulator.KYCStatus(st)
			}
			if t, ok := a.OptDateTime("kyc_approved_at"); ok {
				acct.KYCApprovedAt = &t
			}
			acct.Cash = optDecimal(a, "cash", decimal.Zero)
			acct.Portfolio = optStr(a, "portfolio", "")
			for _, h := range objects(a, "holdings") {
				acct.Holdings = append(acct.Holdings, simulator.Holding{Symbol: h.Str("symbol"), Quantity: h.Decimal("quantity")})
			}
			if seen[acct.Product] && acct.Product != "" {
				v.Add(validate.ValueError(a.Loc().With("product"), string(acct.Product), "one account per product"))
			}
			seen[acct.Product] = true
			r.Accounts = append(r.Accounts, acct)
		}
		u := simulator.NewUser(inst, r, s.clock.Now())
		if err := v.Err(); err != nil {
			return err
		}
		if err := s.deps.Tenants.CreateUser(c.Request().Context(), u); err != nil {
			return err
		}
		return s.jsonOK(c, http.StatusCreated, response{PlatformID: u.PlatformID, UserAccountID: u.UserAccountID, InstitutionID: u.InstitutionID})
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

func (s *Server) handleGetUser() echo.HandlerFunc {
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
		u, err := s.deps.Tenants.User(c.Request().Context(), c.Param("platform_id"))
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
		return s.jsonOK(c, http.StatusOK, out)
	}
}

func (s *Server) handleKYC() echo.HandlerFunc {
	type response struct {
		accountJSON
		EventID string `json:"event_id,omitempty"`
	}
	return func(c echo.Context) error {
		v := validate.New()
		pid := v.PathStr("platform_id", c.Param("platform_id"))
		b, err := s.body(c, v)
		if err != nil {
			return err
		}
		p := b.Enum("product", products...)
		st := b.Enum("status", kycValues...)
		if err := v.Err(); err != nil {
			return err
		}
		ctx := c.Request().Context()
		a, ev, err := s.deps.Trading.TransitionKYC(ctx, pid, simulator.Product(p), simulator.KYCStatus(st))
		if err != nil {
			return err
		}
		u, err := s.deps.Tenants.User(ctx, pid)
		if err != nil {
			return err
		}
		in, err := s.institutionPrices(ctx, u.InstitutionID)
		if err != nil {
			return err
		}
		out := response{accountJSON: accountJSON{Product: a.Product, CurrentMarketValue: simulator.FormatMoney(a.MarketValue(in)), KYCStatus: a.KYCStatus}}
		if a.ShowsApprovedAt() {
			out.KYCApprovedAt = simulator.FormatTime(*a.KYCApprovedAt)
		}
		if ev != nil {
			out.EventID = ev.ID
		}
		return s.jsonOK(c, http.StatusOK, out)
	}
}

func (s *Server) institutionPrices(ctx context.Context, instID string) (map[string]decimal.Decimal, error) {
	in, err := s.deps.Institution(ctx, instID)
	if err != nil {
		return nil, err
	}
	return in.Prices, nil
}

func (s *Server) handlePlaceOrder() echo.HandlerFunc {
	type response struct {
		OrderID       string `json:"order_id"`
		TransactionID string `json:"transaction_id"`
		Status        string `json:"status"`
	}
	return func(c echo.Context) error {
		v := validate.New()
		b, err := s.body(c, v)
		if err != nil {
			return err
		}
		r := simulator.OrderRequest{}
		r.PlatformID = b.Str("platform_id")
		r.Product = simulator.Product(b.Enum("product", products...))
		r.Side = simulator.Side(b.Enum("side", sides...))
		r.Symbol = b.Str("symbol")
		r.Notional = optDecimalPtr(b, "notional")
		r.Quantity = optDecimalPtr(b, "quantity")
		r.RecurringOrderID = optStr(b, "recurring_order_id", "")
		if b.OK() && (r.Notional == nil) == (r.Quantity == nil) {
			v.Add(validate.ValueError(b.Loc(), b.Raw(), "give exactly one of notional or quantity"))
		} else if r.Notional != nil && !r.Notional.IsPositive() || r.Quantity != nil && !r.Quantity.IsPositive() {
			v.Add(validate.ValueError(b.Loc(), b.Raw(), "notional or quantity must be positive"))
		}
		if err := v.Err(); err != nil {
			return err
		}
		t, orders, err := s.deps.Trading.PlaceOrder(c.Request().Context(), r)
		if err != nil {
			return err
		}
		return s.jsonOK(c, http.StatusCreated, response{OrderID: orders[0].ID, TransactionID: t.ID, Status: string(t.Status)})
	}
}

type controlTransactionJSON struct {
	transactionJSON
	InstitutionID string `json:"institution_id"`
	PlatformID    string `json:"platform_id"`
	Amount        string `json:"amount,omitempty"`
	EventID       string `json:"event_id,omitempty"`
}

func renderControlTransaction(t *simulator.Transaction, orders []*simulator.Order, ev *simulator.Event) controlTransactionJSON {
	out := controlTransactionJSON{transactionJSON: renderTransaction(t, orders), InstitutionID: t.InstitutionID, PlatformID: t.PlatformID}
	if !t.Amount.IsZero() {
		out.Amount = simulator.FormatMoney(t.Amount)
	}
	if ev != nil {
		out.EventID = ev.ID
	}
	return out
}

func (s *Server) handlePlaceTransaction() echo.HandlerFunc {
	return func(c echo.Context) error {
		v := validate.New()
		b, err := s.body(c, v)
		if err != nil {
			return err
		}
		pid := b.Str("platform_id")
		b.Enum("product", string(simulator.ProductRobo))
		typ := b.Enum("type", string(simulator.TxnDeposit), string(simulator.TxnWithdrawal), string(simulator.TxnRebalance))
		amount := optDecimal(b, "amount", decimal.Zero)
		if err := v.Err(); err != nil {
			return err
		}
		t, orders, err := s.deps.Trading.PlaceRobo(c.Request().Context(), pid, simulator.TransactionType(typ), amount)
		if err != nil {
			return err
		}
		return s.jsonOK(c, http.StatusCreated, renderControlTransaction(t, orders, nil))
	}
}

func (s *Server) handleFill() echo.HandlerFunc {
	return func(c echo.Context) error {
		v := validate.New()
		id := v.PathStr("transaction_id", c.Param("transaction_id"))
		raw, err := s.readBody(c)
		if err != nil {
			return err
		}
		prices := map[string]decimal.Decimal{}
		if len(raw) > 0 {
			b := v.Body(c.Request().Header.Get(echo.HeaderContentType), raw)
			switch f := b.Field("price"); f.Kind() {
			case validate.KindAbsent, validate.KindNull:
			case validate.KindObject:
				prices = f.DecimalMap()
			default:
				p := f.Decimal()
				if err := v.Err(); err != nil {
					return err
				}
				_, orders, err := s.deps.Trading.TransactionAny(c.Request().Context(), id)
				if err != nil {
					return err
				}
				if len(orders) != 1 {
					v.Add(validate.ValueError(f.Loc(), f.Raw(), `a single price fills only a one-order transaction; give {"SYMBOL": price} for each leg`))
				} else {
					prices[orders[0].Symbol] = p
				}
			}
		}
		if err := v.Err(); err != nil {
			return err
		}
		t, orders, ev, err := s.deps.Trading.FillTransaction(c.Request().Context(), id, prices)
		if err != nil {
			return err
		}
		return s.jsonOK(c, http.StatusOK, renderControlTransaction(t, orders, ev))
	}
}

func (s *Server) handleEndTransaction(to simulator.OrderStatus) echo.HandlerFunc {
	return func(c echo.Context) error {
		t, orders, err := s.deps.Trading.EndTransaction(c.Request().Context(), c.Param("transaction_id"), to)
		if err != nil {
			return err
		}
		return s.jsonOK(c, http.StatusOK, renderControlTransaction(t, orders, nil))
	}
}

func (s *Server) handleGetTransactionAny() echo.HandlerFunc {
	return func(c echo.Context) error {
		t, orders, err := s.deps.Trading.TransactionAny(c.Request().Context(), c.Param("transaction_id"))
		if err != nil {
			return err
		}
		return s.jsonOK(c, http.StatusOK, renderControlTransaction(t, orders, nil))
	}
}

func (s *Server) handleSetPrices() echo.HandlerFunc {
	return func(c echo.Context) error {
		v := validate.New()
		inst := v.PathStr("institution_id", c.Param("institution_id"))
		raw, err := s.readBody(c)
		if err != nil {
			return err
		}
		prices := v.BodyValue(c.Request().Header.Get(echo.HeaderContentType), raw).DecimalMap()
		if err := v.Err(); err != nil {
			return err
		}
		out, err := s.deps.Tenants.SetPrices(c.Request().Context(), inst, prices)
		if err != nil {
			return err
		}
		rendered := make(map[string]string, len(out))
		for k, p := range out {
			rendered[k] = formatPrice(p)
		}
		return s.jsonOK(c, http.StatusOK, rendered)
	}
}
