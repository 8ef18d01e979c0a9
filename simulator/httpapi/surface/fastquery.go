package surface

import (
	"math/big"
	"slices"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/partnersim/partnersim/simulator"
	"github.com/partnersim/partnersim/simulator/validate"
)

// The lists' fast path. A partner's list request sends a few well-formed parameters; reading
// them the general way (ParseQuery's map, a collector, a Value and a boxed string a parameter)
// cost some thirty allocations a page. fastQuery reads such a query in one pass over the raw
// string and declines anything it does not fully handle — a name that needs decoding, a value
// that is not plainly valid (every error, every odd form): the general parser then answers, so
// whenever the fast path accepts a query, ParseList would have read the same filter and cursor
// without error (decisions D19; the fast and general paths are held together by a table test
// and a fuzz test).

// fastQuery holds the last value (undecoded) a query gives each name of a list's, by slot, as
// ParseQuery and the collector's lookup keep it.
type fastQuery struct {
	vals [16]string
	sent uint16
}

// The slots every list shares: the paging parameters.
const (
	slotPerPage = iota
	slotOffset
	slotSortOrder
	slotFilters // the list's own parameters start here
)

var pageNames = []string{"per_page", "last_record_number", "sort_order"}

// scan reads raw as ParseQuery does (fields split on '&', empty ones skipped, a field without
// '=' an empty value) keeping the last value of each of names; it declines (false) a field
// whose name needs decoding, which only the general parser can name.
func (q *fastQuery) scan(raw string, names []string) bool {
	for rest := raw; rest != ""; {
		var field string
		field, rest, _ = strings.Cut(rest, "&")
		name, value, _ := strings.Cut(field, "=")
		if !plainName(name) {
			return false
		}
		if i := slices.Index(names, name); i >= 0 {
			q.vals[i] = value
			q.sent |= 1 << i
		}
	}
	return true
}

// plainName reports whether a field's name is ASCII with no '+' or '%': what ParseQuery
// decodes it to is itself.
func plainName(s string) bool {
	for i := 0; i < len(s); i++ {
		if c := s[i]; c >= utf8.RuneSelf || c == '+' || c == '%' {
			return false
		}
	}
	return true
}

// value is the decoded value of slot i, and whether it was sent.
func (q *fastQuery) value(i int) (string, bool) {
	if q.sent&(1<<i) == 0 {
		return "", false
	}
	return validate.UnquoteQuery(q.vals[i]), true
}

// choice is slot i's value when it is one of values ("" when not sent); ok is false when it
// was sent as anything else.
func (q *fastQuery) choice(i int, values []string) (s string, ok bool) {
	v, sent := q.value(i)
	if !sent {
		return "", true
	}
	return v, slices.Contains(values, v)
}

// time is slot i's datetime and whether it was sent; ok is false when it was sent invalid.
func (q *fastQuery) time(i int) (t time.Time, sent, ok bool) {
	v, sent := q.value(i)
	if !sent {
		return t, false, true
	}
	t, ok = validate.QueryDateTime(v)
	return t, true, ok
}

// page reads the paging parameters as pageParams does, declining any per_page or
// last_record_number but plain digits (at most 18, no leading zero) within their bounds.
func (q *fastQuery) page() (limit, offset int, cursor *big.Int, desc bool, ok bool) {
	limit = 25
	if v, sent := q.value(slotPerPage); sent {
		if limit, ok = plainInt(v); !ok || limit < 1 || limit > 100 {
			return 0, 0, nil, false, false
		}
	}
	if v, sent := q.value(slotOffset); sent {
		if offset, ok = plainInt(v); !ok {
			return 0, 0, nil, false, false
		}
	}
	order, ok := q.choice(slotSortOrder, sortOrders)
	return limit, offset, big.NewInt(int64(offset)), order != "asc", ok
}

// plainInt is s as an int when it is 1 to 18 digits without a leading zero (or "0").
func plainInt(s string) (int, bool) {
	if s == "" || len(s) > 18 || s[0] == '0' && len(s) > 1 {
		return 0, false
	}
	n := 0
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c < '0' || c > '9' {
			return 0, false
		}
		n = n*10 + int(c-'0')
	}
	return n, true
}

// targets are what a filter's optional fields point at: one allocation a query that sets any.
type targets struct {
	userAccountID string
	product       simulator.Product
	side          simulator.Side
	status        simulator.OrderStatus
	start, end    time.Time
}

// need returns *t, allocating it the first time.
func need(t **targets) *targets {
	if *t == nil {
		*t = new(targets)
	}
	return *t
}

// userNames are Get User List's parameters by slot.
var userNames = append(slices.Clone(pageNames), "user_account_id", "product", "created_at_start", "created_at_end", "sort_key",
	string(kycFilters[0])+"_kyc_status", string(kycFilters[1])+"_kyc_status", string(kycFilters[2])+"_kyc_status", string(kycFilters[3])+"_kyc_status")

const (
	userSlotID = slotFilters + iota
	userSlotProduct
	userSlotStart
	userSlotEnd
	userSlotSortKey
	userSlotKYC // one a product of kycFilters, in its order
)

var userSortKeys = []string{"created_at", "user_account_id"}

// fastUserList reads Get User List's query as UserListQuery does, or declines (false).
func fastUserList(raw string) (f simulator.UserFilter, cursor *big.Int, ok bool) {
	var q fastQuery
	if !q.scan(raw, userNames) {
		return f, nil, false
	}
	if f.Limit, f.Offset, cursor, f.Desc, ok = q.page(); !ok {
		return f, nil, false
	}
	var t *targets
	if s, sent := q.value(userSlotID); sent {
		t = need(&t)
		t.userAccountID = s
		f.UserAccountID = &t.userAccountID
	}
	product, ok1 := q.choice(userSlotProduct, Products)
	if product != "" {
		t = need(&t)
		t.product = simulator.Product(product)
		f.Product = &t.product
	}
	for i, p := range kycFilters {
		st, valid := q.choice(userSlotKYC+i, KYCStatuses)
		if !valid {
			return f, nil, false
		}
		if st != "" {
			if f.KYC == nil {
				f.KYC = map[simulator.Product]simulator.KYCStatus{}
			}
			f.KYC[p] = simulator.KYCStatus(st)
		}
	}
	start, hasStart, ok2 := q.time(userSlotStart)
	end, hasEnd, ok3 := q.time(userSlotEnd)
	if hasStart || hasEnd {
		t = need(&t)
		t.start, t.end = start, end
		f.CreatedStart, f.CreatedEnd = pick(hasStart, &t.start), pick(hasEnd, &t.end)
	}
	key, ok4 := q.choice(userSlotSortKey, userSortKeys)
	f.SortKey = simulator.UserSortKey(cmpOr(key, "created_at"))
	return f, cursor, ok1 && ok2 && ok3 && ok4
}

// pick is to when sent, else nil.
func pick(sent bool, to *time.Time) *time.Time {
	if !sent {
		return nil
	}
	return to
}

// cmpOr is s, or def when s is empty.
func cmpOr(s, def string) string {
	if s == "" {
		return def
	}
	return s
}

// orderNames are Get Order List's parameters by slot.
var orderNames = append(slices.Clone(pageNames), "user_account_id", "product", "side", "status", "placed_at_start", "placed_at_end")

const (
	orderSlotID = slotFilters + iota
	orderSlotProduct
	orderSlotSide
	orderSlotStatus
	orderSlotStart
	orderSlotEnd
)

// fastOrderList reads Get Order List's query as OrderListQuery does, or declines (false).
func fastOrderList(raw string) (f simulator.OrderFilter, cursor *big.Int, ok bool) {
	var q fastQuery
	if !q.scan(raw, orderNames) {
		return f, nil, false
	}
	if f.Limit, f.Offset, cursor, f.Desc, ok = q.page(); !ok {
		return f, nil, false
	}
	var t *targets
	if s, sent := q.value(orderSlotID); sent {
		t = need(&t)
		t.userAccountID = s
		f.UserAccountID = &t.userAccountID
	}
	product, ok1 := q.choice(orderSlotProduct, Products)
	side, ok2 := q.choice(orderSlotSide, Sides)
	status, ok3 := q.choice(orderSlotStatus, OrderStatuses)
	if product != "" || side != "" || status != "" {
		t = need(&t)
		t.product, t.side, t.status = simulator.Product(product), simulator.Side(side), simulator.OrderStatus(status)
		f.Product, f.Side, f.Status = pickStr(product, &t.product), pickStr(side, &t.side), pickStr(status, &t.status)
	}
	start, hasStart, ok4 := q.time(orderSlotStart)
	end, hasEnd, ok5 := q.time(orderSlotEnd)
	if hasStart || hasEnd {
		t = need(&t)
		t.start, t.end = start, end
		f.PlacedStart, f.PlacedEnd = pick(hasStart, &t.start), pick(hasEnd, &t.end)
	}
	return f, cursor, ok1 && ok2 && ok3 && ok4 && ok5
}

// pickStr is to when s is set, else nil.
func pickStr[T ~string](s string, to *T) *T {
	if s == "" {
		return nil
	}
	return to
}
