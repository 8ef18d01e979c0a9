package loadtest

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"math/rand/v2"
	"net/http"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// MustHost self-hosts the embedded default set on a temp store.
func MustHost(tb testing.TB) *Hosted {
	tb.Helper()
	h, err := SelfHost(context.Background(), HostConfig{DBPath: filepath.Join(tb.TempDir(), "load.db")})
	require.NoError(tb, err)
	tb.Cleanup(func() { h.Close() })
	return h
}

// MustTarget self-hosts the default set and prepares it for the scenarios.
func MustTarget(tb testing.TB, h *Hosted) Target {
	tb.Helper()
	data, key, err := FromSet(h.Set, "")
	require.NoError(tb, err)
	client := NewClient(1, 0)
	defer client.CloseIdleConnections()
	require.NoError(tb, data.Complete(context.Background(), client, h.URL, key))
	return Target{BaseURL: h.URL, APIKey: key, Name: "partnersim", Data: data}
}

func TestPercentilesAreExactNearestRank(t *testing.T) {
	var xs []time.Duration
	for i := 1000; i >= 1; i-- { // 1..1000 µs, unsorted
		xs = append(xs, time.Duration(i)*time.Microsecond)
	}
	l := summarize(xs)
	assert.Equal(t, 1000, l.Count)
	assert.Equal(t, 500*time.Microsecond, l.P50)
	assert.Equal(t, 990*time.Microsecond, l.P99)
	assert.Equal(t, 999*time.Microsecond, l.P999)
	assert.Equal(t, 1000*time.Microsecond, l.Max)
	assert.Equal(t, 0.5, l.P50MS)
	one := summarize([]time.Duration{7})
	assert.Equal(t, time.Duration(7), one.P50)
	assert.Equal(t, time.Duration(7), one.P999)
	assert.Zero(t, summarize(nil).Count)
}

func TestScenariosAskForExistingThings(t *testing.T) {
	h := MustHost(t)
	tg := MustTarget(t, h)
	assert.Equal(t, "ins_harbor", tg.Data.InstitutionID, "the largest institution with a read key")
	assert.Positive(t, tg.Data.Users)
	assert.Positive(t, tg.Data.Orders)
	client := NewClient(1, 0)
	defer client.CloseIdleConnections()
	for _, name := range ScenarioNames {
		sc, err := NewScenario(name, tg.Data)
		require.NoError(t, err)
		r := rand.New(rand.NewPCG(1, 2))
		for range 200 {
			k, path := sc.pick(r)
			req, err := http.NewRequest(http.MethodGet, tg.BaseURL+path, nil)
			require.NoError(t, err)
			req.Header.Set("x-api-key", tg.APIKey)
			res, err := client.Do(req)
			require.NoError(t, err)
			body, _ := io.ReadAll(res.Body)
			res.Body.Close()
			require.Equal(t, 200, res.StatusCode, "%s: %s", path, body)
			assert.Equal(t, k, sc.Classify(req.URL.Path, req.URL.Query()), "%s is classified as its own kind", path)
		}
	}
	_, err := NewScenario("nope", tg.Data)
	assert.ErrorContains(t, err, "unknown scenario")
}

func TestCeilingAnswersTheCapturedBytes(t *testing.T) {
	h := MustHost(t)
	tg := MustTarget(t, h)
	sc, err := NewScenario("mix", tg.Data)
	require.NoError(t, err)
	client := NewClient(1, 0)
	defer client.CloseIdleConnections()
	captured, err := CaptureScenario(context.Background(), client, tg.BaseURL, tg.APIKey, sc, 5)
	require.NoError(t, err)
	c, err := StartCeiling(sc, captured)
	require.NoError(t, err)
	defer c.Close()
	r := rand.New(rand.NewPCG(3, 3))
	for range 40 {
		k, path := sc.pick(r)
		real, err := Capture(context.Background(), client, tg.BaseURL, tg.APIKey, path)
		require.NoError(t, err)
		echoed, err := Capture(context.Background(), client, c.URL, tg.APIKey, path)
		require.NoError(t, err)
		assert.Equal(t, captured[k].Body, echoed.Body, "%s: the captured bytes of its kind", path)
		assert.Equal(t, real.Header.Get("Content-Type"), echoed.Header.Get("Content-Type"))
		assert.Len(t, echoed.Header.Get("X-Request-Id"), len(real.Header.Get("X-Request-Id")))
	}
}

func TestMeasureReportsEveryFigureWithItsRatio(t *testing.T) {
	h := MustHost(t)
	tg := MustTarget(t, h)
	rep, err := Measure(context.Background(), tg, Plan{Scenarios: ScenarioNames, Connections: []int{1, 4},
		Duration: 300 * time.Millisecond, Warmup: 50 * time.Millisecond, Seed: 1})
	require.NoError(t, err)
	require.Len(t, rep.Runs, 4)
	for _, p := range rep.Runs {
		assert.Zero(t, p.Target.Errors, "%s %d: %v", p.Scenario, p.Connections, p.Target.ErrorSamples)
		assert.Zero(t, p.Ceiling.Errors)
		assert.Positive(t, p.Target.Requests)
		assert.Positive(t, p.Ceiling.Requests)
		assert.Positive(t, p.Ratio.RPS)
		assert.Positive(t, p.Ratio.P50)
		assert.LessOrEqual(t, p.Target.Latency.P50, p.Target.Latency.P99)
		assert.LessOrEqual(t, p.Target.Latency.P99, p.Target.Latency.P999)
		assert.Less(t, p.Target.Elapsed, time.Second, "bounded in time")
		if p.Scenario == "mix" {
			require.Len(t, p.Target.Kinds, 4)
			for _, k := range p.Target.Kinds {
				assert.Positive(t, k.Latency.Count, k.Kind)
			}
		}
	}
	names := []string{}
	for _, c := range rep.Checks {
		names = append(names, c.Name)
	}
	assert.Contains(t, names, "Get User Detail p50 at 1 connection")
	var text bytes.Buffer
	require.NoError(t, rep.WriteText(&text))
	assert.Contains(t, text.String(), "ceiling")
	assert.Contains(t, text.String(), "deep_page")
	b, err := json.Marshal(rep)
	require.NoError(t, err)
	assert.Contains(t, string(b), `"ratio_to_ceiling":{"req_per_s":`)
}

func TestRunStopsAtARequestCount(t *testing.T) {
	h := MustHost(t)
	tg := MustTarget(t, h)
	sc, err := NewScenario("detail", tg.Data)
	require.NoError(t, err)
	res, err := Run(context.Background(), Config{BaseURL: tg.BaseURL, APIKey: tg.APIKey, Connections: 3, Requests: 100, Seed: 1}, sc)
	require.NoError(t, err)
	assert.Equal(t, 100, res.Requests)
	assert.Equal(t, 100, res.Latency.Count)
}

func TestRunCountsErrors(t *testing.T) {
	h := MustHost(t)
	tg := MustTarget(t, h)
	sc, err := NewScenario("detail", tg.Data)
	require.NoError(t, err)
	res, err := Run(context.Background(), Config{BaseURL: tg.BaseURL, APIKey: "sbx_wrong", Connections: 2, Requests: 10}, sc)
	require.NoError(t, err)
	assert.Equal(t, 10, res.Errors)
	require.NotEmpty(t, res.ErrorSamples)
	assert.Contains(t, res.ErrorSamples[0], "status 401")
}
