package simulator_test

import (
	"errors"
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/shopspring/decimal"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/partnersim/partnersim/simulator"
)

var now = time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)

func d(s string) decimal.Decimal { return decimal.RequireFromString(s) }

// TestKYCTransitionTable checks every (from, to) pair against decisions D9's graph.
func TestKYCTransitionTable(t *testing.T) {
	allowed := map[simulator.KYCStatus][]simulator.KYCStatus{
		"pending":            {"document_requested", "approved", "rejected"},
		"document_requested": {"pending", "approved", "rejected"},
		"approved":           {"closed", "account_takeover"},
		"account_takeover":   {"approved", "closed"},
		"rejected":           {"pending", "closed"},
		"closed":             {},
	}
	for _, from := range simulator.KYCStatuses {
		for _, to := range simulator.KYCStatuses {
			a := simulator.Account{Product: simulator.ProductCrypto, KYCStatus: from}
			err := a.TransitionKYC(to, now)
			want := false
			for _, s := range allowed[from] {
				want = want || s == to
			}
			if want {
				assert.NoError(t, err, "%s -> %s", from, to)
				assert.Equal(t, to, a.KYCStatus)
			} else {
				require.Error(t, err, "%s -> %s must be refused", from, to)
				assert.Equal(t, simulator.ECONFLICT, simulator.ErrorCode(err))
				assert.Equal(t, from, a.KYCStatus, "refused transition changes nothing")
				assert.Contains(t, simulator.ErrorMessage(err), "allowed next states")
			}
		}
	}
}

func TestKYCApprovedAtStampedOnceAndKept(t *testing.T) {
	a := simulator.Account{Product: simulator.ProductSecurities, KYCStatus: simulator.KYCPending}
	assert.False(t, a.ShowsApprovedAt())
	require.NoError(t, a.TransitionKYC(simulator.KYCApproved, now))
	require.True(t, a.ShowsApprovedAt())
	assert.Equal(t, now, *a.KYCApprovedAt)
	require.NoError(t, a.TransitionKYC(simulator.KYCAccountTakeover, now.Add(time.Hour)))
	require.NoError(t, a.TransitionKYC(simulator.KYCApproved, now.Add(2*time.Hour)))
	assert.Equal(t, now, *a.KYCApprovedAt, "first transition into approved wins")
	require.NoError(t, a.TransitionKYC(simulator.KYCClosed, now.Add(3*time.Hour)))
	assert.True(t, a.ShowsApprovedAt(), "kept after closed")
	assert.False(t, simulator.KYCDelivered(simulator.KYCPending))
	assert.True(t, simulator.KYCDelivered(simulator.KYCDocumentRequested))
}

func TestMarketValueIsExactDecimal(t *testing.T) {
	a := simulator.Account{Cash: d("0.10"), Holdings: []simulator.Holding{{Symbol: "BTC", Quantity: d("0.1")}, {Symbol: "ETH", Quantity: d("0.2")}}}
	prices := map[string]decimal.Decimal{"BTC": d("0.1"), "ETH": d("0.2")}
	// float arithmetic would give 0.15000000000000002; half-even to cents gives 0.15
	assert.Equal(t, "0.15", simulator.FormatMoney(a.MarketValue(prices)))
	assert.Equal(t, "1520.06", simulator.FormatMoney(d("1520.065")), "half-even rounds to the even cent")
	assert.Equal(t, "1520.08", simulator.FormatMoney(d("1520.075")), "half-even rounds to the even cent")
	assert.Equal(t, "0.015", simulator.FormatQuantity(d("0.01500000")))
	assert.Equal(t, "2026-03-01T12:00:00Z", simulator.FormatTime(now))
	assert.Equal(t, "2026-03-01T12:00:00.500000Z", simulator.FormatTime(now.Add(500*time.Millisecond)))
}

// Timestamps are written as pydantic v2 writes an aware datetime (decisions D5). The wants are
// what pydantic 2.13.4 answers for TypeAdapter(datetime).dump_json of the same instant (the
// reference versions of docs/reference/pydantic-errors.md); Python has no nanoseconds, so
// Go's are cut as Python's clock cuts them.
func TestFormatTimeIsPydantics(t *testing.T) {
	utc := func(y, mo, d, h, mi, s, ns int) time.Time {
		return time.Date(y, time.Month(mo), d, h, mi, s, ns, time.UTC)
	}
	for _, tc := range []struct {
		t    time.Time
		want string
	}{
		{utc(2026, 3, 1, 12, 0, 0, 0), "2026-03-01T12:00:00Z"},
		{utc(2026, 3, 1, 12, 0, 0, 500_000_000), "2026-03-01T12:00:00.500000Z"},
		{utc(2026, 3, 1, 12, 0, 0, 1_000), "2026-03-01T12:00:00.000001Z"},
		{utc(2026, 3, 1, 12, 0, 0, 999_999_000), "2026-03-01T12:00:00.999999Z"},
		{utc(1700, 1, 1, 0, 0, 0, 0), "1700-01-01T00:00:00Z"},
		{utc(2199, 12, 31, 23, 59, 59, 120_000_000), "2199-12-31T23:59:59.120000Z"},
		// Nanoseconds Python cannot hold: cut to the microsecond, and none left is none written.
		{utc(2026, 3, 1, 12, 0, 0, 123_456_789), "2026-03-01T12:00:00.123456Z"},
		{utc(2026, 3, 1, 12, 0, 0, 999), "2026-03-01T12:00:00Z"},
		// Another zone is written in UTC, as the sandbox stores every time.
		{time.Date(2026, 3, 1, 14, 0, 0, 0, time.FixedZone("", 2*3600)), "2026-03-01T12:00:00Z"},
	} {
		assert.Equal(t, tc.want, simulator.FormatTime(tc.t), "FormatTime(%s)", tc.t.Format(time.RFC3339Nano))
		assert.Equal(t, `x"`+tc.want, string(simulator.AppendTime([]byte(`x"`), tc.t)))
	}
}

func TestFillOrderMovesCashAndHoldings(t *testing.T) {
	rule := simulator.FeeRule{Rate: d("0.01"), Minimum: d("0.99")}
	a := simulator.Account{Product: simulator.ProductSecurities, Cash: d("1000.00")}
	buy := simulator.Order{Side: simulator.SideBuy, Symbol: "AAPL", Status: simulator.OrderPending, ByNotional: true, Notional: d("100.00")}
	require.NoError(t, simulator.FillOrder(&buy, &a, d("190.12"), rule, now))
	assert.Equal(t, "0.52598358", simulator.FormatQuantity(buy.Quantity))
	assert.Equal(t, "100.00", simulator.FormatMoney(buy.Notional))
	assert.Equal(t, "1.00", simulator.FormatMoney(buy.Fee))
	assert.Equal(t, "899.00", simulator.FormatMoney(a.Cash))
	assert.Equal(t, simulator.OrderCompleted, buy.Status)

	sell := simulator.Order{Side: simulator.SideSell, Symbol: "AAPL", Status: simulator.OrderPending, Quantity: d("0.5")}
	require.NoError(t, simulator.FillOrder(&sell, &a, d("200"), rule, now))
	assert.Equal(t, "100.00", simulator.FormatMoney(sell.Notional))
	assert.Equal(t, "998.00", simulator.FormatMoney(a.Cash), "proceeds less fee")
	assert.Equal(t, "0.02598358", simulator.FormatQuantity(a.Holdings[0].Quantity))

	tooMuch := simulator.Order{Side: simulator.SideSell, Symbol: "AAPL", Status: simulator.OrderPending, Quantity: d("1")}
	err := simulator.FillOrder(&tooMuch, &a, d("200"), rule, now)
	assert.Equal(t, simulator.ECONFLICT, simulator.ErrorCode(err))
	assert.Equal(t, "998.00", simulator.FormatMoney(a.Cash), "failed fill changes nothing")
	broke := simulator.Order{Side: simulator.SideBuy, Symbol: "AAPL", Status: simulator.OrderPending, Quantity: d("100")}
	assert.Equal(t, simulator.ECONFLICT, simulator.ErrorCode(simulator.FillOrder(&broke, &a, d("200"), rule, now)))
}

func TestRoboLegs(t *testing.T) {
	pf := simulator.Portfolio{Name: "balanced", Weights: []simulator.Weight{{Symbol: "VTI", Weight: d("0.333")}, {Symbol: "BND", Weight: d("0.667")}}}
	legs, err := simulator.RoboLegs(simulator.TxnDeposit, d("100.01"), pf, &simulator.Account{}, nil, simulator.FeeRule{})
	require.NoError(t, err)
	require.Len(t, legs, 2)
	assert.Equal(t, "33.30", simulator.FormatMoney(legs[0].Notional))
	assert.Equal(t, "66.71", simulator.FormatMoney(legs[1].Notional), "last leg takes the remainder")
	prices := map[string]decimal.Decimal{"VTI": d("100"), "BND": d("100"), "XYZ": d("10")}
	a := simulator.Account{Holdings: []simulator.Holding{{Symbol: "VTI", Quantity: d("2")}, {Symbol: "XYZ", Quantity: d("1")}}}
	legs, err = simulator.RoboLegs(simulator.TxnRebalance, decimal.Zero, pf, &a, prices, simulator.FeeRule{})
	require.NoError(t, err)
	assert.Equal(t, []simulator.Leg{
		{Side: simulator.SideSell, Symbol: "VTI", Notional: d("130.07")},
		{Side: simulator.SideSell, Symbol: "XYZ", Notional: d("10.00")},
		{Side: simulator.SideBuy, Symbol: "BND", Notional: d("140.07")},
	}, legs)
	_, err = simulator.RoboLegs(simulator.TxnBuy, d("1"), pf, &a, prices, simulator.FeeRule{})
	assert.Equal(t, simulator.EINVALID, simulator.ErrorCode(err))
}

// TestRoboLegsPayTheirFees checks that a deposit's legs plus their fees never exceed the
// deposit and a withdrawal's proceeds after fees cover it, at every amount up to 50.00.
func TestRoboLegsPayTheirFees(t *testing.T) {
	pf := simulator.Portfolio{Name: "b", Weights: []simulator.Weight{{Symbol: "VTI", Weight: d("0.6")}, {Symbol: "BND", Weight: d("0.4")}}}
	for _, rule := range []simulator.FeeRule{{Rate: d("0.0025")}, {Rate: d("0.015"), Minimum: d("0.99")}, {}} {
		for cents := int64(1); cents <= 5000; cents += 7 {
			amount := decimal.New(cents, -2)
			legs, err := simulator.RoboLegs(simulator.TxnDeposit, amount, pf, &simulator.Account{}, nil, rule)
			if err != nil {
				require.Equal(t, simulator.EINVALID, simulator.ErrorCode(err))
				require.True(t, amount.LessThan(d("2.00")), "only an amount below two minimum fees is refused, got %s", amount)
				continue
			}
			cost := decimal.Zero
			for _, l := range legs {
				cost = cost.Add(l.Notional).Add(rule.Fee(l.Notional))
			}
			assert.True(t, cost.LessThanOrEqual(amount), "deposit %s with %v costs %s", amount, rule, cost)
			assert.True(t, amount.Sub(cost).LessThan(d("0.03")) || !rule.Minimum.IsZero(), "deposit %s leaves %s idle", amount, amount.Sub(cost))
			legs, err = simulator.RoboLegs(simulator.TxnWithdrawal, amount, pf, &simulator.Account{}, nil, rule)
			require.NoError(t, err)
			net := decimal.Zero
			for _, l := range legs {
				net = net.Add(l.Notional).Sub(rule.Fee(l.Notional))
			}
			assert.True(t, net.GreaterThanOrEqual(amount), "withdrawal %s with %v nets %s", amount, rule, net)
		}
	}
}

func TestFormatMoneyFastPathAgreesWithDecimal(t *testing.T) {
	for _, s := range []string{"0", "0.5", "-0.5", "-0.01", "1.005", "1.015", "1520.065", "123456789012.34", "-7", "0.004", "-0.005", "99999999999999999999.995"} {
		v := d(s)
		assert.Equal(t, v.StringFixedBank(2), simulator.FormatMoney(v), s)
		c := v.RoundBank(2)
		assert.Equal(t, c.StringFixedBank(2), simulator.FormatMoney(c), s)
	}
}

func TestCents(t *testing.T) {
	for in, want := range map[string]string{"0": "0.00", "10.5": "10.50", "-0.015": "-0.02", "1520.065": "1520.06", "-1.05": "-1.05", "0.004": "0.00"} {
		c, ok := simulator.CentsOf(d(in))
		require.True(t, ok, in)
		assert.Equal(t, want, c.String(), in)
		assert.Equal(t, simulator.FormatMoney(d(in)), c.String(), "agrees with FormatMoney for %s", in)
	}
	_, ok := simulator.CentsOf(d("1e30"))
	assert.False(t, ok, "too large for int64 cents")
}

// An application error answers its code and message, wrapped or not; any other error is an
// internal one that shows nothing of itself; no error has neither.
func TestErrorCodeAndMessage(t *testing.T) {
	app := simulator.Errorf(simulator.ENOTFOUND, "user not found")
	for _, c := range []struct {
		err           error
		code, message string
	}{
		{nil, "", ""},
		{app, simulator.ENOTFOUND, "user not found"},
		{fmt.Errorf("load: %w", app), simulator.ENOTFOUND, "user not found"},
		{errors.New("disk on fire"), simulator.EINTERNAL, "Internal Server Error"},
	} {
		assert.Equal(t, c.code, simulator.ErrorCode(c.err), "ErrorCode(%v)", c.err)
		assert.Equal(t, c.message, simulator.ErrorMessage(c.err), "ErrorMessage(%v)", c.err)
	}
}

// AppendTime's digit-by-digit path (the years 1970–9999) writes what time's own formatting
// writes, at random instants, the days around every year's end and February's, the path's
// two bounds and either side of them, in UTC and in other zones; and so does one TimeAppender
// writing them all in turn (neighbours share a day, or not, or a day's date but not its zone).
func TestAppendTimeMatchesTimeFormat(t *testing.T) {
	want := func(tm time.Time) string {
		tm = tm.UTC().Truncate(time.Microsecond)
		if tm.Nanosecond() == 0 {
			return tm.Format("2006-01-02T15:04:05Z07:00")
		}
		return tm.Format("2006-01-02T15:04:05.000000Z07:00")
	}
	var times []time.Time
	for s := int64(-3e9); s < 257e9; s += 1_299_709 { // a prime step: every second of a day, hour and minute in turn
		times = append(times, time.Unix(s, s%3*(s*7_919%1e9)))
	}
	for y := 1969; y <= 10000; y += 1 + y/2000*7 {
		for _, d := range []time.Time{time.Date(y, 1, 1, 0, 0, 0, 0, time.UTC), time.Date(y, 3, 1, 0, 0, 0, 0, time.UTC)} {
			times = append(times, d, d.Add(-time.Nanosecond), d.Add(-time.Second), d.Add(-1000), d.Add(999), d.Add(1000), d.Add(1999))
		}
	}
	times = append(times, time.Unix(0, 0), time.Unix(-1, 999_999_999), time.Unix(253402300799, 999_999_999), time.Unix(253402300800, 0), time.Time{})
	var w simulator.TimeAppender
	for i, tm := range times {
		if i%3 == 0 {
			tm = tm.In(time.FixedZone("", 60*(i%1500-750)))
		}
		require.Equal(t, want(tm), string(simulator.AppendTime(nil, tm)), "%d: %s", tm.Unix(), tm.Format(time.RFC3339Nano))
		require.Equal(t, "x"+want(tm), string(w.Append([]byte("x"), tm)), "TimeAppender, %d: %s", tm.Unix(), tm.Format(time.RFC3339Nano))
		require.Equal(t, want(tm), string(simulator.AppendUnix(nil, tm.Unix(), int32(tm.Nanosecond()))), "%d: %s from its seconds", tm.Unix(), tm.Format(time.RFC3339Nano))
	}
}

// Rows given back are handed out again empty, their room kept: what a page left in them is
// never read as the next page's.
func TestUserRowsGivenBackComeBackEmpty(t *testing.T) {
	for range 100 { // a pool may drop what it was given: ask until it hands one back
		r := simulator.NewUserRows()
		require.Empty(t, r.Items)
		require.Empty(t, r.Accounts)
		require.Empty(t, r.UAIDs)
		r.UAIDs = append(r.UAIDs, "GEN-1"...)
		r.Accounts = append(r.Accounts, simulator.AccountRow{Value: 1})
		r.Items = append(r.Items, simulator.UserRow{UAIDEnd: 5, AccountsEnd: 1, Total: 1})
		assert.Equal(t, simulator.UserItem{UserAccountID: "GEN-1", Total: simulator.CentsAmount(1),
			Accounts: []simulator.AccountItem{{Product: simulator.Products[0], KYCStatus: simulator.KYCStatuses[0], Value: simulator.CentsAmount(1)}}}, r.Item(0))
		r.Release()
		if again := simulator.NewUserRows(); cap(again.UAIDs) > 0 {
			require.Empty(t, again.Items, "a given-back row is not the next page's")
			require.Empty(t, again.Accounts)
			require.Empty(t, again.UAIDs)
			return
		}
	}
	t.Fatal("rows given back are never handed out again")
}

// An order row's product, side and status are their positions in Products, Sides and
// OrderStatuses however it was given them — by name (SetKindNames) or from an item
// (OrderItem.Row, Order.Item) — and -1 for a value the spec does not list, whose name the row
// keeps as given; a row gives the item it was made from back (OrderRow.Item).
func TestOrderRowKinds(t *testing.T) {
	products := append(slices.Clone(simulator.Products), "bonds", "")
	sides := append(slices.Clone(simulator.Sides), "short", "")
	statuses := append(slices.Clone(simulator.OrderStatuses), "settled", "")
	for _, p := range products {
		for _, sd := range sides {
			for _, st := range statuses {
				want := [3]int8{int8(slices.Index(simulator.Products, p)), int8(slices.Index(simulator.Sides, sd)), int8(slices.Index(simulator.OrderStatuses, st))}
				var named simulator.OrderRow
				named.SetKindNames(p, sd, st)
				item := (&simulator.Order{Product: p, Side: sd, Status: st, PlacedAt: time.Unix(0, 0)}).Item()
				fromItem := item.Row()
				for name, r := range map[string]*simulator.OrderRow{"named": &named, "OrderItem.Row": &fromItem} {
					assert.Equal(t, want, [3]int8{r.Product, r.Side, r.Status}, "%s %q %q %q", name, p, sd, st)
					gp, gs, gst := r.Kinds()
					assert.Equal(t, [3]string{string(p), string(sd), string(st)}, [3]string{string(gp), string(gs), string(gst)}, name)
				}
				assert.Equal(t, named, fromItem, "%q %q %q", p, sd, st)
				back := fromItem.Item()
				assert.Equal(t, [3]string{string(p), string(sd), string(st)}, [3]string{string(back.Product), string(back.Side), string(back.Status)})
			}
		}
	}
}
