package httpapi

import (
	"encoding/json"
	"errors"
	"fmt"
	"math/big"
	"math/rand/v2"
	"slices"
	"testing"
	"time"

	"github.com/shopspring/decimal"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/partnersim/partnersim/simulator"
)

// The reference: Get User Detail and the user list as encoding/json renders the spec's shapes
// from structs (how render.go rendered them before the hand-written appenders). The hand
// rendering must match it byte for byte.

type refPoint struct {
	AsOf      string `json:"as_of"`
	CostBasis string `json:"cost_basis"`
	Value     string `json:"value"`
}

type refUserItem struct {
	UserAccountID           string        `json:"user_account_id"`
	TotalCurrentMarketValue string        `json:"total_current_market_value"`
	Accounts                []accountJSON `json:"accounts"`
}

type refHistory struct {
	AllTime   []refPoint `json:"all_time"`
	PastDay   []refPoint `json:"past_day"`
	PastWeek  []refPoint `json:"past_week"`
	PastMonth []refPoint `json:"past_month"`
	PastYear  []refPoint `json:"past_year"`
}

type refIdentity struct {
	ID   string `json:"id"`
	Type string `json:"type"`
}

type refDetail struct {
	UserAccountID           string        `json:"user_account_id"`
	TotalCurrentMarketValue string        `json:"total_current_market_value"`
	Accounts                []accountJSON `json:"accounts"`
	History                 refHistory    `json:"historical_market_value"`
	Identities              struct {
		CoreIDs                []refIdentity `json:"core_ids"`
		DBPIDs                 []refIdentity `json:"dbp_ids"`
		PlatformUserIdentifier string        `json:"platform_user_identifier"`
	} `json:"identities"`
	Terms termsJSON `json:"terms_and_conditions"`
}

func refItem(u *simulator.User, prices map[string]decimal.Decimal) refUserItem {
	out := refUserItem{UserAccountID: u.UserAccountID, Accounts: make([]accountJSON, 0, len(u.Accounts))}
	total := decimal.Zero
	for i := range u.Accounts {
		a := &u.Accounts[i]
		v := a.MarketValue(prices)
		total = total.Add(v)
		aj := accountJSON{Product: a.Product, CurrentMarketValue: simulator.FormatMoney(v), KYCStatus: a.KYCStatus}
		if a.ShowsApprovedAt() {
			aj.KYCApprovedAt = simulator.FormatTime(*a.KYCApprovedAt)
		}
		out.Accounts = append(out.Accounts, aj)
	}
	out.TotalCurrentMarketValue = simulator.FormatMoney(total)
	return out
}

func refPoints(ps []simulator.ValuePoint) []refPoint {
	out := make([]refPoint, 0, len(ps))
	for _, p := range ps {
		out = append(out, refPoint{AsOf: simulator.FormatTime(p.AsOf), CostBasis: simulator.FormatMoney(decimal.New(int64(p.CostBasis), -2)),
			Value: simulator.FormatMoney(decimal.New(int64(p.Value), -2))})
	}
	return out
}

func refIdentities(refs []simulator.IdentityRef) []refIdentity {
	out := make([]refIdentity, 0, len(refs))
	for _, r := range refs {
		out = append(out, refIdentity{ID: r.ID, Type: r.Type})
	}
	return out
}

func refRenderDetail(t *testing.T, u *simulator.User, v *simulator.UserView, now time.Time) string {
	item := refItem(u, v.Prices)
	g := simulator.NewHistorySeed(u, v.Prices, now).Generate()
	if u.History != nil {
		g = simulator.NewHistorySeed(u, v.Prices, now).Replay(u.History)
	}
	h := &g
	d := refDetail{UserAccountID: item.UserAccountID, TotalCurrentMarketValue: item.TotalCurrentMarketValue, Accounts: item.Accounts,
		History: refHistory{AllTime: refPoints(h.AllTime), PastDay: refPoints(h.PastDay), PastWeek: refPoints(h.PastWeek),
			PastMonth: refPoints(h.PastMonth), PastYear: refPoints(h.PastYear)},
		Terms: termsJSON{AcceptedAt: simulator.FormatTime(u.Terms.AcceptedAt), Version: u.Terms.Version}}
	d.Identities.CoreIDs, d.Identities.DBPIDs = refIdentities(v.CoreIDs), refIdentities(v.DBPIDs)
	d.Identities.PlatformUserIdentifier = u.PlatformID
	b, err := simulator.EncodeJSON(d)
	require.NoError(t, err)
	return string(b)
}

// tricky strings: quotes, backslashes, control characters, HTML, non-ASCII, U+2028, DEL,
// invalid UTF-8.
var renderStrings = []string{"", "u_1", `a"b`, `c\d`, "line\nbreak", "tab\t\r\b\f\x01", "<b>&amp;</b>", "émigré", "☃\u2028\u2029", "\x7f", "bad\xffutf8", "usr_hfcu_0001"}

func randomUser(r *rand.Rand) (*simulator.User, map[string]decimal.Decimal) {
	str := func() string { return renderStrings[r.IntN(len(renderStrings))] }
	tm := func() time.Time {
		t := time.Date(2000+r.IntN(30), time.Month(1+r.IntN(12)), 1+r.IntN(28), r.IntN(24), r.IntN(60), r.IntN(60), 0, time.UTC)
		if r.IntN(3) == 0 {
			t = t.Add(time.Duration(r.IntN(1e9)))
		}
		if r.IntN(4) == 0 {
			t = t.In(time.FixedZone("x", 3600*(r.IntN(25)-12)))
		}
		return t
	}
	dec := func() decimal.Decimal {
		switch r.IntN(5) {
		case 0:
			return decimal.Zero
		case 1:
			d, _ := decimal.NewFromString("123456789012345678901234.565")
			return d
		case 2:
			return decimal.New(int64(r.IntN(1e9))-1e8, -int32(r.IntN(9)))
		}
		return decimal.New(int64(r.IntN(1e7)), -2)
	}
	prices := map[string]decimal.Decimal{"BTC": decimal.New(6400012, -2), "AAPL": decimal.New(19001, -2), "VTI": decimal.New(2501, -1)}
	u := &simulator.User{PlatformID: str(), UserAccountID: str(), CreatedAt: tm(), Terms: simulator.Terms{AcceptedAt: tm(), Version: str()}}
	for _, p := range simulator.Products[:r.IntN(len(simulator.Products)+1)] {
		a := simulator.Account{Product: p, KYCStatus: simulator.KYCStatuses[r.IntN(len(simulator.KYCStatuses))], Cash: dec()}
		if r.IntN(8) == 0 { // values the spec does not list, escapes included: rendered as any string
			a.Product = simulator.Product(str())
		}
		if r.IntN(8) == 0 {
			a.KYCStatus = simulator.KYCStatus(str())
		}
		if r.IntN(2) == 0 {
			at := tm()
			a.KYCApprovedAt = &at
		}
		for _, sym := range []string{"BTC", "AAPL", "NOPE"}[:r.IntN(4)] {
			a.Holdings = append(a.Holdings, simulator.Holding{Symbol: sym, Quantity: dec()})
		}
		u.Accounts = append(u.Accounts, a)
	}
	if r.IntN(4) == 0 {
		var h simulator.History
		for _, s := range []*[]simulator.ValuePoint{&h.AllTime, &h.PastDay, &h.PastWeek, &h.PastMonth, &h.PastYear} {
			for range r.IntN(4) {
				*s = append(*s, simulator.ValuePoint{AsOf: tm(), CostBasis: simulator.Cents(r.Int64N(1e12) - 1e11), Value: simulator.Cents(r.Int64N(1e12))})
			}
		}
		u.History = &h
	}
	return u, prices
}

func TestRenderMatchesEncoder(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 15))
	histories := newHistoryCache()
	plainViews := 0
	for i := range 3000 {
		u, prices := randomUser(r)
		now := time.Date(2026, 11, 24, r.IntN(24), r.IntN(60), 0, 0, time.UTC)
		view := u.View(prices)
		v := &view
		v.CoreIDs, v.DBPIDs = []simulator.IdentityRef{}, []simulator.IdentityRef{}
		for range r.IntN(3) {
			v.CoreIDs = append(v.CoreIDs, simulator.IdentityRef{ID: renderStrings[r.IntN(len(renderStrings))], Type: "member_number"})
			v.DBPIDs = append(v.DBPIDs, simulator.IdentityRef{ID: renderStrings[r.IntN(len(renderStrings))], Type: "q2"})
		}
		if len(v.DBPIDs) > 0 && r.IntN(4) == 0 { // a vendor's dbp type is any string
			v.DBPIDs[0].Type = renderStrings[r.IntN(len(renderStrings))]
		}
		clock := simulator.NewClock(func() time.Time { return now })
		want := refRenderDetail(t, u, v, now)
		require.Equal(t, want, string(appendUserDetail(nil, v, clock, histories)), "user %d", i)
		require.Equal(t, want, string(appendUserDetail(nil, v, clock, histories)), "user %d seen again: kept", i)
		require.Equal(t, want, string(appendUserDetail(nil, v, clock, histories)), "user %d from the history cache", i)
		require.True(t, json.Valid([]byte(want)))
		// And with its strings noted plain, when they are (the store's check: UserView.CheckPlain).
		if v.CheckPlain(); v.PlainStrings {
			plainViews++
			require.Equal(t, want, string(appendUserDetail(nil, v, clock, histories)), "user %d noted plain", i)
		}
	}
	require.Greater(t, plainViews, 10, "some views are rendered with their strings noted plain")

	// The list page.
	asRowsN, plainN := 0, 0
	for i := range 200 {
		page := &simulator.UserItemPage{Total: r.IntN(1000), Items: []simulator.UserItem{}}
		var items []refUserItem
		for range r.IntN(5) {
			u, prices := randomUser(r)
			page.Items = append(page.Items, u.Item(prices, nil))
			items = append(items, refItem(u, prices))
		}
		if items == nil {
			items = []refUserItem{}
		}
		cursor := new(big.Int).Lsh(big.NewInt(int64(r.IntN(100))), uint(r.IntN(80)))
		want, err := simulator.EncodeJSON(pageJSON[refUserItem]{Items: items, TotalRecords: page.Total, LastRecordNumber: nextCursor(cursor, len(items)), PerPage: 25})
		require.NoError(t, err)
		require.Equal(t, string(want), string(renderUserPage(nil, page, cursor, 25)), "page %d", i)
		// The same page given as rows, when its items can be.
		if rows, ok := asRows(page.Items); ok {
			asRowsN++
			require.Equal(t, string(want), string(renderUserPage(nil, &simulator.UserItemPage{Total: page.Total, Rows: rows}, cursor, 25)), "page %d as rows", i)
			// And with its ids noted plain, when they are (the store's check: UserRows.PlainUAIDs).
			if simulator.PlainJSON(rows.UAIDs) {
				plainN, rows.PlainUAIDs = plainN+1, true
				require.Equal(t, string(want), string(renderUserPage(nil, &simulator.UserItemPage{Total: page.Total, Rows: rows}, cursor, 25)), "page %d as plain rows", i)
			}
		}
	}
	require.Greater(t, asRowsN, 20, "some pages are rendered as rows")
	require.Greater(t, plainN, 5, "some pages are rendered as rows of plain ids")
}

// asRows returns items as simulator.UserRows, ok false when one of them has an amount that is
// not whole cents or a product or KYC status the spec does not list.
func asRows(items []simulator.UserItem) (_ *simulator.UserRows, ok bool) {
	r := &simulator.UserRows{Items: []simulator.UserRow{}}
	cents := func(a simulator.Amount) (simulator.Cents, bool) {
		return simulator.Cents(a.Coef), a.Big == nil && a.Exp == -2
	}
	for _, it := range items {
		total, ok := cents(it.Total)
		if !ok {
			return nil, false
		}
		for _, a := range it.Accounts {
			v, ok := cents(a.Value)
			p, k := simulator.ProductIndex(a.Product), simulator.KYCIndex(a.KYCStatus)
			if !ok || p < 0 || k < 0 {
				return nil, false
			}
			r.Accounts = append(r.Accounts, simulator.AccountRow{Value: v, Product: uint8(p), KYC: uint8(k), Shows: a.ShowsApprovedAt,
				ApprovedSec: a.ApprovedAt.Unix(), ApprovedNsec: int32(a.ApprovedAt.Nanosecond())})
		}
		r.UAIDs = append(r.UAIDs, it.UserAccountID...)
		r.Items = append(r.Items, simulator.UserRow{UAIDEnd: int32(len(r.UAIDs)), AccountsEnd: int32(len(r.Accounts)), Total: total})
	}
	return r, true
}

// The history cache keeps the current hour's series only, of seeds seen more than once, and
// stays within its bound.
func TestHistoryCacheBounded(t *testing.T) {
	c := newHistoryCache()
	prices := map[string]decimal.Decimal{"BTC": decimal.New(64000, 0)}
	at := time.Date(2026, 11, 24, 10, 5, 0, 0, time.UTC)
	user := func(i int) *simulator.User {
		return &simulator.User{PlatformID: fmt.Sprint("usr_", i), CreatedAt: time.Date(2020, 1, 1, 0, 0, 0, 0, time.UTC),
			Accounts: []simulator.Account{{Product: simulator.ProductCrypto, Cash: decimal.New(int64(100+i), 0)}}}
	}
	for i := range 200 {
		c.append(nil, simulator.NewHistorySeed(user(i), prices, at))
	}
	assert.Less(t, len(c.m), 5, "a seed shown once is not kept (but for a rare shared doorkeeper bit)")
	for i := range 3000 {
		c.append(nil, simulator.NewHistorySeed(user(i), prices, at))
		c.append(nil, simulator.NewHistorySeed(user(i), prices, at))
		assert.LessOrEqual(t, c.bytes, historyCacheMax)
	}
	assert.NotEmpty(t, c.m)
	// Seeds enough that the hour's series would not fit in four caches: nothing more is kept
	// (they would hardly ever be read again before the cache starts over).
	clear(c.m)
	c.bytes = 0
	for i := 3000; i < 20000; i++ {
		c.append(nil, simulator.NewHistorySeed(user(i), prices, at))
	}
	for i := 3000; i < 3100; i++ {
		c.append(nil, simulator.NewHistorySeed(user(i), prices, at))
	}
	assert.Empty(t, c.m, "too many distinct seeds this hour: not kept")
	u := &simulator.User{PlatformID: "usr_next_hour", Accounts: []simulator.Account{{Product: simulator.ProductCrypto, Cash: decimal.New(5, 0)}}}
	c.append(nil, simulator.NewHistorySeed(u, prices, at.Add(time.Hour)))
	assert.Empty(t, c.m, "a new hour starts the cache again")
	c.append(nil, simulator.NewHistorySeed(u, prices, at.Add(time.Hour)))
	assert.Len(t, c.m, 1, "seen twice in the new hour: kept")
}

// A series kept in the cache is what a later request of the same seed in the same hour is
// served (the doorkeeper bit found set is what lets the look-up happen), and a seed of another
// hour is not.
func TestHistoryCacheServesWhatItKept(t *testing.T) {
	c := newHistoryCache()
	at := time.Date(2026, 11, 30, 1, 5, 0, 0, time.UTC)
	u := &simulator.User{PlatformID: "usr_kept", CreatedAt: time.Date(2024, 3, 1, 12, 0, 0, 0, time.UTC),
		Accounts: []simulator.Account{{Product: simulator.ProductCrypto, Cash: decimal.New(1234, 0)}}}
	seed := simulator.NewHistorySeed(u, nil, at)
	want := string(c.append(nil, seed))
	require.Empty(t, c.m, "seen once: not kept")
	require.Equal(t, want, string(c.append(nil, seed)))
	require.Contains(t, c.m, seed, "seen twice: kept")
	c.m[seed] = []byte("cached")
	assert.Equal(t, "xcached", string(c.append([]byte("x"), seed)), "served from the cache")
	next := seed.At(at.Add(time.Hour))
	assert.NotEqual(t, "cached", string(c.append(nil, next)), "another hour's seed is rendered")
}

// Orders and order pages, hand-rendered, match what simulator.EncodeJSON renders from renderOrder's structs,
// whether the store noted plain strings (OrderItem.PlainStrings) or not, and whether the page
// holds its items or reads them as rows (OrderItemPage.Read): values the spec lists and ones it
// does not, amounts of any exponent, times with and without fractions of a second, before 1970
// too.
func TestRenderOrdersMatchEncoder(t *testing.T) {
	r := rand.New(rand.NewPCG(5, 15))
	str := func() string { return renderStrings[r.IntN(len(renderStrings))] }
	dec := func() decimal.Decimal {
		if r.IntN(5) == 0 {
			d, _ := decimal.NewFromString("-98765432109876543210.123456789")
			return d
		}
		return decimal.New(r.Int64N(1e12)-1e9, -int32(r.IntN(12)))
	}
	for i := range 300 {
		page := &simulator.OrderItemPage{Total: r.IntN(1e6), Items: []simulator.OrderItem{}}
		items := []orderJSON{}
		for range r.IntN(6) {
			at := time.Date([]int{1962, 2020, 2023, 2026}[r.IntN(4)]+r.IntN(4), time.Month(1+r.IntN(12)), 1+r.IntN(28), r.IntN(24), r.IntN(60), r.IntN(60), r.IntN(3)*r.IntN(1e9), time.UTC)
			o := &simulator.Order{ID: str(), UserAccountID: str(), Product: append(slices.Clone(simulator.Products), simulator.Product(str()))[r.IntN(5)], Side: []simulator.Side{simulator.SideBuy, simulator.SideSell, simulator.Side(str())}[r.IntN(3)],
				Symbol: str(), Quantity: dec(), Notional: dec(), Fee: dec(), Status: append(slices.Clone(simulator.OrderStatuses), simulator.OrderStatus(str()))[r.IntN(5)], PlacedAt: at,
				IsRecurringOrder: r.IntN(2) == 0, RecurringOrderID: str()}
			if r.IntN(2) == 0 {
				c := at.Add(time.Duration(r.IntN(1e6)) * time.Millisecond).In(time.FixedZone("x", 7200))
				o.CompletedAt = &c
			}
			it := o.Item()
			if r.IntN(2) == 0 { // as a store that notes plain strings gives it
				it.PlainStrings = simulator.PlainJSON(o.ID) && simulator.PlainJSON(o.UserAccountID) && simulator.PlainJSON(o.Symbol) && simulator.PlainJSON(o.RecurringOrderID)
			}
			page.Items = append(page.Items, it)
			items = append(items, renderOrder(o))
		}
		cursor := new(big.Int).Lsh(big.NewInt(int64(r.IntN(100))), uint(r.IntN(80)))
		want, err := simulator.EncodeJSON(pageJSON[orderJSON]{Items: items, TotalRecords: page.Total, LastRecordNumber: nextCursor(cursor, len(items)), PerPage: 100})
		require.NoError(t, err)
		got, err := renderOrderPage(nil, page, cursor, 100)
		require.NoError(t, err)
		require.Equal(t, string(want), string(got), "page %d", i)
		got, err = renderOrderPage(nil, rowsOf(page), cursor, 100)
		require.NoError(t, err)
		require.Equal(t, string(want), string(got), "page %d read as rows", i)
	}
}

// readRows is a function as a simulator.OrderRowReader.
type readRows func(yield func(*simulator.OrderRow)) error

func (f readRows) ReadRows(yield func(*simulator.OrderRow)) error { return f(yield) }

// rowsOf returns a page that reads held's items as rows, into one row as a store's reader does.
func rowsOf(held *simulator.OrderItemPage) *simulator.OrderItemPage {
	return &simulator.OrderItemPage{Total: held.Total, Read: readRows(func(yield func(*simulator.OrderRow)) error {
		var row simulator.OrderRow
		for i := range held.Items {
			row = held.Items[i].Row()
			yield(&row)
		}
		return nil
	})}
}

// A page whose items are read as it renders (OrderItemPage.Read) renders them as a page that
// holds them does, and a failed read is the render's error, for the handler to answer with.
func TestRenderOrderPageReadAsItRenders(t *testing.T) {
	at := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
	held := &simulator.OrderItemPage{Total: 7, Items: []simulator.OrderItem{
		{ID: "ord_1", UserAccountID: "ua_1", Product: simulator.ProductCrypto, Side: simulator.SideBuy, Status: simulator.OrderPending, PlacedAt: at},
		{ID: "ord_2", UserAccountID: "ua_2", Product: simulator.ProductRobo, Side: simulator.SideSell, Status: simulator.OrderFailed, PlacedAt: at},
	}}
	read := func(fail error) *simulator.OrderItemPage {
		return &simulator.OrderItemPage{Total: 7, Read: readRows(func(yield func(*simulator.OrderRow)) error {
			var row simulator.OrderRow
			for _, o := range held.Items {
				row = o.Row()
				yield(&row)
			}
			return fail
		})}
	}
	cursor := big.NewInt(3)
	want, err := renderOrderPage(nil, held, cursor, 25)
	require.NoError(t, err)
	got, err := renderOrderPage(nil, read(nil), cursor, 25)
	require.NoError(t, err)
	assert.Equal(t, string(want), string(got))
	assert.Contains(t, string(got), `"last_record_number":5`, "the cursor moves by the items read")
	_, err = renderOrderPage(nil, read(errors.New("bad entry")), cursor, 25)
	assert.EqualError(t, err, "bad entry")
}

// releaseFunc is a function as a simulator.Releaser.
type releaseFunc func()

func (f releaseFunc) Release() { f() }

// Get Order List's handler renders a page read from pooled room (OrderItemPage.Room) whole and
// only then gives the room back — once, also when a read fails —, and the page reads nothing
// after: the items' strings are the room's bytes.
func TestRenderOrderListReleasesOnceRendered(t *testing.T) {
	at := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
	items := []simulator.OrderItem{
		{ID: "ord_1", UserAccountID: "ua_1", Product: simulator.ProductCrypto, Side: simulator.SideBuy, Status: simulator.OrderPending, PlacedAt: at},
		{ID: "ord_2", UserAccountID: "ua_2", Product: simulator.ProductRobo, Side: simulator.SideSell, Status: simulator.OrderFailed, PlacedAt: at},
	}
	want, err := renderOrderPage(nil, &simulator.OrderItemPage{Total: 2, Items: items}, big.NewInt(0), 25)
	require.NoError(t, err)
	for _, fail := range []error{nil, errors.New("bad entry")} {
		released, read := 0, 0
		page := &simulator.OrderItemPage{Total: 2,
			Read: readRows(func(yield func(*simulator.OrderRow)) error {
				for i := range items {
					require.Zero(t, released, "item %d read after its room was released", i)
					read++
					row := items[i].Row()
					yield(&row)
				}
				return fail
			}),
			Room: releaseFunc(func() { released++ })}
		got, err := renderOrderList(nil, page, big.NewInt(0), 25)
		assert.Equal(t, 1, released, "releases of the page's room")
		assert.Equal(t, len(items), read)
		if fail != nil {
			assert.EqualError(t, err, "bad entry")
			continue
		}
		require.NoError(t, err)
		assert.Equal(t, string(want), string(got))
		_, err = renderOrderPage(nil, page, big.NewInt(0), 25)
		assert.Error(t, err, "a page read after its release")
		page.Release()
		assert.Equal(t, 1, released, "a page released twice gives its room back once")
	}
}

// appendJSONString writes a string as the one encoder does, escapes and raw line separators
// included (the encoder's own cases are in simulator's TestEncodeJSONIsPythonsJSONDumps).
func TestAppendJSONStringMatchesEncoder(t *testing.T) {
	for _, in := range []string{"a\u2028b\u2029c", `\u2028`, "\\\u2028", "q\"\x01\t\u202f\u00e9", "<&>", "plain", "\xff"} {
		want, err := simulator.EncodeJSON(in)
		require.NoError(t, err)
		require.Equal(t, string(want), string(appendJSONString(nil, in)), "%q", in)
	}
}

// simulator.PlainJSON, eight bytes at a time, says what a byte at a time says: every byte value at every
// position of strings of every length up to three words, the rest plain or another byte too,
// and any byte at any position of strings of up to 2,000 bytes.
func TestPlainJSONMatchesBytewise(t *testing.T) {
	bytewise := func(s string) bool {
		for i := 0; i < len(s); i++ {
			if c := s[i]; c < 0x20 || c == '"' || c == '\\' || c >= 0x7f {
				return false
			}
		}
		return true
	}
	r := rand.New(rand.NewPCG(3, 4))
	for n := range 25 {
		for at := range n {
			for c := range 256 {
				b := make([]byte, n)
				for i := range b {
					b[i] = byte(0x20 + r.IntN(0x5f)) // printable ASCII, quotes and backslashes too
				}
				b[at] = byte(c)
				if r.IntN(4) == 0 {
					b[r.IntN(n)] = byte(r.IntN(256))
				}
				require.Equal(t, bytewise(string(b)), simulator.PlainJSON(string(b)), "%q", b)
			}
		}
	}
	// And the ids of a page checked together: longer strings, one byte anywhere of any value.
	for range 20000 {
		b := make([]byte, 25+r.IntN(2000))
		for i := range b {
			b[i] = byte(0x20 + r.IntN(0x5f))
		}
		b[r.IntN(len(b))] = byte(r.IntN(256))
		require.Equal(t, bytewise(string(b)), simulator.PlainJSON(b), "%q", b)
	}
}

// A fixture-given history is played and rendered once per History value (the store shares one
// per stored bytes) and seed, and served from the cache after, within its bound.
func TestGivenHistoryRenderedOnce(t *testing.T) {
	c := newHistoryCache()
	h := &simulator.History{PastDay: []simulator.ValuePoint{{AsOf: time.Date(2026, 11, 24, 10, 0, 0, 0, time.UTC), CostBasis: 100, Value: 250}}}
	u := &simulator.User{PlatformID: "usr_given", CreatedAt: time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC), History: h,
		Accounts: []simulator.Account{{Product: simulator.ProductCrypto, Cash: decimal.New(500, 0)}}}
	seed := simulator.NewHistorySeed(u, nil, time.Date(2026, 11, 28, 17, 30, 0, 0, time.UTC))
	played := seed.Replay(h)
	want := string(appendHistory(nil, &played))
	require.Equal(t, want, string(c.appendGiven(nil, h, seed)))
	require.Contains(t, c.given, givenKey{h, seed}, "kept after its first rendering")
	c.given[givenKey{h, seed}] = []byte("cached")
	require.Equal(t, "xcached", string(c.appendGiven([]byte("x"), h, seed)), "served from the cache")
	for range 3000 {
		big := &simulator.History{AllTime: make([]simulator.ValuePoint, 100)}
		c.appendGiven(nil, big, seed)
		require.LessOrEqual(t, c.givenBytes, historyCacheMax)
	}
}

// A generated history rendered from the hour's frame (renderFrame.appendGenerated, past_week's
// points copied into past_month) is byte for byte what
// simulator.HistorySeed.Generate's series render to through encoding/json, amounts written by
// decimal and times by the time package: over hours of every weekday and month edge from 1950
// to 2190, users created from a century before to after the hour (at month starts, with
// fractions of a second), and values and cost bases from zero to 2^53 cents, negative ones too.
func TestGeneratedHistoryMatchesSlowPath(t *testing.T) {
	r := rand.New(rand.NewPCG(34, 5))
	amount := func(c simulator.Cents) string { return decimal.New(int64(c), -2).StringFixed(2) }
	points := func(ps []simulator.ValuePoint) []refPoint {
		out := make([]refPoint, 0, len(ps))
		for _, p := range ps {
			require.Zero(t, p.AsOf.Nanosecond())
			out = append(out, refPoint{AsOf: p.AsOf.UTC().Format("2006-01-02T15:04:05Z"), CostBasis: amount(p.CostBasis), Value: amount(p.Value)})
		}
		return out
	}
	cents := func() simulator.Cents {
		switch r.IntN(6) {
		case 0:
			return simulator.Cents(r.Int64N(1000))
		case 1:
			return simulator.Cents(1<<53 - r.Int64N(1000))
		case 2:
			return -simulator.Cents(r.Int64N(1e9))
		}
		return simulator.Cents(r.Int64N(1 << (1 + r.IntN(52))))
	}
	hours := []time.Time{time.Date(2026, 11, 30, 0, 0, 0, 0, time.UTC), time.Date(2026, 12, 1, 0, 0, 0, 0, time.UTC),
		time.Date(2024, 2, 29, 23, 0, 0, 0, time.UTC), time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC), time.Date(1969, 12, 31, 23, 0, 0, 0, time.UTC)}
	for range 35 {
		hours = append(hours, time.Date(1950+r.IntN(240), time.Month(1+r.IntN(12)), 1+r.IntN(31), r.IntN(24), r.IntN(60), 0, 0, time.UTC))
	}
	for _, hour := range hours {
		frame := newRenderFrame(hour)
		require.True(t, frame.weekInMonth, "past_week copied from past_month at %s", hour)
		for range 30 {
			created := hour.Add(-time.Duration(r.Int64N(int64(1+r.IntN(100))*365*24/(1+int64(r.IntN(20))))) * time.Hour)
			switch r.IntN(4) {
			case 0:
				created = time.Date(created.Year(), created.Month(), 1, 0, 0, 0, 0, time.UTC)
			case 1:
				created = created.Add(time.Duration(r.Int64N(int64(time.Hour))))
			case 2:
				created = hour.Add(time.Duration(r.Int64N(int64(48 * time.Hour))))
			}
			sd, ok := simulator.HistorySeedOf(fmt.Sprint("usr_", r.Uint64()), created, cents(), cents(), hour)
			require.True(t, ok)
			g := sd.Generate()
			want, err := simulator.EncodeJSON(refHistory{AllTime: points(g.AllTime), PastDay: points(g.PastDay), PastWeek: points(g.PastWeek),
				PastMonth: points(g.PastMonth), PastYear: points(g.PastYear)})
			require.NoError(t, err)
			require.Equal(t, string(want), string(frame.appendGenerated([]byte{}, &sd)), "seed %+v", sd)
		}
	}
}
