package simulator

import (
	"hash/fnv"
	"math"
	"time"

	"github.com/shopspring/decimal"
)

// GenerateHistory builds the historical market value of a user deterministically, seeded by
// its platform id (decisions D5): past_day 24 hourly points, past_week 7 daily, past_month 30
// daily, past_year 52 weekly, all_time monthly since created_at. Each series is anchored to
// its current period's UTC boundary — the hour, midnight, Monday midnight, the 1st of the
// month — whose point carries the current value, so every request in the same period sees the
// same series. A user with no funded account gets empty arrays.
func GenerateHistory(u *User, prices map[string]decimal.Decimal, now time.Time) History {
	return NewHistorySeed(u, prices, now).Generate()
}

// HistorySeed is everything a generated history depends on: the user's id (the series' seed)
// and creation time, the current hour (every series' anchor derives from it), and the current
// value and cost basis. Equal seeds generate equal histories, so a seed is a cache key for a
// user's series within one period (decisions D5).
type HistorySeed struct {
	PlatformID string
	// Created and Hour are the user's created_at and now truncated to the hour, both in UTC
	// (so that == compares instants).
	Created, Hour time.Time
	// Current and Basis are the current value and cost basis as whole cents (0 when out of
	// int64 range) and as floats, which shape the older points.
	Current, Basis   Cents
	CurrentF, BasisF float64
	// Funded is false for a user with no positive value: every series is empty.
	Funded bool
}

// NewHistorySeed computes the seed of u's history at now under prices.
func NewHistorySeed(u *User, prices map[string]decimal.Decimal, now time.Time) HistorySeed {
	current := u.TotalMarketValue(prices)
	s := HistorySeed{PlatformID: u.PlatformID, Created: u.CreatedAt.UTC(), Hour: now.UTC().Truncate(time.Hour),
		Funded: current.IsPositive()}
	if !s.Funded {
		return s
	}
	basis := decimal.Zero
	for i := range u.Accounts {
		basis = basis.Add(u.Accounts[i].CostBasisHint(prices))
	}
	s.CurrentF, _ = current.Float64()
	s.BasisF, _ = basis.Float64()
	s.Current, _ = CentsOf(current)
	s.Basis, _ = CentsOf(basis)
	return s
}

// Generate builds the history the seed describes.
func (sd HistorySeed) Generate() History {
	h := History{AllTime: []ValuePoint{}, PastDay: []ValuePoint{}, PastWeek: []ValuePoint{}, PastMonth: []ValuePoint{}, PastYear: []ValuePoint{}}
	if !sd.Funded {
		return h
	}
	now, created := sd.Hour, sd.Created
	seed := fnv.New64a()
	seed.Write([]byte(sd.PlatformID))
	s := seed.Sum64()
	cur, bas, curC, basC := sd.CurrentF, sd.BasisF, sd.Current, sd.Basis
	// series returns n points ending at anchor, the k-th from the end at step(k); a point's
	// value depends only on its instant and its series' anchor.
	series := func(n int, anchor time.Time, step func(k int) time.Time) []ValuePoint {
		out := make([]ValuePoint, 0, n)
		for k := n - 1; k >= 0; k-- {
			t := step(k)
			if k == 0 {
				out = append(out, ValuePoint{AsOf: t, CostBasis: basC, Value: curC})
				continue
			}
			years := anchor.Sub(t).Hours() / (24 * 365)
			// growth about 6% a year, plus a bounded deterministic wobble per instant; values
			// are whole cents computed once, so no float ever reaches a decimal.
			g := math.Exp(-0.06 * years)
			w := 1 + 0.03*wobble(s, t.Unix())*math.Min(1, years*4+0.1)
			out = append(out, ValuePoint{AsOf: t,
				CostBasis: Cents(math.RoundToEven(bas * math.Exp(-0.04*years) * 100)),
				Value:     Cents(math.RoundToEven(cur * g * w * 100))})
		}
		return out
	}
	hour := now.Truncate(time.Hour)
	midnight := time.Date(now.Year(), now.Month(), now.Day(), 0, 0, 0, 0, time.UTC)
	monday := midnight.AddDate(0, 0, -((int(midnight.Weekday()) + 6) % 7))
	first := time.Date(now.Year(), now.Month(), 1, 0, 0, 0, 0, time.UTC)
	h.PastDay = series(24, hour, func(k int) time.Time { return hour.Add(-time.Duration(k) * time.Hour) })
	h.PastWeek = series(7, midnight, func(k int) time.Time { return midnight.AddDate(0, 0, -k) })
	h.PastMonth = series(30, midnight, func(k int) time.Time { return midnight.AddDate(0, 0, -k) })
	h.PastYear = series(52, monday, func(k int) time.Time { return monday.AddDate(0, 0, -7*k) })
	months := 0
	for months < 1200 && !first.AddDate(0, -(months+1), 0).Before(created) {
		months++
	}
	h.AllTime = series(months+1, first, func(k int) time.Time { return first.AddDate(0, -k, 0) })
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
