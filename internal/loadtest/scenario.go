package loadtest

import (
	"fmt"
	"math/rand/v2"
	"net/url"
	"strings"
	"time"
)

// Data is what scenarios draw their requests from: the users of the key's institution and the
// extent of its lists. Prepare fills it from the fixture set the target serves and from the API.
type Data struct {
	InstitutionID string `json:"institution_id"`
	// PlatformIDs and UserAccountIDs are the institution's users, index for index.
	PlatformIDs    []string `json:"-"`
	UserAccountIDs []string `json:"-"`
	// Users and Orders are the total_records of the unfiltered lists.
	Users  int `json:"users"`
	Orders int `json:"orders"`
	// CreatedFrom..CreatedTo spans the users' created_at; PlacedFrom..PlacedTo the orders'
	// placed_at.
	CreatedFrom time.Time `json:"created_from"`
	CreatedTo   time.Time `json:"created_to"`
	PlacedFrom  time.Time `json:"placed_from"`
	PlacedTo    time.Time `json:"placed_to"`
}

// Kind is one kind of request in a scenario, drawn with probability Weight/Σweights.
type Kind struct {
	Name   string
	Weight int
	// Next returns the next request's path and query, e.g. "/v1/users/?per_page=25".
	Next func(r *rand.Rand) string
}

// Scenario is a weighted mix of request kinds. Every request is a GET expected to answer 200.
type Scenario struct {
	Name  string
	Kinds []Kind
}

// Pool is a finite sequence of requests drawn from a scenario, which a run walks in order (the
// target's run and the ceiling's alike): the ceiling can then answer each with the target's
// own bytes for it (CapturePool), so a run over many different URLs is compared with a
// ceiling answering those very URLs, not one typical body.
type Pool struct {
	Paths []string
	Kinds []int // Paths[i]'s index in the scenario's Kinds
}

// DefaultPoolSize is how many requests Measure draws into a scenario's pool. A run walks the
// pool in order, so a request comes back only after all the others: with 20,000 that is far
// longer than the store keeps anything it read for one URL (its view cache holds 4,096 and
// starts again when full), so nothing kept for a repeated URL helps the target.
const DefaultPoolSize = 20_000

// Draw draws n requests from the scenario with the seed.
func (s *Scenario) Draw(seed uint64, n int) *Pool {
	r := rand.New(rand.NewPCG(seed, 0x5eed))
	p := &Pool{Paths: make([]string, n), Kinds: make([]int, n)}
	for i := range n {
		p.Kinds[i], p.Paths[i] = s.pick(r)
	}
	return p
}

// pick draws the next request: its kind's index and its path and query.
func (s *Scenario) pick(r *rand.Rand) (int, string) {
	if len(s.Kinds) == 1 {
		return 0, s.Kinds[0].Next(r)
	}
	total := 0
	for _, k := range s.Kinds {
		total += k.Weight
	}
	n := r.IntN(total)
	for i, k := range s.Kinds {
		if n < k.Weight {
			return i, k.Next(r)
		}
		n -= k.Weight
	}
	panic("unreachable")
}

// ScenarioNames are the scenarios NewScenario knows.
var ScenarioNames = []string{"detail", "users", "orders", "mix"}

// NewScenario returns the named scenario over d.
func NewScenario(name string, d *Data) (*Scenario, error) {
	if len(d.PlatformIDs) == 0 {
		return nil, fmt.Errorf("loadtest: institution %s has no users to load", d.InstitutionID)
	}
	switch name {
	case "detail":
		return &Scenario{Name: name, Kinds: []Kind{detailKind(d, 1)}}, nil
	case "users":
		return &Scenario{Name: name, Kinds: []Kind{userListKind(d, 1)}}, nil
	case "orders":
		return &Scenario{Name: name, Kinds: []Kind{orderListKind(d, 1)}}, nil
	case "mix":
		return mix(d), nil
	}
	return nil, fmt.Errorf("loadtest: unknown scenario %q (want one of %s)", name, strings.Join(ScenarioNames, ", "))
}

var (
	products     = []string{"securities", "robo", "crypto", "roth_ira"}
	kycStatuses  = []string{"pending", "document_requested", "approved", "rejected", "closed", "account_takeover"}
	orderStatus  = []string{"pending", "completed", "canceled", "failed"}
	sides        = []string{"buy", "sell"}
	sortOrders   = []string{"asc", "desc"}
	perPageSizes = []int{10, 25, 25, 50, 100}
)

func oneOf[T any](r *rand.Rand, xs []T) T { return xs[r.IntN(len(xs))] }

// detailKind is Get User Detail of a random existing user, by platform id.
func detailKind(d *Data, weight int) Kind {
	return Kind{Name: "detail", Weight: weight, Next: func(r *rand.Rand) string {
		return "/v1/users/" + url.PathEscape(oneOf(r, d.PlatformIDs)) + "/?user_account_id_type=platform"
	}}
}

// setWindow sets the filters field_start and field_end to a random [start, end) of length span
// inside [from, to) (the whole range when it is shorter), written alternately as dates and as
// RFC 3339 date-times.
func setWindow(q url.Values, r *rand.Rand, field string, from, to time.Time, span time.Duration) {
	start := from
	if room := to.Sub(from) - span; room > 0 {
		start = from.Add(time.Duration(r.Int64N(int64(room))))
	}
	end, layout := start.Add(span), time.RFC3339
	if r.IntN(2) == 0 {
		layout = time.DateOnly
	}
	q.Set(field+"_start", start.UTC().Format(layout))
	q.Set(field+"_end", end.UTC().Format(layout))
}

// userListKind is a filtered page of Get User List: by KYC status, product, a month of
// created_at, one user_account_id, or a page by user_account_id; 10 to 100 a page, either order.
func userListKind(d *Data, weight int) Kind {
	return Kind{Name: "user_list", Weight: weight, Next: func(r *rand.Rand) string {
		q := url.Values{}
		switch r.IntN(6) {
		case 0:
			q.Set(oneOf(r, products)+"_kyc_status", oneOf(r, kycStatuses))
		case 1:
			q.Set("product", oneOf(r, products))
			q.Set(oneOf(r, products)+"_kyc_status", "approved")
		case 2:
			setWindow(q, r, "created_at", d.CreatedFrom, d.CreatedTo, 30*24*time.Hour)
		case 3:
			q.Set("user_account_id", oneOf(r, d.UserAccountIDs))
		case 4:
			q.Set("sort_key", "user_account_id")
			q.Set("last_record_number", fmt.Sprint(r.IntN(max(d.Users/100, 1))))
		default:
			q.Set("product", oneOf(r, products))
		}
		q.Set("per_page", fmt.Sprint(oneOf(r, perPageSizes)))
		q.Set("sort_order", oneOf(r, sortOrders))
		return "/v1/users/?" + q.Encode()
	}}
}

// orderListKind is a filtered page of Get Order List: by status, side and product, a week of
// placed_at, or one user_account_id; 10 to 100 a page, either order.
func orderListKind(d *Data, weight int) Kind {
	return Kind{Name: "order_list", Weight: weight, Next: func(r *rand.Rand) string {
		q := url.Values{}
		switch r.IntN(5) {
		case 0:
			q.Set("status", oneOf(r, orderStatus))
		case 1:
			q.Set("side", oneOf(r, sides))
			q.Set("product", oneOf(r, products))
		case 2:
			setWindow(q, r, "placed_at", d.PlacedFrom, d.PlacedTo, 7*24*time.Hour)
		case 3:
			q.Set("user_account_id", oneOf(r, d.UserAccountIDs))
		default:
			q.Set("status", "completed")
			q.Set("side", oneOf(r, sides))
		}
		q.Set("per_page", fmt.Sprint(oneOf(r, perPageSizes)))
		q.Set("sort_order", oneOf(r, sortOrders))
		return "/v1/orders/?" + q.Encode()
	}}
}

// mix is 40% Get User Detail, 25% filtered user lists, 20% filtered order lists and 15% deep
// pages (offsets in the second half of the unfiltered user or order list, 100 a page).
func mix(d *Data) *Scenario {
	deep := func(r *rand.Rand) string {
		path, n := "/v1/users/", d.Users
		if r.IntN(2) == 0 {
			path, n = "/v1/orders/", d.Orders
		}
		off := n/2 + r.IntN(max(n/2-100, 1))
		return fmt.Sprintf("%s?per_page=100&last_record_number=%d&sort_order=%s", path, off, oneOf(r, sortOrders))
	}
	return &Scenario{Name: "mix",
		Kinds: []Kind{detailKind(d, 40), userListKind(d, 25), orderListKind(d, 20), {"deep_page", 15, deep}}}
}
