package simulator_test

import (
	"testing"
	"time"

	"github.com/shopspring/decimal"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"partnersim/simulator"
)

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
	h := simulator.GenerateHistory(u, prices, at)

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
	assert.Equal(t, h, simulator.GenerateHistory(u, prices, at.Add(3*time.Second)))
	assert.Equal(t, h, simulator.GenerateHistory(u, prices, at.Add(52*time.Minute)))
	later := simulator.GenerateHistory(u, prices, at.Add(5*time.Hour))
	assert.Equal(t, h.PastWeek, later.PastWeek)
	assert.Equal(t, h.PastMonth, later.PastMonth)
	assert.Equal(t, h.PastYear, later.PastYear)
	assert.Equal(t, h.AllTime, later.AllTime)
	assert.NotEqual(t, h.PastDay, later.PastDay)
}
