package laws

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"net/url"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/tidwall/gjson"
)

// The laws' ids: the proxy reports a violation under its law's id, and the suite's scenarios
// name the same laws in their steps.
const (
	TotalIsSum        = "law.total-is-sum"
	ApprovedAtShown   = "law.kyc-approved-at"
	PageFilters       = "law.page-honours-filters"
	PageSort          = "law.page-honours-sort"
	PagesConsecutive  = "law.pages-consecutive"
	DescReversesAsc   = "law.desc-reverses-asc"
	DetailMatchesList = "law.detail-matches-list"
	SubscriptionKept  = "law.subscription-listed-until-deleted"
	ForeignID404      = "law.foreign-id-404"
)

// Law names one law and says what it asks.
type Law struct{ ID, Says string }

// All is every law, in the order reports list them.
var All = []Law{
	{TotalIsSum, "a user's total_current_market_value is the exact sum of its accounts' current_market_value"},
	{ApprovedAtShown, "an approved account carries kyc_approved_at, a pending one does not"},
	{PageFilters, "every item of a page honours the page's filters"},
	{PageSort, "the items of a page are in the order its sort_key and sort_order ask"},
	{PagesConsecutive, "consecutive pages of one query: the cursor counts the items, no record twice, no gap, one total_records"},
	{DescReversesAsc, "a query walked whole in desc is the exact reverse of the same query walked in asc"},
	{DetailMatchesList, "a user seen in a list shows the same total and accounts on its detail within the minute"},
	{SubscriptionKept, "a created subscription is listed until it is deleted"},
	{ForeignID404, "another institution's subscription id answers 404"},
}

// UserTotal: a user's total_current_market_value is the sum of its accounts' values, all money
// with two decimals.
func UserTotal(u gjson.Result) error {
	id := u.Get("user_account_id").String()
	total, ok := MoneyCents(u.Get("total_current_market_value").String())
	if !ok {
		return fmt.Errorf("user %s: expected total_current_market_value to be money with two decimals, got %s", id, orAbsent(u.Get("total_current_market_value")))
	}
	var sum int64
	for _, a := range u.Get("accounts").Array() {
		v := a.Get("current_market_value")
		c, ok := MoneyCents(v.String())
		if !ok || v.Type != gjson.String {
			return fmt.Errorf("user %s, %s account: expected current_market_value to be money with two decimals, got %s", id, a.Get("product").Str, orAbsent(v))
		}
		sum += c
	}
	if sum != total {
		return fmt.Errorf("user %s: expected total_current_market_value = Σ accounts = %s, got %s", id, CentsString(sum), u.Get("total_current_market_value").Str)
	}
	return nil
}

// ApprovedAt: an approved account carries kyc_approved_at (a UTC timestamp), a pending one
// does not.
func ApprovedAt(u gjson.Result) error {
	for _, a := range u.Get("accounts").Array() {
		at := a.Get("kyc_approved_at")
		switch a.Get("kyc_status").String() {
		case "approved":
			if at.Type != gjson.String || !UTCTimestamp(at.Str) {
				return fmt.Errorf("user %s, %s account (approved): expected kyc_approved_at to be a UTC timestamp, got %s", u.Get("user_account_id").Str, a.Get("product").Str, orAbsent(at))
			}
		case "pending":
			if at.Exists() {
				return fmt.Errorf("user %s, %s account (pending): expected no kyc_approved_at, got %s", u.Get("user_account_id").Str, a.Get("product").Str, at.Raw)
			}
		}
	}
	return nil
}

// Products are the spec's products; a user filter names one in product or <product>_kyc_status.
var Products = []string{"securities", "robo", "crypto", "roth_ira"}

// UserHonours: a user list item honours the list's filters: user_account_id, product and each
// <product>_kyc_status. (created_at is not shown, so its bounds are not judged here.)
func UserHonours(q url.Values, u gjson.Result) error {
	id := u.Get("user_account_id").String()
	if want := q.Get("user_account_id"); q.Has("user_account_id") && id != want {
		return fmt.Errorf("user_account_id=%s listed user %s", want, id)
	}
	if p := q.Get("product"); q.Has("product") && !u.Get(`accounts.#(product==`+quote(p)+`)`).Exists() {
		return fmt.Errorf("product=%s listed user %s, who has no %s account", p, id, p)
	}
	for _, p := range Products {
		k := p + "_kyc_status"
		if !q.Has(k) {
			continue
		}
		if got := u.Get(`accounts.#(product==` + quote(p) + `).kyc_status`).String(); got != q.Get(k) {
			return fmt.Errorf("%s=%s listed user %s, whose %s account is %s", k, q.Get(k), id, p, orNone(got))
		}
	}
	return nil
}

// OrderHonours: an order list item honours the list's filters: user_account_id, product,
// side, status, placed_at_start (inclusive) and placed_at_end (exclusive).
func OrderHonours(q url.Values, o gjson.Result) error {
	id := o.Get("order_id").String()
	for _, f := range []string{"user_account_id", "product", "side", "status"} {
		if want := q.Get(f); q.Has(f) && o.Get(f).String() != want {
			return fmt.Errorf("%s=%s listed order %s, whose %s is %s", f, want, id, f, orNone(o.Get(f).String()))
		}
	}
	at, err := time.Parse(time.RFC3339Nano, o.Get("placed_at").String())
	if err != nil {
		return nil // the document's check judges the field's form
	}
	if b, ok := Bound(q.Get("placed_at_start")); ok && at.Before(b) {
		return fmt.Errorf("placed_at_start=%s (inclusive) listed order %s placed at %s", q.Get("placed_at_start"), id, o.Get("placed_at").Str)
	}
	if b, ok := Bound(q.Get("placed_at_end")); ok && !at.Before(b) {
		return fmt.Errorf("placed_at_end=%s (exclusive) listed order %s placed at %s", q.Get("placed_at_end"), id, o.Get("placed_at").Str)
	}
	return nil
}

// Bound reads a time bound in the forms the API takes (decisions D6): RFC 3339 with or without
// an offset (naive is UTC), a date, or Unix seconds.
func Bound(s string) (time.Time, bool) {
	if s == "" {
		return time.Time{}, false
	}
	for _, layout := range []string{time.RFC3339Nano, "2006-01-02T15:04:05.999999999", "2006-01-02"} {
		if t, err := time.Parse(layout, s); err == nil {
			return t, true
		}
	}
	if n, err := strconv.ParseInt(s, 10, 64); err == nil {
		return time.Unix(n, 0).UTC(), true
	}
	return time.Time{}, false
}

// Sorted: a page's items are in the order the query asks: users by user_account_id when
// sort_key=user_account_id, orders by placed_at (most recent first by default). Ties keep any
// order. Users sorted by created_at (the default) are not judged: created_at is not shown.
func Sorted(resource string, q url.Values, items []gjson.Result) error {
	var field string
	var less func(a, b gjson.Result) bool
	switch {
	case resource == "users" && q.Get("sort_key") == "user_account_id":
		field, less = "user_account_id", func(a, b gjson.Result) bool { return a.String() < b.String() }
	case resource == "orders":
		field, less = "placed_at", func(a, b gjson.Result) bool {
			x, err1 := time.Parse(time.RFC3339Nano, a.String())
			y, err2 := time.Parse(time.RFC3339Nano, b.String())
			return err1 == nil && err2 == nil && x.Before(y)
		}
	default:
		return nil
	}
	asc := q.Get("sort_order") == "asc"
	for i := 1; i < len(items); i++ {
		a, b := items[i-1].Get(field), items[i].Get(field)
		if (asc && less(b, a)) || (!asc && less(a, b)) {
			order := "descending"
			if asc {
				order = "ascending"
			}
			return fmt.Errorf("expected %s %s, got %s then %s", field, order, a.String(), b.String())
		}
	}
	return nil
}

// Page is one observed page of a list.
type Page struct {
	Cursor  int64 // the last_record_number the request sent (0 when none, -1 beyond 64 bits)
	PerPage int64 // the per_page it asked (25 when none)
	Items   []gjson.Result
	Total   int64 // total_records
	Next    int64 // the last_record_number answered
}

// ReadPage reads a page from the request's query and the answer's body.
func ReadPage(q url.Values, body []byte) (Page, error) {
	j := gjson.ParseBytes(body)
	if !j.Get("items").IsArray() || j.Get("total_records").Type != gjson.Number || j.Get("last_record_number").Type != gjson.Number {
		return Page{}, errors.New("expected a pagination envelope with items, total_records and last_record_number")
	}
	p := Page{PerPage: 25, Items: j.Get("items").Array(), Total: j.Get("total_records").Int(), Next: j.Get("last_record_number").Int()}
	if c := q.Get("last_record_number"); c != "" {
		n, err := strconv.ParseInt(c, 10, 64)
		if err != nil {
			n = -1 // beyond 64 bits (or not a number): no law judges its cursor
		}
		p.Cursor = n
	}
	if n, err := strconv.ParseInt(q.Get("per_page"), 10, 64); err == nil {
		p.PerPage = n
	}
	return p, nil
}

// Last says whether a page is the last of its walk: fewer items than asked, or its cursor at
// total_records.
func (p Page) Last() bool { return int64(len(p.Items)) < p.PerPage || p.Next >= p.Total }

// PageCursor: a page holds at most per_page items and its last_record_number counts them (a
// cursor beyond 64 bits is not judged).
func PageCursor(p Page) error {
	if n := int64(len(p.Items)); n > p.PerPage {
		return fmt.Errorf("expected at most per_page = %d items, got %d", p.PerPage, n)
	}
	if p.Cursor < 0 {
		return nil
	}
	if want := p.Cursor + int64(len(p.Items)); p.Next != want {
		return fmt.Errorf("expected last_record_number %d + %d = %d, got %d", p.Cursor, len(p.Items), want, p.Next)
	}
	return nil
}

// Consecutive: the page after prev (asked at prev's cursor) reports the same total_records.
func Consecutive(prev, next Page) error {
	if next.Total != prev.Total {
		return fmt.Errorf("expected total_records to stay %d from one page to the next, got %d", prev.Total, next.Total)
	}
	return nil
}

// Walk: the pages of one query walked from the start, each asked at its predecessor's cursor:
// each page's cursor counts its items, they agree on total_records, no record appears twice
// and, when the last page is reached, they hold total_records items in all (no gap).
func Walk(idField string, pages []Page) error {
	seen := map[string]int{}
	n := int64(0)
	for i, p := range pages {
		if err := PageCursor(p); err != nil {
			return fmt.Errorf("page %d: %w", i+1, err)
		}
		if i > 0 {
			if err := Consecutive(pages[i-1], p); err != nil {
				return fmt.Errorf("page %d: %w", i+1, err)
			}
		}
		for _, it := range p.Items {
			id := it.Get(idField).String()
			if j, dup := seen[id]; dup {
				return fmt.Errorf("expected each record once, got %s %q on page %d and again on page %d", idField, id, j, i+1)
			}
			seen[id] = i + 1
			n++
		}
	}
	if len(pages) > 0 && pages[len(pages)-1].Last() && n != pages[0].Total {
		return fmt.Errorf("expected the pages to hold total_records = %d records, got %d", pages[0].Total, n)
	}
	return nil
}

// Reverse: a query walked whole in desc lists exactly the ids of its asc walk, reversed.
func Reverse(desc, asc []string) error {
	r := slices.Clone(asc)
	slices.Reverse(r)
	if !slices.Equal(desc, r) {
		return fmt.Errorf("expected desc to be the exact reverse of asc, got\n desc %v\n asc reversed %v", desc, r)
	}
	return nil
}

// DetailMatchesItem: a user's detail shows the total and accounts of its list item.
func DetailMatchesItem(item, detail gjson.Result) error {
	if a, b := item.Get("total_current_market_value").String(), detail.Get("total_current_market_value").String(); a != b {
		return fmt.Errorf("user %s: expected the list item's total %s to equal the detail's %s", item.Get("user_account_id").Str, a, b)
	}
	if a, b := item.Get("accounts").Raw, detail.Get("accounts").Raw; !SameJSON(a, b) {
		return fmt.Errorf("user %s: expected the list item's accounts to equal the detail's, got %s and %s", item.Get("user_account_id").Str, a, b)
	}
	return nil
}

// SameJSON says whether two JSON texts hold the same value (key order aside).
func SameJSON(a, b string) bool {
	var x, y any
	dx, dy := json.NewDecoder(strings.NewReader(a)), json.NewDecoder(strings.NewReader(b))
	dx.UseNumber()
	dy.UseNumber()
	return dx.Decode(&x) == nil && dy.Decode(&y) == nil && reflect.DeepEqual(x, y)
}

// Listed: a subscriptions list holds every subscription created and not deleted.
func Listed(list gjson.Result, live []string) error {
	for _, id := range live {
		if !list.Get(`subscriptions.#(subscription_id==` + quote(id) + `)`).Exists() {
			return fmt.Errorf("expected subscription %s, created and not deleted, to be listed", id)
		}
	}
	return nil
}

// Foreign: a request for another institution's id answers 404.
func Foreign(status int, body []byte) error {
	if status != 404 {
		return fmt.Errorf("expected 404 for another institution's id, got %d %s", status, clip(body))
	}
	return nil
}

func quote(s string) string { return `"` + strings.ReplaceAll(s, `"`, `\"`) + `"` }

func orAbsent(r gjson.Result) string {
	if !r.Exists() {
		return "nothing (absent)"
	}
	return r.Raw
}

func orNone(s string) string {
	if s == "" {
		return "absent"
	}
	return s
}

func clip(b []byte) string {
	b = bytes.TrimSpace(b)
	if len(b) > 200 {
		return string(b[:200]) + "…"
	}
	return string(b)
}
