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
		{AsOf: time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC), CostBasis: 1050, Value: -2},
		{AsOf: time.Date(2026, 1, 2, 3, 4, 5, 250_000_000, time.FixedZone("x", 3600)), CostBasis: 0, Value: 12345679},
		{AsOf: time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC), CostBasis: -105, Value: 5},
	}
	var want []pointJSON
	for _, p := range ps {
		want = append(want, pointJSON{AsOf: simulator.FormatTime(p.AsOf), CostBasis: simulator.FormatMoney(decimal.New(int64(p.CostBasis), -2)), Value: simulator.FormatMoney(decimal.New(int64(p.Value), -2))})
	}
	b, err := json.Marshal(want)
	assert.NoError(t, err)
	assert.Equal(t, string(b), string(appendPoints(nil, ps)))
	assert.Equal(t, "[]", string(appendPoints(nil, nil)))
}
