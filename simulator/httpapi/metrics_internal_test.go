package httpapi

import (
	"fmt"
	"strconv"
	"testing"

	dto "github.com/prometheus/client_model/go"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// The institution label names the first MaxInstitutionLabels institutions and calls every
// later one "other": a sandbox whose partners create institutions freely keeps its series
// bounded.
func TestInstitutionLabelsAreBounded(t *testing.T) {
	s := newLabelSet(3)
	for i := range 3 {
		assert.Equal(t, fmt.Sprint("ins_", i), s.label(fmt.Sprint("ins_", i)))
	}
	assert.Equal(t, "other", s.label("ins_3"), "past the bound")
	assert.Equal(t, "ins_1", s.label("ins_1"), "a named one stays named")
	assert.Len(t, *s.names.Load(), 3)
}

// Each series of a request is looked up once, then kept: however often it is counted, every
// counter is its own series and every route its own latency.
func TestRequestSeriesAreKeptApart(t *testing.T) {
	m := NewMetrics()
	routes := []string{"/v1/users/", "unmatched"}
	labels := []seriesLabels{{"GET", 200, "ins_a"}, {"GET", 401, "-"}, {"POST", 200, "ins_a"}, {"GET", 200, "ins_b"}}
	for range 30 {
		for _, route := range routes {
			for _, l := range labels {
				rs := m.route(route)
				m.counter(rs, route, l).Inc()
				rs.observer.Observe(0.001)
			}
		}
	}
	for _, route := range routes {
		for _, l := range labels {
			var got dto.Metric
			require.NoError(t, m.requests.WithLabelValues(route, l.method, strconv.Itoa(l.status), l.inst).Write(&got))
			assert.Equal(t, 30.0, got.GetCounter().GetValue(), "%s %v", route, l)
		}
	}
	families, err := m.registry.Gather()
	require.NoError(t, err)
	for _, f := range families {
		switch f.GetName() {
		case "partnersim_http_requests_total":
			assert.Len(t, f.GetMetric(), len(routes)*len(labels), "one series a route and labels")
		case "partnersim_http_request_duration_seconds":
			assert.Len(t, f.GetMetric(), len(routes), "one latency a route")
			for _, h := range f.GetMetric() {
				assert.Equal(t, uint64(30*len(labels)), h.GetHistogram().GetSampleCount())
			}
		}
	}
}
