package bolt

import (
	"bytes"
	"context"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"testing"
	"time"

	"github.com/shopspring/decimal"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.etcd.io/bbolt"

	"github.com/partnersim/partnersim/simulator"
)

// roundTrip checks that a record read back from its binary form is what a JSON round trip of
// it gives (the form stores used before), compared as JSON, and that the old JSON form still
// decodes.
func roundTrip[T any](t *testing.T, v *T) {
	t.Helper()
	viaJSON, err := json.Marshal(v)
	require.NoError(t, err)
	var fromJSON T
	require.NoError(t, decodeRecord(viaJSON, &fromJSON), "the JSON form decodes")
	raw, err := encodeRecord(v)
	require.NoError(t, err)
	require.Contains(t, []byte{recordV1, recordV2}, raw[0])
	var back T
	require.NoError(t, decodeRecord(raw, &back))
	again, err := json.Marshal(&back)
	require.NoError(t, err)
	want, err := json.Marshal(&fromJSON)
	require.NoError(t, err)
	require.Equal(t, string(want), string(again))
	// Re-encoding what was decoded gives the same bytes (the form is canonical).
	raw2, err := encodeRecord(&back)
	require.NoError(t, err)
	require.Equal(t, raw, raw2)
	// Every strict prefix is refused, never a panic or a silent short read.
	for i := 1; i < len(raw); i += 1 + len(raw)/40 {
		var cut T
		require.Error(t, decodeRecord(raw[:i], &cut), "prefix of %d bytes", i)
	}
}

type recordGen struct{ r *rand.Rand }

var codecStrings = []string{"", "usr_1", "ins_harbor", `q"\`, "é☃\u2028", "bad\xff", "\x00nul"}

func (g recordGen) str() string { return codecStrings[g.r.IntN(len(codecStrings))] }

func (g recordGen) time() time.Time {
	t := time.Unix(g.r.Int64N(8e9)-2e9, int64(g.r.IntN(3))*int64(g.r.IntN(1e9))).UTC()
	switch g.r.IntN(4) {
	case 0:
		return t.In(time.FixedZone("", 60*(g.r.IntN(1500)-750)))
	case 1:
		return time.Time{}
	}
	return t
}

func (g recordGen) timePtr() *time.Time {
	if g.r.IntN(2) == 0 {
		return nil
	}
	t := g.time()
	return &t
}

func (g recordGen) decimal() decimal.Decimal {
	switch g.r.IntN(6) {
	case 0:
		return decimal.Zero
	case 1:
		d, _ := decimal.NewFromString("-123456789012345678901234.5650")
		return d
	case 2:
		return decimal.New(g.r.Int64N(2e6)-1e6, int32(g.r.IntN(12))-8)
	case 3:
		return decimal.New(math.MaxInt64, -3)
	case 4:
		return decimal.New(1500, -2)
	}
	return decimal.New(g.r.Int64(), -int32(g.r.IntN(20)))
}

// list is up to n-1 values of next: nil one time in nilOneIn, otherwise a slice even when empty
// (the codec keeps the difference, as JSON's null and [] do).
func list[T any](g recordGen, nilOneIn, n int, next func() T) []T {
	var s []T
	if g.r.IntN(nilOneIn) > 0 {
		s = []T{}
	}
	for range g.r.IntN(n) {
		s = append(s, next())
	}
	return s
}

func (g recordGen) user() *simulator.User {
	u := &simulator.User{PlatformID: g.str(), InstitutionID: g.str(), UserAccountID: g.str(), CreatedAt: g.time(),
		Terms: simulator.Terms{AcceptedAt: g.time(), Version: g.str()}, LiveSessions: g.r.IntN(5) - 1}
	u.Accounts = list(g, 5, 4, func() simulator.Account {
		a := simulator.Account{Product: simulator.Product(g.str()), KYCStatus: simulator.KYCStatus(g.str()), KYCApprovedAt: g.timePtr(),
			Cash: g.decimal(), Portfolio: g.str()}
		a.Holdings = list(g, 3, 3, func() simulator.Holding { return simulator.Holding{Symbol: g.str(), Quantity: g.decimal()} })
		return a
	})
	if g.r.IntN(3) == 0 {
		h := &simulator.History{}
		for _, s := range h.Series() {
			*s = list(g, 4, 3, func() simulator.ValuePoint {
				return simulator.ValuePoint{AsOf: g.time(), CostBasis: simulator.Cents(g.r.Int64() - math.MaxInt64/2), Value: simulator.Cents(g.r.Int64N(1e9))}
			})
		}
		u.History = h
	}
	return u
}

func (g recordGen) member() *simulator.Member {
	m := &simulator.Member{InstitutionID: g.str(), CoreID: g.str(), CoreIDType: g.str(), CreatedAt: g.time()}
	if g.r.IntN(2) == 0 {
		id := g.str()
		m.DBPID = &id
	}
	m.UserIDs = list(g, 4, 3, g.str)
	return m
}

func (g recordGen) order() *simulator.Order {
	return &simulator.Order{ID: g.str(), InstitutionID: g.str(), TransactionID: g.str(), PlatformID: g.str(), UserAccountID: g.str(),
		Product: simulator.Product(g.str()), Side: simulator.Side(g.str()), Symbol: g.str(), Quantity: g.decimal(), Notional: g.decimal(),
		Fee: g.decimal(), Status: simulator.OrderStatus(g.str()), PlacedAt: g.time(), CompletedAt: g.timePtr(),
		IsRecurringOrder: g.r.IntN(2) == 0, RecurringOrderID: g.str(), ByNotional: g.r.IntN(2) == 0}
}

func (g recordGen) transaction() *simulator.Transaction {
	t := &simulator.Transaction{ID: g.str(), InstitutionID: g.str(), PlatformID: g.str(), UserAccountID: g.str(),
		Product: simulator.Product(g.str()), Type: simulator.TransactionType(g.str()), Status: simulator.OrderStatus(g.str()),
		Amount: g.decimal(), CreatedAt: g.time(), CompletedAt: g.timePtr()}
	t.OrderIDs = list(g, 4, 4, g.str)
	return t
}

func (g recordGen) delivery() *simulator.Delivery {
	d := &simulator.Delivery{ID: g.str(), EventID: g.str(), SubscriptionID: g.str(), InstitutionID: g.str(), URL: g.str(),
		Body: json.RawMessage(`{"event_id":"evt_1","data":{"x":[1,2.5,"é"]}}`), Status: g.str(), NextAttemptAt: g.time(),
		Error: g.str(), CreatedAt: g.time()}
	d.Attempts = list(g, 4, 4, func() simulator.Attempt {
		return simulator.Attempt{At: g.time(), StatusCode: g.r.IntN(600), Error: g.str(),
			LatencyMS: float64(g.r.IntN(1e6)) / 1000, ResponseBody: g.str(), Signature: g.str()}
	})
	return d
}

func TestRecordCodecMatchesJSON(t *testing.T) {
	g := recordGen{rand.New(rand.NewPCG(15, 3))}
	for range 2000 {
		roundTrip(t, g.user())
		roundTrip(t, g.member())
		roundTrip(t, g.order())
		roundTrip(t, g.transaction())
		roundTrip(t, g.delivery())
	}
}

// FuzzRecordCodec: records built from fuzzed fields survive the binary form as they survive
// JSON, and arbitrary bytes after the version byte decode to an error or a record, never a
// panic.
func FuzzRecordCodec(f *testing.F) {
	f.Add("usr_1", "1520.07", int64(1700000000), int64(5), []byte{recordV1, 3, 'a'})
	f.Add("", "-0.00000001", int64(-1), int64(0), []byte{recordV1, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x7f})
	f.Fuzz(func(t *testing.T, s, dec string, sec, n int64, junk []byte) {
		d, err := decimal.NewFromString(dec)
		if err != nil {
			d = decimal.New(n, int32(n%20))
		}
		at := time.Unix(sec%1e11, n%1e9).UTC()
		if at.Nanosecond() < 0 {
			at = at.Add(time.Second)
		}
		if n%3 == 0 {
			at = at.In(time.FixedZone("", int(n%1440)*60))
		}
		if _, err := json.Marshal(at); err != nil {
			return // outside what JSON (RFC 3339) can carry: never stored
		}
		u := &simulator.User{PlatformID: s, UserAccountID: s, CreatedAt: at, LiveSessions: int(n),
			Accounts: []simulator.Account{{Product: simulator.Product(s), Cash: d, KYCApprovedAt: &at, Holdings: []simulator.Holding{{Symbol: s, Quantity: d}}}},
			History:  &simulator.History{PastDay: []simulator.ValuePoint{{AsOf: at, CostBasis: simulator.Cents(n), Value: simulator.Cents(sec)}}}}
		roundTrip(t, u)
		roundTrip(t, &simulator.Member{InstitutionID: s, CoreID: s, DBPID: &s, UserIDs: []string{s, s}, CreatedAt: at})
		roundTrip(t, &simulator.Order{ID: s, Symbol: s, Quantity: d, Notional: d, Fee: d, PlacedAt: at, CompletedAt: &at, RecurringOrderID: s})
		roundTrip(t, &simulator.Transaction{ID: s, Amount: d, CreatedAt: at, CompletedAt: &at, OrderIDs: []string{s, s}})
		body, _ := json.Marshal(s)
		roundTrip(t, &simulator.Delivery{ID: s, Body: body, NextAttemptAt: at, CreatedAt: at,
			Attempts: []simulator.Attempt{{At: at, StatusCode: int(n), Error: s, LatencyMS: float64(n) / 7, ResponseBody: s, Signature: s}}})
		for _, v := range []any{&simulator.User{}, &simulator.Member{}, &simulator.Order{}, &simulator.Transaction{}, &simulator.Delivery{}} {
			_ = decodeRecord(append([]byte{recordV1}, junk...), v)
			_ = decodeRecord(append([]byte{recordV2}, junk...), v)
		}
	})
}

// A store written before the binary form holds JSON records: it opens and reads as before, and
// a record rewritten by a change takes the binary form.
func TestStoreWithJSONRecordsStillReads(t *testing.T) {
	ctx := context.Background()
	db := tempStore(t, nil)
	l, err := db.NewLoader(ctx, true)
	require.NoError(t, err)
	require.NoError(t, l.Institution(simulator.Institution{ID: "ins_a", Prices: map[string]decimal.Decimal{"AAPL": decimal.New(19012, -2)}}))
	g := recordGen{rand.New(rand.NewPCG(7, 7))}
	at := time.Date(2025, 3, 1, 0, 0, 0, 0, time.UTC)
	for i := range 20 {
		u := simulator.User{PlatformID: fmt.Sprintf("usr_%02d", i), InstitutionID: "ins_a", UserAccountID: fmt.Sprintf("u%02d", i), CreatedAt: at.Add(time.Duration(i) * time.Hour),
			Accounts: []simulator.Account{{Product: simulator.ProductSecurities, KYCStatus: simulator.KYCApproved, Cash: g.decimal(),
				Holdings: []simulator.Holding{{Symbol: "AAPL", Quantity: decimal.New(3, 0)}}}}}
		require.NoError(t, l.User(u))
		o := *g.order()
		o.ID, o.InstitutionID, o.UserAccountID, o.Product, o.Side, o.Status = fmt.Sprintf("ord_%02d", i), "ins_a", u.UserAccountID, simulator.ProductSecurities, simulator.SideBuy, simulator.OrderCompleted
		o.PlacedAt = at.Add(time.Duration(i) * time.Minute)
		require.NoError(t, l.Transaction(simulator.Transaction{ID: fmt.Sprintf("txn_%02d", i), InstitutionID: "ins_a", OrderIDs: []string{o.ID}}, []simulator.Order{o}))
	}
	require.NoError(t, l.Finish("tok"))

	read := func() string {
		users, err := db.ListUsers(ctx, "ins_a", simulator.UserFilter{Limit: 100, SortKey: simulator.SortCreatedAt})
		require.NoError(t, err)
		orders, err := db.ListOrders(ctx, "ins_a", simulator.OrderFilter{Limit: 100})
		require.NoError(t, err)
		detail, err := db.UserDetail(ctx, "ins_a", "usr_07", simulator.IDPlatform)
		require.NoError(t, err)
		b, err := json.Marshal([]any{users, orders, detail})
		require.NoError(t, err)
		return string(b)
	}
	want := read()
	// Rewrite every user and order as the JSON stores held before (before user_keys kept them).
	stripUsersByID(t, db)
	require.NoError(t, db.db.Update(func(tx *bbolt.Tx) error {
		for _, bucket := range [][]byte{bUsers, bOrders} {
			b := tx.Bucket(bucket)
			var keys, vals [][]byte
			require.NoError(t, b.ForEach(func(k, v []byte) error {
				require.Equal(t, byte(recordV1), v[0])
				var rec any = &simulator.User{}
				if string(bucket) == string(bOrders) {
					rec = &simulator.Order{}
				}
				require.NoError(t, decodeRecord(v, rec))
				raw, err := json.Marshal(rec)
				keys, vals = append(keys, bytes.Clone(k)), append(vals, raw)
				return err
			}))
			for i := range keys {
				require.NoError(t, b.Put(keys[i], vals[i]))
			}
		}
		return nil
	}))
	assert.Equal(t, want, read())
	require.NoError(t, db.db.View(func(tx *bbolt.Tx) error {
		assert.Equal(t, byte('{'), storedRecord(tx, userRecords, "usr_07")[0])
		return nil
	}))
	_, err = db.TransitionKYC(ctx, "usr_07", simulator.ProductSecurities, simulator.KYCClosed)
	require.NoError(t, err)
	require.NoError(t, db.db.View(func(tx *bbolt.Tx) error {
		assert.Equal(t, byte(recordV1), storedRecord(tx, userRecords, "usr_07")[0], "a changed record is rewritten in the binary form")
		return nil
	}))
}

// A delivery stored in version 1 (before attempts kept their signature) still decodes, with no
// signature; version 2 keeps it.
func TestDeliveryRecordVersion1StillDecodes(t *testing.T) {
	at := time.Date(2026, 11, 24, 21, 0, 0, 0, time.UTC)
	d := &simulator.Delivery{ID: "dlv_1", EventID: "evt_1", SubscriptionID: "sub_1", InstitutionID: "ins_1", URL: "https://h/", Body: json.RawMessage(`{}`),
		Status: simulator.DeliveryDelivered, NextAttemptAt: at, CreatedAt: at,
		Attempts: []simulator.Attempt{{At: at, StatusCode: 200, LatencyMS: 1.5, ResponseBody: "ok", Signature: "t=1,v1=ab"}}}
	a := d.Attempts[0]
	const atBytes = "\xa0\xeb\xaf\xb0\x0d" + "\x00" + "\x00" // 2026-11-24T21:00:00Z: varint Unix seconds, nanoseconds, zone offset
	raw1 := []byte("\x01" +                                  // version 1
		"\x05dlv_1\x05evt_1\x05sub_1\x05ins_1\x0ahttps://h/" + // ids and URL, each after its length
		"\x03{}" + // the body, after its length + 1
		"\x09delivered" + atBytes + // status, next attempt
		"\x02" + // one attempt (the count + 1): at, status 200 (varint), no error, latency 1.5 (float64 bits), "ok"
		atBytes + "\x90\x03" + "\x00" + "\x3f\xf8\x00\x00\x00\x00\x00\x00" + "\x02ok" +
		"\x00" + atBytes) // no error, created at
	require.Equal(t, raw1, deliveryV1(d), "deliveryV1 writes version 1's layout")
	var old simulator.Delivery
	require.NoError(t, decodeRecord(raw1, &old))
	want := *d
	want.Attempts = []simulator.Attempt{a}
	want.Attempts[0].Signature = ""
	assert.Equal(t, want.Attempts, old.Attempts)
	assert.Equal(t, d.ID, old.ID)

	raw, err := encodeRecord(d)
	require.NoError(t, err)
	require.Equal(t, byte(recordV2), raw[0])
	var back simulator.Delivery
	require.NoError(t, decodeRecord(raw, &back))
	assert.Equal(t, "t=1,v1=ab", back.Attempts[0].Signature)
}

// deliveryV1 is d in version 1's layout, field by field (attempts with no signature): the
// writer of a form the store no longer writes, pinned to stated bytes by
// TestDeliveryRecordVersion1StillDecodes.
func deliveryV1(d *simulator.Delivery) []byte {
	var e encoder
	e.b = append(e.b, recordV1)
	for _, s := range []string{d.ID, d.EventID, d.SubscriptionID, d.InstitutionID, d.URL} {
		e.str(s)
	}
	e.length(len(d.Body), false)
	e.b = append(e.b, d.Body...)
	e.str(d.Status)
	e.time(d.NextAttemptAt)
	e.length(len(d.Attempts), false)
	for _, a := range d.Attempts {
		e.time(a.At)
		e.varint(int64(a.StatusCode))
		e.str(a.Error)
		e.b = binary.BigEndian.AppendUint64(e.b, math.Float64bits(a.LatencyMS))
		e.str(a.ResponseBody)
	}
	e.str(d.Error)
	e.time(d.CreatedAt)
	return e.b
}

// A fixture-given history is decoded once: every later read of the same stored bytes shares
// that History (the HTTP layer keeps its rendering by the pointer), equal to a fresh decode;
// another history is another value.
func TestGivenHistoryDecodedOnce(t *testing.T) {
	g := recordGen{rand.New(rand.NewPCG(5, 5))}
	var u *simulator.User
	for u == nil || u.History == nil {
		u = g.user()
	}
	raw, err := encodeRecord(u)
	require.NoError(t, err)
	var a, b simulator.User
	require.NoError(t, decodeRecord(raw, &a))
	require.NoError(t, decodeRecord(bytes.Clone(raw), &b))
	require.Same(t, a.History, b.History, "the second read shares the first one's history")
	want, err := json.Marshal(u.History)
	require.NoError(t, err)
	got, err := json.Marshal(b.History)
	require.NoError(t, err)
	require.JSONEq(t, string(want), string(got))

	u.History = &simulator.History{PastDay: []simulator.ValuePoint{{AsOf: time.Unix(1, 0).UTC(), CostBasis: 1, Value: 2}}}
	raw, err = encodeRecord(u)
	require.NoError(t, err)
	var c simulator.User
	require.NoError(t, decodeRecord(raw, &c))
	require.NotSame(t, a.History, c.History)
	require.Equal(t, simulator.Cents(2), c.History.PastDay[0].Value)
}

// itemCase is a user of mostly known products and statuses, its record, the user that record
// decodes to, and prices for some of its symbols: a case of the list item tests.
func (g recordGen) itemCase(t *testing.T) (u *simulator.User, raw []byte, whole simulator.User, prices map[string]decimal.Decimal) {
	u = g.user()
	for j := range u.Accounts {
		if g.r.IntN(8) > 0 {
			u.Accounts[j].Product = simulator.Products[g.r.IntN(len(simulator.Products))]
			u.Accounts[j].KYCStatus = simulator.KYCStatuses[g.r.IntN(len(simulator.KYCStatuses))]
		}
	}
	prices = map[string]decimal.Decimal{}
	for _, s := range codecStrings {
		if g.r.IntN(4) > 0 {
			prices[s] = g.decimal()
		}
	}
	raw, err := encodeRecord(u)
	require.NoError(t, err)
	require.NoError(t, decodeRecord(raw, &whole))
	return u, raw, whole, prices
}

// A list item read from a stored user (decoder.userItem) is the item of the user decoded
// whole (User.Item) at the same prices — amounts of every size, known and unknown products
// and statuses, absent prices — or it declines and the caller decodes the user whole. So is
// Get User Detail's view of it (readView, User.View), its history seed included.
func TestUserItemMatchesWholeUser(t *testing.T) {
	g := recordGen{rand.New(rand.NewPCG(34, 1))}
	fast, views := 0, 0
	for i := range 5000 {
		_, raw, whole, prices := g.itemCase(t)
		want := whole.Item(prices, nil)

		var view simulator.UserView
		if readView(raw, newPriceTable(prices), &view) {
			views++
			wantView := whole.View(prices)
			view.Prices = prices
			if len(wantView.Item.Accounts) == 0 {
				wantView.Item.Accounts = view.Item.Accounts
			}
			require.Equal(t, wantView, view, "user %d: the detail's view", i)
		}
		require.False(t, readView(raw[:len(raw)-1], newPriceTable(prices), &view), "user %d: cut short", i)

		var got simulator.UserItem
		d := decoder{b: raw[1:]}
		kept := []simulator.AccountItem{{Product: "kept"}}
		inst, uaid, accounts := d.userItem(&got, newPriceTable(prices), kept)
		if uaid == nil {
			require.Equal(t, kept, accounts, "user %d: declined, the accounts as given", i)
			continue
		}
		fast++
		require.Equal(t, whole.InstitutionID, string(inst), "user %d", i)
		got.UserAccountID, got.Accounts = string(uaid), accounts[1:]
		if len(want.Accounts) == 0 {
			want.Accounts = accounts[1:]
		}
		require.Equal(t, want, got, "user %d: %+v at %v", i, whole.Accounts, prices)
	}
	require.Greater(t, fast, 1000, "most users are read as items")
	require.Greater(t, views, 1000, "most users' views are read without decoding them whole")
}

// A list item read from a user's index value (coveredItems) is the item of the user's record
// decoded whole (User.Item) at the same prices — amounts of every size, known and unknown
// products and statuses, absent prices, a user_account_id that is not UTF-8 — whether it is
// read as an item or its accounts whole.
func TestCoveredItemMatchesWholeUser(t *testing.T) {
	g := recordGen{rand.New(rand.NewPCG(34, 4))}
	asRows, pairs, stored := 0, 0, 0
	var last []byte
	var lastWhole simulator.User
	for i := range 5000 {
		u, _, whole, prices := g.itemCase(t)
		want := whole.Item(prices, []simulator.AccountItem{}) // nil and empty render alike
		in := &pricedInstitution{&simulator.Institution{Prices: prices}, newPriceTable(prices), 7, nil}
		_, _, _, before := g.itemCase(t)
		// The value as a store without values writes it, valued at the prices of its version,
		// and valued at other prices (a version before): each reads as the whole user does.
		for form, at := range []*pricedInstitution{nil, in, {&simulator.Institution{Prices: before}, newPriceTable(before), 6, nil}} {
			v := userIndexValue(u, true, at)
			got, err := coveredItems([][]byte{v}, in)
			require.NoError(t, err)
			require.Equal(t, []simulator.UserItem{want}, got, "user %d, form %d: %+v at %v", i, form, whole.Accounts, prices)
			// And as a row, when it is read as one: on a page of its own, and beside another.
			rows := coveredRows([][]byte{v}, in)
			if rows == nil {
				continue
			}
			asRows++
			require.Equal(t, want, rows.Item(0), "user %d as a row, form %d: %+v at %v", i, form, whole.Accounts, prices)
			assert.Equal(t, simulator.PlainJSON(want.UserAccountID), rows.PlainUAIDs, "user %d: plain noted, got/want", i)
			if form == 1 && v[userSummaryLen+1+len(u.UserAccountID)] == 3 {
				stored++
			}
			// At these prices the user before may not be read as a row: then neither is the page.
			if last != nil {
				if two := coveredRows([][]byte{last, v}, in); two != nil {
					pairs++
					require.Equal(t, want, two.Item(1), "user %d as a second row", i)
					require.Equal(t, lastWhole.Item(prices, []simulator.AccountItem{}), two.Item(0), "user %d: the row before it", i)
					assert.Equal(t, simulator.PlainJSON(want.UserAccountID) && simulator.PlainJSON(lastWhole.UserAccountID), two.PlainUAIDs,
						"user %d: plain noted of both, got/want", i)
				}
			}
			last, lastWhole = v, whole
		}
	}
	require.Greater(t, asRows, 1500, "some users are read as rows")
	require.Greater(t, stored, 200, "some rows are read from the values they keep")
	require.Greater(t, pairs, 300, "some pages of two are read as rows")
}

// accountItems returns rows as AccountItems (simulator.UserRows.Item's), empty for none.
func accountItems(rows []simulator.AccountRow) []simulator.AccountItem {
	r := simulator.UserRows{Accounts: rows, Items: []simulator.UserRow{{AccountsEnd: int32(len(rows))}}}
	return r.Item(0).Accounts
}

// A store written before its user index kept list items (no metaUserItems) lists its users from
// their records, and a user written to it keeps the summary alone: its pages are those of the
// store written since, which reads them from the index.
func TestUserListsOfAStoreWrittenBeforeItems(t *testing.T) {
	ctx := context.Background()
	db := tempStore(t, nil)
	g := recordGen{rand.New(rand.NewPCG(34, 5))}
	prices := map[string]decimal.Decimal{"usr_1": decimal.New(19012, -2), "bad\xff": decimal.New(7, 0)}
	l, err := db.NewLoader(ctx, true)
	require.NoError(t, err)
	require.NoError(t, l.Institution(simulator.Institution{ID: "ins_a", Name: "a", Prices: prices}))
	var users []*simulator.User
	for i := range 400 {
		u := g.user()
		u.InstitutionID, u.PlatformID = "ins_a", fmt.Sprintf("usr_%04d", i)
		u.UserAccountID = fmt.Sprintf("u%04d%s", (i*37)%400, codecStrings[i%len(codecStrings)])
		u.CreatedAt = time.Date(2025, 1, 1+i%60, i%24, 0, 0, 0, time.UTC)
		u.Accounts = slices.DeleteFunc(u.Accounts, func(a simulator.Account) bool { return g.r.IntN(4) == 0 })
		for j := range u.Accounts {
			u.Accounts[j].Product = simulator.Products[j]
			u.Accounts[j].KYCStatus = simulator.KYCStatuses[g.r.IntN(len(simulator.KYCStatuses))]
		}
		users = append(users, u)
		require.NoError(t, l.User(*u))
	}
	require.NoError(t, l.Finish("tok"))
	r := rand.New(rand.NewPCG(34, 6))
	var queries []simulator.UserFilter
	for range 300 {
		f := simulator.UserFilter{Limit: 1 + r.IntN(40), Offset: r.IntN(300), Desc: r.IntN(2) == 0}
		if r.IntN(2) == 0 {
			f.SortKey = simulator.SortUserAccountID
		}
		if r.IntN(3) == 0 {
			f.Product = ptrTo(simulator.Products[r.IntN(4)])
		}
		if r.IntN(3) == 0 {
			f.KYC = map[simulator.Product]simulator.KYCStatus{simulator.Products[r.IntN(4)]: simulator.KYCStatuses[r.IntN(6)]}
		}
		if r.IntN(3) == 0 {
			f.CreatedStart = ptrTo(time.Date(2025, 1, 1+r.IntN(60), r.IntN(24), 0, 0, 0, time.UTC))
		}
		queries = append(queries, f)
	}
	// pages reads every query's page, its items as UserItems whichever form they came in
	// (rows counts those that came as rows).
	rows := 0
	pages := func() []*simulator.UserItemPage {
		var out []*simulator.UserItemPage
		for _, f := range queries {
			page, err := db.ListUserItems(ctx, "ins_a", f)
			require.NoError(t, err)
			if page.Rows != nil {
				rows++
			}
			out = append(out, &simulator.UserItemPage{Items: page.AllItems(), Total: page.Total})
		}
		return out
	}
	since := pages()
	require.Greater(t, rows, len(queries)/4, "pages read as rows")
	// What the whole records show.
	for i, f := range queries {
		whole, err := db.ListUsers(ctx, "ins_a", f)
		require.NoError(t, err)
		want := []simulator.UserItem{}
		for _, u := range whole.Users {
			want = append(want, u.Item(whole.Prices, []simulator.AccountItem{}))
		}
		require.Equal(t, whole.Total, since[i].Total, "query %d: %+v", i, f)
		require.Equal(t, want, since[i].Items, "query %d: %+v", i, f)
	}

	byUAID := map[string]*simulator.User{}
	for _, u := range users {
		byUAID[u.UserAccountID] = u
	}
	// rewriteAccounts rewrites every user index value whose accounts are of tag from with what
	// write writes for its user after the user_account_id, and returns how many it rewrote.
	rewriteAccounts := func(from byte, write func(e *encoder, u *simulator.User)) (rewritten int) {
		require.NoError(t, db.db.Update(func(tx *bbolt.Tx) error {
			b := tx.Bucket(bUserIndex)
			type kv struct{ k, v []byte }
			var old []kv
			require.NoError(t, b.ForEach(func(k, v []byte) error {
				n := summaryUAIDLen(v, true)
				head := userSummaryLen + uvarintLen(uint64(n)) + n
				if v[head] != from {
					return nil
				}
				rewritten++
				u := byUAID[string(v[head-n:head])]
				require.NotNil(t, u, "the user of %q", v[head-n:head])
				e := encoder{b: bytes.Clone(v[:head])}
				write(&e, u)
				old = append(old, kv{bytes.Clone(k), e.b})
				return nil
			}))
			for _, e := range old {
				require.NoError(t, b.Put(e.k, e.v))
			}
			return nil
		}))
		return rewritten
	}
	// The same store as written before values were kept (no metaUserValues): every value's
	// accounts of tag 3 (valuedItemAccounts) in tag 2, and a user written to it keeps tag 2.
	require.NoError(t, db.db.Update(func(tx *bbolt.Tx) error { return tx.Bucket(bMeta).Delete(metaUserValues) }))
	valued := rewriteAccounts(3, func(e *encoder, u *simulator.User) { require.True(t, e.fixedItemAccounts(u.Accounts)) })
	require.Greater(t, valued, 100, "values that keep each account's value")
	require.Equal(t, since, pages(), "the values of tag 2 read as those of tag 3")
	was := *users[3]
	require.NoError(t, db.update(ctx, func(w *writeTx) error {
		u := *users[3]
		u.LiveSessions++
		return w.putUser(&was, &u)
	}))
	require.NoError(t, db.db.View(func(tx *bbolt.Tx) error {
		prefix := cat(inst("ins_a"), []byte{kindAll, sortCreated})
		v := tx.Bucket(bUserIndex).Get(cat(prefix, timeKey(was.CreatedAt), []byte(was.PlatformID)))
		u := was
		u.LiveSessions++
		require.Equal(t, userIndexValue(&u, true, nil), v, "a store without the mark keeps its form")
		return nil
	}))
	require.NoError(t, db.update(ctx, func(w *writeTx) error {
		u := was
		u.LiveSessions++
		return w.putUser(&u, &was)
	}))

	// The same store as written before fixed-width amounts: every value's accounts of tag 2
	// (fixedItemAccounts) in tag 0, as encoder.decimal writes amounts.
	fixed := rewriteAccounts(2, func(e *encoder, u *simulator.User) { e.compactItemAccounts(u.Accounts) })
	require.Greater(t, fixed, 100, "values with fixed-width amounts")
	require.Equal(t, since, pages(), "the values of tag 0 read as those of tag 2")

	// The same store as written before: no mark, each value the summary alone.
	require.NoError(t, db.db.Update(func(tx *bbolt.Tx) error {
		require.NoError(t, tx.Bucket(bMeta).Delete(metaUserItems))
		b := tx.Bucket(bUserIndex)
		type kv struct{ k, v []byte }
		var old []kv
		require.NoError(t, b.ForEach(func(k, v []byte) error {
			n := summaryUAIDLen(v, true)
			uaid := v[userSummaryLen+uvarintLen(uint64(n)):][:n]
			old = append(old, kv{bytes.Clone(k), cat(v[:userSummaryLen], uaid)})
			return nil
		}))
		for _, e := range old {
			require.NoError(t, b.Put(e.k, e.v))
		}
		return nil
	}))
	require.Equal(t, since, pages(), "the records read as the index was")

	// A user written to it keeps the form the store has.
	u := users[7]
	require.NoError(t, db.update(ctx, func(w *writeTx) error {
		was := *u
		u.LiveSessions++
		return w.putUser(&was, u)
	}))
	require.NoError(t, db.db.View(func(tx *bbolt.Tx) error {
		prefix := cat(inst("ins_a"), []byte{kindAll, sortCreated})
		v := tx.Bucket(bUserIndex).Get(cat(prefix, timeKey(u.CreatedAt), []byte(u.PlatformID)))
		require.Equal(t, userIndexValue(u, false, nil), v)
		return nil
	}))
	require.Equal(t, since, pages(), "after a write")
}

// uvarintLen is the length of n's uvarint.
func uvarintLen(n uint64) int { return len(binary.AppendUvarint(nil, n)) }

func ptrTo[T any](v T) *T { return &v }

// An order list item read from a stored order as a page's renderer reads it (decoder.orderRow)
// is the row of the order decoded whole (Order.Item, OrderItem.Row), its strings marked plain
// exactly when none needs escaping, and a cut record is an error.
func TestOrderRowMatchesWholeOrder(t *testing.T) {
	g := recordGen{rand.New(rand.NewPCG(34, 2))}
	for i := range 3000 {
		raw, err := encodeRecord(g.order())
		require.NoError(t, err)
		var whole simulator.Order
		require.NoError(t, decodeRecord(raw, &whole))
		var got simulator.OrderRow
		d := decoder{b: raw[1:]}
		d.share()
		inst := d.orderRow(&got)
		require.NoError(t, d.err, "order %d", i)
		require.Equal(t, whole.InstitutionID, inst, "order %d", i)
		item := whole.Item()
		item.PlainStrings = plainItem(&item) // checked as the record is read
		require.Equal(t, sameRow(item.Row()), sameRow(got), "order %d", i)
		step := 1 + len(raw)/20
		if i < 300 {
			step = 1 // every cut
		}
		for n := 1; n < len(raw); n += step {
			d := decoder{b: raw[1:n]}
			d.share()
			d.orderRow(&got)
			require.Error(t, d.err, "order %d cut at %d bytes", i, n)
		}
		long := decoder{b: append(raw[1:len(raw):len(raw)], 0)}
		long.share()
		long.orderRow(&got)
		require.Error(t, long.err, "order %d with a byte more", i)
	}
}

// sameRow returns r with each amount as a decimal: either form of the same decimal
// (simulator.Amount) compares alike.
func sameRow(r simulator.OrderRow) simulator.OrderRow {
	for _, a := range []*simulator.Amount{&r.Quantity, &r.Notional, &r.Fee} {
		d := a.Decimal()
		*a = simulator.Amount{Big: &d}
	}
	return r
}

// The arithmetic canonical form of a decimal is the one its String() gives: the same bytes for
// every size, sign, exponent and trailing zeros, and at every edge of 18 digits.
func TestDecimalEncodingMatchesText(t *testing.T) {
	r := rand.New(rand.NewPCG(34, 3))
	g := recordGen{r}
	cases := []decimal.Decimal{decimal.Zero, decimal.New(0, -5), decimal.New(0, 7), decimal.New(1500, -2), decimal.New(-1500, -2),
		decimal.New(1, -17), decimal.New(1, -18), decimal.New(-1, -17), decimal.New(999_999_999_999_999_999, 0),
		decimal.New(999_999_999_999_999_999, -18), decimal.New(99_999_999_999_999_999, 1), decimal.New(999_999_999_999_999_999, 1),
		decimal.New(100_000_000_000_000_000, -1), decimal.New(12, 16), decimal.New(12, 17), decimal.New(math.MaxInt64, 0),
		decimal.New(math.MinInt64, 0), decimal.New(math.MinInt64, -30), decimal.New(10, -19), decimal.New(123_000, -20)}
	for range 200_000 {
		switch r.IntN(3) {
		case 0:
			cases = append(cases, g.decimal())
		case 1:
			cases = append(cases, decimal.New(r.Int64N(2e18)-1e18, int32(r.IntN(40))-25))
		default:
			cases = append(cases, decimal.New((r.Int64N(2e6)-1e6)*[]int64{1, 10, 1000, 1e6}[r.IntN(4)], int32(r.IntN(24))-20))
		}
	}
	for _, d := range cases {
		var fast, text encoder
		fast.decimal(d)
		text.decimalText(d)
		require.Equal(t, text.b, fast.b, "%s (coefficient %s, exponent %d)", d, d.Coefficient(), d.Exponent())
	}
}

// clusteredStore loads two institutions' users and orders, created and placed in an order
// unrelated to their ids and several at the same instant, into a new store.
func clusteredStore(t *testing.T) *DB {
	t.Helper()
	ctx := context.Background()
	db := tempStore(t, nil)
	l, err := db.NewLoader(ctx, true)
	require.NoError(t, err)
	g := recordGen{rand.New(rand.NewPCG(3, 3))}
	at := time.Date(2025, 3, 1, 0, 0, 0, 0, time.UTC)
	for _, in := range []string{"ins_a", "ins_b"} {
		require.NoError(t, l.Institution(simulator.Institution{ID: in, Prices: map[string]decimal.Decimal{"AAPL": decimal.New(19012, -2)}}))
		for i := range 30 {
			u := *g.user()
			u.PlatformID, u.InstitutionID, u.UserAccountID = fmt.Sprintf("usr_%s_%02d", in, i), in, fmt.Sprintf("u%02d", (i*11)%30)
			u.CreatedAt = at.Add(time.Duration((i*5)%7) * time.Hour)
			require.NoError(t, l.User(u))
		}
		for i := range 40 {
			o := *g.order()
			o.ID, o.InstitutionID, o.UserAccountID = fmt.Sprintf("ord_%s_%02d", in, i), in, fmt.Sprintf("u%d", i%3)
			o.Product, o.Side, o.Status = simulator.ProductSecurities, simulator.SideBuy, simulator.OrderCompleted
			o.PlacedAt = at.Add(time.Duration((i*7)%13) * time.Hour) // ids and placed_at disagree; ties
			require.NoError(t, l.Transaction(simulator.Transaction{ID: fmt.Sprintf("txn_%s_%02d", in, i), InstitutionID: in, OrderIDs: []string{o.ID}}, []simulator.Order{o}))
		}
	}
	require.NoError(t, l.Finish("tok"))
	return db
}

// clusteredRead is every user and order list page, user and transaction the tests compare, as
// JSON.
func clusteredRead(t *testing.T, db *DB) string {
	t.Helper()
	ctx := context.Background()
	var got []any
	for _, in := range []string{"ins_a", "ins_b"} {
		for _, desc := range []bool{false, true} {
			for _, off := range []int{0, 7, 33} {
				p, err := db.ListOrders(ctx, in, simulator.OrderFilter{Desc: desc, Offset: off, Limit: 9})
				require.NoError(t, err)
				got = append(got, p)
			}
		}
		for _, sk := range []simulator.UserSortKey{simulator.SortCreatedAt, simulator.SortUserAccountID} {
			for _, desc := range []bool{false, true} {
				p, err := db.ListUsers(ctx, in, simulator.UserFilter{SortKey: sk, Desc: desc, Offset: 4, Limit: 20})
				require.NoError(t, err)
				got = append(got, p)
			}
		}
		u := "u1"
		p, err := db.ListOrders(ctx, in, simulator.OrderFilter{UserAccountID: &u, Limit: 100})
		require.NoError(t, err)
		tx, orders, err := db.Transaction(ctx, in, "txn_"+in+"_05")
		require.NoError(t, err)
		v, err := db.UserDetail(ctx, in, "usr_"+in+"_07", simulator.IDPlatform)
		require.NoError(t, err)
		got = append(got, p, tx, orders, v)
	}
	b, err := json.Marshal(got)
	require.NoError(t, err)
	return string(b)
}

// User and order records are keyed by institution, created_at or placed_at, and id, so a
// page's records are neighbours in the file, and user_keys and order_keys find each
// by id (user_keys with a copy of the record).
func TestRecordsAreClusteredByInstitutionAndTime(t *testing.T) {
	db := clusteredStore(t)
	var keys [][]byte
	require.NoError(t, db.db.View(func(tx *bbolt.Tx) error {
		n := 0
		require.NoError(t, tx.Bucket(bUsers).ForEach(func(k, v []byte) error {
			var u simulator.User
			require.NoError(t, decodeRecord(v, &u))
			assert.Equal(t, string(cat(inst(u.InstitutionID), timeKey(u.CreatedAt), []byte(u.PlatformID))), string(k))
			assert.Equal(t, string(cat(k[:len(k)-len(u.PlatformID)], v)), string(tx.Bucket(bUserKeys).Get([]byte(u.PlatformID))), "the key's prefix, then the record")
			n++
			return nil
		}))
		assert.Equal(t, 60, n)
		return tx.Bucket(bOrders).ForEach(func(k, v []byte) error {
			var o simulator.Order
			require.NoError(t, decodeRecord(v, &o))
			assert.Equal(t, string(cat(inst(o.InstitutionID), timeKey(o.PlacedAt), []byte(o.ID))), string(k))
			assert.Equal(t, string(k[:len(k)-len(o.ID)]), string(tx.Bucket(bOrderKeys).Get([]byte(o.ID))))
			keys = append(keys, bytes.Clone(k))
			return nil
		})
	}))
	assert.Len(t, keys, 80)
	// The unfiltered list of each institution is the records' own order.
	for _, in := range []string{"ins_a", "ins_b"} {
		p, err := db.ListOrders(context.Background(), in, simulator.OrderFilter{Limit: 100})
		require.NoError(t, err)
		var want []string
		for _, k := range keys {
			if bytes.HasPrefix(k, inst(in)) {
				want = append(want, string(k[len(inst(in))+8:]))
			}
		}
		var got []string
		for _, o := range p.Orders {
			got = append(got, o.ID)
		}
		assert.Equal(t, want, got, in)
	}
}

// toLegacyRecords rewrites a store's user and order records in the layout before clustering:
// buckets "users" and "orders", keyed by id.
func toLegacyRecords(t *testing.T, db *DB) {
	t.Helper()
	stripUsersByID(t, db)
	require.NoError(t, db.db.Update(func(tx *bbolt.Tx) error {
		for _, c := range []clustered{userRecords, orderRecords} {
			legacy, err := tx.CreateBucket(c.legacy)
			require.NoError(t, err)
			require.NoError(t, tx.Bucket(c.keys).ForEach(func(id, prefix []byte) error {
				return legacy.Put(bytes.Clone(id), bytes.Clone(tx.Bucket(c.records).Get(cat(prefix, id))))
			}))
			require.NoError(t, tx.DeleteBucket(c.records))
			require.NoError(t, tx.DeleteBucket(c.keys))
		}
		return nil
	}))
}

// A store written before user and order records were clustered opens with them moved to the
// new layout, their bytes unchanged, and reads as it did; so does a snapshot of such a store.
func TestRecordsOfTheEarlierLayoutMoveAtOpenAndRestore(t *testing.T) {
	db := clusteredStore(t)
	want := clusteredRead(t, db)
	toLegacyRecords(t, db)
	snapshot := db.Path() + "-snapshot"
	require.NoError(t, db.db.View(func(tx *bbolt.Tx) error { return tx.CopyFile(snapshot, 0o600) }))
	db = reopen(t, db, nil)
	assert.Equal(t, want, clusteredRead(t, db))
	require.NoError(t, db.db.View(func(tx *bbolt.Tx) error {
		assert.Nil(t, tx.Bucket(bLegacyOrders), "the earlier buckets are gone")
		assert.Nil(t, tx.Bucket(bLegacyUsers))
		assert.Equal(t, 80, tx.Bucket(bOrderKeys).Stats().KeyN)
		assert.Equal(t, 60, tx.Bucket(bUserKeys).Stats().KeyN)
		return nil
	}))

	// Restoring the earlier store's file as a snapshot moves its orders the same way.
	require.NoError(t, db.RestoreSnapshot(context.Background(), snapshot))
	assert.Equal(t, want, clusteredRead(t, db))
	require.NoError(t, db.db.View(func(tx *bbolt.Tx) error {
		assert.Equal(t, 80, tx.Bucket(bOrders).Stats().KeyN)
		assert.Equal(t, 60, tx.Bucket(bUsers).Stats().KeyN)
		return nil
	}))
}

// A store written before user_keys kept each user's record and members (no metaUsersByID,
// each value its key's prefix alone, members in member_user alone) reads as one written since
// — details by each kind of id, users by id, pages — before and after the same users change
// and the same members are added in both (a user moving to another created_at; a member
// naming two users, one of another institution's, and one naming a user not yet created), and
// each keeps its form: a changed user's copy follows its record in the store written since,
// and the store written before gets none. A detail of the store written since is read from
// the copy alone.
func TestUsersOfAStoreWrittenBeforeUsersByID(t *testing.T) {
	ctx := context.Background()
	marked, old := clusteredStore(t), clusteredStore(t)
	stripUsersByID(t, old)
	old = reopen(t, old, nil)
	read := func(db *DB) string {
		got := []any{clusteredRead(t, db)}
		for _, in := range []string{"ins_a", "ins_b"} {
			for i := range 30 {
				pid := fmt.Sprintf("usr_%s_%02d", in, i)
				v, err := db.UserDetail(ctx, in, pid, simulator.IDPlatform)
				require.NoError(t, err)
				u, err := db.User(ctx, pid)
				require.NoError(t, err)
				got = append(got, v, u)
			}
			for _, core := range []string{"c1", "c2", "c3"} {
				v, err := db.UserDetail(ctx, in, core, simulator.IDCore)
				got = append(got, v, simulator.ErrorCode(err))
			}
		}
		_, err := db.UserDetail(ctx, "ins_b", "usr_ins_a_03", simulator.IDPlatform)
		require.Equal(t, simulator.ENOTFOUND, simulator.ErrorCode(err), "another institution's user")
		b, err := json.Marshal(got)
		require.NoError(t, err)
		return string(b)
	}
	change := func(db *DB, pid string) {
		require.NoError(t, db.update(ctx, func(w *writeTx) error {
			was, err := getUser(w.Tx, "", pid)
			require.NoError(t, err)
			u := *was
			u.UserAccountID, u.Terms.Version, u.CreatedAt = u.UserAccountID+"x", "v9", u.CreatedAt.Add(time.Minute)
			return w.putUser(was, &u)
		}))
	}
	// forms returns how many users' values carry a copy of their record, and how many their
	// prefix alone; a copy must be the record's bytes.
	forms := func(db *DB) (copies, prefixes int) {
		require.NoError(t, db.db.View(func(tx *bbolt.Tx) error {
			return tx.Bucket(bUserKeys).ForEach(func(id, v []byte) error {
				if bytes.IndexByte(id, 0) >= 0 {
					return nil // a member's entry
				}
				prefix, rec := keyValue(v)
				require.NotNil(t, tx.Bucket(bUsers).Get(cat(prefix, id)), "%s: its record is where its prefix says", id)
				if len(rec) == 0 {
					prefixes++
					return nil
				}
				copies++
				assert.Equal(t, tx.Bucket(bUsers).Get(cat(prefix, id)), rec, "%s: the copy is the record", id)
				return nil
			})
		}))
		return copies, prefixes
	}
	member := func(db *DB, in, core string, pids ...string) {
		dbp := "d" + core
		require.NoError(t, db.update(ctx, func(w *writeTx) error {
			inst, err := getInstitution(w.Tx, in)
			require.NoError(t, err)
			inst.Vendors.Core = &core
			require.NoError(t, w.putInstitution(inst))
			return w.putMember(&simulator.Member{InstitutionID: in, CoreID: core, CoreIDType: "core", DBPID: &dbp, UserIDs: pids})
		}))
	}
	require.Equal(t, read(marked), read(old))
	for _, db := range []*DB{marked, old} {
		member(db, "ins_a", "c1", "usr_ins_a_03", "usr_ins_b_03")
		member(db, "ins_a", "c2", "usr_ins_a_03")
		member(db, "ins_b", "c1", "usr_ins_b_03")
		member(db, "ins_b", "c3", "usr_ins_b_99", "usr_ins_b_07")
	}
	require.Equal(t, read(marked), read(old), "with members")
	v, err := marked.UserDetail(ctx, "ins_a", "usr_ins_a_03", simulator.IDPlatform)
	require.NoError(t, err)
	assert.Equal(t, []simulator.IdentityRef{{ID: "c1", Type: "core"}, {ID: "c2", Type: "core"}}, v.CoreIDs, "its institution's members, no other's")
	for _, pid := range []string{"usr_ins_a_05", "usr_ins_b_04", "usr_ins_a_03"} {
		change(marked, pid)
		change(old, pid)
		require.Equal(t, read(marked), read(old), "after %s changed", pid)
	}
	copies, prefixes := forms(marked)
	assert.Equal(t, [2]int{60, 0}, [2]int{copies, prefixes}, "written since: every value carries its record")
	copies, prefixes = forms(old)
	assert.Equal(t, [2]int{0, 60}, [2]int{copies, prefixes}, "written before: a write keeps the form")

	// The detail of the store written since reads no record of user_records and no entry of
	// member_user.
	want := read(marked)
	require.NoError(t, marked.db.Update(func(tx *bbolt.Tx) error {
		require.NoError(t, tx.DeleteBucket(bMemberUser))
		_, err := tx.CreateBucket(bMemberUser)
		require.NoError(t, err)
		var keys [][]byte
		require.NoError(t, tx.Bucket(bUsers).ForEach(func(k, _ []byte) error { keys = append(keys, bytes.Clone(k)); return nil }))
		for _, k := range keys {
			require.NoError(t, tx.Bucket(bUsers).Put(k, []byte{recordV1})) // cut short: unreadable
		}
		return nil
	}))
	marked = reopen(t, marked, nil)
	for _, pid := range []string{"usr_ins_a_05", "usr_ins_b_17", "usr_ins_a_03", "usr_ins_b_03"} {
		v, err := marked.UserDetail(ctx, pid[4:9], pid, simulator.IDPlatform)
		require.NoError(t, err)
		b, err := json.Marshal(v)
		require.NoError(t, err)
		assert.Contains(t, want, string(b), pid)
	}
}

// stepTo reaches every key of a sorted sequence, up or down, near or far, and lands where a
// seek would on a missing key.
func TestStepToReachesWhatSeekReaches(t *testing.T) {
	db := tempStore(t, nil)
	var all []int
	require.NoError(t, db.db.Update(func(tx *bbolt.Tx) error {
		b, err := tx.CreateBucket([]byte("steps"))
		require.NoError(t, err)
		for i := range 3000 {
			if i%11 != 5 { // holes
				all = append(all, i)
				require.NoError(t, b.Put(fmt.Appendf(nil, "k%05d", i), fmt.Appendf(nil, "v%d", i)))
			}
		}
		return nil
	}))
	r := rand.New(rand.NewPCG(9, 9))
	sequences := [][]int{all[:200], {3, 4, 6, 7, 9, 12, 30, 2999, 0, 1}, {5, 16, 27, 28}} // holes included
	down := slices.Clone(all[:300])
	slices.Reverse(down)
	sequences = append(sequences, down)
	for range 20 {
		seq := make([]int, 50)
		for i := range seq {
			seq[i] = r.IntN(3100)
		}
		slices.Sort(seq)
		sequences = append(sequences, seq)
	}
	require.NoError(t, db.db.View(func(tx *bbolt.Tx) error {
		b := tx.Bucket([]byte("steps"))
		for _, seq := range sequences {
			c := b.Cursor()
			var at []byte
			for _, n := range seq {
				key := fmt.Appendf(nil, "k%05d", n)
				k, v := stepTo(c, at, key)
				wk, wv := b.Cursor().Seek(key)
				require.Equal(t, string(wk), string(k), "key %s after %s", key, at)
				require.Equal(t, string(wv), string(v))
				if k == nil {
					c = b.Cursor()
					at = nil
					continue
				}
				at = k
			}
		}
		return nil
	}))
}

// storedRecord returns the stored bytes of record id.
func storedRecord(tx *bbolt.Tx, c clustered, id string) []byte {
	prefix, _ := keyValue(tx.Bucket(c.keys).Get([]byte(id)))
	return tx.Bucket(c.records).Get(cat(prefix, []byte(id)))
}

// stripUsersByID makes db a store as written before user_keys kept the records and the
// members (no metaUsersByID mark, each value its key's prefix alone, no memberKey entries).
func stripUsersByID(t *testing.T, db *DB) {
	t.Helper()
	require.NoError(t, db.db.Update(func(tx *bbolt.Tx) error {
		require.NoError(t, tx.Bucket(bMeta).Delete(metaUsersByID))
		b := tx.Bucket(bUserKeys)
		var keys, prefixes [][]byte
		require.NoError(t, b.ForEach(func(k, v []byte) error {
			prefix, _ := keyValue(v)
			if bytes.IndexByte(k, 0) >= 0 {
				prefix = nil // a member's entry
			}
			keys, prefixes = append(keys, bytes.Clone(k)), append(prefixes, bytes.Clone(prefix))
			return nil
		}))
		for i, k := range keys {
			if prefixes[i] == nil {
				require.NoError(t, b.Delete(k))
				continue
			}
			require.NoError(t, b.Put(k, prefixes[i]))
		}
		return nil
	}))
}

// Moving a large store of the earlier layout takes time linear in its records: put at random
// places of the new bucket, as the first version of the move did, 100,000 orders were 100,000
// inserts into the middle of one bbolt node (split only at commit) and took minutes; in key
// order they take a few seconds even under the race detector.
func TestEarlierLayoutMovesInLinearTime(t *testing.T) {
	if testing.Short() {
		t.Skip("writes 100,000 orders")
	}
	db := tempStore(t, nil)
	r := rand.New(rand.NewPCG(5, 5))
	at := time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC)
	const n = 100_000
	require.NoError(t, db.db.Update(func(tx *bbolt.Tx) error {
		legacy, err := tx.CreateBucket(bLegacyOrders)
		require.NoError(t, err)
		for i := range n {
			o := simulator.Order{ID: fmt.Sprintf("ord_%08d", i), InstitutionID: "ins_a", Quantity: decimal.New(1, 0),
				PlacedAt: at.Add(time.Duration(r.IntN(365*24*3600)) * time.Second)} // placed in no order of their ids
			raw, err := encodeRecord(&o)
			require.NoError(t, err)
			require.NoError(t, legacy.Put([]byte(o.ID), raw))
		}
		return nil
	}))
	start := time.Now()
	db = reopen(t, db, nil)
	took := time.Since(start)
	t.Logf("moved %d orders in %s", n, took)
	assert.Less(t, took, 30*time.Second)
	require.NoError(t, db.db.View(func(tx *bbolt.Tx) error {
		assert.Equal(t, n, tx.Bucket(bOrders).Stats().KeyN)
		return nil
	}))
}

// Order list items read from covered index values (orderItemValue) against whole orders.
// A page of orders read with their strings cut from one arena (orderItems,
// decoder.orderItemStrings), or from copies of their records (recordOrders), holds each
// order's item as the whole order gives it — orders whose product, side or status an item
// knows beside ones it does not (read on their own), and records of the JSON form, in any mix
// on one page; a cut record is an error.
func TestOrderItemsMatchWholeOrders(t *testing.T) {
	g := recordGen{rand.New(rand.NewPCG(34, 4))}
	db := tempStore(t, nil)
	const instID = "ins_page"
	var raws, keys [][]byte
	require.NoError(t, db.db.Update(func(tx *bbolt.Tx) error {
		b := tx.Bucket(bOrders)
		for i := range 400 {
			o := g.order()
			o.InstitutionID = instID
			if g.r.IntN(8) > 0 {
				o.Product = simulator.Products[g.r.IntN(len(simulator.Products))]
				o.Side = simulator.Sides[g.r.IntN(2)]
				o.Status = simulator.OrderStatuses[g.r.IntN(len(simulator.OrderStatuses))]
			}
			raw, err := encodeRecord(o)
			if err != nil {
				return err
			}
			if i%50 == 7 { // a record of the JSON form
				if raw, err = json.Marshal(o); err != nil {
					return err
				}
			}
			key := cat(orderKeyPrefix(o), []byte(o.ID), []byte{byte(i >> 8), byte(i)}) // unique
			if err := b.Put(key, raw); err != nil {
				return err
			}
			raws, keys = append(raws, raw), append(keys, key)
		}
		return nil
	}))
	order := make([]int, len(keys)) // the page in key order, as an index gives it
	for i := range order {
		order[i] = i
	}
	slices.SortFunc(order, func(a, b int) int { return bytes.Compare(keys[a], keys[b]) })
	require.NoError(t, db.db.View(func(tx *bbolt.Tx) error {
		for start := 0; start < len(order); start += 25 {
			page := order[start:min(start+25, len(order))]
			pageKeys := make([][]byte, len(page))
			for i, k := range page {
				pageKeys[i] = keys[k]
			}
			items, err := orderItems(tx, pageKeys, instID)
			require.NoError(t, err)
			copies := make([][]byte, len(page)) // the records as a walk of order_records copies them
			for i, k := range page {
				copies[i] = bytes.Clone(raws[k])
			}
			require.Equal(t, sameForm(items), sameForm(OrderItemsOf(t, &simulator.OrderItemPage{Read: &recordOrders{records: copies, instID: instID}})),
				"the page at %d read from its records' copies", start)
			for i, k := range page {
				var whole simulator.Order
				require.NoError(t, decodeRecord(raws[k], &whole))
				want, got := whole.Item(), items[i]
				for _, a := range []*simulator.Amount{&want.Quantity, &want.Notional, &want.Fee, &got.Quantity, &got.Notional, &got.Fee} {
					d := a.Decimal() // either form of the same decimal
					*a = simulator.Amount{Big: &d}
				}
				require.Equal(t, want, got, "order %d of the page at %d", i, start)
			}
		}
		for _, raw := range raws[:50] {
			if raw[0] != recordV1 {
				continue
			}
			for n := 1; n < len(raw); n += 1 + len(raw)/20 {
				var it simulator.OrderItem
				var ends [4]int
				d := decoder{b: raw[1:n]}
				d.orderItemStrings(&it, nil, &ends)
				require.Error(t, d.err, "cut at %d bytes", n)
			}
		}
		for _, raw := range raws[:50] {
			for n := 1; n < len(raw); n += 1 + len(raw)/20 {
				page := &simulator.OrderItemPage{Read: &recordOrders{records: [][]byte{raw[:n]}, instID: instID}}
				require.Error(t, eachItem(page, func(*simulator.OrderItem) {}), "a record's copy cut at %d bytes", n)
			}
		}
		_, err := orderItems(tx, keys[:1], "ins_other")
		require.Error(t, err, "another institution's order: a stale index")
		for _, raw := range raws[:8] { // a record of either form
			page := &simulator.OrderItemPage{Read: &recordOrders{records: [][]byte{raw}, instID: "ins_other"}}
			require.Error(t, eachItem(page, func(*simulator.OrderItem) {}), "another institution's order")
		}
		return nil
	}))
}

// An order's list item read from a covered index entry as a page's walk copies it
// (orderItemValue, decoder.coveredOrder) is the item of the order decoded whole — products,
// sides and statuses an item knows and ones it does not, every amount size, a non-UTF-8 id
// (kept as the record keeps it), placed_at as its instant — and a cut entry is an error. A page
// of them, read into one item, gives each item whole: nothing of the item before it is left.
func TestCoveredOrderItemMatchesWholeOrder(t *testing.T) {
	g := recordGen{rand.New(rand.NewPCG(34, 7))}
	var entries [][]byte
	var wants []simulator.OrderItem
	plain := 0
	for i := range 3000 {
		o := g.order()
		if g.r.IntN(4) > 0 {
			o.Product = simulator.Products[g.r.IntN(len(simulator.Products))]
			o.Side = simulator.Sides[g.r.IntN(2)]
			o.Status = simulator.OrderStatuses[g.r.IntN(len(simulator.OrderStatuses))]
		}
		if o.PlacedAt.Before(simulator.FirstStorableTime) { // a stored order's is never
			o.PlacedAt = time.Date(2025, 1, 2, 3, 4, 5, 6, time.FixedZone("", -3600))
		}
		if i%10 == 3 {
			o.ID = "ord_\xff" + o.ID
		}
		rest := cat(timeKey(o.PlacedAt), []byte(o.ID))
		marks := i%2 == 0 // a store that notes plain strings (metaOrderPlain), or one from before
		entry := append(append(binary.AppendUvarint(nil, uint64(len(rest))), rest...), orderItemValue(o, marks)...)
		raw, err := encodeRecord(o)
		require.NoError(t, err)
		var whole simulator.Order
		require.NoError(t, decodeRecord(raw, &whole))
		var items []simulator.OrderItem // as read, the mark of plain strings too
		require.NoError(t, eachItem(&simulator.OrderItemPage{Read: &coveredOrders{entries: [][]byte{entry}}}, func(it *simulator.OrderItem) { items = append(items, *it) }))
		want := whole.Item()
		want.PlacedAt = want.PlacedAt.UTC()
		want.PlainStrings = marks && plainItem(&want)
		if want.PlainStrings {
			plain++
		}
		require.Equal(t, sameForm([]simulator.OrderItem{want}), sameForm(items), "order %d", i)
		require.Equal(t, want.PlainStrings, items[0].PlainStrings, "order %d: %q %q %q %q", i, o.ID, o.UserAccountID, o.Symbol, o.RecurringOrderID)
		entries, wants = append(entries, entry), append(wants, want)
		require.Equal(t, orderSummary(o)[:orderSummaryLen], orderItemValue(o, marks)[:orderSummaryLen], "a filter reads either form alike")
		for n := 1; n < len(entry); n += 1 + len(entry)/20 {
			page := &simulator.OrderItemPage{Read: &coveredOrders{entries: [][]byte{entry[:n]}}}
			require.Error(t, eachItem(page, func(*simulator.OrderItem) {}), "order %d cut at %d bytes", i, n)
		}
	}
	assert.Greater(t, plain, 20, "orders of plain strings in a store that notes them")
	var got []simulator.OrderItem
	require.NoError(t, eachItem(&simulator.OrderItemPage{Read: &coveredOrders{entries: entries}}, func(it *simulator.OrderItem) { got = append(got, *it) }))
	got = sameForm(got)
	require.Len(t, got, len(wants))
	for i, want := range sameForm(wants) {
		require.Equal(t, want, got[i], "order %d of them as one page", i)
	}
}

// A store written before order index values carried list items (no metaOrderItems, each value
// the summary) answers every order page as one written since: the same items, read from its
// records; an order written to it keeps the form it has. A store written since writes covered
// values to every index but the index of all orders, and its pages after orders change are
// those of the whole orders.
func TestOrderListsOfAStoreWrittenBeforeItems(t *testing.T) {
	ctx := context.Background()
	db := tempStore(t, nil)
	g := recordGen{rand.New(rand.NewPCG(34, 8))}
	l, err := db.NewLoader(ctx, true)
	require.NoError(t, err)
	require.NoError(t, l.Institution(simulator.Institution{ID: "ins_a", Name: "a"}))
	at := time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC)
	var orders []*simulator.Order
	for i := range 400 {
		o := g.order()
		o.ID, o.InstitutionID, o.UserAccountID = fmt.Sprintf("ord_%04d", i), "ins_a", fmt.Sprintf("u%02d", (i*7)%30)
		if i%40 != 5 { // a few of unknown product, side or status
			o.Product = simulator.Products[g.r.IntN(len(simulator.Products))]
			o.Side = simulator.Sides[g.r.IntN(2)]
			o.Status = simulator.OrderStatuses[g.r.IntN(len(simulator.OrderStatuses))]
		}
		o.PlacedAt = at.Add(time.Duration((i*37)%500) * time.Hour)
		orders = append(orders, o)
		require.NoError(t, l.Transaction(simulator.Transaction{ID: "txn_" + o.ID, InstitutionID: "ins_a", OrderIDs: []string{o.ID}}, []simulator.Order{*o}))
	}
	require.NoError(t, l.Finish("tok"))
	r := rand.New(rand.NewPCG(34, 9))
	queries := make([]simulator.OrderFilter, 300)
	for i := range queries {
		f := &queries[i]
		*f = simulator.OrderFilter{Limit: 1 + r.IntN(40), Offset: r.IntN(100), Desc: r.IntN(2) == 0}
		for _, set := range []func(){ // each filter in one query of three
			func() { f.Status = ptrTo(simulator.OrderStatuses[r.IntN(4)]) },
			func() { f.Product = ptrTo(simulator.Products[r.IntN(4)]) },
			func() { f.Side = ptrTo(simulator.Sides[r.IntN(2)]) },
			func() { f.UserAccountID = ptrTo(fmt.Sprintf("u%02d", r.IntN(31))) },
			func() { f.PlacedStart = ptrTo(at.Add(time.Duration(r.IntN(500)) * time.Hour)) },
		} {
			if r.IntN(3) == 0 {
				set()
			}
		}
	}
	// pages reads every query's page and holds it to the whole orders' items.
	pages := func() []*simulator.OrderItemPage {
		out := make([]*simulator.OrderItemPage, len(queries))
		for i, f := range queries {
			whole, err := db.ListOrders(ctx, "ins_a", f)
			require.NoError(t, err)
			want := make([]simulator.OrderItem, len(whole.Orders))
			for j, o := range whole.Orders {
				want[j] = o.Item()
			}
			page, err := db.ListOrderItems(ctx, "ins_a", f)
			require.NoError(t, err)
			out[i] = &simulator.OrderItemPage{Items: sameForm(OrderItemsOf(t, page)), Total: page.Total}
			require.Equal(t, whole.Total, out[i].Total, "query %d: %+v", i, f)
			require.Equal(t, sameForm(want), sameForm(out[i].Items), "query %d: %+v", i, f)
		}
		return out
	}
	entry := func(o *simulator.Order, kind ...byte) []byte {
		var v []byte
		require.NoError(t, db.db.View(func(tx *bbolt.Tx) error {
			prefix := cat(inst("ins_a"), kind, []byte{sortCreated})
			v = bytes.Clone(tx.Bucket(bOrderIndex).Get(cat(prefix, timeKey(o.PlacedAt), []byte(o.ID))))
			return nil
		}))
		return v
	}
	o := orders[7]
	require.Equal(t, orderItemValue(o, true), entry(o, kindStatus, byte(simulator.OrderStatusIndex(o.Status))), "a covered entry")
	require.Equal(t, orderSummary(o), entry(o, kindAll), "the index of all orders is never covered")
	pages()

	// A write to a covered store: a status changes, and with it completed_at and the entries.
	change := func(o *simulator.Order) {
		require.NoError(t, db.update(ctx, func(w *writeTx) error {
			was := *o
			o.Status, o.CompletedAt, o.Fee = simulator.OrderCompleted, ptrTo(o.PlacedAt.Add(time.Minute)), o.Fee.Add(o.Fee)
			if was.Status == simulator.OrderCompleted {
				o.Status = simulator.OrderCanceled
			}
			return w.putOrder(&was, o)
		}))
	}
	change(orders[11])
	covered := pages()

	// rewrite deletes a mark and gives each covered value what form makes of it, given its
	// user_account_id and where its tag is.
	rewrite := func(mark []byte, form func(v, uaid []byte, tag int) []byte) {
		require.NoError(t, db.db.Update(func(tx *bbolt.Tx) error {
			require.NoError(t, tx.Bucket(bMeta).Delete(mark))
			b := tx.Bucket(bOrderIndex)
			var keys, values [][]byte
			c := b.Cursor()
			for k, v := c.First(); k != nil; k, v = c.Next() {
				if coveredKind(k[len(inst("ins_a"))]) {
					d := decoder{b: v[orderSummaryLen:]}
					uaid := d.raw(d.uvarint())
					keys, values = append(keys, bytes.Clone(k)), append(values, form(bytes.Clone(v), uaid, len(v)-len(d.b)))
				}
			}
			for i, k := range keys {
				require.NoError(t, b.Put(k, values[i]))
			}
			return nil
		}))
	}

	// The same store as written before covered values noted plain strings: no mark, no entry
	// with the bit. Its pages are the same, and a write keeps that form.
	rewrite(metaOrderPlain, func(v, _ []byte, tag int) []byte {
		v[tag] &^= plainTag
		return v
	})
	require.Equal(t, covered, pages(), "the strings checked as they are rendered")
	o2 := orders[slices.IndexFunc(orders, func(o *simulator.Order) bool {
		return simulator.PlainJSON(o.Symbol) && simulator.PlainJSON(o.RecurringOrderID)
	})]
	change(o2)
	require.Equal(t, orderItemValue(o2, false), entry(o2, kindStatus, byte(simulator.OrderStatusIndex(o2.Status))), "a write keeps the form the store has")
	require.NotEqual(t, orderItemValue(o2, false), orderItemValue(o2, true), "the order's strings are plain")
	covered = pages()

	// The same store as written before: no mark, each value the summary alone.
	rewrite(metaOrderItems, func(v, uaid []byte, _ int) []byte { return cat(v[:orderSummaryLen], uaid) })
	require.Equal(t, covered, pages(), "the records read as the index was")
	change(orders[7])
	require.Equal(t, orderSummary(o), entry(o, kindStatus, byte(simulator.OrderStatusIndex(o.Status))), "a write keeps the form the store has")
	pages()
}

// sameForm returns a copy of items with each amount as a decimal and each time in UTC: either
// form of the same decimal (simulator.Amount) compares alike, and the instant is what a page
// shows.
func sameForm(items []simulator.OrderItem) []simulator.OrderItem {
	out := slices.Clone(items)
	for i := range out {
		out[i].PlacedAt, out[i].CompletedAt = out[i].PlacedAt.UTC(), out[i].CompletedAt.UTC()
		for _, a := range []*simulator.Amount{&out[i].Quantity, &out[i].Notional, &out[i].Fee} {
			d := a.Decimal()
			*a = simulator.Amount{Big: &d}
		}
	}
	return out
}

// plainItem reports whether an item's id, user_account_id, symbol and recurring order id all
// need no JSON escaping.
func plainItem(it *simulator.OrderItem) bool {
	return simulator.PlainJSON(it.ID) && simulator.PlainJSON(it.UserAccountID) && simulator.PlainJSON(it.Symbol) && simulator.PlainJSON(it.RecurringOrderID)
}

// planOrders walks the index covering the most of a query's status, product and side, the one
// with fewer entries on a tie, and says when a filter is left for the walk.
func TestPlanOrdersPicksTheNarrowestIndex(t *testing.T) {
	ctx := context.Background()
	db := tempStore(t, nil)
	l, err := db.NewLoader(ctx, true)
	require.NoError(t, err)
	require.NoError(t, l.Institution(simulator.Institution{ID: "ins_a", Name: "a"}))
	sec, cry := simulator.ProductSecurities, simulator.ProductCrypto
	buy, sell := simulator.SideBuy, simulator.SideSell
	done, pending := simulator.OrderCompleted, simulator.OrderPending
	kinds := []struct {
		n       int
		product simulator.Product
		side    simulator.Side
		status  simulator.OrderStatus
	}{{8, sec, buy, done}, {1, cry, sell, done}, {2, cry, sell, pending}}
	for i, k := range kinds {
		for j := range k.n {
			id := fmt.Sprintf("ord_%d_%d", i, j)
			o := simulator.Order{ID: id, InstitutionID: "ins_a", UserAccountID: "u1", Product: k.product, Side: k.side, Status: k.status, PlacedAt: time.Date(2025, 1, 2, 0, 0, 0, 0, time.UTC)}
			require.NoError(t, l.Transaction(simulator.Transaction{ID: "txn_" + id, InstitutionID: "ins_a", OrderIDs: []string{id}}, []simulator.Order{o}))
		}
	}
	require.NoError(t, l.Finish("tok"))
	si, pi := func(s simulator.OrderStatus) byte { return byte(simulator.OrderStatusIndex(s)) }, func(p simulator.Product) byte { return byte(simulator.ProductIndex(p)) }
	for _, c := range []struct {
		f        simulator.OrderFilter
		filter   []byte
		residual bool
	}{
		{simulator.OrderFilter{}, []byte{kindAll}, false},
		{simulator.OrderFilter{Side: &sell}, []byte{kindAll}, true},
		{simulator.OrderFilter{Status: &done}, []byte{kindStatus, si(done)}, false},
		{simulator.OrderFilter{Status: &done, Product: &cry}, []byte{kindProduct, pi(cry)}, true},       // 3 against 9
		{simulator.OrderFilter{Status: &pending, Product: &sec}, []byte{kindStatus, si(pending)}, true}, // 2 against 8
		{simulator.OrderFilter{Status: &done, Side: &buy}, []byte{kindStatSide, si(done), 0}, false},
		{simulator.OrderFilter{Product: &cry, Side: &sell}, []byte{kindProdSide, pi(cry), 1}, false},
		{simulator.OrderFilter{Status: &done, Product: &cry, Side: &sell}, []byte{kindStatSide, si(done), 1}, true},   // 1 against 3
		{simulator.OrderFilter{Status: &pending, Product: &sec, Side: &sell}, []byte{kindProdSide, pi(sec), 1}, true}, // 0 against 2
		{simulator.OrderFilter{UserAccountID: ptrTo("u1"), Side: &sell}, []byte("Uu1\x00"), true},
	} {
		require.NoError(t, db.db.View(func(tx *bbolt.Tx) error {
			filter, residual := planOrders(tx, nil, "ins_a", c.f)
			assert.Equal(t, c.filter, filter, "%+v", c.f)
			assert.Equal(t, c.residual, residual, "%+v", c.f)
			return nil
		}))
	}
}

// A covered item's accounts of tag 2 valued in one pass (valueFixedAccounts) are what the
// general reader (decoder.userAccounts) gives, whenever it answers: on accounts as a set's
// users have them (cash in cents, quantities of up to 8 places, prices of 2, symbols of up to
// 8 bytes, some without a price) — where it must answer, so that pages take it — and on
// amounts, symbols, times and prices of every kind, near int64's edges included, where it may
// decline; and on every cut of a value, where it declines or reads what the general one does.
func TestFixedItemAccountsMatchTheGeneralReader(t *testing.T) {
	r := rand.New(rand.NewPCG(34, 9))
	g := recordGen{r}
	symbols := []string{"AAPL", "BTC", "VTI", "SCHD", "GOOGL", "ABCDEFGH", "ABCDEFGHI", "", "bad\xff", "NOPRICE"}
	amount := func(typical bool) decimal.Decimal {
		if !typical {
			return g.decimal()
		}
		switch r.IntN(5) {
		case 0:
			return decimal.Zero
		case 1:
			return decimal.New(r.Int64N(1e11), -8)
		case 2:
			return decimal.New(r.Int64N(1e3), 0)
		}
		places := r.IntN(9) // a quantity of -1,000 to 1,000
		unit, _ := simulator.ScaleExact(1, int64(places))
		return decimal.New(r.Int64N(2e3*unit)-1e3*unit, -int32(places))
	}
	fast, typicalFast, typicalAll, valued, longAmounts := 0, 0, 0, 0, 0
	for i := range 20000 {
		typical := i%2 == 0
		somePrices := func() map[string]decimal.Decimal {
			prices := map[string]decimal.Decimal{}
			for _, s := range symbols {
				switch {
				case s == "NOPRICE":
				case typical:
					prices[s] = decimal.New(r.Int64N(1e7), -2)
				case r.IntN(4) > 0:
					prices[s] = amount(r.IntN(2) == 0)
				}
			}
			return prices
		}
		prices := somePrices()
		var accounts []simulator.Account
		for p := range r.IntN(5) {
			a := simulator.Account{Product: simulator.Products[p], KYCStatus: simulator.KYCStatuses[r.IntN(len(simulator.KYCStatuses))], Cash: amount(typical)}
			if typical {
				a.Cash = decimal.New(r.Int64N(1e9), -2)
			}
			if r.IntN(2) == 0 {
				at := time.Unix(1.7e9+r.Int64N(1e8), 0).UTC()
				if !typical {
					at = g.time()
				}
				a.KYCApprovedAt = &at
			}
			holdings := r.IntN(6)
			if r.IntN(8) == 0 {
				holdings += 8 // amounts of 128 bytes or more: their length takes two bytes
			}
			for range holdings {
				s := symbols[r.IntN(len(symbols))]
				if typical {
					s = symbols[r.IntN(5)]
					if r.IntN(10) == 0 {
						s = "NOPRICE"
					}
				}
				a.Holdings = append(a.Holdings, simulator.Holding{Symbol: s, Quantity: amount(typical)})
			}
			accounts = append(accounts, a)
		}
		var e encoder
		e.itemAccounts(accounts, nil)
		if e.b[0] != 2 {
			require.False(t, typical, "a typical user's amounts are fixed-width")
			continue
		}
		table := newPriceTable(prices)
		if valuedLikeFixed(t, e.b[1:], accounts, table, newPriceTable(somePrices())) {
			valued++
			for _, a := range accounts {
				if len(a.Holdings) >= 8 {
					longAmounts++
				}
			}
		}
		for cut := len(e.b); cut >= 1; cut-- {
			v := e.b[1:cut]
			d := decoder{b: v, fixed: true}
			var want simulator.UserItem
			wantAccounts, wantOK := d.userAccounts(&want, table, []simulator.AccountItem{}, nil, true)
			rows, total, ok := valueFixedAccounts(v, fixedAmounts, table, []simulator.AccountRow{})
			got := simulator.UserItem{Total: simulator.CentsAmount(total)}
			gotAccounts := accountItems(rows)
			if cut == len(e.b) && typical {
				typicalAll++
				if ok {
					typicalFast++
				}
			}
			if !ok {
				require.Empty(t, gotAccounts, "user %d, cut %d: a decline leaves the accounts as given", i, cut)
				continue
			}
			if cut == len(e.b) {
				fast++
			}
			require.True(t, wantOK, "user %d, cut %d: the general reader declines %x", i, cut, v)
			got.Accounts, want.Accounts = gotAccounts, wantAccounts
			require.Equal(t, want, got, "user %d, cut %d: %+v at %v", i, cut, accounts, prices)
			if cut < len(e.b) {
				break // a shorter value reads fewer accounts, as the general reader does
			}
		}
	}
	require.Equal(t, typicalAll, typicalFast, "typical users are valued in one pass")
	require.Greater(t, fast, typicalFast, "some other users are too")
	require.Greater(t, valued, fast*9/10, "users valued in one pass keep their values")
	require.Greater(t, longAmounts, 100, "accounts whose amounts' length takes two bytes")
}

// valuedLikeFixed checks the accounts of tag 3 (encoder.valuedItemAccounts) against those of
// tag 2 (fixed, after the tag), the same accounts: written at prices exactly where tag 2 is
// valued in one pass; read as stored at their version (the values never read at prices again)
// they are what tag 2 is valued at at those prices, read at other prices (a later version) what
// tag 2 is valued at at those — by valueFixedAccounts and by the general reader — and cut short
// they are declined. It reports whether tag 3 was written.
func valuedLikeFixed(t *testing.T, fixed []byte, accounts []simulator.Account, prices, later *priceTable) bool {
	t.Helper()
	wantRows, wantTotal, wantOK := valueFixedAccounts(fixed, fixedAmounts, prices, []simulator.AccountRow{})
	var e encoder
	e.itemAccounts(accounts, &pricedInstitution{prices: prices, version: 300})
	require.Equal(t, wantOK, e.b[0] == 3, "valued (tag 3) exactly where tag 2 is valued in one pass: %+v", accounts)
	if !wantOK {
		return false
	}
	version, j := uvarintAt(e.b, 1)
	require.Equal(t, uint64(300), version)
	v := e.b[j:]
	rows, total, ok := valueFixedAccounts(v, valuedStored, nil, []simulator.AccountRow{})
	require.True(t, ok, "read as stored: %+v", accounts)
	require.Equal(t, wantRows, rows, "as stored: %+v", accounts)
	require.Equal(t, wantTotal, total, "as stored: %+v", accounts)

	wantRows, wantTotal, wantOK = valueFixedAccounts(fixed, fixedAmounts, later, []simulator.AccountRow{})
	rows, total, ok = valueFixedAccounts(v, valuedExact, later, []simulator.AccountRow{})
	require.Equal(t, wantOK, ok, "at later prices: %+v", accounts)
	if ok {
		require.Equal(t, wantRows, rows, "at later prices: %+v", accounts)
		require.Equal(t, wantTotal, total, "at later prices: %+v", accounts)
	}
	var want, got simulator.UserItem
	df, dv := decoder{b: fixed, fixed: true}, decoder{b: v, fixed: true, valued: true}
	wantAccounts, wantOK := df.userAccounts(&want, later, []simulator.AccountItem{}, nil, true)
	gotAccounts, ok := dv.userAccounts(&got, later, []simulator.AccountItem{}, nil, true)
	require.Equal(t, wantOK, ok, "the general reader at later prices: %+v", accounts)
	require.Equal(t, wantAccounts, gotAccounts, "the general reader at later prices: %+v", accounts)
	require.Equal(t, want, got, "the general reader at later prices: %+v", accounts)
	df, dv = decoder{b: fixed, fixed: true}, decoder{b: v, fixed: true, valued: true}
	require.Equal(t, df.accounts(true), dv.accounts(true), "read whole: %+v", accounts)
	require.Equal(t, df.err, dv.err)

	storedLikeGeneral(t, v, accounts)
	// And with a bit flipped, here and there: a zone, a varint longer or cut, a length off.
	for j := 0; j < len(v); j += 3 {
		w := bytes.Clone(v)
		w[j] ^= 1 << (j % 8)
		storedLikeGeneral(t, w, nil)
	}
	for cut := range len(v) {
		if cut%3 == 0 || cut > len(v)-16 { // a third of the cuts, and the last
			storedLikeGeneral(t, v[:cut], accounts)
		}
		for _, form := range []accountsForm{valuedStored, valuedExact} {
			kept := []simulator.AccountRow{{Value: 1}}
			rows, _, ok := valueFixedAccounts(v[:cut], form, later, kept)
			require.False(t, ok, "cut at %d of %d, form %d: declined", cut, len(v), form)
			require.Equal(t, kept, rows, "declined: the accounts as given")
		}
	}
	return true
}

// storedLikeGeneral checks the loop without calls of tag 3 read as stored (storedAccountRows)
// against valueAccountRows on accounts of tag 3 (v, after the tag and version, whole, cut or,
// accounts nil, altered):
// where it answers, its rows and total are the general loop's; on a typical account (whole
// seconds in UTC, amounts under 128 bytes) of a whole value it answers.
func storedLikeGeneral(t *testing.T, v []byte, accounts []simulator.Account) {
	t.Helper()
	n, i := uvarintAt(v, 0)
	if i < 0 || n <= 1 || n > uint64(len(v)-i)+1 {
		return
	}
	var wantRoom, gotRoom [8]simulator.AccountRow
	want, got := wantRoom[:0], gotRoom[:0]
	if n-1 > uint64(len(wantRoom)) {
		want, got = make([]simulator.AccountRow, n-1), make([]simulator.AccountRow, n-1)
	}
	want, got = want[:n-1], got[:n-1]
	for j := range got {
		got[j] = simulator.AccountRow{Value: 7, ApprovedSec: 9, ApprovedNsec: 3, Product: 1, KYC: 1, Shows: true} // rows released before
	}
	wantTotal, wantOK := valueAccountRows(v, i, valuedStored, nil, want)
	total, ok := storedAccountRows(v[i:], got)
	if ok {
		require.True(t, wantOK, "stored rows where the general loop declines: %x", v)
		require.Equal(t, want, got, "%+v", accounts)
		require.Equal(t, wantTotal, total, "%+v", accounts)
		return
	}
	typical := wantOK && accounts != nil // nil: bytes no encoder wrote
	for _, a := range accounts {
		amounts := 9
		for _, h := range a.Holdings {
			amounts += 1 + len(h.Symbol) + 9
		}
		typical = typical && amounts < 0x70 && (a.KYCApprovedAt == nil || a.KYCApprovedAt.Location() == time.UTC && a.KYCApprovedAt.Nanosecond() == 0)
	}
	require.False(t, typical, "a typical value read by the general loop: %+v", accounts)
}

// decoder.uvarint, decoder.varint and uvarintAt read what binary.Uvarint and binary.Varint read — the value
// and the bytes taken, or an error for a cut or overflowing one — one to ten bytes long, written
// short or padded with continuation bytes, at the end of the bytes or with more after it.
func TestDecoderVarintsAreBinarys(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 11))
	var cases [][]byte
	for _, n := range []uint64{0, 1, 63, 64, 127, 128, 255, 16383, 16384, 1<<21 - 1, 1 << 21, 1<<28 - 1, 1 << 28, 1<<63 - 1, 1 << 63, math.MaxUint64} {
		cases = append(cases, binary.AppendUvarint(nil, n), []byte{0x80, 0x00}, []byte{0xff, 0x80, 0x00})
	}
	for range 20000 {
		b := make([]byte, 1+r.IntN(11))
		for i := range b {
			b[i] = byte(r.Uint32())
			if r.IntN(3) == 0 {
				b[i] &= 0x7f
			}
		}
		cases = append(cases, b)
	}
	for _, b := range cases {
		for cut := 0; cut <= len(b); cut++ {
			in := b[:cut]
			u, k := binary.Uvarint(in)
			d := decoder{b: in}
			got := d.uvarint()
			if k <= 0 {
				require.ErrorIs(t, d.err, errShort, "uvarint % x", in)
				_, next := uvarintAt(in, 0)
				require.Equal(t, -1, next, "uvarintAt % x", in)
				continue
			}
			require.NoError(t, d.err, "uvarint % x", in)
			require.Equal(t, u, got, "uvarint % x", in)
			require.Len(t, d.b, len(in)-k, "uvarint % x takes %d bytes", in, k)
			v, _ := binary.Varint(in)
			d = decoder{b: in}
			require.Equal(t, v, d.varint(), "varint % x", in)
			at, next := uvarintAt(append([]byte{0xff}, in...), 1)
			require.Equal(t, [2]uint64{u, uint64(1 + k)}, [2]uint64{at, uint64(next)}, "uvarintAt % x", in)
			// With a word to read from wherever it ends (wordUvarint), what follows it aside.
			at, next = uvarintAt(append(append([]byte{0xff}, in...), 0xff, 0x80, 0x81, 0, 0xfe, 1, 0x7f, 0x80), 1)
			require.Equal(t, [2]uint64{u, uint64(1 + k)}, [2]uint64{at, uint64(next)}, "uvarintAt % x and 8 bytes", in)
		}
	}
}

// A page of an institution's whole order list (no filter but a placed_at range) is walked in
// order_records, which lists its orders in that index's order, and its items read from the
// records' copies (recordOrders): between two institutions whose orders lie on either
// side of its own there, every such page — at any depth, in either order, with ranges whose
// bounds fall anywhere, read by its day and hour counters, before them (by walking) and with
// its counters read whole — holds the items and total of the same page of whole orders
// (ListOrders, which reads each record by the key its index entry names).
func TestAllOrdersPagesWalkTheirRecords(t *testing.T) {
	start, g := time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC), recordGen{rand.New(rand.NewPCG(34, 11))}
	ctx, db := context.Background(), tempStore(t, nil)
	l, err := db.NewLoader(ctx, true)
	require.NoError(t, err)
	for _, id := range []string{"ins_a", "ins_b", "ins_c"} {
		require.NoError(t, l.Institution(simulator.Institution{ID: id, Name: id}))
		for i := range 600 {
			o := g.order()
			o.ID, o.InstitutionID, o.UserAccountID = fmt.Sprintf("ord_%s_%04d", id, i), id, fmt.Sprintf("u%02d", i%30)
			o.Product, o.Side = simulator.Products[g.r.IntN(4)], simulator.Sides[g.r.IntN(2)]
			o.Status = simulator.OrderStatuses[g.r.IntN(4)]
			o.PlacedAt = start.Add(time.Duration(g.r.Int64N(int64(72 * time.Hour))))
			require.NoError(t, l.Transaction(simulator.Transaction{ID: "txn_" + o.ID, InstitutionID: id, OrderIDs: []string{o.ID}}, []simulator.Order{*o}))
		}
	}
	require.NoError(t, l.Finish("tok"))
	setMarks := func(on bool) {
		require.NoError(t, db.db.Update(func(tx *bbolt.Tx) error {
			for _, m := range [][]byte{metaDays, metaHours} {
				var err error
				if on {
					err = tx.Bucket(bMeta).Put(m, []byte("1"))
				} else {
					err = tx.Bucket(bMeta).Delete(m)
				}
				if err != nil {
					return err
				}
			}
			return nil
		}))
	}
	r := rand.New(rand.NewPCG(34, 12))
	instant := func() *time.Time {
		at := start.Add(-time.Hour + time.Duration(r.Int64N(int64(75*time.Hour))))
		if r.IntN(3) == 0 {
			at = at.Truncate(time.Hour)
		}
		return &at
	}
	for i := range 200 {
		f := simulator.OrderFilter{Limit: 1 + r.IntN(60), Offset: r.IntN(650), Desc: r.IntN(2) == 0}
		if r.IntN(2) == 0 {
			f.PlacedStart, f.Offset = instant(), r.IntN(100)
		}
		if r.IntN(2) == 0 {
			f.PlacedEnd = instant()
		}
		whole, err := db.ListOrders(ctx, "ins_b", f)
		require.NoError(t, err)
		want := make([]simulator.OrderItem, len(whole.Orders))
		for j, o := range whole.Orders {
			want[j] = o.Item()
		}
		setMarks(i%4 != 0) // one query in four read as a store without counters is
		for range 3 {      // a state's first page, then its counters read whole
			page, err := db.ListOrderItems(ctx, "ins_b", f)
			require.NoError(t, err)
			require.Equal(t, whole.Total, page.Total, "query %d: %+v", i, f)
			require.Equal(t, sameForm(want), sameForm(OrderItemsOf(t, page)), "query %d: %+v", i, f)
		}
	}

	// Counters that overstate the index (they never should) send a counted walk past the end
	// of the institution's records, into the next one's: it is walked again comparing keys,
	// and the page holds the range's orders alone.
	setMarks(true)
	latest, err := db.ListOrders(ctx, "ins_b", simulator.OrderFilter{Limit: 1, Desc: true})
	require.NoError(t, err)
	h := hourOf(timeKey(latest.Orders[0].PlacedAt))
	from := timeFromKey(u64(uint64(h) * uint64(hourWidth))) // the start of its counter's hour
	tail := func(desc bool) []simulator.OrderItem {
		page, err := db.ListOrderItems(ctx, "ins_b", simulator.OrderFilter{Limit: 100, PlacedStart: &from, Desc: desc})
		require.NoError(t, err)
		return sameForm(OrderItemsOf(t, page))
	}
	want := map[bool][]simulator.OrderItem{false: tail(false), true: tail(true)}
	require.NotEmpty(t, want[false])
	all := cat(inst("ins_b"), []byte{kindAll, sortCreated})
	require.NoError(t, db.db.Update(func(tx *bbolt.Tx) error {
		b, k := tx.Bucket(bCounts), hourCountKey(bOrderIndex, all, h)
		return b.Put(k, u64(binary.BigEndian.Uint64(b.Get(k))+5))
	}))
	for range 2 { // a state's first page, then its counters read whole
		for _, desc := range []bool{false, true} {
			assert.Equal(t, want[desc], tail(desc), "desc %v: got the orders of a walk past the range", desc)
		}
	}
}

// asciiOnly is true exactly when no byte is past ASCII, whatever the length; validUTF8 keeps a
// valid string as it is and mends an invalid one as a JSON round trip does.
func TestASCIIOnlyAndValidUTF8(t *testing.T) {
	for n := range 20 {
		for at := range n {
			for c := range 256 {
				b := []byte("abcdefghijklmnopqrstu"[:n])
				b[at] = byte(c)
				if got, want := asciiOnly(string(b)), c < 0x80; got != want {
					t.Fatalf("asciiOnly(%q) = %v, want %v", b, got, want)
				}
			}
		}
	}
	assert.True(t, asciiOnly(""))
	for _, s := range []string{"", "ord_0000000000000000000001", "café au lait, s'il vous plaît", "a\xffb", "\xc3", "0123456789\xe2\x82"} {
		raw, err := json.Marshal(s)
		require.NoError(t, err)
		var want string
		require.NoError(t, json.Unmarshal(raw, &want))
		assert.Equal(t, want, validUTF8(s), "validUTF8(%q)", s)
	}
}
