package httpapi

import (
	"bytes"
	"encoding/json"
	"math"
	"math/big"
	"math/rand/v2"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/partnersim/partnersim/simulator"
)

// The response shapes of spec §2, fields in the spec's order.

type accountJSON struct {
	Product            simulator.Product   `json:"product"`
	CurrentMarketValue string              `json:"current_market_value"`
	KYCStatus          simulator.KYCStatus `json:"kyc_status"`
	KYCApprovedAt      string              `json:"kyc_approved_at,omitempty"`
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

// newPageJSON is a page of a list (spec §2.2, §2.5): its items, the count of every match, the
// next cursor and the page size.
func newPageJSON[T any](items []T, total int, cursor *big.Int, perPage int) pageJSON[T] {
	return pageJSON[T]{Items: items, TotalRecords: total, LastRecordNumber: nextCursor(cursor, len(items)), PerPage: perPage}
}

// The partner API's hottest bodies — Get User Detail and the user list — are appended by hand
// into one buffer instead of going through encoding/json's reflection: the detail was the
// endpoint's largest cost in the profiles of BENCHMARKS.md). TestRenderMatchesEncoder holds every piece
// byte for byte to what simulator.EncodeJSON renders from the structs above.

// appendJSONString appends s as simulator.EncodeJSON renders a string: as is when every byte is printable
// ASCII other than '"' and '\\', else through the encoder itself (escapes, invalid UTF-8,
// U+2028 — exact by construction).
func appendJSONString[S ~string | ~[]byte](b []byte, s S) []byte {
	if !simulator.PlainJSON(s) {
		raw, _ := simulator.EncodeJSON(string(s)) // a string always encodes
		return append(b, raw...)
	}
	return appendQuoted(b, s)
}

// appendQuoted appends s between quotes, as is: appendJSONString of a string known to need no
// escaping (simulator.PlainJSON).
func appendQuoted[S ~string | ~[]byte](b []byte, s S) []byte {
	b = append(b, '"')
	b = append(b, s...)
	return append(b, '"')
}

// appendString is appendJSONString(b, s), s's check skipped when plain says it needs none.
func appendString[S ~string | ~[]byte](b []byte, s S, plain bool) []byte {
	if plain {
		return appendQuoted(b, s)
	}
	return appendJSONString(b, s)
}

// appendTime appends simulator.FormatTime(t) inside quotes.
func appendTime(b []byte, t time.Time) []byte { return appendUnix(b, t.Unix(), int32(t.Nanosecond())) }

// appendUnix is appendTime of time.Unix(sec, nsec), nsec in [0, 1e9) (simulator.AppendUnix).
func appendUnix(b []byte, sec int64, nsec int32) []byte {
	b = append(b, '"')
	b = simulator.AppendUnix(b, sec, nsec)
	return append(b, '"')
}

// appendUserItemOpen appends a user item (spec §2.2) without its closing brace, so the detail
// can carry on with its own fields. The total comes before the accounts it sums; plain says
// the user_account_id needs no escaping (simulator.PlainJSON), unset that it is checked.
func appendUserItemOpen(b []byte, it *simulator.UserItem, plain bool, times *simulator.TimeAppender) []byte {
	b = appendItemHead(b, it.UserAccountID, plain)
	b = it.Total.AppendMoney(b)
	b = append(b, `","accounts":[`...)
	for i := range it.Accounts {
		a := &it.Accounts[i]
		if i > 0 {
			b = append(b, ',')
		}
		var sec int64
		var nsec int32
		if a.ShowsApprovedAt {
			sec, nsec = a.ApprovedAt.Unix(), int32(a.ApprovedAt.Nanosecond())
		}
		b = append(b, accountHead(a.Product)...)
		b = a.Value.AppendMoney(b)
		b = appendKYC(b, accountKYC(a.KYCStatus), a.ShowsApprovedAt, sec, nsec, times)
	}
	return append(b, ']')
}

// appendUserRows appends a page's items given as rows (simulator.UserRows), comma-separated, as
// appendUserItemOpen renders each row's UserItem (UserRows.Item) and closes it. The texts
// between the values are blocks (textBlock: rowBlocks), each the texts that meet there joined
// (an account's opening with the comma or the accounts' opening before it), put into room made
// once an item; an account worth its user's total (a user's only account, most often) copies
// the total's digits instead of writing them again.
func appendUserRows(b []byte, r *simulator.UserRows) []byte {
	var from simulator.UserRow
	// A page sorted by created_at shows the approvals of a few days (a user's accounts are
	// approved days after it is created): the appender's last date saves most civil dates.
	var times simulator.TimeAppender
	for i, row := range r.Items {
		uaid := r.UAIDs[from.UAIDEnd:row.UAIDEnd]
		accounts := r.Accounts[from.AccountsEnd:row.AccountsEnd]
		if r.PlainUAIDs {
			b = slices.Grow(b, itemRoom(len(accounts))+len(uaid))
			b = putText(b, &rowBlocks.opens[min(i, 1)])
			b = append(b, uaid...)
			b = putText(b, &rowBlocks.total)
		} else {
			if i > 0 {
				b = append(b, ',')
			}
			b = appendItemHead(b, uaid, false)
			b = slices.Grow(b, itemRoom(len(accounts)))
		}
		totalAt := len(b)
		b = row.Total.AppendTo(b)
		total := b[totalAt:]
		heads := rowBlocks.firstHeads
		for _, a := range accounts {
			b = putText(b, &heads[a.Product])
			heads = rowBlocks.nextHeads
			if a.Value == row.Total {
				b = append(b, total...)
			} else {
				b = a.Value.AppendTo(b)
			}
			kyc := &rowBlocks.kyc[a.KYC]
			if !a.Shows {
				b = putText(b, &kyc.closed)
				continue
			}
			b = putText(b, &kyc.approvedAt)
			b = times.AppendUnix(b, a.ApprovedSec, a.ApprovedNsec)
			b = append(b, `"}`...)
		}
		if len(accounts) == 0 { // no account: the accounts' opening alone
			b = append(b, `","accounts":[`...)
		}
		b = append(b, "]}"...)
		from = row
	}
	return b
}

// itemRoom is the room a user item of n accounts takes after its user_account_id, with a
// textBlock's room past each text put: its blocks, its total's digits, each account's blocks,
// value and kyc_approved_at. A putText past the room made would panic: the largest item any
// rows render (TestItemRoomHoldsTheLargestItem: int64's amounts, any instant, the longest
// texts) leaves more than a block of it.
func itemRoom(n int) int {
	const digits, instant = 24, 32 // an amount in cents; a time, quoted
	return 3*textBlockLen + digits + n*(2*textBlockLen+digits+instant+2)
}

// textBlock is a text of at most textBlockLen bytes in a block of that size, appended by a copy
// of the whole block into room for it (putText), which the compiler writes as a few moves,
// where append called memmove: a user page appends a few hundred such texts.
type textBlock struct {
	b [textBlockLen]byte
	n int
}

const textBlockLen = 64

func newTextBlock(s string) textBlock {
	var t textBlock
	if len(s) > textBlockLen {
		panic("httpapi: a text longer than its block: " + s) // texts of the spec's values only
	}
	t.n = copy(t.b[:], s)
	return t
}

// putText appends t to b, which has textBlockLen bytes of room past its length.
func putText(b []byte, t *textBlock) []byte {
	n := len(b)
	*(*[textBlockLen]byte)(b[n : n+textBlockLen]) = t.b
	return b[:n+t.n]
}

// rowBlocks are the texts of a user item rendered from rows as blocks: the item's opening up to
// its id (the first item's, the others' with the comma before it) and from its id to its
// total's digits; an account's opening (accountHeads') joined with what comes before it — the
// accounts' opening for the first (`","accounts":[{"product":…`), a comma for the others —,
// by product index; kycTexts', by KYC status index.
var rowBlocks = func() (t struct {
	opens                 [2]textBlock
	total                 textBlock
	firstHeads, nextHeads []textBlock
	kyc                   []struct{ closed, approvedAt textBlock }
}) {
	t.opens = [2]textBlock{newTextBlock(`{"user_account_id":"`), newTextBlock(`,{"user_account_id":"`)}
	t.total = newTextBlock(`","total_current_market_value":"`)
	for _, head := range accountHeads {
		t.firstHeads = append(t.firstHeads, newTextBlock(`","accounts":[`+head))
		t.nextHeads = append(t.nextHeads, newTextBlock(","+head))
	}
	for _, k := range kycTexts {
		t.kyc = append(t.kyc, struct{ closed, approvedAt textBlock }{newTextBlock(k.closed), newTextBlock(k.approvedAt)})
	}
	return t
}()

// appendItemHead appends a user item's opening up to its total's digits:
// `{"user_account_id":"…","total_current_market_value":"`; plain says the id needs no escaping
// (simulator.PlainJSON), unset that it is checked.
func appendItemHead[S ~string | ~[]byte](b []byte, uaid S, plain bool) []byte {
	b = append(b, `{"user_account_id":`...)
	b = appendString(b, uaid, plain)
	return append(b, `,"total_current_market_value":"`...)
}

// appendKYC appends the end of a user item's account after its value: its KYC status (kyc,
// accountKYC's) and, when shows, kyc_approved_at of the Unix time sec, nsec. The account
// before it is its product's opening (accountHead) and its value.
func appendKYC(b []byte, kyc *kycText, shows bool, sec int64, nsec int32, times *simulator.TimeAppender) []byte {
	if !shows {
		return append(b, kyc.closed...)
	}
	b = append(b, kyc.approvedAt...)
	b = times.AppendUnix(b, sec, nsec)
	return append(b, `"}`...)
}

// kycText is what an account's KYC status renders to after its value, up to the end of the
// account when it shows no kyc_approved_at (`","kyc_status":"approved"}`), else up to the
// time's digits (`","kyc_status":"approved","kyc_approved_at":"`).
type kycText struct{ closed, approvedAt string }

func newKYCText(k simulator.KYCStatus) kycText {
	text := string(appendJSONString([]byte(`","kyc_status":`), string(k)))
	return kycText{closed: text + "}", approvedAt: text + `,"kyc_approved_at":"`}
}

// accountHeads and kycTexts are what an account's product and KYC status render to when they
// are values the spec lists (by their index in simulator.Products and simulator.KYCStatuses),
// rendered once: `{"product":"robo","current_market_value":"` and kycText's. A list page
// renders a few hundred accounts, and each value's escape check was a tenth of it.
var accountHeads, kycTexts = func() (heads []string, kyc []kycText) {
	for _, p := range simulator.Products {
		heads = append(heads, newAccountHead(p))
	}
	for _, k := range simulator.KYCStatuses {
		kyc = append(kyc, newKYCText(k))
	}
	return heads, kyc
}()

func newAccountHead(p simulator.Product) string {
	return string(appendJSONString([]byte(`{"product":`), string(p))) + `,"current_market_value":"`
}

// accountHead is p's opening of an account: accountHeads's for a product the spec lists.
func accountHead(p simulator.Product) string {
	if i := simulator.ProductIndex(p); i >= 0 {
		return accountHeads[i]
	}
	return newAccountHead(p)
}

// accountKYC is k's kycText: kycTexts's for a status the spec lists.
func accountKYC(k simulator.KYCStatus) *kycText {
	if i := simulator.KYCIndex(k); i >= 0 {
		return &kycTexts[i]
	}
	t := newKYCText(k)
	return &t
}

// appendPoints appends a series as the encoder would render []pointJSON.
func appendPoints(b []byte, ps []simulator.ValuePoint) []byte {
	b = append(b, '[')
	for i, p := range ps {
		if i > 0 {
			b = append(b, ',')
		}
		b = append(b, `{"as_of":`...)
		b = appendTime(b, p.AsOf)
		b = append(b, `,"cost_basis":"`...)
		b = p.CostBasis.AppendTo(b)
		b = append(b, `","value":"`...)
		b = p.Value.AppendTo(b)
		b = append(b, `"}`...)
	}
	return append(b, ']')
}

// appendHistory appends historical_market_value's object.
func appendHistory(b []byte, h *simulator.History) []byte {
	b = append(b, `{"all_time":`...)
	b = appendPoints(b, h.AllTime)
	b = append(b, `,"past_day":`...)
	b = appendPoints(b, h.PastDay)
	b = append(b, `,"past_week":`...)
	b = appendPoints(b, h.PastWeek)
	b = append(b, `,"past_month":`...)
	b = appendPoints(b, h.PastMonth)
	b = append(b, `,"past_year":`...)
	b = appendPoints(b, h.PastYear)
	return append(b, '}')
}

// appendIdentities appends a core_ids or dbp_ids array; plain says every id and type needs no
// escaping (simulator.PlainJSON), unset that each is checked.
func appendIdentities(b []byte, refs []simulator.IdentityRef, plain bool) []byte {
	b = append(b, '[')
	for i, r := range refs {
		if i > 0 {
			b = append(b, ',')
		}
		b = append(b, `{"id":`...)
		b = appendString(b, r.ID, plain)
		b = append(b, `,"type":`...)
		b = appendString(b, r.Type, plain)
		b = append(b, '}')
	}
	return append(b, ']')
}

// appendUserDetail appends Get User Detail's body (spec §2.3, fields in the spec's order). A
// history comes rendered from histories when the same user was shown in the same period with
// the same value, a fixture-given one played at the current hour as a generated one is
// (decisions D5).
func appendUserDetail(b []byte, v *simulator.UserView, clock *simulator.Clock, histories *historyCache) []byte {
	var times simulator.TimeAppender
	plain := v.PlainStrings // the store checked them (simulator.UserView.CheckPlain)
	b = appendUserItemOpen(b, &v.Item, plain, &times)
	b = append(b, `,"historical_market_value":`...)
	if seed := v.Seed.At(clock.Now()); v.History != nil {
		b = histories.appendGiven(b, v.History, seed)
	} else {
		b = histories.append(b, seed)
	}
	b = append(b, `,"identities":{"core_ids":`...)
	b = appendIdentities(b, v.CoreIDs, plain)
	b = append(b, `,"dbp_ids":`...)
	b = appendIdentities(b, v.DBPIDs, plain)
	b = append(b, `,"platform_user_identifier":`...)
	b = appendString(b, v.PlatformID, plain)
	b = append(b, `},"terms_and_conditions":{"accepted_at":`...)
	b = appendTime(b, v.Terms.AcceptedAt)
	b = append(b, `,"version":`...)
	b = appendString(b, v.Terms.Version, plain)
	return append(b, "}}"...)
}

// renderUserPage renders Get User List's body (spec §2.2): the page's items, total_records,
// the next cursor and per_page.
func renderUserPage(b []byte, page *simulator.UserItemPage, cursor *big.Int, perPage int) []byte {
	b = append(b, `{"items":[`...)
	n := len(page.Items)
	if page.Rows != nil {
		b, n = appendUserRows(b, page.Rows), len(page.Rows.Items)
	}
	var times simulator.TimeAppender
	for i := range page.Items {
		if i > 0 {
			b = append(b, ',')
		}
		b = appendUserItemOpen(b, &page.Items[i], false, &times)
		b = append(b, '}')
	}
	b = append(b, `],"total_records":`...)
	b = strconv.AppendInt(b, int64(page.Total), 10)
	b = append(b, `,"last_record_number":`...)
	b = append(b, nextCursor(cursor, n)...)
	b = append(b, `,"per_page":`...)
	b = strconv.AppendInt(b, int64(perPage), 10)
	return append(b, '}')
}

// renderUserList is renderUserPage for Get User List's handler, the page's last reader: the
// page's rows go back for a later page once rendered (simulator.UserRows.Release).
func renderUserList(b []byte, page *simulator.UserItemPage, cursor *big.Int, perPage int) []byte {
	b = renderUserPage(b, page, cursor, perPage)
	if page.Rows != nil {
		page.Rows.Release()
	}
	return b
}

// bodyPool recycles response buffers of the hand-rendered bodies: a detail is 5–15 KB, and
// allocating (and clearing) it per request showed in the profile. A buffer goes back once
// writeRaw has copied it into the connection's writer, in the box it came in (a slice put
// into a sync.Pool is boxed anew, an allocation a request).
type bodyPool struct{ p sync.Pool }

// get returns an empty buffer.
func (bp *bodyPool) get() *[]byte {
	if b, ok := bp.p.Get().(*[]byte); ok {
		*b = (*b)[:0]
		return b
	}
	b := make([]byte, 0, 16<<10)
	return &b
}

// put returns a buffer; a very large one is left to the collector.
func (bp *bodyPool) put(b *[]byte) {
	if cap(*b) <= 256<<10 {
		bp.p.Put(b)
	}
}

// historyCache keeps generated histories rendered, by seed (decisions D5: a user's series is
// the same for every request in the same period at the same value), and the hour's frame —
// every series' instants with their as_of text and growth factors — from which a miss is
// rendered in a few multiplications a point. It holds the current hour's series only, at most
// historyCacheMax bytes; when full it starts again empty.
//
// A series is kept only when its seed was seen before in the hour (a doorkeeper: one bit a seed
// hash in seen), and only while the hour's distinct seeds would fit in a few times the cache:
// over 66,667 users shown at random the cache held ~1,100 of them and hardly ever hit, and
// copying each ~7 KB series into it was pure cost.
type historyCache struct {
	mu       sync.RWMutex
	hour     time.Time
	frame    *renderFrame
	m        map[simulator.HistorySeed][]byte
	bytes    int
	seen     []uint64 // seenBits bits
	distinct int      // seeds first seen this hour (bits newly set)
	salt     uint64   // seeds' doorkeeper hashes (simulator.HistorySeed.Hash)

	// given keeps fixture-given histories played and rendered, by the History the store decoded
	// and the seed they were played at: the store decodes the same stored bytes once and shares
	// the value (nothing modifies a History once decoded), so a pointer names one history for as
	// long as it is held here. At most historyCacheMax bytes; when full it starts again empty.
	givenMu    sync.RWMutex
	given      map[givenKey][]byte
	givenBytes int
}

// givenKey names one playing of a fixture-given history: the history and the seed (user,
// hour, value) it was played at.
type givenKey struct {
	h    *simulator.History
	seed simulator.HistorySeed
}

// appendGiven appends a fixture-given history played at seed (simulator.HistoryFrame.Replay),
// rendering and keeping it on a miss.
func (c *historyCache) appendGiven(b []byte, h *simulator.History, seed simulator.HistorySeed) []byte {
	k := givenKey{h, seed}
	c.givenMu.RLock()
	r, ok := c.given[k]
	c.givenMu.RUnlock()
	if ok {
		return append(b, r...)
	}
	c.mu.RLock()
	frame := c.frame
	if !seed.Hour.Equal(c.hour) {
		frame = nil
	}
	c.mu.RUnlock()
	var played simulator.History
	if frame != nil {
		played = frame.f.Replay(seed, h)
	} else {
		played = seed.Replay(h)
	}
	start := len(b)
	b = appendHistory(b, &played)
	r = bytes.Clone(b[start:])
	k.seed.PlatformID = strings.Clone(k.seed.PlatformID) // not the user record it was cut from
	c.givenMu.Lock()
	if c.givenBytes+len(r) > historyCacheMax {
		clear(c.given)
		c.givenBytes = 0
	}
	if _, dup := c.given[k]; !dup {
		c.given[k] = r
		c.givenBytes += len(r)
	}
	c.givenMu.Unlock()
	return b
}

// seenBits is the doorkeeper's size: 128 KiB, few false admissions under ~100k seeds an hour.
const seenBits = 1 << 20

// renderFrame is an hour's simulator.HistoryFrame with each point's as_of rendered once.
type renderFrame struct {
	f                                      *simulator.HistoryFrame
	pastDay, pastWeek, pastMonth, pastYear renderSeries
	// allTime is the frame's AllTime oldest first: a user's all_time is its last
	// AllTimeLen(created) points.
	allTime renderSeries
	// weekInMonth says that past_week's points are past_month's last ones (both are the days
	// back from midnight): past_week's rendered points are then copied to the end of
	// past_month's rather than computed again.
	weekInMonth bool
}

// renderSeries is a series of the frame, its points and before each point's amounts its head,
// `{"as_of":"…","cost_basis":"`: 46 bytes for the whole hours of four-digit years a frame
// holds, at most 62 for any instant (TestPointHeadsHoldAnyInstant), so its block's 64 hold it.
type renderSeries struct {
	points []simulator.FramePoint
	heads  []simulator.PointHead
}

func newRenderSeries(ps []simulator.FramePoint) renderSeries {
	s := renderSeries{points: ps, heads: make([]simulator.PointHead, len(ps))}
	for i, p := range ps {
		b := append(append([]byte(`{"as_of":`), appendTime(nil, p.AsOf)...), `,"cost_basis":"`...)
		if len(b) > len(s.heads[i].B) {
			panic("httpapi: a point's head longer than its block: " + string(b))
		}
		s.heads[i].N = copy(s.heads[i].B[:], b)
	}
	return s
}

// last returns the series' last n points.
func (s renderSeries) last(n int) renderSeries {
	return renderSeries{points: s.points[len(s.points)-n:], heads: s.heads[len(s.heads)-n:]}
}

// first returns the series' first n points.
func (s renderSeries) first(n int) renderSeries {
	return renderSeries{points: s.points[:n], heads: s.heads[:n]}
}

// append appends the points of sd's series, oldest first, without its brackets.
func (s renderSeries) append(b []byte, sd *simulator.HistorySeed) []byte {
	return sd.AppendPoints(b, s.points, s.heads)
}

func newRenderFrame(now time.Time) *renderFrame {
	f := simulator.NewHistoryFrame(now)
	rf := &renderFrame{f: f, pastDay: newRenderSeries(f.PastDay), pastWeek: newRenderSeries(f.PastWeek),
		pastMonth: newRenderSeries(f.PastMonth), pastYear: newRenderSeries(f.PastYear)}
	rf.allTime = newRenderSeries(slices.Clone(f.AllTime))
	slices.Reverse(rf.allTime.points)
	slices.Reverse(rf.allTime.heads)
	if n, m := len(f.PastWeek), len(f.PastMonth); 0 < n && n < m {
		rf.weekInMonth = slices.Equal(f.PastWeek, f.PastMonth[m-n:])
	}
	return rf
}

// appendGenerated appends the historical_market_value object of a seed taken in the frame's
// hour, exactly as appendHistory renders simulator.HistoryFrame.Generate's series.
func (rf *renderFrame) appendGenerated(b []byte, sd *simulator.HistorySeed) []byte {
	if !sd.Funded {
		return append(b, emptyHistory...)
	}
	b = append(b, `{"all_time":[`...)
	b = rf.allTime.last(rf.f.AllTimeLen(sd.Created)).append(b, sd)
	b = append(b, `],"past_day":[`...)
	b = rf.pastDay.append(b, sd)
	b = append(b, `],"past_week":[`...)
	week := len(b)
	b = rf.pastWeek.append(b, sd)
	weekEnd := len(b)
	b = append(b, `],"past_month":[`...)
	if rf.weekInMonth {
		b = rf.pastMonth.first(len(rf.pastMonth.points)-len(rf.pastWeek.points)).append(b, sd)
		b = append(b, ',')
		b = append(b, b[week:weekEnd]...)
	} else {
		b = rf.pastMonth.append(b, sd)
	}
	b = append(b, `],"past_year":[`...)
	b = rf.pastYear.append(b, sd)
	return append(b, "]}"...)
}

// historyCacheMax bounds the cache: ~1,100 users' series of ~7 KB.
const historyCacheMax = 8 << 20

func newHistoryCache() *historyCache {
	return &historyCache{m: map[simulator.HistorySeed][]byte{}, seen: make([]uint64, seenBits/64), salt: rand.Uint64(),
		given: map[givenKey][]byte{}}
}

// seenBit returns the word of seen that holds seed's doorkeeper bit, and the bit.
func (c *historyCache) seenBit(seed *simulator.HistorySeed) (word int, bit uint64) {
	h := seed.Hash(c.salt) % seenBits
	return int(h / 64), 1 << (h % 64)
}

// seenBefore marks seed as seen and reports whether it was already (or a seed sharing its bit).
// The caller holds c.mu.
func (c *historyCache) seenBefore(seed *simulator.HistorySeed) bool {
	w, m := c.seenBit(seed)
	before := c.seen[w]&m != 0
	if !before {
		c.seen[w] |= m
		c.distinct++
	}
	return before
}

// emptyHistory is the history of a user with no funded account (decisions D5).
const emptyHistory = `{"all_time":[],"past_day":[],"past_week":[],"past_month":[],"past_year":[]}`

// append appends the rendered history of seed, rendering and keeping it on a miss. An unfunded
// seed's is emptyHistory whatever the hour: it is neither looked up nor kept.
func (c *historyCache) append(b []byte, seed simulator.HistorySeed) []byte {
	if !seed.Funded {
		return append(b, emptyHistory...)
	}
	// Only a seed whose doorkeeper bit is set in its hour can be kept: most seeds of a load
	// over many users are not, and are not looked up.
	w, m := c.seenBit(&seed)
	c.mu.RLock()
	var frame *renderFrame
	if seed.Hour.Equal(c.hour) {
		frame = c.frame
		if c.seen[w]&m != 0 {
			if r, ok := c.m[seed]; ok {
				c.mu.RUnlock()
				return append(b, r...)
			}
		}
	}
	c.mu.RUnlock()
	if frame == nil {
		frame = newRenderFrame(seed.Hour)
	}
	start := len(b)
	b = frame.appendGenerated(b, &seed)
	c.mu.Lock()
	defer c.mu.Unlock()
	if !seed.Hour.Equal(c.hour) {
		clear(c.m)
		clear(c.seen)
		c.bytes, c.distinct = 0, 0
		c.hour, c.frame = seed.Hour, frame
	}
	if !c.seenBefore(&seed) || c.distinct*(len(b)-start) > 4*historyCacheMax {
		return b
	}
	r := bytes.Clone(b[start:])
	if c.bytes+len(r) > historyCacheMax {
		clear(c.m)
		c.bytes = 0
	}
	if _, dup := c.m[seed]; !dup {
		seed.PlatformID = strings.Clone(seed.PlatformID) // not the user record it was cut from
		c.m[seed] = r
		c.bytes += len(r)
	}
	return b
}

// appendOrder appends an order (spec §2.5) as simulator.EncodeJSON renders renderOrder's struct,
// from the row a page reads it as (simulator.OrderRow: every page renders here, whichever way
// the store read it), its times through times (a page's writer keeps the date it wrote last).
// Its product, side and status are picked from texts rendered once by their positions, and
// strings the store checked (decisions D6) are written between quotes the texts around them
// end and start with.
func appendOrder(b []byte, o *simulator.OrderRow, times *simulator.TimeAppender) []byte {
	plain := o.PlainStrings // the store checked them (decisions D6)
	if plain {
		b = append(b, `{"order_id":"`...)
		b = append(b, o.ID...)
		b = append(b, `","user_account_id":"`...)
		b = append(b, o.UserAccountID...)
		b = append(b, '"')
	} else {
		b = append(b, `{"order_id":`...)
		b = appendJSONString(b, o.ID)
		b = append(b, `,"user_account_id":`...)
		b = appendJSONString(b, o.UserAccountID)
	}
	if o.Product >= 0 && o.Side >= 0 {
		b = append(b, productSideTexts[int(o.Product)*len(simulator.Sides)+int(o.Side)]...)
	} else {
		product, side, _ := o.Kinds()
		b = append(b, `,"product":`...)
		b = appendJSONString(b, string(product))
		b = append(b, `,"side":`...)
		b = appendJSONString(b, string(side))
		b = append(b, `,"symbol":`...)
	}
	if plain {
		b = append(b, '"')
		b = append(b, o.Symbol...)
		b = append(b, `","quantity":"`...)
	} else {
		b = appendJSONString(b, o.Symbol)
		b = append(b, `,"quantity":"`...)
	}
	b = o.Quantity.AppendQuantity(b)
	b = append(b, `","notional":"`...)
	b = o.Notional.AppendMoney(b)
	b = append(b, `","fee":"`...)
	b = o.Fee.AppendMoney(b)
	if o.Status >= 0 {
		b = append(b, statusTexts[o.Status]...)
	} else {
		b = append(b, `","status":`...)
		b = appendJSONString(b, string(o.StatusName))
		b = append(b, `,"placed_at":"`...)
	}
	b = times.AppendUnix(b, o.PlacedSec, o.PlacedNsec)
	if int(o.Status) == completed && o.HasCompletedAt {
		b = append(b, `","completed_at":"`...)
		b = times.AppendUnix(b, o.CompletedSec, o.CompletedNsec)
	}
	if o.IsRecurringOrder && o.RecurringOrderID != "" {
		b = append(b, `","is_recurring_order":true,"recurring_order_id":`...)
		b = appendString(b, o.RecurringOrderID, plain)
		return append(b, '}')
	}
	if o.IsRecurringOrder {
		return append(b, `","is_recurring_order":true}`...)
	}
	return append(b, `","is_recurring_order":false}`...)
}

// completed is simulator.OrderCompleted's position in simulator.OrderStatuses.
var completed = simulator.OrderStatusIndex(simulator.OrderCompleted)

// productSideTexts and statusTexts are what an order's product and side, and its status,
// render to when they are values the spec lists (by their positions, product×len(Sides)+side
// and the status's: simulator.OrderRow), rendered once, as accountHeads and kycTexts are:
// `,"product":"robo","side":"buy","symbol":` and `","status":"completed","placed_at":"` (the
// next field's opening with them).
var productSideTexts, statusTexts = func() (productSides, statuses []string) {
	for _, p := range simulator.Products {
		for _, sd := range simulator.Sides {
			b := appendJSONString([]byte(`,"product":`), string(p))
			b = appendJSONString(append(b, `,"side":`...), string(sd))
			productSides = append(productSides, string(b)+`,"symbol":`)
		}
	}
	for _, k := range simulator.OrderStatuses {
		statuses = append(statuses, string(appendJSONString([]byte(`","status":`), string(k)))+`,"placed_at":"`)
	}
	return productSides, statuses
}()

// renderOrderPage renders Get Order List's body (spec §2.5), its items as the page gives them
// (OrderItemPage.EachRow: read one at a time from the store's bytes), or the error of reading one.
func renderOrderPage(b []byte, page *simulator.OrderItemPage, cursor *big.Int, perPage int) ([]byte, error) {
	w := orderWriters.Get().(*orderWriter)
	defer orderWriters.Put(w)
	w.b, w.n = append(b, `{"items":[`...), 0
	err := page.EachRow(w.each)
	b, w.b = w.b, nil
	if err != nil {
		return b, err
	}
	b = append(b, `],"total_records":`...)
	b = strconv.AppendInt(b, int64(page.Total), 10)
	b = append(b, `,"last_record_number":`...)
	if c := cursor.Int64(); cursor.IsInt64() && c <= math.MaxInt64-int64(w.n) { // no big.Int to allocate
		b = strconv.AppendInt(b, c+int64(w.n), 10)
	} else {
		b = append(b, nextCursor(cursor, w.n)...)
	}
	b = append(b, `,"per_page":`...)
	b = strconv.AppendInt(b, int64(perPage), 10)
	return append(b, '}'), nil
}

// renderOrderList is renderOrderPage for Get Order List's handler, the page's last reader: the
// room the page's items are read from goes back for a later page once the body is rendered
// (simulator.OrderItemPage.Release), and not before — the items' strings are its bytes.
func renderOrderList(b []byte, page *simulator.OrderItemPage, cursor *big.Int, perPage int) ([]byte, error) {
	defer page.Release()
	return renderOrderPage(b, page, cursor, perPage)
}

// orderWriter renders a page's items as OrderItemPage.EachRow gives them (each, its item method
// made once): kept between pages (orderWriters), a page's render allocates nothing of its own.
type orderWriter struct {
	b     []byte
	n     int
	times simulator.TimeAppender
	each  func(*simulator.OrderRow)
}

func (w *orderWriter) item(o *simulator.OrderRow) {
	if w.n > 0 {
		w.b = append(w.b, ',')
	}
	w.b = appendOrder(w.b, o, &w.times)
	w.n++
}

var orderWriters = sync.Pool{New: func() any {
	w := new(orderWriter)
	w.each = w.item
	return w
}}

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
