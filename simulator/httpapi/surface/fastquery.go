package surface

import (
	"cmp"
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

// The slots every list shares: the paging parameters, user_account_id and product.
const (
	slotPerPage = iota
	slotOffset
	slotSortOrder
	slotID
	slotProduct
	slotFilters // the list's own parameters start here
)

var sharedNames = []string{"per_page", "last_record_number", "sort_order", "user_account_id", "product"}

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
func (q *fastQuery) page() (limit, offset int, desc bool, ok bool) {
	limit = 25
	if v, sent := q.value(slotPerPage); sent {
		if limit, ok = plainInt(v); !ok || limit < 1 || limit > 100 {
			return 0, 0, false, false
		}
	}
	if v, sent := q.value(slotOffset); sent {
		if offset, ok = plainInt(v); !ok {
			return 0, 0, false, false
		}
	}
	order, ok := q.choice(slotSortOrder, sortOrders)
	return limit, offset, order != "asc", ok
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

// targets are what an accepted query's cursor and its filter's optional fields point at: one
// allocation a query.
type targets struct {
	cursor        big.Int
	offset        [1]big.Word // the cursor's digits, when one word holds them
	userAccountID string
	product       simulator.Product
	side          simulator.Side
	status        simulator.OrderStatus
	start, end    time.Time
}

// shared is what both lists read alike: paging, user_account_id and product.
type shared struct {
	limit, offset int
	desc          bool
	userAccountID *string
	product       *simulator.Product
	t             *targets
}

// read scans raw for names (sharedNames first) and reads the parameters both lists share; ok
// is false when the fast path declines.
func (q *fastQuery) read(raw string, names []string) (s shared, ok bool) {
	if !q.scan(raw, names) {
		return s, false
	}
	if s.limit, s.offset, s.desc, ok = q.page(); !ok {
		return s, false
	}
	t := new(targets)
	s.t = t
	if w := big.Word(s.offset); uint64(w) == uint64(s.offset) {
		t.offset[0] = w
		t.cursor.SetBits(t.offset[:]) // the cursor's digits are t's own
	} else { // a word of 32 bits
		t.cursor.SetInt64(int64(s.offset))
	}
	if id, sent := q.value(slotID); sent {
		t.userAccountID = id
		s.userAccountID = &t.userAccountID
	}
	product, ok := q.choice(slotProduct, Products)
	if product != "" {
		t.product = simulator.Product(product)
		s.product = &t.product
	}
	return s, ok
}

// window reads a time window's two parameters into t; ok is false when either is invalid.
func (q *fastQuery) window(startSlot, endSlot int, t *targets) (start, end *time.Time, ok bool) {
	from, hasStart, ok1 := q.time(startSlot)
	to, hasEnd, ok2 := q.time(endSlot)
	t.start, t.end = from, to
	return pick(hasStart, &t.start), pick(hasEnd, &t.end), ok1 && ok2
}

// userNames are Get User List's parameters by slot.
var userNames = append(slices.Clone(sharedNames), "created_at_start", "created_at_end", "sort_key",
	string(kycFilters[0])+"_kyc_status", string(kycFilters[1])+"_kyc_status", string(kycFilters[2])+"_kyc_status", string(kycFilters[3])+"_kyc_status")

const (
	userSlotStart = slotFilters + iota
	userSlotEnd
	userSlotSortKey
	userSlotKYC // one a product of kycFilters, in its order
)

var userSortKeys = []string{"created_at", "user_account_id"}

// fastList reads raw for a list of names (sharedNames first): what the lists share, then the
// list's own parameters with own; ok is false when either declines. own takes the query and
// what was read by value: through a pointer both would escape to the heap.
func fastList[F any](raw string, names []string, own func(q fastQuery, s shared) (F, bool)) (f F, cursor *big.Int, ok bool) {
	var q fastQuery
	s, ok := q.read(raw, names)
	if !ok {
		return f, nil, false
	}
	if f, ok = own(q, s); !ok {
		return f, nil, false
	}
	return f, &s.t.cursor, true
}

// fastUserList reads Get User List's query as UserListQuery does, or declines (false).
func fastUserList(raw string) (simulator.UserFilter, *big.Int, bool) {
	return fastList(raw, userNames, userFilter)
}

// userFilter reads Get User List's own parameters onto what both lists share.
func userFilter(q fastQuery, s shared) (f simulator.UserFilter, ok bool) {
	f.Limit, f.Offset, f.Desc, f.UserAccountID, f.Product = s.limit, s.offset, s.desc, s.userAccountID, s.product
	for i, p := range kycFilters {
		st, valid := q.choice(userSlotKYC+i, KYCStatuses)
		if !valid {
			return f, false
		}
		if st != "" {
			if f.KYC == nil {
				f.KYC = map[simulator.Product]simulator.KYCStatus{}
			}
			f.KYC[p] = simulator.KYCStatus(st)
		}
	}
	f.CreatedStart, f.CreatedEnd, ok = q.window(userSlotStart, userSlotEnd, s.t)
	key, valid := q.choice(userSlotSortKey, userSortKeys)
	f.SortKey = simulator.UserSortKey(cmp.Or(key, "created_at"))
	return f, ok && valid
}

// pick is to when sent, else nil.
func pick(sent bool, to *time.Time) *time.Time {
	if !sent {
		return nil
	}
	return to
}

// orderNames are Get Order List's parameters by slot.
var orderNames = append(slices.Clone(sharedNames), "side", "status", "placed_at_start", "placed_at_end")

const (
	orderSlotSide = slotFilters + iota
	orderSlotStatus
	orderSlotStart
	orderSlotEnd
)

// fastOrderList reads Get Order List's query as OrderListQuery does, or declines (false).
func fastOrderList(raw string) (simulator.OrderFilter, *big.Int, bool) {
	return fastList(raw, orderNames, orderFilter)
}

// orderFilter reads Get Order List's own parameters onto what both lists share.
func orderFilter(q fastQuery, s shared) (f simulator.OrderFilter, ok bool) {
	f.Limit, f.Offset, f.Desc, f.UserAccountID, f.Product = s.limit, s.offset, s.desc, s.userAccountID, s.product
	side, ok1 := q.choice(orderSlotSide, Sides)
	status, ok2 := q.choice(orderSlotStatus, OrderStatuses)
	s.t.side, s.t.status = simulator.Side(side), simulator.OrderStatus(status)
	f.Side, f.Status = pickStr(side, &s.t.side), pickStr(status, &s.t.status)
	f.PlacedStart, f.PlacedEnd, ok = q.window(orderSlotStart, orderSlotEnd, s.t)
	return f, ok && ok1 && ok2
}

// pickStr is to when s is set, else nil.
func pickStr[T ~string](s string, to *T) *T {
	if s == "" {
		return nil
	}
	return to
}
