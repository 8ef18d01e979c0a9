package loadtest

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"math/rand/v2"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestMain lets the test binary stand in for `partnersim ceiling` (a ceiling in its own process):
// ceilingProcess runs it with LOADTEST_AS_CEILING=1.
func TestMain(m *testing.M) {
	if os.Getenv("LOADTEST_AS_CEILING") == "1" {
		if err := ServeCeiling(os.Stdin, os.Stdout); err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(1)
		}
		os.Exit(0)
	}
	os.Exit(m.Run())
}

// ceilingProcess is the command of a ceiling in its own process: this test binary as one.
func ceilingProcess() *exec.Cmd {
	cmd := exec.Command(os.Args[0])
	cmd.Env = append(os.Environ(), "LOADTEST_AS_CEILING=1")
	return cmd
}

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

// TestSelfHostReusesALoadedStore: a second SelfHost on the same file reuses the loaded store
// (the sandbox reads only the set's settings then) and still knows the set's users to load
// with.
func TestSelfHostReusesALoadedStore(t *testing.T) {
	db := filepath.Join(t.TempDir(), "reuse.db")
	for run := range 2 {
		h, err := SelfHost(context.Background(), HostConfig{DBPath: db})
		require.NoError(t, err)
		require.Equal(t, run == 0, h.Sandbox.Loaded, "loaded on the first run only")
		d, key, err := FromSet(h.Set, "")
		require.NoError(t, err, "run %d", run)
		require.NotEmpty(t, key)
		require.NotNil(t, d)
		require.NoError(t, h.Close())
	}
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
			assert.Equal(t, sc.Kinds[k].Name == "detail", strings.Contains(path, "user_account_id_type=platform"), "%s is a %s", path, sc.Kinds[k].Name)
		}
	}
	_, err := NewScenario("nope", tg.Data)
	assert.ErrorContains(t, err, "unknown scenario")
}

// ceilingFor self-hosts the default set and starts a ceiling that answers a pool of n URLs the
// scenario draws (with seed) with the target's own captured answers.
func ceilingFor(t *testing.T, scenario string, seed uint64, n int) (Target, *Scenario, *Pool, *Ceiling) {
	t.Helper()
	return ceilingStartedBy(t, StartCeiling, scenario, seed, n)
}

// ceilingStartedBy is ceilingFor with the ceiling started by start.
func ceilingStartedBy(t *testing.T, start func(map[string]*Captured) (*Ceiling, error), scenario string, seed uint64, n int) (Target, *Scenario, *Pool, *Ceiling) {
	t.Helper()
	tg := MustTarget(t, MustHost(t))
	sc, err := NewScenario(scenario, tg.Data)
	require.NoError(t, err)
	pool := sc.Draw(seed, n)
	captured, err := CapturePool(context.Background(), tg.BaseURL, tg.APIKey, pool)
	require.NoError(t, err)
	c, err := start(captured)
	require.NoError(t, err)
	t.Cleanup(func() { c.Close() })
	return tg, sc, pool, c
}

// inOwnProcess starts a ceiling in a process of its own (the test binary as `partnersim ceiling`).
func inOwnProcess(captured map[string]*Captured) (*Ceiling, error) {
	return StartCeilingProcess(ceilingProcess(), captured)
}

func TestCeilingAnswersEachURLWithItsOwnBytes(t *testing.T) {
	t.Run("in this process", func(t *testing.T) { testCeilingAnswers(t, StartCeiling) })
	t.Run("in its own process", func(t *testing.T) { testCeilingAnswers(t, inOwnProcess) })
}

func testCeilingAnswers(t *testing.T, start func(map[string]*Captured) (*Ceiling, error)) {
	tg, _, pool, c := ceilingStartedBy(t, start, "mix", 3, 60)
	client := NewClient(1, 0)
	defer client.CloseIdleConnections()
	sizes := map[int]bool{}
	for _, path := range pool.Paths {
		real, err := Capture(context.Background(), client, tg.BaseURL, tg.APIKey, path)
		require.NoError(t, err)
		echoed, err := Capture(context.Background(), client, c.URL, tg.APIKey, path)
		require.NoError(t, err)
		assert.Equal(t, string(real.Body), string(echoed.Body), "%s: the target's own bytes for it", path)
		assert.Equal(t, real.Header.Get("Content-Type"), echoed.Header.Get("Content-Type"))
		assert.Len(t, echoed.Header.Get("X-Request-Id"), len(real.Header.Get("X-Request-Id")))
		assert.Equal(t, framing(t, client, tg.BaseURL, tg.APIKey, path), framing(t, client, c.URL, tg.APIKey, path),
			"%s: framed as the target frames it (its length given, not chunked)", path)
		sizes[len(echoed.Body)] = true
	}
	assert.Greater(t, len(sizes), 10, "different URLs, different answers")
	_, err := Capture(context.Background(), client, c.URL, tg.APIKey, "/v1/users/?per_page=3")
	assert.ErrorContains(t, err, "status 404", "a URL the pool does not hold is not answered with another's bytes")
}

// framing is how an answer's body is delimited on the wire: its Content-Length (-1 if none) and
// its transfer codings.
func framing(t *testing.T, client *http.Client, base, key, path string) string {
	t.Helper()
	req, err := http.NewRequest(http.MethodGet, base+path, nil)
	require.NoError(t, err)
	req.Header.Set("x-api-key", key)
	res, err := client.Do(req)
	require.NoError(t, err)
	defer res.Body.Close()
	_, err = io.Copy(io.Discard, res.Body)
	require.NoError(t, err)
	return fmt.Sprintf("Content-Length %d, Transfer-Encoding %q", res.ContentLength, res.TransferEncoding)
}

func TestRunWalksThePool(t *testing.T) {
	tg, sc, pool, c := ceilingFor(t, "detail", 1, 7)
	// The ceiling answers only the pool's URLs: a run that drew anything else would fail.
	res, err := Run(context.Background(), Config{BaseURL: c.URL, APIKey: tg.APIKey, Connections: 3, Requests: 50, Pool: pool}, sc)
	require.NoError(t, err)
	assert.Equal(t, 50, res.Requests)
	assert.Zero(t, res.Errors, "%v", res.ErrorSamples)
}

func TestMeasureReportsEveryFigureWithItsRatio(t *testing.T) {
	h := MustHost(t)
	tg := MustTarget(t, h)
	rep, err := Measure(context.Background(), tg, Plan{Scenarios: ScenarioNames, Connections: []int{1, 4},
		Duration: 300 * time.Millisecond, Warmup: 50 * time.Millisecond, Seed: 1, Pool: 200})
	require.NoError(t, err)
	require.Len(t, rep.Runs, 2*len(ScenarioNames))
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

// TestMeasureRunsTheCeilingInItsOwnProcess: with CeilingProcess set, each scenario's ceiling is
// a process of its own, serving the scenario's answers, and it has ended when Measure returns.
func TestMeasureRunsTheCeilingInItsOwnProcess(t *testing.T) {
	tg := MustTarget(t, MustHost(t))
	var started []*exec.Cmd
	rep, err := Measure(context.Background(), tg, Plan{Scenarios: []string{"detail", "users"}, Connections: []int{2},
		Requests: 40, Duration: 5 * time.Second, Seed: 1, Pool: 30,
		CeilingProcess: func() *exec.Cmd { c := ceilingProcess(); started = append(started, c); return c }})
	require.NoError(t, err)
	require.Len(t, started, 2, "one ceiling process a scenario")
	for _, c := range started {
		require.NotNil(t, c.ProcessState, "the ceiling's process was waited for")
		assert.True(t, c.ProcessState.Success(), "it ended when its input closed: %s", c.ProcessState)
		assert.NotEqual(t, os.Getpid(), c.ProcessState.Pid())
	}
	for _, p := range rep.Runs {
		assert.Equal(t, 40, p.Ceiling.Requests, p.Scenario)
		assert.Zero(t, p.Ceiling.Errors, "%s: the ceiling's process answered every URL of the pool: %v", p.Scenario, p.Ceiling.ErrorSamples)
	}
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

// TestRoundsInterleaveTheTargetAndTheCeiling: with Rounds 4 the target runs four turns in the
// order target, ceiling, ceiling, target, target, ceiling, ceiling, target, and its figures are
// those of all four turns: every request the target was sent in a turn, over their time together.
func TestRoundsInterleaveTheTargetAndTheCeiling(t *testing.T) {
	h := MustHost(t)
	tg := MustTarget(t, h)
	var mu sync.Mutex
	var seen []time.Time // when the target was sent each request
	backend, err := url.Parse(h.URL)
	require.NoError(t, err)
	proxy := httputil.NewSingleHostReverseProxy(backend)
	counting := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		seen = append(seen, time.Now())
		mu.Unlock()
		proxy.ServeHTTP(w, r)
	}))
	defer counting.Close()
	tg.BaseURL = counting.URL

	const turn = 300 * time.Millisecond
	type span struct{ from, to time.Time }
	var turns []span
	rep, err := Measure(context.Background(), tg, Plan{Scenarios: []string{"detail"}, Connections: []int{2},
		Duration: 4 * turn, Rounds: 4, Seed: 1, Pool: 50,
		Around: func(_ string, _ int, run func() error) error {
			s := span{from: time.Now()}
			err := run()
			s.to = time.Now()
			turns = append(turns, s)
			return err
		}})
	require.NoError(t, err)
	require.Len(t, turns, 4, "each of the target's turns is wrapped")
	// Between the target's first and second turns, and its third and fourth, the ceiling ran two
	// turns; its second and third follow each other.
	assert.GreaterOrEqual(t, turns[1].from.Sub(turns[0].to), 2*turn)
	assert.Less(t, turns[2].from.Sub(turns[1].to), turn)
	assert.GreaterOrEqual(t, turns[3].from.Sub(turns[2].to), 2*turn)

	sent := 0
	for _, at := range seen {
		for _, s := range turns {
			if !at.Before(s.from) && !at.After(s.to) {
				sent++
			}
		}
	}
	p := rep.Runs[0]
	assert.Equal(t, sent, p.Target.Requests, "the target's figures count every request of its four turns")
	assert.Equal(t, sent, p.Target.Latency.Count)
	assert.GreaterOrEqual(t, p.Target.Elapsed, 4*turn, "over the four turns' time together")
	assert.Less(t, p.Target.Elapsed, 4*turn+turn)
	assert.Positive(t, p.Ceiling.Requests)
	assert.GreaterOrEqual(t, p.Ceiling.Elapsed, 4*turn)
	assert.InDelta(t, float64(sent)/p.Target.Elapsed.Seconds(), p.Target.RPS, 0.01)
}
