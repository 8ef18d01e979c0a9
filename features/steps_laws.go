package features

import (
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"time"

	"github.com/cucumber/godog"
	"github.com/partnersim/partnersim/features/laws"
	"github.com/tidwall/gjson"
)

// The law steps check rules on whatever data the deployment has, discovering ids from its own
// lists: pagination, sort, filters and totals hold for every record, not for records the suite
// made. With a control plane the scenario first creates a varied data set in its own institution
// (the deployment's data step); without one, they read the institution of --api-key as it is.

// lawSteps registers the data-driven steps.
func (w *world) lawSteps(sc *godog.ScenarioContext) {
	sc.Step(`^the deployment has users and orders$`, w.deploymentData)
	sc.Step(`^walking `+q+` descending and ascending with per_page (\d+) gives the exact reverse by `+q+`$`, w.lawReverse)
	sc.Step(`^the users walked by `+q+` are in ascending `+q+` order$`, w.lawSortedBy)
	sc.Step(`^the orders' placed_at never increases from one to the next$`, w.lawPlacedAtDesc)
	sc.Step(`^every user filter selects exactly the users it names, and counts them$`, w.lawUserFilters)
	sc.Step(`^every order filter selects exactly the orders it names, and counts them$`, w.lawOrderFilters)
	sc.Step(`^placed_at bounds at the placed_at of listed orders split them inclusive start, exclusive end$`, w.lawPlacedAtBounds)
	sc.Step(`^created_at bounds at `+q+` partition the users, written as `+q+`$`, w.lawCreatedAtPartition)
	sc.Step(`^created_at bounds at a listed user's own created_at, found by bisection, include it from the start and exclude it at the end$`, w.lawCreatedAtBisect)
	sc.Step(`^every listed user's total is the exact sum of its accounts$`, w.lawUserTotals)
	sc.Step(`^every listed account carries kyc_approved_at while approved and never while pending$`, w.lawApprovedAt)
	sc.Step(`^every listed order is consistent with its status and belongs to a listed user$`, w.lawOrders)
	sc.Step(`^the detail of `+q+` agrees with its item of the user list$`, w.lawDetailMatchesList)
	sc.Step(`^every page of `+q+` is written byte for byte as FastAPI writes it$`, w.lawFastAPIBytes)
	sc.Step(`^every identity of `+q+` resolves to a user that it names$`, w.lawIdentitiesResolve)
	sc.Step(`^the subscriptions listed hold `+q+`$`, w.lawListed)
	sc.Step(`^the answer is the 404 of another institution's id$`, w.lawForeign)
	sc.Step(`^the history `+q+` is monthly since `+q+`, the last at the start of the current month worth `+q+`$`, w.historyMonthlySince)
	sc.Step(`^the history `+q+` is (\d+) points? one (hour|day|week|month) apart, the last at the start of the current (?:hour|day|week|month) worth `+q+`$`, w.historySeries)
	sc.Step(`^every history series has decisions D5's resolution since the user's creation, found by bisection, the last carrying its total_current_market_value$`, w.historyOfUser)
}

// periodStart is the UTC boundary of the period containing t (decisions D5: the hour, midnight,
// Monday midnight, the 1st of the month).
func periodStart(t time.Time, unit string) time.Time {
	t = t.UTC()
	day := time.Date(t.Year(), t.Month(), t.Day(), 0, 0, 0, 0, time.UTC)
	switch unit {
	case "hour":
		return t.Truncate(time.Hour)
	case "week":
		return day.AddDate(0, 0, -((int(day.Weekday()) + 6) % 7))
	case "month":
		return time.Date(t.Year(), t.Month(), 1, 0, 0, 0, 0, time.UTC)
	}
	return day
}

func periodStep(t time.Time, unit string) time.Time {
	switch unit {
	case "hour":
		return t.Add(time.Hour)
	case "week":
		return t.AddDate(0, 0, 7)
	case "month":
		return t.AddDate(0, 1, 0)
	}
	return t.AddDate(0, 0, 1)
}

// historySeries checks one generated history series: n points, oldest first, one period apart
// on period boundaries, the last at the boundary of the period the request fell in and carrying
// the current value; every point's values are money (decimals D5).
// historyMonthlySince checks all_time (decisions D5): monthly points from the first month start
// not before the user's creation to the current month's start, the last worth last.
func (w *world) historyMonthlySince(series, created, last string) error {
	c, err := parseTime(unq(created))
	if err != nil {
		return fmt.Errorf("the creation time %q: %w", unq(created), err)
	}
	return w.historySeries(series, fmt.Sprint(monthsSince(c)), "month", last)
}

// monthsSince is how many points all_time has for a user created at c (decisions D5): the
// current month's start and every earlier month start not before c.
func monthsSince(c time.Time) int {
	n := 1
	for m := periodStart(time.Now(), "month").AddDate(0, -1, 0); !m.Before(c); m = m.AddDate(0, -1, 0) {
		n++
	}
	return n
}

// historyOfUser checks every series of the user detail just read (decisions D5): past_day 24
// hourly points, past_week 7 and past_month 30 daily, past_year 52 weekly and all_time monthly
// from the user's creation — which the API does not show, so it is bisected with the user
// list's created_at_end filter —, each ending at its current period's start with the user's
// total_current_market_value.
func (w *world) historyOfUser() error {
	r, err := w.last()
	if err != nil {
		return err
	}
	uid, total := r.json().Get("user_account_id").String(), r.json().Get("total_current_market_value").String()
	switch {
	case uid == "" || total == "":
		return fmt.Errorf("expected a user detail with user_account_id and total_current_market_value, got %s", r)
	case total == "0.00":
		return fmt.Errorf("expected a funded user (a total above 0.00), got user %s worth %s", uid, total)
	}
	months, err := w.monthStartsSince(uid)
	if err != nil {
		return err
	}
	w.resp = r // the series are read from the detail, not from the bisection's pages
	for _, s := range []struct {
		series, unit string
		n            int
	}{{"past_day", "hour", 24}, {"past_week", "day", 7}, {"past_month", "day", 30}, {"past_year", "week", 52}, {"all_time", "month", months}} {
		if err := w.historySeries(s.series, fmt.Sprint(s.n), s.unit, total); err != nil {
			return fmt.Errorf("user %s, created by %d month starts ago (found by bisecting created_at_end): %w", uid, months, err)
		}
	}
	return nil
}

// monthStartsSince is how many points all_time has for the user with user_account_id uid
// (decisions D5): the current month's start and every earlier one not before its created_at,
// at most 1,201 (100 years of months). The API does not show created_at, so it is bisected over
// month starts: created_at_end one microsecond after a month start lists the user exactly when
// the user was created by then.
func (w *world) monthStartsSince(uid string) (int, error) {
	cur := periodStart(time.Now(), "month")
	createdBy := func(k int) (bool, error) {
		return w.createdAtSelects(uid, "created_at_end", cur.AddDate(0, -k, 0).Add(time.Microsecond))
	}
	// The current month's start is always a point; the earlier ones count while the user was
	// created by them (monotone: created by a month start, it was by every later one).
	lo, hi := 1, 1200
	if ok, err := createdBy(lo); err != nil || !ok {
		return 1, err
	}
	if ok, err := createdBy(hi); err != nil || ok {
		return hi + 1, err
	}
	for hi-lo > 1 {
		mid := (lo + hi) / 2
		ok, err := createdBy(mid)
		if err != nil {
			return 0, err
		}
		if ok {
			lo = mid
		} else {
			hi = mid
		}
	}
	return lo + 1, nil
}

func (w *world) historySeries(series, n, unit, last string) error {
	r, err := w.last()
	if err != nil {
		return err
	}
	pts := r.json().Get("historical_market_value." + unq(series)).Array()
	want := 0
	fmt.Sscan(n, &want)
	if len(pts) != want {
		return fmt.Errorf("expected %s to have %d points, got %d", unq(series), want, len(pts))
	}
	var prev time.Time
	for i, p := range pts {
		at, err := parseTime(p.Get("as_of").String())
		if err != nil {
			return fmt.Errorf("%s[%d].as_of: %w", unq(series), i, err)
		}
		if !periodStart(at, unit).Equal(at) {
			return fmt.Errorf("expected %s[%d].as_of on a %s boundary (UTC), got %s", unq(series), i, unit, p.Get("as_of").Str)
		}
		if i > 0 && !periodStep(prev, unit).Equal(at) {
			return fmt.Errorf("expected %s[%d].as_of one %s after %s, got %s", unq(series), i, unit, prev.Format(time.RFC3339), p.Get("as_of").Str)
		}
		for _, f := range []string{"value", "cost_basis"} {
			if err := checkKind(p.Get(f), "money string"); err != nil {
				return fmt.Errorf("%s[%d].%s: %w", unq(series), i, f, err)
			}
		}
		prev = at
	}
	if len(pts) == 0 {
		return nil
	}
	if a, b := periodStart(r.Sent, unit), periodStart(time.Now(), unit); !prev.Equal(a) && !prev.Equal(b) {
		return fmt.Errorf("expected the last point of %s at the start of the current %s (%s), got %s", unq(series), unit, b.Format(time.RFC3339), prev.Format(time.RFC3339))
	}
	current, err := w.expand(unq(last))
	if err != nil {
		return err
	}
	if v := pts[len(pts)-1].Get("value").String(); v != current {
		return fmt.Errorf("expected the last point of %s to carry the current value %s, got %s", unq(series), current, v)
	}
	return nil
}

// deploymentData gives the scenario data to check laws on: with a control plane, a varied set
// in the scenario's own institution (users of every product and KYC state, created at distinct
// and at equal times, a member, orders of every status, side and product, a recurring order and
// a robo deposit of several legs); without one, the deployment's, which must not be empty.
func (w *world) deploymentData() error {
	if !w.run.sandbox() {
		r, err := w.do(http.MethodGet, "/users/?per_page=1", nil, "", authKey)
		if err != nil {
			return err
		}
		if r.Status != http.StatusOK || r.json().Get("total_records").Int() == 0 {
			w.skip = "the deployment lists no users for this key"
			return godog.ErrSkip
		}
		w.resp = nil
		return nil
	}
	users := []struct {
		id, created string
		accts       []account
	}{
		{"law-01", "2025-01-15T10:00:00Z", []account{{Product: "crypto", KYC: "approved", Cash: "120.50"}, {Product: "securities", KYC: "pending"}}},
		{"law-02", "2025-02-01T00:00:00Z", []account{{Product: "securities", KYC: "approved", Cash: "1000.00", Holdings: "AAPL 2.5"}, {Product: "robo", KYC: "approved", Cash: "500.00"}}},
		{"law-03", "2025-03-10T08:30:00Z", []account{{Product: "roth_ira", KYC: "rejected"}, {Product: "crypto", KYC: "document_requested"}}},
		{"law-04", "2025-03-10T08:30:00Z", []account{{Product: "crypto", KYC: "closed", ApprovedAt: "2025-03-11T00:00:00Z"}}},
		{"law-05", "2025-05-31T23:59:59Z", []account{{Product: "securities", KYC: "account_takeover", ApprovedAt: "2025-06-01T00:00:00Z", Cash: "0.07"}}},
		{"law-06", "2025-06-01T00:00:00Z", []account{{Product: "robo", KYC: "pending"}, {Product: "roth_ira", KYC: "approved", Cash: "33.33"}}},
		{"law-07", "2025-06-01T00:00:01Z", nil},
		{"law-08", "2025-09-09T09:09:09Z", []account{{Product: "crypto", KYC: "approved", Cash: "0.01", Holdings: "BTC 0.015"}, {Product: "securities", KYC: "approved", Cash: "2.50"}, {Product: "robo", KYC: "rejected"}, {Product: "roth_ira", KYC: "pending"}}},
	}
	for _, u := range users {
		if err := w.createUser(u.id, u.created, 1, u.accts); err != nil {
			return err
		}
	}
	if err := w.givenMember("member_number", "LAW-M-1", "LAW-D-1", "law-02, law-08"); err != nil {
		return err
	}
	for _, o := range []struct{ alias, verb, sym, product, as, notional, qty, end string }{
		{"law-02", "buys", "AAPL", "securities", "lo1", "10.00", "", "fills"},
		{"law-02", "sells", "AAPL", "securities", "lo2", "", "0.5", ""},
		{"law-01", "buys", "BTC", "crypto", "lo3", "25.00", "", "is canceled"},
		{"law-01", "buys", "ETH", "crypto", "lo4", "5.00", "", "fails"},
		{"law-08", "sells", "BTC", "crypto", "lo5", "", "0.005", "fills"},
	} {
		amount := map[string]any{"notional": o.notional}
		if o.qty != "" {
			amount = map[string]any{"quantity": o.qty}
		}
		if err := w.placeOrder(o.alias, o.verb, o.sym, o.product, o.as, amount); err != nil {
			return err
		}
		if o.end != "" {
			if err := w.endTransaction(o.as, o.end); err != nil {
				return err
			}
		}
	}
	if err := w.placeRecurring("law-08", "3.00", "ETH", "crypto", "rec-law-1", "lo6"); err != nil {
		return err
	}
	if err := w.placeRobo("law-02", "deposit", "100.00", "lr1"); err != nil {
		return err
	}
	return w.endTransaction("lr1", "fills")
}

// walkAll reads every page of a list (perPage a page) and returns its items and the total it
// reported, checking on the way the pagination laws (laws.Walk): each cursor counts its page's
// items, the total stays put, no record twice and no gap.
func (w *world) walkAll(path string, perPage int) ([]gjson.Result, int64, error) {
	var items []gjson.Result
	var pages []laws.Page
	idField := "user_account_id"
	if strings.HasPrefix(path, "/orders/") {
		idField = "order_id"
	}
	cursor := int64(0)
	for range 1000 {
		u, err := url.Parse(path)
		if err != nil {
			return nil, 0, err
		}
		qv := u.Query()
		qv.Set("per_page", fmt.Sprint(perPage))
		qv.Set("last_record_number", fmt.Sprint(cursor))
		u.RawQuery = qv.Encode()
		r, err := w.do(http.MethodGet, u.String(), nil, "", authKey)
		if err != nil {
			return nil, 0, err
		}
		if r.Status != http.StatusOK {
			return nil, 0, fmt.Errorf("expected status 200 while walking %s, got %s", path, r)
		}
		page, err := laws.ReadPage(qv, r.Body)
		if err != nil {
			return nil, 0, fmt.Errorf("%s: %w", u, err)
		}
		pages = append(pages, page)
		if err := laws.Walk(idField, pages); err != nil {
			return nil, 0, fmt.Errorf("walking %s: %w", path, err)
		}
		if len(page.Items) == 0 {
			return items, page.Total, nil
		}
		items = append(items, page.Items...)
		cursor = page.Next
	}
	return nil, 0, fmt.Errorf("expected the walk of %s to end within 1000 pages", path)
}

func withQuery(path, key, value string) string {
	sep := "?"
	if strings.Contains(path, "?") {
		sep = "&"
	}
	return path + sep + url.QueryEscape(key) + "=" + url.QueryEscape(value)
}

func fieldList(items []gjson.Result, field string) []string {
	out := make([]string, len(items))
	for i, it := range items {
		out[i] = it.Get(field).String()
	}
	return out
}

// lawReverse walks a list in both orders: each is a valid walk (D6.1, D6.4) and one is the
// exact reverse of the other, tie-breaks included (D6.3).
func (w *world) lawReverse(path, perPage, field string) error {
	p, err := w.expand(unq(path))
	if err != nil {
		return err
	}
	n := 0
	fmt.Sscan(perPage, &n)
	desc, _, err := w.walkAll(withQuery(p, "sort_order", "desc"), n)
	if err != nil {
		return err
	}
	asc, _, err := w.walkAll(withQuery(p, "sort_order", "asc"), n)
	if err != nil {
		return err
	}
	if err := laws.Reverse(fieldList(desc, unq(field)), fieldList(asc, unq(field))); err != nil {
		return fmt.Errorf("%s by %s: %w", p, unq(field), err)
	}
	w.pages = nil
	w.lawItems = desc
	return nil
}

// lawSortedBy checks the last walk's (ascending) order by a field: the descending walk reversed.
func (w *world) lawSortedBy(path, field string) error {
	items := slices.Clone(w.lawItems)
	slices.Reverse(items)
	if err := laws.Sorted("users", url.Values{"sort_key": {unq(field)}, "sort_order": {"asc"}}, items); err != nil {
		return fmt.Errorf("%s ascending: %w", unq(path), err)
	}
	return nil
}

func parseTime(s string) (time.Time, error) { return time.Parse(time.RFC3339Nano, s) }

func (w *world) lawPlacedAtDesc() error {
	if err := laws.Sorted("orders", url.Values{}, w.lawItems); err != nil {
		return fmt.Errorf("the default order (most recently placed first): %w", err)
	}
	return nil
}

// selects walks a filtered list and checks it holds exactly the expected records, counted.
func (w *world) selects(path, idField string, want []string) error {
	got, total, err := w.walkAll(path, 100)
	if err != nil {
		return err
	}
	u, err := url.Parse(path)
	if err != nil {
		return err
	}
	honours := laws.UserHonours
	if strings.HasPrefix(path, "/orders/") {
		honours = laws.OrderHonours
	}
	for _, it := range got {
		if err := honours(u.Query(), it); err != nil {
			return fmt.Errorf("%s: %w", path, err)
		}
	}
	ids := fieldList(got, idField)
	slices.Sort(ids)
	want = slices.Clone(want)
	slices.Sort(want)
	if want == nil {
		want = []string{}
	}
	if !slices.Equal(ids, want) {
		return fmt.Errorf("expected %s to list exactly %s %v, got %v", path, idField, want, ids)
	}
	if total != int64(len(want)) {
		return fmt.Errorf("expected %s to count total_records %d, got %d", path, len(want), total)
	}
	return nil
}

var (
	products    = []string{"securities", "robo", "crypto", "roth_ira"}
	kycStatuses = []string{"pending", "document_requested", "approved", "rejected", "closed", "account_takeover"}
)

func (w *world) lawUserFilters() error {
	users, _, err := w.walkAll("/users/", 100)
	if err != nil {
		return err
	}
	for _, p := range products {
		var want []string
		for _, u := range users {
			if u.Get(`accounts.#(product=="` + p + `")`).Exists() {
				want = append(want, u.Get("user_account_id").String())
			}
		}
		if err := w.selects(withQuery("/users/", "product", p), "user_account_id", want); err != nil {
			return err
		}
		for _, s := range kycStatuses {
			var want []string
			for _, u := range users {
				if u.Get(`accounts.#(product=="`+p+`").kyc_status`).String() == s {
					want = append(want, u.Get("user_account_id").String())
				}
			}
			if err := w.selects(withQuery("/users/", p+"_kyc_status", s), "user_account_id", want); err != nil {
				return err
			}
		}
	}
	// Filters combine: a product with another (or the same) product's KYC state.
	for _, p := range products {
		for _, q := range products {
			for _, s := range []string{"approved", "pending"} {
				var want []string
				for _, u := range users {
					if u.Get(`accounts.#(product=="`+p+`")`).Exists() && u.Get(`accounts.#(product=="`+q+`").kyc_status`).String() == s {
						want = append(want, u.Get("user_account_id").String())
					}
				}
				if err := w.selects(withQuery(withQuery("/users/", "product", p), q+"_kyc_status", s), "user_account_id", want); err != nil {
					return err
				}
			}
		}
	}
	for _, u := range users[:min(3, len(users))] {
		id := u.Get("user_account_id").String()
		if err := w.selects(withQuery("/users/", "user_account_id", id), "user_account_id", []string{id}); err != nil {
			return err
		}
	}
	return w.selects(withQuery("/users/", "user_account_id", "no-such-user-"+randomToken(4)), "user_account_id", nil)
}

func (w *world) lawOrderFilters() error {
	orders, _, err := w.walkAll("/orders/", 100)
	if err != nil {
		return err
	}
	byField := func(field, value string) []string {
		var out []string
		for _, o := range orders {
			if o.Get(field).String() == value {
				out = append(out, o.Get("order_id").String())
			}
		}
		return out
	}
	for _, p := range products {
		if err := w.selects(withQuery("/orders/", "product", p), "order_id", byField("product", p)); err != nil {
			return err
		}
	}
	for _, s := range []string{"buy", "sell"} {
		if err := w.selects(withQuery("/orders/", "side", s), "order_id", byField("side", s)); err != nil {
			return err
		}
	}
	for _, s := range []string{"pending", "completed", "canceled", "failed"} {
		if err := w.selects(withQuery("/orders/", "status", s), "order_id", byField("status", s)); err != nil {
			return err
		}
	}
	seen := map[string]bool{}
	for _, o := range orders {
		u := o.Get("user_account_id").String()
		if seen[u] || len(seen) == 3 {
			continue
		}
		seen[u] = true
		if err := w.selects(withQuery("/orders/", "user_account_id", u), "order_id", byField("user_account_id", u)); err != nil {
			return err
		}
	}
	return nil
}

func (w *world) lawPlacedAtBounds() error {
	orders, _, err := w.walkAll("/orders/", 100)
	if err != nil {
		return err
	}
	if len(orders) == 0 {
		return nil
	}
	for _, pick := range []int{0, len(orders) / 2, len(orders) - 1} {
		at := orders[pick].Get("placed_at").String()
		t, err := parseTime(at)
		if err != nil {
			return err
		}
		var from, before []string
		for _, o := range orders {
			ot, err := parseTime(o.Get("placed_at").String())
			if err != nil {
				return err
			}
			if !ot.Before(t) {
				from = append(from, o.Get("order_id").String())
			} else {
				before = append(before, o.Get("order_id").String())
			}
		}
		if err := w.selects(withQuery("/orders/", "placed_at_start", at), "order_id", from); err != nil {
			return err
		}
		if err := w.selects(withQuery("/orders/", "placed_at_end", at), "order_id", before); err != nil {
			return err
		}
	}
	return nil
}

// lawCreatedAtPartition: for one instant written in several forms, users created from it and
// users created before it are disjoint, together every user, and the same in every form; a
// range from the instant to itself is empty.
func (w *world) lawCreatedAtPartition(instant, forms string) error {
	users, _, err := w.walkAll("/users/", 100)
	if err != nil {
		return err
	}
	all := fieldList(users, "user_account_id")
	slices.Sort(all)
	var first []string
	for i, f := range append([]string{unq(instant)}, splitList(unq(forms))...) {
		base := "/users/"
		if i%2 == 1 {
			base = "/users/?sort_key=user_account_id" // the bounds hold whatever the sort
		}
		from, _, err := w.walkAll(withQuery(base, "created_at_start", f), 100)
		if err != nil {
			return err
		}
		before, _, err := w.walkAll(withQuery(base, "created_at_end", f), 100)
		if err != nil {
			return err
		}
		a, b := fieldList(from, "user_account_id"), fieldList(before, "user_account_id")
		union := append(slices.Clone(a), b...)
		slices.Sort(union)
		if !slices.Equal(union, all) {
			return fmt.Errorf("expected created_at_start=%s (%d users) and created_at_end=%s (%d users) to partition the %d users, got %v and %v", f, len(a), f, len(b), len(all), a, b)
		}
		slices.Sort(a)
		if i == 0 {
			first = a
		} else if !slices.Equal(a, first) {
			return fmt.Errorf("expected created_at_start=%s to select the same users as %s, got %v and %v", f, unq(instant), a, first)
		}
		if err := w.selects(withQuery(withQuery(base, "created_at_start", f), "created_at_end", f), "user_account_id", nil); err != nil {
			return err
		}
	}
	return nil
}

// lawCreatedAtBisect checks spec §4.2's created_at bounds on a user whose created_at the API
// does not show: bisecting created_at_start (the user alone selected by user_account_id) finds
// the latest start that still selects it, c, to the microsecond. With an inclusive start, c is
// its created_at, so created_at_end=c must not select it (exclusive end) and c plus one
// microsecond must. A start that excluded its bound would put c a microsecond early, and an end
// that included it would select the user at c: either fails. (Both at once shift every bound
// alike, which no black-box check can tell from a created_at a microsecond later.)
func (w *world) lawCreatedAtBisect() error {
	r, err := w.do(http.MethodGet, "/users/?per_page=1", nil, "", authKey)
	if err != nil {
		return err
	}
	uid := r.json().Get("items.0.user_account_id").String()
	if r.Status != http.StatusOK || uid == "" {
		return fmt.Errorf("expected a listed user, got %s", r)
	}
	const us = time.Microsecond
	stamp := stampMicros
	selects := func(bound string, t time.Time) (bool, error) { return w.createdAtSelects(uid, bound, t) }
	c, err := w.createdAtByBisection(uid) // the latest created_at_start that selects the user
	if err != nil {
		return err
	}
	if ok, err := selects("created_at_end", c); err != nil || ok {
		return errors.Join(err, fmt.Errorf("spec §4.2: created_at_end=%s selected user %s, yet created_at_start=%s selects it and %s does not: "+
			"with an inclusive start that is its created_at, which an exclusive end leaves out", stamp(c), uid, stamp(c), stamp(c.Add(us))))
	}
	if ok, err := selects("created_at_end", c.Add(us)); err != nil || !ok {
		return errors.Join(err, fmt.Errorf("spec §4.2: created_at_end=%s did not select user %s, yet the latest created_at_start that selects it is %s: "+
			"the start must include its bound (the user's created_at), and an end one microsecond later then selects it", stamp(c.Add(us)), uid, stamp(c)))
	}
	return nil
}

// stampMicros writes t as a created_at bound to the microsecond.
func stampMicros(t time.Time) string { return t.UTC().Format("2006-01-02T15:04:05.000000Z") }

// createdAtSelects reports whether the user list filtered to uid and bounded by bound=t
// (created_at_start or created_at_end) lists the user.
func (w *world) createdAtSelects(uid, bound string, t time.Time) (bool, error) {
	p := withQuery(withQuery("/users/", "user_account_id", uid), bound, stampMicros(t))
	r, err := w.do(http.MethodGet, p, nil, "", authKey)
	if err != nil {
		return false, err
	}
	n := r.json().Get("total_records")
	if r.Status != http.StatusOK || !n.Exists() || n.Int() > 1 {
		return false, fmt.Errorf("GET %s: expected 200 with total_records 0 or 1, got %s", p, r)
	}
	return n.Int() == 1, nil
}

// createdAtByBisection finds the created_at of the user with user_account_id uid, which the
// API does not show, to the microsecond: the latest created_at_start that still lists it
// (spec §4.2: the start bound is inclusive).
func (w *world) createdAtByBisection(uid string) (time.Time, error) {
	const us = time.Microsecond
	lo, hi := time.Date(1700, 1, 1, 0, 0, 0, 0, time.UTC), time.Now().Add(48*time.Hour).Truncate(us)
	if ok, err := w.createdAtSelects(uid, "created_at_start", lo); err != nil || !ok {
		return time.Time{}, errors.Join(err, fmt.Errorf("expected created_at_start=%s to select user %s", stampMicros(lo), uid))
	}
	if ok, err := w.createdAtSelects(uid, "created_at_start", hi); err != nil || ok {
		return time.Time{}, errors.Join(err, fmt.Errorf("expected created_at_start=%s, in the future, not to select user %s", stampMicros(hi), uid))
	}
	for hi.Sub(lo) > us {
		mid := lo.Add(hi.Sub(lo) / 2).Truncate(us)
		ok, err := w.createdAtSelects(uid, "created_at_start", mid)
		if err != nil {
			return time.Time{}, err
		}
		if ok {
			lo = mid
		} else {
			hi = mid
		}
	}
	return lo, nil
}

// everyUser checks a law that holds user by user on every user of the deployment.
func (w *world) everyUser(law func(u gjson.Result) error) error {
	users, _, err := w.walkAll("/users/", 100)
	if err != nil {
		return err
	}
	for _, u := range users {
		if err := law(u); err != nil {
			return err
		}
	}
	return nil
}

func (w *world) lawApprovedAt() error { return w.everyUser(laws.ApprovedAt) }

func (w *world) lawUserTotals() error {
	return w.everyUser(func(u gjson.Result) error {
		for _, a := range u.Get("accounts").Array() {
			if err := hasKeys(a, "account", []string{"product", "current_market_value", "kyc_status"}, u.Get("user_account_id").String()); err != nil {
				return err
			}
		}
		return laws.UserTotal(u)
	})
}

func (w *world) lawOrders() error {
	orders, _, err := w.walkAll("/orders/", 100)
	if err != nil {
		return err
	}
	users := map[string]bool{}
	for _, o := range orders {
		id := o.Get("order_id").String()
		if err := hasKeys(o, "order "+id, []string{"order_id", "user_account_id", "product", "side", "symbol", "quantity", "notional", "fee", "status", "placed_at", "is_recurring_order"}, ""); err != nil {
			return err
		}
		for field, kind := range map[string]string{"quantity": "decimal string", "notional": "money string", "fee": "money string", "placed_at": "timestamp", "is_recurring_order": "boolean"} {
			if err := checkKind(o.Get(field), kind); err != nil {
				return fmt.Errorf("order %s: %s: %w", id, field, err)
			}
		}
		if !slices.Contains(products, o.Get("product").String()) || !slices.Contains([]string{"buy", "sell"}, o.Get("side").String()) {
			return fmt.Errorf("order %s: expected a product and side of the spec's enumerations, got %s", id, o.Raw)
		}
		completed := o.Get("status").String() == "completed"
		if c := o.Get("completed_at"); c.Exists() != completed {
			return fmt.Errorf("order %s: expected completed_at exactly when completed, got status %s and completed_at %s", id, o.Get("status").Str, orAbsent(c))
		}
		if completed {
			if err := checkKind(o.Get("completed_at"), "timestamp"); err != nil {
				return fmt.Errorf("order %s: completed_at: %w", id, err)
			}
		}
		if r := o.Get("recurring_order_id"); r.Exists() != o.Get("is_recurring_order").Bool() {
			return fmt.Errorf("order %s: expected recurring_order_id exactly when is_recurring_order, got %s and %s", id, o.Get("is_recurring_order").Raw, orAbsent(r))
		}
		// Decisions D7: a pending order shows what was asked — a dollar order its notional and
		// quantity "0", a share order its quantity and notional "0.00" — and a fill sets both.
		qty, notional := o.Get("quantity").String(), o.Get("notional").String()
		switch o.Get("status").String() {
		case "pending":
			if (qty == "0") == (notional == "0.00") {
				return fmt.Errorf("order %s: expected a pending order to show exactly one of quantity \"0\" (a dollar order) and notional \"0.00\" (a share order), got quantity %q and notional %q", id, qty, notional)
			}
		case "completed":
			if strings.Trim(qty, "0.") == "" {
				return fmt.Errorf("order %s: expected a filled order to show the quantity and notional the fill set, got quantity %q and notional %q", id, qty, notional)
			}
		}
		u := o.Get("user_account_id").String()
		if !users[u] {
			if err := w.selects(withQuery("/users/", "user_account_id", u), "user_account_id", []string{u}); err != nil {
				return fmt.Errorf("order %s names user %s: %w", id, u, err)
			}
			users[u] = true
		}
	}
	return nil
}

// userDetail asks for a scenario user's detail by its platform id; anything but 200 is an error.
func (w *world) userDetail(alias string) (pid string, r *response, err error) {
	if pid, err = w.platformID(alias); err != nil {
		return "", nil, err
	}
	if r, err = w.do(http.MethodGet, "/users/"+url.PathEscape(pid)+"/?user_account_id_type=platform", nil, "", authKey); err != nil {
		return "", nil, err
	}
	if r.Status != http.StatusOK {
		return "", nil, fmt.Errorf("expected the user's detail, got %s", r)
	}
	return pid, r, nil
}

func (w *world) lawDetailMatchesList(alias string) error {
	pid, r, err := w.userDetail(alias)
	if err != nil {
		return err
	}
	d := r.json()
	items, _, err := w.walkAll(withQuery("/users/", "user_account_id", d.Get("user_account_id").String()), 100)
	if err != nil {
		return err
	}
	if len(items) != 1 {
		return fmt.Errorf("expected the list filtered by the detail's user_account_id %q to hold that one user, got %d", d.Get("user_account_id").Str, len(items))
	}
	if err := laws.DetailMatchesItem(items[0], d); err != nil {
		return err
	}
	if got := d.Get("identities.platform_user_identifier").String(); got != pid {
		return fmt.Errorf("expected identities.platform_user_identifier %q, got %q", pid, got)
	}
	w.resp = r
	return nil
}

// lawIdentitiesResolve looks the user up by each of its core and dbp ids: each resolves, and
// the user it resolves to is named by the same member (decisions D5).
func (w *world) lawIdentitiesResolve(alias string) error {
	pid, r, err := w.userDetail(alias)
	if err != nil {
		return err
	}
	ids := r.json().Get("identities")
	checked := 0
	for _, kind := range []string{"core", "dbp"} {
		for _, idn := range ids.Get(kind + "_ids").Array() {
			id := idn.Get("id").String()
			if id == "" || idn.Get("type").String() == "" {
				return fmt.Errorf("expected each identities.%s_ids entry to be {id, type}, got %s", kind, idn.Raw)
			}
			res, err := w.do(http.MethodGet, "/users/"+url.PathEscape(id)+"/?user_account_id_type="+kind, nil, "", authKey)
			if err != nil {
				return err
			}
			if res.Status != http.StatusOK {
				return fmt.Errorf("expected the %s id %q of %s to resolve, got %s", kind, id, pid, res)
			}
			if !res.json().Get(`identities.` + kind + `_ids.#(id==` + gjsonQuote(id) + `)`).Exists() {
				return fmt.Errorf("expected the user the %s id %q resolves to to be named by it, got %s", kind, id, truncate(res.json().Get("identities").Raw, 300))
			}
			checked++
		}
	}
	if checked == 0 && w.run.sandbox() {
		return errors.New("expected the user to have a core or dbp identity to resolve")
	}
	return nil
}

func gjsonQuote(s string) string { return `"` + strings.ReplaceAll(s, `"`, `\"`) + `"` }

// lawFastAPIBytes reads the pages of a list (at most 20 of 100) and checks each body is the
// bytes FastAPI writes for its own JSON (decisions D4): compact separators, strings as
// Python's json.dumps(ensure_ascii=False) writes them, numbers as they are.
func (w *world) lawFastAPIBytes(path string) error {
	p, err := w.expand(unq(path))
	if err != nil {
		return err
	}
	for page := range 20 {
		r, err := w.do(http.MethodGet, withQuery(withQuery(p, "per_page", "100"), "last_record_number", fmt.Sprint(page*100)), nil, "", authKey)
		if err != nil {
			return err
		}
		if r.Status != http.StatusOK {
			return fmt.Errorf("expected status 200, got %s", r)
		}
		if want := pyJSON(r.json()); want != string(r.Body) {
			i := 0
			for i < len(want) && i < len(r.Body) && want[i] == r.Body[i] {
				i++
			}
			return fmt.Errorf("expected %s to be written as FastAPI writes it; the bytes differ at offset %d: FastAPI writes …%s…, got …%s…", r.URL,
				i, truncate(want[max(0, i-40):], 80), truncate(string(r.Body[max(0, i-40):]), 80))
		}
		if len(r.json().Get("items").Array()) < 100 {
			return nil
		}
	}
	return nil
}

// pyJSON is v as FastAPI's JSONResponse writes it: json.dumps(v, ensure_ascii=False,
// separators=(",", ":")), keys in their order.
func pyJSON(v gjson.Result) string {
	switch {
	case v.IsObject():
		var b strings.Builder
		b.WriteByte('{')
		first := true
		v.ForEach(func(k, x gjson.Result) bool {
			if !first {
				b.WriteByte(',')
			}
			first = false
			b.WriteString(pyJSONString(k.String()) + ":" + pyJSON(x))
			return true
		})
		b.WriteByte('}')
		return b.String()
	case v.IsArray():
		var parts []string
		for _, x := range v.Array() {
			parts = append(parts, pyJSON(x))
		}
		return "[" + strings.Join(parts, ",") + "]"
	case v.Type == gjson.String:
		return pyJSONString(v.String())
	}
	return v.Raw
}

// lawListed: the last answer, a subscriptions list, holds a subscription created and not
// deleted.
func (w *world) lawListed(id string) error {
	r, err := w.last()
	if err != nil {
		return err
	}
	sub, err := w.expand(unq(id))
	if err != nil {
		return err
	}
	return laws.Listed(r.json(), []string{sub})
}

// lawForeign: the last answer, to a request naming another institution's id, is its 404.
func (w *world) lawForeign() error {
	r, err := w.last()
	if err != nil {
		return err
	}
	return laws.Foreign(r.Status, r.Body)
}
