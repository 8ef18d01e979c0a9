package surface

import (
	"math/big"
	"time"

	"github.com/partnersim/partnersim/simulator"
	"github.com/partnersim/partnersim/simulator/validate"
)

// The enums of the domain as validate wants them (strings), for the queries here and the
// bodies httpapi reads.
var (
	// Products are the accounts' products.
	Products = EnumStrings(simulator.Products)
	// KYCStatuses are the KYC states.
	KYCStatuses = EnumStrings(simulator.KYCStatuses)
	// Sides are an order's sides.
	Sides = EnumStrings(simulator.Sides)
	// OrderStatuses are an order's states.
	OrderStatuses = EnumStrings(simulator.OrderStatuses)
	sortOrders    = []string{"asc", "desc"}
)

// EnumStrings returns a domain enum's values as strings.
func EnumStrings[T ~string](vs []T) []string {
	out := make([]string, len(vs))
	for i, v := range vs {
		out[i] = string(v)
	}
	return out
}

// kycFilters are the KYC query parameters in the spec table's order.
var kycFilters = []simulator.Product{simulator.ProductCrypto, simulator.ProductSecurities, simulator.ProductRothIRA, simulator.ProductRobo}

// UserListQuery reads Get User List's filters, paging and sort into a filter and the request's
// cursor, for the API and the control plane's per-institution list alike.
func UserListQuery(q *validate.Params) (f simulator.UserFilter, cursor *big.Int) {
	f.UserAccountID = strParam(q, "user_account_id")
	f.Product = enumParam[simulator.Product](q, "product", Products)
	for _, p := range kycFilters {
		if st := q.Enum(string(p)+"_kyc_status", false, "", KYCStatuses...); st != "" {
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
	f, _, err := ParseUserListQuery(rawQuery)
	return f, err
}

// OrderListQuery reads Get Order List's filters, paging and sort into a filter and the
// request's cursor, for the API and the control plane's per-institution list alike.
func OrderListQuery(q *validate.Params) (f simulator.OrderFilter, cursor *big.Int) {
	f.UserAccountID = strParam(q, "user_account_id")
	f.Product = enumParam[simulator.Product](q, "product", Products)
	f.Side = enumParam[simulator.Side](q, "side", Sides)
	f.Status = enumParam[simulator.OrderStatus](q, "status", OrderStatuses)
	f.PlacedStart = timeParam(q, "placed_at_start")
	f.PlacedEnd = timeParam(q, "placed_at_end")
	f.Limit, f.Offset, cursor, f.Desc = pageParams(q)
	return f, cursor
}

// ParseOrderList reads Get Order List's query string (the API's own validation) into a filter.
func ParseOrderList(rawQuery string) (simulator.OrderFilter, error) {
	f, _, err := ParseOrderListQuery(rawQuery)
	return f, err
}

// DeliveryFilterQuery reads the delivery log's query (GET /_sandbox/deliveries) into a filter,
// recording what is wrong in v; the QA console reads its filters with it too.
func DeliveryFilterQuery(v *validate.Collector, q *validate.Params) simulator.DeliveryFilter {
	var f simulator.DeliveryFilter
	f.InstitutionID, _ = q.Str("institution_id")
	f.SubscriptionID, _ = q.Str("subscription_id")
	f.EventID, _ = q.Str("event_id")
	f.PlatformID, _ = q.Str("platform_id")
	f.EventType = simulator.EventType(q.Enum("event_type", false, "", string(simulator.EventKYC), string(simulator.EventTransaction)))
	f.Status = q.Enum("status", false, "", simulator.DeliveryPending, simulator.DeliveryDelivered, simulator.DeliveryFailed)
	f.CreatedStart = timeParam(q, "created_at_start")
	f.CreatedEnd = timeParam(q, "created_at_end")
	if c, ok := q.Str("cursor"); ok {
		if _, _, valid := simulator.ParseDeliveryCursor(c); !valid {
			v.Add(validate.ValueError(validate.Loc{"query", "cursor"}, c, "pass the next_cursor of an earlier page"))
		}
		f.Cursor = c
	}
	f.Limit = q.Int("limit", 100, validate.Ge(1), validate.Le(MaxDeliveryPage))
	return f
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

// Optional query filters, as the domain's filters hold them: nil when the parameter is absent.

func strParam(q *validate.Params, name string) *string {
	if s, ok := q.Str(name); ok {
		return &s
	}
	return nil
}

func enumParam[T ~string](q *validate.Params, name string, values []string) *T {
	if s := q.Enum(name, false, "", values...); s != "" {
		v := T(s)
		return &v
	}
	return nil
}

func timeParam(q *validate.Params, name string) *time.Time {
	if t, ok := q.DateTime(name); ok {
		return &t
	}
	return nil
}

// ParseList reads a list's query string with query (the list's filters, paging and sort)
// into its filter and the request's cursor; the error is every validation error (422).
func ParseList[F any](rawQuery string, query func(*validate.Params) (F, *big.Int)) (F, *big.Int, error) {
	v := validate.New()
	f, cursor := query(v.Query(validate.ParseQuery(rawQuery)))
	return f, cursor, v.Err()
}

// ParseUserListQuery reads Get User List's raw query into its filter and cursor: a common
// well-formed query in one pass, anything else through ParseList (the same answer, errors and
// odd forms included).
func ParseUserListQuery(rawQuery string) (simulator.UserFilter, *big.Int, error) {
	if f, cursor, ok := fastUserList(rawQuery); ok {
		return f, cursor, nil
	}
	return ParseList(rawQuery, UserListQuery)
}

// ParseOrderListQuery is ParseUserListQuery for Get Order List.
func ParseOrderListQuery(rawQuery string) (simulator.OrderFilter, *big.Int, error) {
	if f, cursor, ok := fastOrderList(rawQuery); ok {
		return f, cursor, nil
	}
	return ParseList(rawQuery, OrderListQuery)
}
