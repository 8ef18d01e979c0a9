package httpapi

import (
	"encoding/json"
	"testing"
	"time"

	"github.com/shopspring/decimal"
	"github.com/stretchr/testify/assert"

	"partnersim/simulator"
)

func TestRenderPointsMatchesEncoder(t *testing.T) {
	ps := []simulator.ValuePoint{
		{AsOf: time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC), CostBasis: decimal.RequireFromString("10.5"), Value: decimal.RequireFromString("-0.015")},
		{AsOf: time.Date(2026, 1, 2, 3, 4, 5, 250_000_000, time.FixedZone("x", 3600)), CostBasis: decimal.Zero, Value: decimal.RequireFromString("123456.789")},
	}
	var want []pointJSON
	for _, p := range ps {
		want = append(want, pointJSON{AsOf: simulator.FormatTime(p.AsOf), CostBasis: simulator.FormatMoney(p.CostBasis), Value: simulator.FormatMoney(p.Value)})
	}
	b, err := json.Marshal(want)
	assert.NoError(t, err)
	assert.Equal(t, string(b), string(appendPoints(nil, ps)))
	assert.Equal(t, "[]", string(appendPoints(nil, nil)))
}
