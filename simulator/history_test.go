package simulator_test

import (
	"fmt"
	"hash/fnv"
	"math"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/shopspring/decimal"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/partnersim/partnersim/simulator"
)

func TestGeneratedHistoryIsDeterministicAndEndsAtCurrentValue(t *testing.T) {
	u := &simulator.User{PlatformID: "usr_1", CreatedAt: now.AddDate(-1, -2, 0),
		Accounts: []simulator.Account{{Product: simulator.ProductCrypto, Cash: d("50.00"), Holdings: []simulator.Holding{{Symbol: "BTC", Quantity: d("0.01")}}}}}
	prices := map[string]decimal.Decimal{"BTC": d("64000")}
	h1 := simulator.NewHistorySeed(u, prices, now).Generate()
	h2 := simulator.NewHistorySeed(u, prices, now).Generate()
	assert.Equal(t, h1, h2)
	assert.Len(t, h1.PastDay, 24)
	assert.Len(t, h1.PastWeek, 7)
	assert.Len(t, h1.PastMonth, 30)
	assert.Len(t, h1.PastYear, 52)
	assert.Len(t, h1.AllTime, 14, "the 1st of each month from the first one not before created_at (14 months ago at noon) to this month's (D5)")
	assert.Equal(t, "690.00", h1.PastDay[23].Value.String())
	assert.Equal(t, time.Date(2026, 3, 1, 0, 0, 0, 0, time.UTC), h1.AllTime[13].AsOf)
	empty := simulator.NewHistorySeed(&simulator.User{PlatformID: "usr_2"}, prices, now).Generate()
	assert.Empty(t, empty.AllTime)
	assert.NotNil(t, empty.AllTime, "empty arrays, not null")
}

// decisions D5: points fall on UTC period boundaries — the hour (past_day), midnight
// (past_week, past_month), Monday midnight (past_year), the 1st of the month (all_time) — the
// last at the current period's boundary with the current value, so two requests in the same
// period see identical series. The series were once anchored to the request's second and
// changed every second.
func TestHistoryAnchoredToPeriodBoundaries(t *testing.T) {
	at := time.Date(2026, 11, 25, 14, 7, 12, 500, time.UTC) // a Wednesday
	u := &simulator.User{PlatformID: "usr_anchor", CreatedAt: time.Date(2025, 3, 17, 9, 0, 0, 0, time.UTC),
		Accounts: []simulator.Account{{Product: simulator.ProductCrypto, Cash: d("50.00"), Holdings: []simulator.Holding{{Symbol: "BTC", Quantity: d("0.01")}}}}}
	prices := map[string]decimal.Decimal{"BTC": d("64000")}
	h := simulator.NewHistorySeed(u, prices, at).Generate()

	last := func(s []simulator.ValuePoint) simulator.ValuePoint { require.NotEmpty(t, s); return s[len(s)-1] }
	assert.Equal(t, time.Date(2026, 11, 25, 14, 0, 0, 0, time.UTC), last(h.PastDay).AsOf)
	assert.Equal(t, time.Date(2026, 11, 25, 0, 0, 0, 0, time.UTC), last(h.PastWeek).AsOf)
	assert.Equal(t, time.Date(2026, 11, 25, 0, 0, 0, 0, time.UTC), last(h.PastMonth).AsOf)
	assert.Equal(t, time.Date(2026, 11, 23, 0, 0, 0, 0, time.UTC), last(h.PastYear).AsOf, "Monday midnight")
	assert.Equal(t, time.Date(2026, 11, 1, 0, 0, 0, 0, time.UTC), last(h.AllTime).AsOf)
	assert.Equal(t, time.Date(2026, 11, 24, 15, 0, 0, 0, time.UTC), h.PastDay[0].AsOf)
	assert.Equal(t, time.Date(2025, 12, 1, 0, 0, 0, 0, time.UTC), h.PastYear[0].AsOf, "52 Mondays")
	assert.Len(t, h.AllTime, 20)
	assert.Equal(t, time.Date(2025, 4, 1, 0, 0, 0, 0, time.UTC), h.AllTime[0].AsOf, "the first 1st of a month not before created_at")
	for _, s := range [][]simulator.ValuePoint{h.PastDay, h.PastWeek, h.PastMonth, h.PastYear, h.AllTime} {
		assert.Equal(t, "690.00", last(s).Value.String(), "the last point carries the current value")
	}

	// Seconds and minutes later in the same hour: identical. Later the same day: the daily
	// series are identical, the hourly one moves.
	assert.Equal(t, h, simulator.NewHistorySeed(u, prices, at.Add(3*time.Second)).Generate())
	assert.Equal(t, h, simulator.NewHistorySeed(u, prices, at.Add(52*time.Minute)).Generate())
	later := simulator.NewHistorySeed(u, prices, at.Add(5*time.Hour)).Generate()
	assert.Equal(t, h.PastWeek, later.PastWeek)
	assert.Equal(t, h.PastMonth, later.PastMonth)
	assert.Equal(t, h.PastYear, later.PastYear)
	assert.Equal(t, h.AllTime, later.AllTime)
	assert.NotEqual(t, h.PastDay, later.PastDay)
}

// past_year's points fall on Monday midnight: a Monday is its own, a Sunday's is six days
// back, across a month's and a year's end.
func TestHistoryPastYearEndsOnMonday(t *testing.T) {
	u := &simulator.User{PlatformID: "usr_monday", CreatedAt: time.Date(2020, 1, 1, 0, 0, 0, 0, time.UTC),
		Accounts: []simulator.Account{{Product: simulator.ProductCrypto, Cash: d("50.00")}}}
	for _, c := range []struct{ at, monday time.Time }{
		{time.Date(2026, 11, 23, 0, 0, 0, 0, time.UTC), time.Date(2026, 11, 23, 0, 0, 0, 0, time.UTC)},    // a Monday at midnight
		{time.Date(2026, 11, 29, 23, 59, 59, 0, time.UTC), time.Date(2026, 11, 23, 0, 0, 0, 0, time.UTC)}, // a Sunday
		{time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC), time.Date(2026, 2, 23, 0, 0, 0, 0, time.UTC)},      // a Sunday, the 1st
		{time.Date(2027, 1, 2, 8, 0, 0, 0, time.UTC), time.Date(2026, 12, 28, 0, 0, 0, 0, time.UTC)},      // a Saturday in January
	} {
		h := simulator.NewHistorySeed(u, nil, c.at).Generate()
		require.Len(t, h.PastYear, 52)
		assert.Equal(t, c.monday, h.PastYear[51].AsOf, "past_year's last point at %s", c.at)
		assert.Equal(t, c.monday.AddDate(0, 0, -7*51), h.PastYear[0].AsOf, "past_year's first point at %s", c.at)
	}
}

// referenceHistory is the history computed point by point, instants and exponentials per
// request, as it was before the hourly frame: the frame must give exactly the same
// series.
func referenceHistory(u *simulator.User, prices map[string]decimal.Decimal, now time.Time) simulator.History {
	current := u.TotalMarketValue(prices)
	basis := decimal.Zero
	for i := range u.Accounts {
		basis = basis.Add(u.Accounts[i].CostBasisHint(prices))
	}
	h := simulator.History{AllTime: []simulator.ValuePoint{}, PastDay: []simulator.ValuePoint{}, PastWeek: []simulator.ValuePoint{}, PastMonth: []simulator.ValuePoint{}, PastYear: []simulator.ValuePoint{}}
	if !current.IsPositive() {
		return h
	}
	now = now.UTC()
	seed := fnv.New64a()
	seed.Write([]byte(u.PlatformID))
	s := seed.Sum64()
	cur, _ := current.Float64()
	bas, _ := basis.Float64()
	curC, _ := simulator.CentsOf(current)
	basC, _ := simulator.CentsOf(basis)
	wobble := func(seed uint64, unix int64) float64 {
		z := seed + uint64(unix)*0x9e3779b97f4a7c15
		z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9
		z = (z ^ (z >> 27)) * 0x94d049bb133111eb
		z ^= z >> 31
		return float64(z>>11)/float64(1<<52) - 1
	}
	series := func(n int, anchor time.Time, step func(k int) time.Time) []simulator.ValuePoint {
		out := make([]simulator.ValuePoint, 0, n)
		for k := n - 1; k >= 0; k-- {
			t := step(k)
			if k == 0 {
				out = append(out, simulator.ValuePoint{AsOf: t, CostBasis: basC, Value: curC})
				continue
			}
			years := anchor.Sub(t).Hours() / (24 * 365)
			g := math.Exp(-0.06 * years)
			w := 1 + 0.03*wobble(s, t.Unix())*math.Min(1, years*4+0.1)
			out = append(out, simulator.ValuePoint{AsOf: t,
				CostBasis: simulator.Cents(math.RoundToEven(bas * math.Exp(-0.04*years) * 100)),
				Value:     simulator.Cents(math.RoundToEven(cur * g * w * 100))})
		}
		return out
	}
	hour := now.Truncate(time.Hour)
	midnight := now.Truncate(24 * time.Hour) // UTC days are whole multiples of 24 h since the zero time
	monday := midnight
	for monday.Weekday() != time.Monday {
		monday = monday.AddDate(0, 0, -1)
	}
	first := midnight.AddDate(0, 0, 1-midnight.Day())
	h.PastDay = series(24, hour, func(k int) time.Time { return hour.Add(-time.Duration(k) * time.Hour) })
	h.PastWeek = series(7, midnight, func(k int) time.Time { return midnight.AddDate(0, 0, -k) })
	h.PastMonth = series(30, midnight, func(k int) time.Time { return midnight.AddDate(0, 0, -k) })
	h.PastYear = series(52, monday, func(k int) time.Time { return monday.AddDate(0, 0, -7*k) })
	months := 0
	for months < 1200 && !first.AddDate(0, -(months+1), 0).Before(u.CreatedAt) {
		months++
	}
	h.AllTime = series(months+1, first, func(k int) time.Time { return first.AddDate(0, -k, 0) })
	return h
}

func TestHistoryFrameMatchesPointByPoint(t *testing.T) {
	r := rand.New(rand.NewPCG(15, 5))
	prices := map[string]decimal.Decimal{"BTC": d("64000.12"), "AAPL": d("190.5")}
	for i := range 500 {
		now := time.Date(2000+r.IntN(40), time.Month(1+r.IntN(12)), 1+r.IntN(28), r.IntN(24), r.IntN(60), r.IntN(60), r.IntN(1e9), time.UTC)
		created := now.Add(-time.Duration(r.Int64N(int64(120 * 365 * 24 * time.Hour))))
		if r.IntN(10) == 0 {
			created = now.Add(time.Hour) // created after now: the anchor alone
		}
		u := &simulator.User{PlatformID: fmt.Sprint("usr_", r.IntN(1e6)), CreatedAt: created,
			Accounts: []simulator.Account{{Product: simulator.ProductCrypto, Cash: decimal.New(int64(r.IntN(1e6))-1000, -2),
				Holdings: []simulator.Holding{{Symbol: "BTC", Quantity: decimal.New(int64(r.IntN(1e4)), -4)}}}}}
		want := referenceHistory(u, prices, now)
		require.Equal(t, want, simulator.NewHistorySeed(u, prices, now).Generate(), "case %d at %s", i, now)
	}
}

// AllTimeLen counts the month starts not before created as walking back from the current
// month does, on the edges too: created at a month start, a nanosecond or a second either side
// of one, before the frame's hundred years and after now.
func TestAllTimeLenAtMonthEdges(t *testing.T) {
	r := rand.New(rand.NewPCG(34, 15))
	for range 200 {
		now := time.Date(1950+r.IntN(240), time.Month(1+r.IntN(12)), 1+r.IntN(28), r.IntN(24), 0, 0, 0, time.UTC)
		f := simulator.NewHistoryFrame(now)
		first := time.Date(now.Year(), now.Month(), 1, 0, 0, 0, 0, time.UTC)
		for range 20 {
			edge := first.AddDate(0, -r.IntN(1300), 0)
			for _, created := range []time.Time{edge, edge.Add(time.Nanosecond), edge.Add(-time.Nanosecond), edge.Add(time.Second),
				edge.Add(-time.Second), now.Add(time.Hour), edge.Add(time.Duration(r.Int64N(int64(40 * 24 * time.Hour))))} {
				months := 0
				for months < 1200 && !first.AddDate(0, -(months+1), 0).Before(created) {
					months++
				}
				require.Equal(t, months+1, f.AllTimeLen(created), "created %s, now %s", created, now)
			}
		}
	}
}

// decisions D5 holds for a fixture-given history too: given series say how a value went as of
// their last points (here a week before the request), and served they have D5's points — on
// the current periods' boundaries, all_time monthly from the user's creation — the given
// amounts counted back from the last and scaled so that the last carries the current value and
// cost basis; instants before a given series begins take the generated amounts. The default
// set's given history was once served as written, ending days before the request with a value
// the user no longer had.
func TestGivenHistoryPlayedAtTheCurrentPeriods(t *testing.T) {
	at := time.Date(2026, 11, 28, 17, 45, 0, 0, time.UTC) // a Saturday
	u := &simulator.User{PlatformID: "usr_given", CreatedAt: time.Date(2026, 6, 6, 15, 4, 5, 0, time.UTC),
		Accounts: []simulator.Account{{Product: simulator.ProductCrypto, Cash: d("1000.00")}}}
	old := time.Date(2026, 11, 22, 0, 0, 0, 0, time.UTC)
	given := &simulator.History{
		PastDay:   []simulator.ValuePoint{{AsOf: old.Add(-time.Hour), CostBasis: 40000, Value: 40000}, {AsOf: old, CostBasis: 40000, Value: 50000}},
		PastWeek:  []simulator.ValuePoint{},
		PastMonth: []simulator.ValuePoint{{AsOf: old, CostBasis: 100, Value: 3}},
		PastYear:  []simulator.ValuePoint{},
		AllTime: []simulator.ValuePoint{{AsOf: old.AddDate(0, -8, 0), CostBasis: 1, Value: 1},
			{AsOf: old.AddDate(0, -1, 0), CostBasis: 1, Value: 25001}, {AsOf: old, CostBasis: 1, Value: 50000}},
	}
	seed := simulator.NewHistorySeed(u, nil, at)
	gen, h := seed.Generate(), seed.Replay(given)

	// D5's points: the generated series' instants, whatever the given ones were.
	for k, s := range h.Series() {
		g := gen.Series()[k]
		require.Len(t, *s, len(*g), simulator.PeriodNames[k])
		for i := range *s {
			assert.Equal(t, (*g)[i].AsOf, (*s)[i].AsOf, "%s[%d]", simulator.PeriodNames[k], i)
		}
		assert.Equal(t, "1000.00", (*s)[len(*s)-1].Value.String(), "%s: the last point carries the current value", simulator.PeriodNames[k])
	}
	assert.Len(t, h.AllTime, 5, "all_time from July, the first 1st not before created_at, to November")
	assert.Equal(t, time.Date(2026, 11, 28, 17, 0, 0, 0, time.UTC), h.PastDay[23].AsOf)

	// The given amounts, counted back from the last and scaled to the current value (×1/50).
	assert.Equal(t, "800.00", h.PastDay[22].Value.String(), "400.00 when the last was 500.00")
	assert.Equal(t, "1000.00", h.PastDay[22].CostBasis.String(), "the cost basis scaled on its own")
	assert.Equal(t, gen.PastDay[:22], h.PastDay[:22], "before the given series begins: generated")
	assert.Equal(t, "500.02", h.AllTime[3].Value.String(), "250.01 × 1000/500, exactly")
	assert.Equal(t, "0.02", h.AllTime[2].Value.String(), "the given points are counted back from the last, whatever their as_of")
	assert.Equal(t, gen.AllTime[:2], h.AllTime[:2])
	// An empty given series: generated; a series of one point: the last, the current amounts.
	assert.Equal(t, gen.PastWeek, h.PastWeek)
	assert.Equal(t, gen.PastMonth[:29], h.PastMonth[:29])
	assert.Equal(t, "1000.00", h.PastMonth[29].CostBasis.String())

	// Unfunded: empty, as generated (D5).
	poor := &simulator.User{PlatformID: "usr_given", CreatedAt: u.CreatedAt, Accounts: []simulator.Account{{Product: simulator.ProductCrypto}}}
	empty := simulator.NewHistorySeed(poor, nil, at).Replay(given)
	for k, s := range empty.Series() {
		assert.Empty(t, *s, simulator.PeriodNames[k])
	}
}

// Scaling rounds half-even at the cent, on either sign.
func TestGivenHistoryScalesHalfEven(t *testing.T) {
	at := time.Date(2026, 11, 28, 17, 45, 0, 0, time.UTC)
	u := &simulator.User{PlatformID: "usr_even", CreatedAt: at.AddDate(-1, 0, 0), Accounts: []simulator.Account{{Product: simulator.ProductCrypto, Cash: d("0.01")}}}
	for _, c := range []struct {
		v    simulator.Cents
		want string
	}{{1, "0.00"}, {3, "0.02"}, {5, "0.02"}, {7, "0.04"}, {-3, "-0.02"}, {-1, "0.00"}, {4, "0.02"}} {
		// v × 1 / 2: a half cent goes to the even neighbour.
		given := &simulator.History{PastDay: []simulator.ValuePoint{{Value: c.v, CostBasis: 1}, {Value: 2, CostBasis: 1}}}
		h := simulator.NewHistorySeed(u, nil, at).Replay(given)
		assert.Equal(t, c.want, h.PastDay[22].Value.String(), "%d cents halved", c.v)
	}
}
