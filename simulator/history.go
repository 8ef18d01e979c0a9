package simulator

import (
	"hash/fnv"
	"math"
	"time"

	"github.com/shopspring/decimal"
)

// GenerateHistory builds the historical market value of a user deterministically, seeded by
// its platform id, ending at its current value at now (DESIGN D5): past_day 24 hourly points,
// past_week 7 daily, past_month 30 daily, past_year 52 weekly, all_time monthly since
// created_at. The same instant always gets the same value, whichever series it appears in. A
// user with no funded account gets empty arrays.
func GenerateHistory(u *User, prices map[string]decimal.Decimal, now time.Time) History {
	current := u.TotalMarketValue(prices)
	basis := decimal.Zero
	for i := range u.Accounts {
		basis = basis.Add(u.Accounts[i].CostBasisHint(prices))
	}
	h := History{AllTime: []ValuePoint{}, PastDay: []ValuePoint{}, PastWeek: []ValuePoint{}, PastMonth: []ValuePoint{}, PastYear: []ValuePoint{}}
	if !current.IsPositive() {
		return h
	}
	now = now.UTC().Truncate(time.Second)
	seed := fnv.New64a()
	seed.Write([]byte(u.PlatformID))
	s := seed.Sum64()
	cur, _ := current.Float64()
	bas, _ := basis.Float64()
	curC, _ := CentsOf(current)
	basC, _ := CentsOf(basis)
	point := func(t time.Time) ValuePoint {
		if !t.Before(now) {
			return ValuePoint{AsOf: t, CostBasis: basC, Value: curC}
		}
		years := now.Sub(t).Hours() / (24 * 365)
		// growth about 6% a year, plus a bounded deterministic wobble per instant; values are
		// whole cents computed once, so no float ever reaches a decimal.
		g := math.Exp(-0.06 * years)
		w := 1 + 0.03*wobble(s, t.Unix())*math.Min(1, years*4+0.1)
		v := Cents(math.RoundToEven(cur * g * w * 100))
		b := Cents(math.RoundToEven(bas * math.Exp(-0.04*years) * 100))
		return ValuePoint{AsOf: t, CostBasis: b, Value: v}
	}
	series := func(n int, step func(k int) time.Time) []ValuePoint {
		out := make([]ValuePoint, 0, n)
		for k := n - 1; k >= 0; k-- {
			out = append(out, point(step(k)))
		}
		return out
	}
	h.PastDay = series(24, func(k int) time.Time { return now.Add(-time.Duration(k) * time.Hour) })
	h.PastWeek = series(7, func(k int) time.Time { return now.AddDate(0, 0, -k) })
	h.PastMonth = series(30, func(k int) time.Time { return now.AddDate(0, 0, -k) })
	h.PastYear = series(52, func(k int) time.Time { return now.AddDate(0, 0, -7*k) })
	months := 0
	for months < 1200 && !now.AddDate(0, -(months+1), 0).Before(u.CreatedAt) {
		months++
	}
	h.AllTime = series(months+1, func(k int) time.Time { return now.AddDate(0, -k, 0) })
	return h
}

// wobble maps (seed, instant) to a value in [-1, 1) with a splitmix64 hash.
func wobble(seed uint64, unix int64) float64 {
	z := seed + uint64(unix)*0x9e3779b97f4a7c15
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9
	z = (z ^ (z >> 27)) * 0x94d049bb133111eb
	z ^= z >> 31
	return float64(z>>11)/float64(1<<52) - 1
}
