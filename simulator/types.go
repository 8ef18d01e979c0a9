package simulator

import (
	"encoding/json"
	"slices"
	"time"

	"github.com/shopspring/decimal"
)

// Institution is a financial institution: a tenant. Everything else belongs to exactly one.
type Institution struct {
	ID        string    `json:"institution_id"`
	Name      string    `json:"name"`
	Vendors   Vendors   `json:"vendors"`
	CreatedAt time.Time `json:"created_at"`
	// Prices and Fees start from the fixtures' defaults and are the institution's own.
	Prices map[string]decimal.Decimal `json:"prices"`
	Fees   map[Product]FeeRule        `json:"fees"`
}

// Vendors names the institution's banking-core and digital-banking vendors; nil means not
// configured (decisions D5).
type Vendors struct {
	Core *string `json:"core"`
	DBP  *string `json:"dbp"`
}

// Vendor returns the vendor configured for an id type, and whether one is. `platform` ids
// need no vendor.
func (v Vendors) Vendor(t IDType) (string, bool) {
	switch t {
	case IDCore:
		if v.Core != nil {
			return *v.Core, true
		}
	case IDDBP:
		if v.DBP != nil {
			return *v.DBP, true
		}
	case IDPlatform:
		return "", true
	}
	return "", false
}

// FeeRule is a per-product fee schedule: Rate × notional, at least Minimum, rounded half-even
// to cents.
type FeeRule struct {
	Rate    decimal.Decimal `json:"rate"`
	Minimum decimal.Decimal `json:"minimum"`
}

// Fee returns the fee for a notional amount.
func (r FeeRule) Fee(notional decimal.Decimal) decimal.Decimal {
	f := notional.Abs().Mul(r.Rate).RoundBank(2)
	if f.LessThan(r.Minimum) {
		f = r.Minimum
	}
	return f
}

// MaxNotionalWithin returns the largest notional (in cents) whose cost including its fee is at
// most budget; zero when even the fee does not fit.
func (r FeeRule) MaxNotionalWithin(budget decimal.Decimal) decimal.Decimal {
	cent := decimal.New(1, -2)
	n := budget.Div(decimal.NewFromInt(1).Add(r.Rate)).RoundDown(2)
	if m := budget.Sub(r.Minimum); n.GreaterThan(m) && r.Fee(n).Equal(r.Minimum) {
		n = m
	}
	for n.IsPositive() && n.Add(r.Fee(n)).GreaterThan(budget) {
		n = n.Sub(cent)
	}
	if !n.IsPositive() {
		return decimal.Zero
	}
	return n
}

// MinNotionalYielding returns the smallest notional (in cents) whose proceeds after its fee
// are at least target.
func (r FeeRule) MinNotionalYielding(target decimal.Decimal) decimal.Decimal {
	cent := decimal.New(1, -2)
	one := decimal.NewFromInt(1)
	n := target
	if r.Rate.LessThan(one) {
		n = target.Div(one.Sub(r.Rate)).RoundUp(2)
	}
	if m := target.Add(r.Minimum); r.Fee(n).Equal(r.Minimum) && n.LessThan(m) {
		n = m
	}
	for n.Sub(r.Fee(n)).LessThan(target) {
		n = n.Add(cent)
	}
	for n.Sub(cent).Sub(r.Fee(n.Sub(cent))).GreaterThanOrEqual(target) && n.Sub(cent).IsPositive() {
		n = n.Sub(cent)
	}
	return n
}

// APIKey is a partner key. Only the SHA-256 hash of its plaintext is stored (decisions D3).
type APIKey struct {
	ID            string     `json:"key_id"`
	InstitutionID string     `json:"institution_id"`
	Hash          string     `json:"hash"`
	Prefix        string     `json:"prefix"`          // the first characters, for display only
	Last4         string     `json:"last4,omitempty"` // the last characters, for display only
	Scopes        []Scope    `json:"scopes"`
	Description   string     `json:"description,omitempty"`
	CreatedAt     time.Time  `json:"created_at"`
	RevokedAt     *time.Time `json:"revoked_at,omitempty"`
}

// HasScope reports whether the key carries scope s.
func (k *APIKey) HasScope(s Scope) bool { return slices.Contains(k.Scopes, s) }

// Member is a banking-core customer (decisions D5): one core id, optionally one dbp id, and the
// platform user ids of the accounts it names (some may have no user record).
type Member struct {
	InstitutionID string    `json:"institution_id"`
	CoreID        string    `json:"core_id"`
	CoreIDType    string    `json:"core_id_type"` // member_number or cif
	DBPID         *string   `json:"dbp_id"`
	UserIDs       []string  `json:"user_ids"`
	CreatedAt     time.Time `json:"created_at"`
}

// Member id types of a core id.
const (
	CoreIDMemberNumber = "member_number"
	CoreIDCIF          = "cif"
)

// User is an investing user of an institution.
type User struct {
	PlatformID    string    `json:"platform_id"`
	InstitutionID string    `json:"institution_id"`
	UserAccountID string    `json:"user_account_id"`
	CreatedAt     time.Time `json:"created_at"`
	Terms         Terms     `json:"terms_and_conditions"`
	LiveSessions  int       `json:"live_sessions"`
	Accounts      []Account `json:"accounts"`
	// History, when the fixtures give it, replaces the generated series.
	History *History `json:"historical_market_value,omitempty"`
}

// Account returns the user's account of product p, or nil.
func (u *User) Account(p Product) *Account {
	for i := range u.Accounts {
		if u.Accounts[i].Product == p {
			return &u.Accounts[i]
		}
	}
	return nil
}

// Terms records the user's acceptance of terms and conditions.
type Terms struct {
	AcceptedAt time.Time `json:"accepted_at"`
	Version    string    `json:"version"`
}

// Account is one product account of a user: its KYC state, cash and holdings.
type Account struct {
	Product       Product         `json:"product"`
	KYCStatus     KYCStatus       `json:"kyc_status"`
	KYCApprovedAt *time.Time      `json:"kyc_approved_at,omitempty"`
	Cash          decimal.Decimal `json:"cash"`
	Holdings      []Holding       `json:"holdings"`
	// Portfolio names the model portfolio of a robo account.
	Portfolio string `json:"portfolio,omitempty"`
}

// Holding is a position in one symbol.
type Holding struct {
	Symbol   string          `json:"symbol"`
	Quantity decimal.Decimal `json:"quantity"`
}

// History is the historical market value of a user (spec §2.3).
type History = Periods[ValuePoint]

// Periods is a market-value history's five series of points P, one per period (spec §2.3): a
// History, or the points a fixture states.
type Periods[P any] struct {
	AllTime   []P `json:"all_time"`
	PastDay   []P `json:"past_day"`
	PastWeek  []P `json:"past_week"`
	PastMonth []P `json:"past_month"`
	PastYear  []P `json:"past_year"`
}

// PeriodNames are the periods' JSON names, in the order of Series.
var PeriodNames = [5]string{"all_time", "past_day", "past_week", "past_month", "past_year"}

// Series returns the five series, in the order of PeriodNames.
func (p *Periods[P]) Series() [5]*[]P {
	return [5]*[]P{&p.AllTime, &p.PastDay, &p.PastWeek, &p.PastMonth, &p.PastYear}
}

// ValuePoint is one point of a market-value series. Amounts are whole cents: a series has
// ~140 points per user and is generated on every Get User Detail, so it stays out of
// arbitrary-precision decimals (which allocate per value).
type ValuePoint struct {
	AsOf      time.Time `json:"as_of"`
	CostBasis Cents     `json:"cost_basis"`
	Value     Cents     `json:"value"`
}

// Order is one order; it belongs to exactly one transaction (decisions D7).
type Order struct {
	ID               string          `json:"order_id"`
	InstitutionID    string          `json:"institution_id"`
	TransactionID    string          `json:"transaction_id"`
	PlatformID       string          `json:"platform_id"`
	UserAccountID    string          `json:"user_account_id"`
	Product          Product         `json:"product"`
	Side             Side            `json:"side"`
	Symbol           string          `json:"symbol"`
	Quantity         decimal.Decimal `json:"quantity"`
	Notional         decimal.Decimal `json:"notional"`
	Fee              decimal.Decimal `json:"fee"`
	Status           OrderStatus     `json:"status"`
	PlacedAt         time.Time       `json:"placed_at"`
	CompletedAt      *time.Time      `json:"completed_at,omitempty"`
	IsRecurringOrder bool            `json:"is_recurring_order"`
	RecurringOrderID string          `json:"recurring_order_id,omitempty"`
	// ByNotional marks a dollar order (notional given, quantity set by the fill).
	ByNotional bool `json:"by_notional"`
}

// Transaction groups the orders of one buy, sell, deposit, withdrawal or rebalance.
type Transaction struct {
	ID            string          `json:"transaction_id"`
	InstitutionID string          `json:"institution_id"`
	PlatformID    string          `json:"platform_id"`
	UserAccountID string          `json:"user_account_id"`
	Product       Product         `json:"product"`
	Type          TransactionType `json:"type"`
	Status        OrderStatus     `json:"status"`
	Amount        decimal.Decimal `json:"amount"`
	CreatedAt     time.Time       `json:"created_at"`
	CompletedAt   *time.Time      `json:"completed_at,omitempty"`
	OrderIDs      []string        `json:"order_ids"`
}

// Subscription is a webhook subscription (spec §2.7).
type Subscription struct {
	ID            string     `json:"subscription_id"`
	InstitutionID string     `json:"institution_id"`
	EventType     EventType  `json:"event_type"`
	URL           string     `json:"url"`
	APIVersion    string     `json:"api_version"`
	Enabled       bool       `json:"enabled"`
	CreatedAt     time.Time  `json:"created_at"`
	DeletedAt     *time.Time `json:"deleted_at,omitempty"`
}

// SigningSecrets is an institution's webhook signing secret, with the previous one kept
// during a rotation's overlap window. The window is scheduler state: it is measured on the
// institution's virtual clock (Clock.InstitutionNow), so advancing the clock — every
// institution's or this one's — past it ends it (decisions D8, D9).
type SigningSecrets struct {
	Current  string `json:"current"`
	Previous string `json:"previous,omitempty"`
	// PreviousUntil is the virtual-clock time the overlap ends.
	PreviousUntil time.Time `json:"previous_until,omitempty"`
}

// Rotate makes next the current secret of institution inst; the current one keeps signing
// beside it for overlap on the institution's virtual clock (none when overlap is 0 or there was
// no secret).
func (s *SigningSecrets) Rotate(next string, overlap time.Duration, c *Clock, inst string) {
	if s.Current != "" && overlap > 0 {
		s.Previous, s.PreviousUntil = s.Current, c.InstitutionNow(inst).Add(overlap)
	} else {
		s.Previous, s.PreviousUntil = "", time.Time{}
	}
	s.Current = next
}

// Active returns the secrets that sign a delivery of institution inst now, on its virtual
// clock, newest first.
func (s SigningSecrets) Active(c *Clock, inst string) []string {
	if s.Current == "" {
		return nil
	}
	if s.Previous != "" && c.InstitutionNow(inst).Before(s.PreviousUntil) {
		return []string{s.Current, s.Previous}
	}
	return []string{s.Current}
}

// Event is a webhook event: its identity and the payload data; the body is rendered per API
// version by Body.
type Event struct {
	ID            string    `json:"event_id"`
	InstitutionID string    `json:"institution_id"`
	Type          EventType `json:"event_type"`
	CreatedAt     time.Time `json:"created_at"`
	IsTest        bool      `json:"is_test"`
	Data          EventData `json:"data"`
}

// EventData is the union of the kyc and transaction event data (decisions D8).
type EventData struct {
	UserAccountID string      `json:"user_account_id"`
	PlatformID    string      `json:"platform_id,omitempty"`
	Product       Product     `json:"product"`
	KYCStatus     KYCStatus   `json:"kyc_status,omitempty"`
	TransactionID string      `json:"transaction_id,omitempty"`
	Status        OrderStatus `json:"status,omitempty"`
}

// Delivery states.
const (
	DeliveryPending   = "pending"
	DeliveryDelivered = "delivered"
	DeliveryFailed    = "failed"
)

// Delivery is one event's delivery to one subscription, with every attempt.
type Delivery struct {
	ID             string          `json:"delivery_id"`
	EventID        string          `json:"event_id"`
	SubscriptionID string          `json:"subscription_id"`
	InstitutionID  string          `json:"institution_id"`
	URL            string          `json:"url"`
	Body           json.RawMessage `json:"body"` // the exact bytes sent (JSON, so stored as is)
	Status         string          `json:"status"`
	NextAttemptAt  time.Time       `json:"next_attempt_at"`
	Attempts       []Attempt       `json:"attempts"`
	Error          string          `json:"error,omitempty"`
	CreatedAt      time.Time       `json:"created_at"`
	// EventType and PlatformID say what the event is and whom it is about; the store fills
	// them from its delivery index on the control plane's reads (not kept in the record).
	EventType  EventType `json:"-"`
	PlatformID string    `json:"-"`
}

// Attempt is one HTTP attempt of a delivery. StatusCode is 0 when the callback never answered.
type Attempt struct {
	At time.Time `json:"at"`
	// DueAt is when the attempt was due on its institution's virtual clock (the slot the
	// schedule gave it); At is the wall-clock time it was made. After a clock advance several
	// attempts are made within seconds of wall time, and DueAt shows the schedule.
	DueAt        time.Time `json:"due_at"`
	StatusCode   int       `json:"status_code,omitempty"`
	Error        string    `json:"error,omitempty"`
	LatencyMS    float64   `json:"latency_ms"`
	ResponseBody string    `json:"response_body"`
	// Signature is the X-Partner-Webhook-Signature header the attempt sent (empty when unsigned).
	Signature string `json:"signature,omitempty"`
}

// Portfolio is a robo model portfolio: target weights that sum to 1. Deposits, withdrawals and
// rebalances are split into one leg per symbol by these weights (decisions D7).
type Portfolio struct {
	Name    string   `json:"name"`
	Weights []Weight `json:"weights"`
}

// Weight is one symbol's share of a portfolio.
type Weight struct {
	Symbol string          `json:"symbol"`
	Weight decimal.Decimal `json:"weight"`
}

// AttemptRecord is one attempt's outcome as the dispatcher records it: the delivery, the
// next-attempt slot the attempt was made for, the attempt, and what comes next — delivered
// when OK, rescheduled at Next when non-nil, else failed.
type AttemptRecord struct {
	DeliveryID string
	At         time.Time
	Attempt    Attempt
	OK         bool
	Next       *time.Time
}
