package sandbox_test

import (
	"net/http"
	"slices"
	"strings"
	"testing"

	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"github.com/tidwall/gjson"

	"github.com/partnersim/partnersim/fixtures"
	"github.com/partnersim/partnersim/internal/sandboxtest"
	"github.com/partnersim/partnersim/simulator"
	"github.com/partnersim/partnersim/simulator/sandbox"
)

// scrape GETs /metrics (headers are "Name: value") and parses it with Prometheus' own text
// parser.
func scrape(t *testing.T, base string, header ...string) map[string]*dto.MetricFamily {
	t.Helper()
	r := sandboxtest.Do(t, http.DefaultClient, http.MethodGet, base+"/metrics", "", "", header...)
	require.Equal(t, http.StatusOK, r.Status)
	parser := expfmt.NewTextParser(model.UTF8Validation)
	families, err := parser.TextToMetricFamilies(strings.NewReader(r.Body))
	require.NoError(t, err, "the scrape parses as Prometheus text")
	return families
}

// value is the value of the family's series whose labels include want (0 when none).
func value(f *dto.MetricFamily, want map[string]string) float64 {
	if f == nil {
		return 0
	}
	for _, m := range f.GetMetric() {
		labels := map[string]string{}
		for _, l := range m.GetLabel() {
			labels[l.GetName()] = l.GetValue()
		}
		ok := true
		for k, v := range want {
			ok = ok && labels[k] == v
		}
		if !ok {
			continue
		}
		switch {
		case m.Counter != nil:
			return m.Counter.GetValue()
		case m.Gauge != nil:
			return m.Gauge.GetValue()
		case m.Histogram != nil:
			return float64(m.Histogram.GetSampleCount())
		}
	}
	return 0
}

// /metrics answers Prometheus text that its parser reads: requests by route pattern, status
// and the key's institution, their latency, webhook attempts by outcome, the store's size and
// the build's progress. On loopback anyone may scrape; beyond it, only with the sandbox token.
func TestMetricsScrapedAndParsed(t *testing.T) {
	metrics := sandbox.NewMetrics()
	srv := sandboxtest.MustServe(t, func(c *sandbox.Config) { c.Metrics, c.MetricsOnAPI, c.LoadProgress = metrics, true, metrics.Build })
	sb := srv.SB

	var key fixtures.Key
	for _, k := range sb.Fixtures.Keys {
		if slices.Contains(k.Scopes, simulator.ScopeReadUser) && slices.Contains(k.Scopes, simulator.ScopeManageWebhooks) {
			key = k
			break
		}
	}
	require.NotEmpty(t, key.Plaintext, "a fixture key that reads users and manages webhooks")
	hook := sandboxtest.NewCallback(t, sandboxtest.Answering(http.StatusOK))
	call := func(method, path, body string, header ...string) (int, string) {
		r := sandboxtest.Do(t, http.DefaultClient, method, srv.URL+path, "application/json", body, header...)
		return r.Status, r.Body
	}
	code, _ := call("GET", "/v1/users/?per_page=1", "", "x-api-key: "+key.Plaintext)
	require.Equal(t, 200, code)
	code, _ = call("GET", "/v1/users/?per_page=1", "")
	require.Equal(t, 401, code)
	code, _ = call("GET", "/no/such/path", "")
	require.Equal(t, 404, code)
	code, sub := call("POST", "/v1/webhooks/subscriptions", `{"event_type":"kyc","url":"`+hook.URL+`/hook"}`, "x-api-key: "+key.Plaintext)
	require.Equal(t, 201, code, sub)

	families := scrape(t, srv.URL)
	requests := families["partnersim_http_requests_total"]
	require.NotNil(t, requests, "requests counted")
	assert.Equal(t, 1.0, value(requests, map[string]string{"route": "/v1/users/", "method": "GET", "status": "200", "institution": key.InstitutionID}))
	assert.Equal(t, 1.0, value(requests, map[string]string{"route": "/v1/users/", "status": "401", "institution": "-"}))
	assert.Equal(t, 1.0, value(requests, map[string]string{"route": "unmatched", "status": "404"}), "an unknown path is one bounded route label")
	assert.Equal(t, dto.MetricType_HISTOGRAM, families["partnersim_http_request_duration_seconds"].GetType())
	assert.Positive(t, value(families["partnersim_http_request_duration_seconds"], map[string]string{"route": "/v1/users/"}))
	assert.Positive(t, value(families["partnersim_store_bytes"], nil), "store size")
	assert.Positive(t, value(families["partnersim_build_total"], nil), "the build's total")
	assert.NotNil(t, families["go_goroutines"], "the Go runtime's collector")

	// A delivery's outcome is counted for its institution.
	require.NotEmpty(t, gjson.Get(sub, "subscription_id").String(), sub)
	code, body := call("POST", "/_sandbox/institutions/"+key.InstitutionID+"/users", `{"user_account_id":"metrics-1","accounts":[{"product":"crypto","kyc_status":"approved"}]}`,
		"x-sandbox-token: "+sb.Token)
	require.Less(t, code, 300, body)
	code, body = call("POST", "/_sandbox/users/"+gjson.Get(body, "platform_id").String()+"/kyc", `{"product":"crypto","status":"account_takeover"}`, "x-sandbox-token: "+sb.Token)
	require.Less(t, code, 300, body)
	sandboxtest.Eventually(t, func() bool {
		return value(scrape(t, srv.URL)["partnersim_webhook_attempts_total"], map[string]string{"institution": key.InstitutionID, "outcome": "delivered"}) >= 1
	}, "a delivered attempt counted")

	// Beyond loopback /metrics is behind the sandbox token.
	const token = "a-long-enough-sandbox-token-for-metrics"
	esrv := sandboxtest.MustServe(t, func(c *sandbox.Config) {
		c.Exposed, c.SandboxToken, c.Metrics, c.MetricsOnAPI = true, token, sandbox.NewMetrics(), true
	})
	assert.Equal(t, http.StatusUnauthorized, sandboxtest.Do(t, http.DefaultClient, "GET", esrv.URL+"/metrics", "", "").Status,
		"/metrics without the token beyond loopback")
	assert.NotNil(t, scrape(t, esrv.URL, "x-sandbox-token: "+token)["partnersim_http_requests_total"])
}
