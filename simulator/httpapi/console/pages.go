package console

import (
	"cmp"
	"context"
	"encoding/json"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/shopspring/decimal"

	"github.com/partnersim/partnersim/simulator"
	"github.com/partnersim/partnersim/simulator/httpapi/surface"
	"github.com/partnersim/partnersim/simulator/validate"
	"github.com/partnersim/partnersim/simulator/webhook/signature"
)

// routes lists every page and action of the console.
func (c *Console) routes() {
	c.signIn()
	c.mux.Handle("GET "+Prefix+"static/", c.static)

	c.page("{$}", c.overview)
	c.page("institutions/{id}", c.institution)
	c.page("institutions/{id}/users", c.users)
	c.page("institutions/{id}/orders", c.orders)
	c.page("users/{pid}", c.user)
	c.page("transactions/{id}", c.transaction)
	c.page("deliveries", c.deliveries)
	c.page("clock", c.clock)
	c.page("scenarios", c.scenarios)
	c.page("scenarios/runs/{id}", c.run)
	c.page("requests", c.requests)
	c.page("faults", c.faultsPage)
	c.page("sandbox", c.sandboxPage)
	c.page("proxy", c.proxyPage)
	// Fragments the pages poll for live updates (static/console.js).
	c.page("live/deliveries", c.deliveries)
	c.page("live/clock", c.clock)
	c.page("live/runs/{id}", c.run)
	c.page("live/requests", c.requests)
	c.page("live/proxy", c.proxyPage)
	c.signedIn("", func(w http.ResponseWriter, r *http.Request, sess *session) {
		c.render(w, r, http.StatusNotFound, "notfound", sess, nil)
	})

	c.action("institutions", c.createInstitution)
	c.action("institutions/{id}/keys", c.issueKey)
	c.action("keys/{id}/revoke", c.revokeKey)
	c.action("institutions/{id}/prices", c.setPrice)
	c.action("institutions/{id}/secret", c.rotateSecret)
	c.action("institutions/{id}/users", c.createUser)
	c.action("institutions/{id}/members", c.createMember)
	c.action("users/{pid}/kyc", c.moveKYC)
	c.action("orders", c.placeOrder)
	c.action("transactions", c.placeRobo)
	c.action("transactions/{id}/fill", c.fill)
	c.action("transactions/{id}/cancel", c.end(simulator.OrderCanceled))
	c.action("transactions/{id}/fail", c.end(simulator.OrderFailed))
	c.action("events/{id}/redeliver", c.resend)
	c.action("deliveries/{id}/redeliver", c.redeliver)
	c.action("clock/advance", c.advance)
	c.action("scenarios/{name}/run", c.runScenario)
	c.action("faults", c.addFault)
	c.action("faults/clear", c.clearFaults)
	c.action("faults/{i}/remove", c.removeFault)
	c.action("rate-limit", c.setRateLimit)
	c.action("dns", c.setDNS)
	c.action("snapshots", c.snapshot)
	c.action("reset", c.reset)
}

// live reports whether the request is a live fragment's poll.
func live(r *http.Request) bool {
	return len(r.URL.Path) > len(Prefix)+5 && r.URL.Path[len(Prefix):len(Prefix)+5] == "live/"
}

// loaded is what a page's handler read for it: the page (its template set), its title, the
// template a live poll renders ("" for none) and the templates' data.
type loaded struct {
	name, title, fragment string
	data                  any
}

// show renders a page, or only its live fragment when polled. A fragment gets the page's
// view, so its forms carry the CSRF token and come back to the page.
func (c *Console) show(w http.ResponseWriter, r *http.Request, sess *session, p loaded) {
	v := view{Title: p.title, Nav: p.name, Path: r.URL.RequestURI(), Prefix: Prefix, Data: p.data, CSRF: sess.csrf}
	if live(r) && p.fragment != "" {
		v.Path = Prefix + strings.TrimPrefix(v.Path, Prefix+"live/")
		c.write(w, http.StatusOK, p.name, p.fragment, v)
		return
	}
	v.Flash = c.sessions.takeFlash(sess)
	c.write(w, http.StatusOK, p.name, "layout", v)
}

// fail renders a page that could not be loaded, saying why and what to do.
func (c *Console) fail(w http.ResponseWriter, r *http.Request, sess *session, err error) {
	status := http.StatusBadRequest
	if simulator.IsNotFound(err) {
		status = http.StatusNotFound
	}
	if live(r) {
		http.Error(w, c.errorFlash(err).Message, status)
		return
	}
	c.render(w, r, status, "refused", sess, c.errorFlash(err).Message)
}

type institutionRow struct {
	*simulator.Institution
	Users int
}

// institutionsPage is the institutions page's size: a contract run leaves hundreds of tenants.
const institutionsPage = 50

func (c *Console) overview(r *http.Request) (loaded, error) {
	q := cleanQuery(r.URL.Query())
	search := strings.TrimSpace(q.Get("q"))
	if len(search) > 200 {
		return loaded{}, invalid("Search for at most 200 characters of a name or an id.")
	}
	offset, err := boundedInt(q.Get("last_record_number"), "The position", 0, 0, 1<<31-1)
	if err != nil {
		return loaded{}, err
	}
	list, counts, err := c.cfg.Institutions.Institutions(r.Context())
	if err != nil {
		return loaded{}, err
	}
	var rows []institutionRow
	needle := strings.ToLower(search)
	for i, in := range list {
		if needle == "" || strings.Contains(strings.ToLower(in.Name), needle) || strings.Contains(strings.ToLower(in.ID), needle) {
			rows = append(rows, institutionRow{in, counts[i]})
		}
	}
	total := len(rows)
	rows = rows[min(offset, total):min(offset+institutionsPage, total)]
	return loaded{"overview", "Institutions", "", struct {
		Institutions []institutionRow
		Search       string
		Pager        pager
		Clock        clockData
	}{rows, search, newPager(Prefix, q, offset, institutionsPage, len(rows), total), c.clockNow()}}, nil
}

type priceRow struct {
	Symbol string
	Price  string
}

func (c *Console) institution(r *http.Request) (loaded, error) {
	ctx := r.Context()
	id := r.PathValue("id")
	in, err := c.cfg.Institutions.Institution(ctx, id)
	if err != nil {
		return loaded{}, err
	}
	keys, err := c.cfg.Institutions.Keys(ctx, id)
	if err != nil {
		return loaded{}, err
	}
	subs, err := c.cfg.Institutions.Subscriptions(ctx, id)
	if err != nil {
		return loaded{}, err
	}
	users, err := c.cfg.Institutions.ListUsers(ctx, id, simulator.UserFilter{Limit: 1, SortKey: simulator.SortCreatedAt})
	if err != nil {
		return loaded{}, err
	}
	prices := make([]priceRow, 0, len(in.Prices))
	for sym, p := range in.Prices {
		prices = append(prices, priceRow{sym, p.StringFixed(2)})
	}
	slices.SortFunc(prices, func(a, b priceRow) int { return cmp.Compare(a.Symbol, b.Symbol) })
	type feeRow struct {
		Product       simulator.Product
		Rate, Minimum string
	}
	var fees []feeRow
	for _, p := range simulator.Products {
		if f, ok := in.Fees[p]; ok {
			fees = append(fees, feeRow{p, f.Rate.String(), simulator.FormatMoney(f.Minimum)})
		}
	}
	return loaded{"institution", in.Name, "", struct {
		In       *simulator.Institution
		Clock    institutionClock
		Users    int
		Keys     []*simulator.APIKey
		Subs     []*simulator.Subscription
		Prices   []priceRow
		Fees     []feeRow
		Scopes   []simulator.Scope
		Products []simulator.Product
		KYC      []simulator.KYCStatus
	}{in, c.institutionClockOf(in.ID), users.Total, keys, subs, prices, fees, simulator.Scopes, simulator.Products, simulator.KYCStatuses}}, nil
}

// cleanQuery drops a GET form's empty fields, so an untouched filter is an absent one.
func cleanQuery(q url.Values) url.Values {
	out := url.Values{}
	for k, vs := range q {
		for _, v := range vs {
			if v != "" {
				out.Add(k, v)
			}
		}
	}
	return out
}

// pager is a list's position and its previous/next links.
type pager struct {
	From, To, Total int
	Prev, Next      string
}

func newPager(base string, q url.Values, offset, limit, n, total int) pager {
	p := pager{From: offset + 1, To: offset + n, Total: total}
	if n == 0 {
		p.From = 0
	}
	if offset > 0 {
		p.Prev = withParam(base, q, "last_record_number", strconv.Itoa(max(0, offset-limit)))
	}
	if offset+n < total {
		p.Next = withParam(base, q, "last_record_number", strconv.Itoa(offset+n))
	}
	return p
}

// withParam is the link to base with the query q, its parameter name set to value ("" leaves
// it out): a list's other pages.
func withParam(base string, q url.Values, name, value string) string {
	q2 := make(url.Values, len(q)+1)
	for k, vs := range q {
		q2[k] = vs
	}
	q2.Del(name)
	if value != "" {
		q2.Set(name, value)
	}
	return base + "?" + q2.Encode()
}

// listData is what an institution's list page shows around its rows: the institution, the
// filters given, the pager and why no rows were read.
type listData struct {
	In    *simulator.Institution
	Q     url.Values
	Pager pager
	Error string
}

// paged is where a page of a list sits: its offset and size, its rows and every match.
type paged struct{ offset, limit, n, total int }

// institutionList reads an institution's list page (name: "users", "orders"): the institution
// (a failure fails the page), then read's page with the filters given (empty fields dropped,
// so an untouched filter is an absent one); a bad filter or a failed read is said on the
// page, above no rows.
func (c *Console) institutionList(r *http.Request, name string, read func(ctx context.Context, instID, rawQuery string) (paged, error)) (listData, error) {
	id := r.PathValue("id")
	in, err := c.cfg.Institutions.Institution(r.Context(), id)
	if err != nil {
		return listData{}, err
	}
	d := listData{In: in, Q: cleanQuery(r.URL.Query())}
	p, err := read(r.Context(), id, d.Q.Encode())
	if err != nil {
		d.Error = c.errorFlash(err).Message
		return d, nil
	}
	d.Pager = newPager(Prefix+"institutions/"+url.PathEscape(id)+"/"+name, d.Q, p.offset, p.limit, p.n, p.total)
	return d, nil
}

type userRow struct {
	*simulator.User
	Value string
}

func (c *Console) users(r *http.Request) (loaded, error) {
	var rows []userRow
	var elapsed string
	d, err := c.institutionList(r, "users", func(ctx context.Context, instID, rawQuery string) (paged, error) {
		f, err := surface.ParseUserList(rawQuery)
		if err != nil {
			return paged{}, err
		}
		start := time.Now()
		page, err := c.cfg.Institutions.ListUsers(ctx, instID, f)
		if err != nil {
			return paged{}, err
		}
		elapsed = time.Since(start).Round(time.Microsecond).String()
		for _, u := range page.Users {
			rows = append(rows, userRow{u, simulator.FormatMoney(u.TotalMarketValue(page.Prices))})
		}
		return paged{f.Offset, f.Limit, len(page.Users), page.Total}, nil
	})
	if err != nil {
		return loaded{}, err
	}
	return loaded{"users", "Users of " + d.In.Name, "", struct {
		listData
		Users    []userRow
		Products []simulator.Product
		KYC      []simulator.KYCStatus
		KYCKeys  []simulator.Product
		Elapsed  string
	}{d, rows, simulator.Products, simulator.KYCStatuses,
		[]simulator.Product{simulator.ProductCrypto, simulator.ProductSecurities, simulator.ProductRothIRA, simulator.ProductRobo}, elapsed}}, nil
}

func (c *Console) orders(r *http.Request) (loaded, error) {
	var orders []*simulator.Order
	d, err := c.institutionList(r, "orders", func(ctx context.Context, instID, rawQuery string) (paged, error) {
		f, err := surface.ParseOrderList(rawQuery)
		if err != nil {
			return paged{}, err
		}
		page, err := c.cfg.Institutions.ListOrders(ctx, instID, f)
		if err != nil {
			return paged{}, err
		}
		orders = page.Orders
		return paged{f.Offset, f.Limit, len(page.Orders), page.Total}, nil
	})
	if err != nil {
		return loaded{}, err
	}
	return loaded{"orders", "Orders of " + d.In.Name, "", struct {
		listData
		Orders   []*simulator.Order
		Products []simulator.Product
		Statuses []simulator.OrderStatus
	}{d, orders, simulator.Products, simulator.OrderStatuses}}, nil
}

type accountView struct {
	*simulator.Account
	Value    string
	Next     []simulator.KYCStatus
	Holdings []holdingView
}

type holdingView struct {
	Symbol, Quantity, Price, Value string
}

func (c *Console) user(r *http.Request) (loaded, error) {
	ctx := r.Context()
	u, err := c.cfg.Institutions.User(ctx, r.PathValue("pid"))
	if err != nil {
		return loaded{}, err
	}
	in, err := c.cfg.Institutions.Institution(ctx, u.InstitutionID)
	if err != nil {
		return loaded{}, err
	}
	orders, err := c.cfg.Institutions.ListOrders(ctx, u.InstitutionID, simulator.OrderFilter{UserAccountID: &u.UserAccountID, Limit: 25, Desc: true})
	if err != nil {
		return loaded{}, err
	}
	events, err := c.userEvents(r, u)
	if err != nil {
		return loaded{}, err
	}
	var accounts []accountView
	var tradable []simulator.Product
	robo := false
	for i := range u.Accounts {
		a := &u.Accounts[i]
		av := accountView{Account: a, Value: simulator.FormatMoney(a.MarketValue(in.Prices)), Next: simulator.NextKYC(a.KYCStatus)}
		for _, h := range a.Holdings {
			hv := holdingView{Symbol: h.Symbol, Quantity: simulator.FormatQuantity(h.Quantity), Price: "—", Value: "—"}
			if p, ok := in.Prices[h.Symbol]; ok {
				hv.Price, hv.Value = p.StringFixed(2), simulator.FormatMoney(h.Quantity.Mul(p).RoundBank(2))
			}
			av.Holdings = append(av.Holdings, hv)
		}
		accounts = append(accounts, av)
		switch {
		case a.Product == simulator.ProductRobo:
			robo = true
		case a.KYCStatus == simulator.KYCApproved: // only an approved account can trade
			tradable = append(tradable, a.Product)
		}
	}
	symbols := make([]string, 0, len(in.Prices))
	for s := range in.Prices {
		symbols = append(symbols, s)
	}
	slices.Sort(symbols)
	return loaded{"user", u.UserAccountID, "", struct {
		U        *simulator.User
		In       *simulator.Institution
		Value    string
		Accounts []accountView
		Orders   []*simulator.Order
		Total    int
		Tradable []simulator.Product
		Robo     bool
		Symbols  []string
		Events   []eventRow
	}{u, in, simulator.FormatMoney(u.TotalMarketValue(in.Prices)), accounts, orders.Orders, orders.Total, tradable, robo, symbols, events}}, nil
}

// userEventsShown bounds the deliveries a user's page reads for its events.
const userEventsShown = 50

// eventRow is one event about a user with its deliveries, for the user's page.
type eventRow struct {
	EventID    string
	EventType  simulator.EventType
	Summary    string
	CreatedAt  time.Time
	Deliveries []deliveryView
}

// userEvents lists the events about u, newest first, each with its deliveries (from the newest
// userEventsShown deliveries).
func (c *Console) userEvents(r *http.Request, u *simulator.User) ([]eventRow, error) {
	page, err := c.cfg.Deliveries.Deliveries(r.Context(), simulator.DeliveryFilter{InstitutionID: u.InstitutionID, PlatformID: u.PlatformID, Limit: userEventsShown})
	if err != nil {
		return nil, err
	}
	var rows []eventRow
	at := map[string]int{}
	for _, d := range page.Deliveries {
		v := viewDelivery(d)
		i, ok := at[d.EventID]
		if !ok {
			i = len(rows)
			at[d.EventID] = i
			rows = append(rows, eventRow{EventID: d.EventID, EventType: d.EventType, Summary: v.Summary, CreatedAt: d.CreatedAt})
		}
		rows[i].Deliveries = append(rows[i].Deliveries, v)
	}
	return rows, nil
}

func (c *Console) transaction(r *http.Request) (loaded, error) {
	t, orders, err := c.cfg.Trading.TransactionAny(r.Context(), r.PathValue("id"))
	if err != nil {
		return loaded{}, err
	}
	return loaded{"transaction", "Transaction " + t.ID, "", struct {
		T      *simulator.Transaction
		Orders []*simulator.Order
	}{t, orders}}, nil
}

// deliveryView is one delivery as the log shows it.
type deliveryView struct {
	*simulator.Delivery
	Summary string
	Headers [][2]string
}

func viewDelivery(d *simulator.Delivery) deliveryView {
	var body struct {
		IsTest bool `json:"is_test"`
		Data   struct {
			Product       string `json:"product"`
			KYCStatus     string `json:"kyc_status"`
			TransactionID string `json:"transaction_id"`
			Status        string `json:"status"`
		} `json:"data"`
	}
	_ = json.Unmarshal(d.Body, &body)
	v := deliveryView{Delivery: d}
	switch {
	case body.Data.KYCStatus != "":
		v.Summary = body.Data.Product + " → " + body.Data.KYCStatus
	case body.Data.TransactionID != "":
		v.Summary = body.Data.TransactionID + " " + body.Data.Status
	}
	if body.IsTest {
		v.Summary += " (test)"
	}
	v.Headers = [][2]string{{"Content-Type", "application/json"}, {"User-Agent", "partnersim-webhooks/1"}, {signature.HeaderID, d.EventID}}
	return v
}

// deliveryPageSize is the delivery log's page unless the filter form asks for another.
const deliveryPageSize = 50

func (c *Console) deliveries(r *http.Request) (loaded, error) {
	q := cleanQuery(r.URL.Query())
	if q.Get("limit") == "" {
		q.Set("limit", strconv.Itoa(deliveryPageSize))
	}
	// The control plane's own reading of the query: the same filters, bounds and messages.
	v := validate.New()
	f := surface.DeliveryFilterQuery(v, v.Query(q))
	if err := v.Err(); err != nil {
		return loaded{}, err
	}
	page, err := c.cfg.Deliveries.Deliveries(r.Context(), f)
	if err != nil {
		return loaded{}, err
	}
	views := make([]deliveryView, len(page.Deliveries))
	for i, d := range page.Deliveries {
		views[i] = viewDelivery(d)
	}
	data := struct {
		Deliveries  []deliveryView
		Q           url.Values
		Statuses    []string
		EventTypes  []simulator.EventType
		Next, First string
		Live        string
	}{Deliveries: views, Q: q, Statuses: []string{simulator.DeliveryPending, simulator.DeliveryDelivered, simulator.DeliveryFailed},
		EventTypes: []simulator.EventType{simulator.EventKYC, simulator.EventTransaction}}
	if page.NextCursor != "" {
		data.Next = withParam(Prefix+"deliveries", q, "cursor", page.NextCursor)
	}
	if f.Cursor != "" {
		data.First = withParam(Prefix+"deliveries", q, "cursor", "")
	} else {
		// Only the first page follows new deliveries; an older page stays as it was read. The
		// poll asks for the page's own URI, so the fragment's forms come back to the same
		// address as the page's and an unchanged log renders byte for byte as shown.
		data.Live = Prefix + "live/" + strings.TrimPrefix(r.URL.RequestURI(), Prefix)
	}
	return loaded{"deliveries", "Deliveries", "rows", data}, nil
}

type clockData struct {
	Now, Virtual string
	Frozen       bool
	Offset       string
	// Institutions are the clocks of the institutions advanced on their own.
	Institutions []institutionClock
	Due          []deliveryView
}

// institutionClock is an institution's own virtual clock, as the console shows it.
type institutionClock struct {
	ID, Virtual, Ahead string
}

func (c *Console) clockNow() clockData {
	clk := c.cfg.Clock
	now, virt := clk.Now(), clk.SchedulerNow()
	d := clockData{Now: simulator.FormatTime(now), Virtual: simulator.FormatTime(virt), Frozen: clk.Frozen(), Offset: virt.Sub(now).Round(time.Second).String()}
	for _, ic := range clk.Institutions() {
		d.Institutions = append(d.Institutions, institutionClock{ic.InstitutionID, simulator.FormatTime(ic.Now), ic.Offset.Round(time.Second).String()})
	}
	return d
}

// institutionClockOf is one institution's virtual clock: the process-wide one plus its own
// offset.
func (c *Console) institutionClockOf(id string) institutionClock {
	clk := c.cfg.Clock
	o := clk.Offset(id)
	return institutionClock{id, simulator.FormatTime(clk.SchedulerNow().Add(o)), o.Round(time.Second).String()}
}

// presets are the clock page's advance buttons, in seconds: the retry schedule's steps.
var presets = []struct {
	Label   string
	Seconds int
}{{"+5 s", 5}, {"+1 min", 60}, {"+5 min", 300}, {"+30 min", 1800}, {"+1 h", 3600}, {"+2 h", 7200}, {"+5 h", 18000}, {"+10 h", 36000}, {"+1 day", 86400}}

func (c *Console) clock(r *http.Request) (loaded, error) {
	d := c.clockNow()
	due, err := c.cfg.Deliveries.PendingDeliveries(r.Context(), 20)
	if err != nil {
		return loaded{}, err
	}
	for _, x := range due {
		d.Due = append(d.Due, viewDelivery(x))
	}
	return loaded{"clock", "Virtual clock", "due", struct {
		clockData
		Presets any
	}{d, presets}}, nil
}

func (c *Console) scenarios(r *http.Request) (loaded, error) {
	list, err := c.cfg.Scenarios.Scenarios(r.Context())
	if err != nil {
		return loaded{}, err
	}
	ins, _, err := c.cfg.Institutions.Institutions(r.Context())
	if err != nil {
		return loaded{}, err
	}
	return loaded{"scenarios", "Scenarios", "", struct {
		Scenarios    []simulator.ScenarioInfo
		Institutions []*simulator.Institution
	}{list, ins}}, nil
}

func (c *Console) run(r *http.Request) (loaded, error) {
	run, err := c.cfg.Scenarios.ScenarioRun(r.Context(), r.PathValue("id"))
	if err != nil {
		return loaded{}, err
	}
	return loaded{"run", "Scenario run " + run.RunID, "steps", struct {
		Run     *simulator.ScenarioRun
		Clock   clockData
		Presets any
	}{run, c.clockNow(), presets}}, nil
}

func (c *Console) requests(r *http.Request) (loaded, error) {
	limit, err := boundedInt(r.URL.Query().Get("limit"), "limit", 100, 1, 1000)
	if err != nil {
		return loaded{}, err
	}
	return loaded{"requests", "Request journal", "entries", struct {
		Entries []surface.JournalEntry
		Limit   int
		Live    string
	}{c.cfg.Traffic.Requests(limit), limit, Prefix + "live/requests?limit=" + strconv.Itoa(limit)}}, nil
}

// proxyPage shows what a contract proxy in front of this sandbox last reported (PUT
// /_sandbox/proxy-report): its rules and recent exchanges.
func (c *Console) proxyPage(r *http.Request) (loaded, error) {
	var report *surface.ProxyReport
	if rep, ok := c.cfg.Traffic.ProxyReport(); ok {
		report = &rep
	}
	return loaded{"proxy", "Contract proxy", "report", struct {
		Report   *surface.ProxyReport
		Live     string
		Upstream string
	}{report, Prefix + "live/proxy", "http://" + r.Host}}, nil
}

func (c *Console) faultsPage(r *http.Request) (loaded, error) {
	rps, burst := c.cfg.Traffic.RateLimit()
	return loaded{"faults", "Faults and rate limit", "", struct {
		Rules        []surface.FaultRule
		RPS          string
		Burst        int
		MaxLatencyMS int
	}{c.cfg.Traffic.Faults(), decimal.NewFromFloat(rps).String(), burst, surface.MaxFaultLatencyMS}}, nil
}

func (c *Console) sandboxPage(r *http.Request) (loaded, error) {
	dns := c.cfg.Sandbox.DNS(r.Context())
	hosts := make([]string, 0, len(dns))
	for h := range dns {
		hosts = append(hosts, h)
	}
	slices.Sort(hosts)
	return loaded{"sandbox", "Snapshots, reset and DNS", "", struct {
		Hosts []string
		DNS   map[string][]string
	}{hosts, dns}}, nil
}
