package httpapi

import (
	"bytes"
	"encoding/json"
	"math/big"
	"time"

	"github.com/shopspring/decimal"

	"partnersim/simulator"
	"partnersim/simulator/validate"
)

// The response shapes of spec §2, fields in the spec's order.

type accountJSON struct {
	Product            simulator.Product   `json:"product"`
	CurrentMarketValue string              `json:"current_market_value"`
	KYCStatus          simulator.KYCStatus `json:"kyc_status"`
	KYCApprovedAt      string              `json:"kyc_approved_at,omitempty"`
}

type userItemJSON struct {
	UserAccountID           string        `json:"user_account_id"`
	TotalCurrentMarketValue string        `json:"total_current_market_value"`
	Accounts                []accountJSON `json:"accounts"`
}

type pointJSON struct {
	AsOf      string `json:"as_of"`
	CostBasis string `json:"cost_basis"`
	Value     string `json:"value"`
}

type identityJSON struct {
	ID   string `json:"id"`
	Type string `json:"type"`
}

type identitiesJSON struct {
	CoreIDs                []identityJSON `json:"core_ids"`
	DBPIDs                 []identityJSON `json:"dbp_ids"`
	PlatformUserIdentifier string         `json:"platform_user_identifier"`
}

type termsJSON struct {
	AcceptedAt string `json:"accepted_at"`
	Version    string `json:"version"`
}

type orderJSON struct {
	OrderID          string                `json:"order_id"`
	UserAccountID    string                `json:"user_account_id"`
	Product          simulator.Product     `json:"product"`
	Side             simulator.Side        `json:"side"`
	Symbol           string                `json:"symbol"`
	Quantity         string                `json:"quantity"`
	Notional         string                `json:"notional"`
	Fee              string                `json:"fee"`
	Status           simulator.OrderStatus `json:"status"`
	PlacedAt         string                `json:"placed_at"`
	CompletedAt      string                `json:"completed_at,omitempty"`
	IsRecurringOrder bool                  `json:"is_recurring_order"`
	RecurringOrderID string                `json:"recurring_order_id,omitempty"`
}

type transactionJSON struct {
	TransactionID string                    `json:"transaction_id"`
	UserAccountID string                    `json:"user_account_id"`
	Product       simulator.Product         `json:"product"`
	Type          simulator.TransactionType `json:"type"`
	Status        simulator.OrderStatus     `json:"status"`
	CreatedAt     string                    `json:"created_at"`
	CompletedAt   string                    `json:"completed_at,omitempty"`
	Orders        []orderJSON               `json:"orders"`
}

// formatPrice renders a price as money is rendered, with two decimals at least
// ("64000.00"), keeping any finer precision it was given ("3120.12345").
func formatPrice(p decimal.Decimal) string {
	if p.Exponent() < -2 {
		return p.String()
	}
	return p.StringFixed(2)
}

// pageParams reads the pagination parameters both lists share, in the spec tables' order
// (decisions D6): per_page (1–100, default 25), last_record_number (an offset, exact beyond
// int64 for the answer) and sort_order (default desc).
func pageParams(q *validate.Params) (limit, offset int, cursor *big.Int, desc bool) {
	limit = q.Int("per_page", 25, validate.Ge(1), validate.Le(100))
	offset, cursor = q.BigInt("last_record_number", 0, validate.Ge(0))
	desc = q.Enum("sort_order", false, "desc", sortOrders...) == "desc"
	return limit, offset, cursor, desc
}

// nextCursor is the response's last_record_number: the request's cursor plus the page's
// length, exact beyond int64 as Python's ints are (decisions D6).
func nextCursor(cursor *big.Int, n int) json.Number {
	return json.Number(new(big.Int).Add(cursor, big.NewInt(int64(n))).String())
}

type pageJSON[T any] struct {
	Items            []T         `json:"items"`
	TotalRecords     int         `json:"total_records"`
	LastRecordNumber json.Number `json:"last_record_number"`
	PerPage          int         `json:"per_page"`
}

func renderAccounts(u *simulator.User, prices map[string]decimal.Decimal) ([]accountJSON, string) {
	out := make([]accountJSON, 0, len(u.Accounts))
	total := decimal.Zero
	for i := range u.Accounts {
		a := &u.Accounts[i]
		v := a.MarketValue(prices)
		total = total.Add(v)
		aj := accountJSON{Product: a.Product, CurrentMarketValue: simulator.FormatMoney(v), KYCStatus: a.KYCStatus}
		if a.ShowsApprovedAt() {
			aj.KYCApprovedAt = simulator.FormatTime(*a.KYCApprovedAt)
		}
		out = append(out, aj)
	}
	return out, simulator.FormatMoney(total)
}

func renderUserItem(u *simulator.User, prices map[string]decimal.Decimal) userItemJSON {
	accts, total := renderAccounts(u, prices)
	return userItemJSON{UserAccountID: u.UserAccountID, TotalCurrentMarketValue: total, Accounts: accts}
}

// appendPoints appends a series as the encoder would render []pointJSON (the test
// TestRenderPointsMatchesEncoder holds the two together).
func appendPoints(b []byte, ps []simulator.ValuePoint) []byte {
	b = append(b, '[')
	for i, p := range ps {
		if i > 0 {
			b = append(b, ',')
		}
		b = append(b, `{"as_of":"`...)
		b = p.AsOf.UTC().AppendFormat(b, time.RFC3339Nano)
		b = append(b, `","cost_basis":"`...)
		b = p.CostBasis.AppendTo(b)
		b = append(b, `","value":"`...)
		b = p.Value.AppendTo(b)
		b = append(b, `"}`...)
	}
	return append(b, ']')
}

func renderIdentities(refs []simulator.IdentityRef) []identityJSON {
	out := make([]identityJSON, 0, len(refs))
	for _, r := range refs {
		out = append(out, identityJSON{ID: r.ID, Type: r.Type})
	}
	return out
}

// renderUserDetail renders Get User Detail's body (spec §2.3, fields in the spec's order). The
// history's ~130 points are appended by hand: through encoding/json a pre-rendered
// json.RawMessage is re-validated and compacted, which was the endpoint's largest cost.
func renderUserDetail(v *simulator.UserView, clock *simulator.Clock) ([]byte, error) {
	u := v.User
	accts, total := renderAccounts(u, v.Prices)
	h := u.History
	if h == nil {
		g := simulator.GenerateHistory(u, v.Prices, clock.Now())
		h = &g
	}
	head, err := marshal(userItemJSON{UserAccountID: u.UserAccountID, TotalCurrentMarketValue: total, Accounts: accts})
	if err != nil {
		return nil, err
	}
	ids, err := marshal(identitiesJSON{CoreIDs: renderIdentities(v.CoreIDs), DBPIDs: renderIdentities(v.DBPIDs), PlatformUserIdentifier: u.PlatformID})
	if err != nil {
		return nil, err
	}
	terms, err := marshal(termsJSON{AcceptedAt: simulator.FormatTime(u.Terms.AcceptedAt), Version: u.Terms.Version})
	if err != nil {
		return nil, err
	}
	b := make([]byte, 0, len(head)+len(ids)+len(terms)+14000)
	b = append(b, head[:len(head)-1]...) // without its closing brace
	b = append(b, `,"historical_market_value":{"all_time":`...)
	b = appendPoints(b, h.AllTime)
	b = append(b, `,"past_day":`...)
	b = appendPoints(b, h.PastDay)
	b = append(b, `,"past_week":`...)
	b = appendPoints(b, h.PastWeek)
	b = append(b, `,"past_month":`...)
	b = appendPoints(b, h.PastMonth)
	b = append(b, `,"past_year":`...)
	b = appendPoints(b, h.PastYear)
	b = append(b, `},"identities":`...)
	b = append(b, ids...)
	b = append(b, `,"terms_and_conditions":`...)
	b = append(b, terms...)
	return append(b, '}'), nil
}

// marshal encodes v compactly without HTML escaping, as Starlette's JSONResponse does.
func marshal(v any) ([]byte, error) {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return nil, err
	}
	return bytes.TrimSuffix(buf.Bytes(), []byte("\n")), nil
}

func renderOrder(o *simulator.Order) orderJSON {
	oj := orderJSON{OrderID: o.ID, UserAccountID: o.UserAccountID, Product: o.Product, Side: o.Side, Symbol: o.Symbol,
		Quantity: simulator.FormatQuantity(o.Quantity), Notional: simulator.FormatMoney(o.Notional), Fee: simulator.FormatMoney(o.Fee),
		Status: o.Status, PlacedAt: simulator.FormatTime(o.PlacedAt), IsRecurringOrder: o.IsRecurringOrder}
	if o.Status == simulator.OrderCompleted && o.CompletedAt != nil {
		oj.CompletedAt = simulator.FormatTime(*o.CompletedAt)
	}
	if o.IsRecurringOrder {
		oj.RecurringOrderID = o.RecurringOrderID
	}
	return oj
}

func renderTransaction(t *simulator.Transaction, orders []*simulator.Order) transactionJSON {
	tj := transactionJSON{TransactionID: t.ID, UserAccountID: t.UserAccountID, Product: t.Product, Type: t.Type,
		Status: t.Status, CreatedAt: simulator.FormatTime(t.CreatedAt), Orders: make([]orderJSON, 0, len(orders))}
	if t.Status == simulator.OrderCompleted && t.CompletedAt != nil {
		tj.CompletedAt = simulator.FormatTime(*t.CompletedAt)
	}
	for _, o := range orders {
		tj.Orders = append(tj.Orders, renderOrder(o))
	}
	return tj
}
