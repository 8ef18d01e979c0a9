package proxy

import (
	"fmt"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/partnersim/partnersim/features/laws"
	"github.com/tidwall/gjson"
)

// state is what the cross-call laws and the lint remember between exchanges. Only the worker
// touches it, except the write counter the handlers raise.
type state struct {
	// writes counts the writes started (any request but GET, HEAD and OPTIONS, the control
	// plane's included) and inflight those not answered yet; the handlers raise them and each
	// exchange notes them when it starts and ends (exchange.w0, busy, w1). A law that spans
	// calls judges only calls no write overlapped: none in flight when the first started, none
	// started before the last ended. Noted by the exchanges, not read when the worker gets to
	// them, so the judgement does not depend on how far behind the worker is.
	writes   atomic.Int64
	inflight atomic.Int64
	ctlEpoch int64 // control-plane changes that may remove subscriptions (resets, restores)
	// deleting holds the subscription ids of DELETEs in flight (the handlers add them); a
	// subscriptions list notes them when it ends (exchange.deleting).
	deleting sync.Map

	walks     map[string]*walk
	completed map[string]map[string]done // query without sort_order → order → walk
	listed    map[string]seen            // key + user_account_id → the list item
	subs      map[string]sub             // subscription id → who created it
	lists     map[string]subList         // key → its latest subscriptions list
	backoff   map[string]time.Time       // key → no call before
	polls     map[string]time.Time       // key + GET url → last start
	hooks     map[string]int             // delivery id → the first 2xx answer (or the first answer)
}

type walk struct {
	route  route
	pages  []laws.Page
	since  quietSince
	failed bool
	what   string
}

type done struct {
	ids   []string
	since quietSince
}

type seen struct {
	item  gjson.Result
	at    time.Time
	since quietSince
}

// quietSince is an exchange's start as the cross-call laws see it: the writes started before
// it, and whether one was still in flight.
type quietSince struct {
	writes int64
	busy   bool
}

// since is the start of x, for a later exchange's quietUntil.
func since(x *exchange) quietSince { return quietSince{writes: x.w0, busy: x.busy} }

// quietUntil says whether no write overlapped the time from q's exchange's start to x's end.
func (q quietSince) quietUntil(x *exchange) bool { return !q.busy && x.w1 == q.writes }

type sub struct {
	key      string
	at       time.Time
	ctlEpoch int64
}

type subList struct {
	ids map[string]bool
	at  time.Time
}

func newState() *state {
	return &state{walks: map[string]*walk{}, completed: map[string]map[string]done{}, listed: map[string]seen{},
		subs: map[string]sub{}, lists: map[string]subList{}, backoff: map[string]time.Time{}, polls: map[string]time.Time{}}
}

// writing says whether a request may change data: anything but GET, HEAD and OPTIONS.
func writing(method string) bool {
	return method != http.MethodGet && method != http.MethodHead && method != http.MethodOptions
}

// write notes a control-plane exchange.
func (s *state) write(x *exchange) {
	if !writing(x.method) {
		return
	}
	// Only these can remove a subscription from a list its key still reads: deleting an
	// institution or a key leaves that key unanswered (401).
	p := x.url.Path
	if strings.Contains(p, "reset") || strings.Contains(p, "restore") || strings.Contains(p, "snapshot") || strings.Contains(p, "fixtures") {
		s.ctlEpoch++
	}
}

// failed notes an answer that is not 2xx.
func (s *state) failed(p *Proxy, x *exchange) {
	r, id := routeOf(x.url.Path)
	switch {
	case (r == subscription || r == subscriptionTry) && x.status == http.StatusNotFound:
		if x.method == http.MethodDelete {
			delete(s.subs, id)
		}
		s.foreign(p, x, id)
	case r == subscription || r == subscriptionTry:
		s.foreign(p, x, id)
	}
}

// answered runs the laws on a 2xx answer.
func (s *state) answered(p *Proxy, x *exchange, j gjson.Result) {
	b, at, ex := p.book, x.end, x.String()
	r, id := routeOf(x.url.Path)
	for _, u := range users(r, j) {
		b.check(laws.TotalIsSum, ex, laws.UserTotal(u), at)
		b.check(laws.ApprovedAtShown, ex, laws.ApprovedAt(u), at)
	}
	if x.method == http.MethodGet {
		p.record.note(x.key, r, j)
	}
	switch r {
	case userList, orderList:
		s.page(p, x, r, j)
	case userDetail:
		if x.method == http.MethodGet {
			s.detail(p, x, j)
		}
	case subscriptions:
		switch x.method {
		case http.MethodPost:
			if sid := j.Get("subscription_id").String(); sid != "" {
				s.subs[sid] = sub{key: x.key, at: x.end, ctlEpoch: s.ctlEpoch}
			}
		case http.MethodGet:
			s.subscriptionList(p, x, j)
		}
	case subscription:
		if x.method == http.MethodDelete {
			s.foreign(p, x, id)
			delete(s.subs, id)
		}
	case subscriptionTry:
		s.foreign(p, x, id)
	}
}

// page runs the page laws: filters, sort, the cursor, and with the pages before it in the same
// walk, the walk's laws; a walk completed in both orders is compared.
func (s *state) page(p *Proxy, x *exchange, r route, j gjson.Result) {
	b, at, ex := p.book, x.end, x.String()
	q := x.url.Query()
	pg, err := laws.ReadPage(q, x.body)
	if err != nil {
		return // the document's check says what is missing
	}
	honours, resource, idField := laws.UserHonours, "users", "user_account_id"
	if r == orderList {
		honours, resource, idField = laws.OrderHonours, "orders", "order_id"
	}
	if filtered(q) {
		var ferr error
		for _, it := range pg.Items {
			if ferr = honours(q, it); ferr != nil {
				break
			}
		}
		b.check(laws.PageFilters, ex, ferr, at)
	}
	if len(pg.Items) > 1 && (r == orderList || q.Get("sort_key") == "user_account_id") {
		b.check(laws.PageSort, ex, laws.Sorted(resource, q, pg.Items), at)
	}
	if r == userList {
		if len(s.listed) > 10000 {
			clear(s.listed)
		}
		for _, it := range pg.Items {
			s.listed[x.key+"\x00"+it.Get("user_account_id").String()] = seen{item: it, at: x.end, since: since(x)}
		}
	}
	key := x.key + "\x00" + resource + "\x00" + walkQuery(q, true)
	w := s.walks[key]
	switch {
	case !q.Has("last_record_number") || pg.Cursor == 0:
		if w != nil {
			s.stopped(p, w)
		}
		w = &walk{route: r, since: since(x), what: ex}
		if len(s.walks) > 10000 {
			clear(s.walks)
		}
		s.walks[key] = w
	case w == nil || w.failed || len(w.pages) == 0 || w.pages[len(w.pages)-1].Next != pg.Cursor:
		b.check(laws.PagesConsecutive, ex, laws.PageCursor(pg), at) // a jump: the page alone
		return
	case len(w.pages) >= 100 || (!w.since.quietUntil(x) && pg.Total != w.pages[len(w.pages)-1].Total):
		// A walk too long to keep, or one whose total moved while writes were seen: the data
		// changed under it, so it is not judged.
		delete(s.walks, key)
		return
	}
	w.pages = append(w.pages, pg)
	w.what = ex
	if err := laws.Walk(idField, w.pages); err != nil {
		b.check(laws.PagesConsecutive, ex, err, at)
		w.failed = true
		return
	}
	b.check(laws.PagesConsecutive, ex, nil, at)
	if !pg.Last() {
		return
	}
	delete(s.walks, key)
	var ids []string
	for _, p := range w.pages {
		for _, it := range p.Items {
			ids = append(ids, it.Get(idField).String())
		}
	}
	order := q.Get("sort_order")
	if order != "asc" {
		order = "desc"
	}
	both := x.key + "\x00" + resource + "\x00" + walkQuery(q, false)
	if s.completed[both] == nil {
		if len(s.completed) > 10000 {
			clear(s.completed)
		}
		s.completed[both] = map[string]done{}
	}
	s.completed[both][order] = done{ids: ids, since: w.since}
	d, a := s.completed[both]["desc"], s.completed[both]["asc"]
	// The orders are compared when no write came between them, or when both hold the same
	// records: the sort keys never change, so the same records must come in reverse order.
	if d.ids != nil && a.ids != nil && ((d.since == a.since && d.since.quietUntil(x)) || sameSet(d.ids, a.ids)) {
		b.check(laws.DescReversesAsc, ex, laws.Reverse(d.ids, a.ids), at)
		delete(s.completed, both)
	}
}

// sameSet says whether two walks hold the same ids.
func sameSet(a, b []string) bool {
	x, y := slices.Clone(a), slices.Clone(b)
	slices.Sort(x)
	slices.Sort(y)
	return slices.Equal(x, y)
}

// stopped notes a walk that was left: past its first page but not at its last.
func (s *state) stopped(p *Proxy, w *walk) {
	if len(w.pages) < 2 || w.failed {
		return
	}
	last := w.pages[len(w.pages)-1]
	if last.Last() {
		return
	}
	p.book.observe(WalkStopped, w.what, fmt.Sprintf("expected the walk to go on to its last page, got it stopped at record %d of total_records %d", last.Next, last.Total), time.Now())
}

// filtered says whether a list query has a filter the laws can judge.
func filtered(q url.Values) bool {
	for k := range q {
		switch {
		case k == "user_account_id", k == "product", k == "side", k == "status", strings.HasSuffix(k, "_kyc_status"),
			k == "placed_at_start", k == "placed_at_end":
			return true
		}
	}
	return false
}

// walkQuery is a list query without its cursor (and without its sort order unless keepOrder):
// the pages of one walk share it.
func walkQuery(q url.Values, keepOrder bool) string {
	c := url.Values{}
	for k, v := range q {
		if k == "last_record_number" || (!keepOrder && k == "sort_order") {
			continue
		}
		c[k] = slices.Clone(v)
	}
	if keepOrder && c.Get("sort_order") == "" {
		c.Set("sort_order", "desc")
	}
	return c.Encode()
}

// detail compares a user's detail with its list item seen within the minute.
func (s *state) detail(p *Proxy, x *exchange, j gjson.Result) {
	k := x.key + "\x00" + j.Get("user_account_id").String()
	it, ok := s.listed[k]
	if !ok || x.end.Sub(it.at) > time.Minute || !it.since.quietUntil(x) {
		return
	}
	p.book.check(laws.DetailMatchesList, x.String(), laws.DetailMatchesItem(it.item, j), x.end)
}

// subscriptionList checks a key's list holds what it created and has not deleted.
func (s *state) subscriptionList(p *Proxy, x *exchange, j gjson.Result) {
	ids := map[string]bool{}
	for _, it := range j.Get("subscriptions").Array() {
		ids[it.Get("subscription_id").String()] = true
	}
	s.lists[x.key] = subList{ids: ids, at: x.end}
	var live []string
	for id, c := range s.subs {
		if !slices.Contains(x.deleting, id) && c.key == x.key && c.ctlEpoch == s.ctlEpoch && c.at.Before(x.start) {
			live = append(live, id)
		}
	}
	if len(live) == 0 {
		return
	}
	slices.Sort(live)
	p.book.check(laws.SubscriptionKept, x.String(), laws.Listed(j, live), x.end)
}

// foreign judges a request naming a subscription another key created, when this key's list,
// taken after the creation, showed it is not this key's institution's.
func (s *state) foreign(p *Proxy, x *exchange, id string) {
	c, ok := s.subs[id]
	if !ok || c.key == x.key || c.ctlEpoch != s.ctlEpoch {
		return
	}
	l, ok := s.lists[x.key]
	if !ok || l.at.Before(c.at) || l.ids[id] {
		return
	}
	p.book.check(laws.ForeignID404, x.String(), laws.Foreign(x.status, x.body), x.end)
}
