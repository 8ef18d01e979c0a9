package httpapi

import (
	"net/http"

	"github.com/labstack/echo/v4"
	"github.com/shopspring/decimal"

	"github.com/partnersim/partnersim/simulator/httpapi/surface"
	"github.com/partnersim/partnersim/simulator/validate"
)

// handleFaults serves GET /_sandbox/faults (the rules in force) and PUT /_sandbox/faults (replace them).
func handleFaults(f *faults, reader *bodyReader) echo.HandlerFunc {
	type response struct {
		Rules []surface.FaultRule `json:"rules"`
	}
	return func(c echo.Context) error {
		if c.Request().Method == http.MethodGet {
			return writeJSON(c, http.StatusOK, response{Rules: f.get()})
		}
		var rules []surface.FaultRule
		err := reader.fields(c, func(b *validate.Object, _ *validate.Collector) {
			for _, o := range objects(b, "rules") {
				fr := surface.FaultRule{Method: optStr(o, "method", ""), Path: o.Str("path")}
				fr.LatencyMS = optInt(o, "latency_ms", 0, validate.Ge(0), validate.Le(surface.MaxFaultLatencyMS))
				fr.Status = optInt(o, "status", 0, validate.Ge(0), validate.Le(599))
				fr.Probability = optDecimal(o, "probability", decimal.NewFromInt(1), validate.Ge(0), validate.Le(1)).InexactFloat64()
				rules = append(rules, fr)
			}
		})
		if err != nil {
			return err
		}
		f.set(rules)
		return writeJSON(c, http.StatusOK, response{Rules: f.get()})
	}
}

// handleSetRateLimit serves PUT /_sandbox/rate-limit.
func handleSetRateLimit(f *faults, reader *bodyReader) echo.HandlerFunc {
	type response struct {
		RequestsPerSecond float64 `json:"requests_per_second"`
		Burst             int     `json:"burst"`
	}
	return func(c echo.Context) error {
		var rps float64
		var burst int
		err := reader.fields(c, func(b *validate.Object, _ *validate.Collector) {
			rps = optDecimal(b, "requests_per_second", decimal.Zero, validate.Ge(0), validate.Le(surface.MaxRateLimit)).InexactFloat64()
			burst = optInt(b, "burst", 1, validate.Ge(1), validate.Le(surface.MaxRateLimit))
		})
		if err != nil {
			return err
		}
		f.setRate(rps, burst)
		return writeJSON(c, http.StatusOK, response{RequestsPerSecond: rps, Burst: burst})
	}
}

// handleRateLimit serves GET /_sandbox/rate-limit: the per-key limit in force (0: off).
func handleRateLimit(f *faults) echo.HandlerFunc {
	type response struct {
		RequestsPerSecond float64 `json:"requests_per_second"`
		Burst             int     `json:"burst"`
	}
	return func(c echo.Context) error {
		rps, burst := f.rate()
		return writeJSON(c, http.StatusOK, response{RequestsPerSecond: rps, Burst: burst})
	}
}
