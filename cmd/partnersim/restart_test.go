package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"maps"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"github.com/tidwall/gjson"

	"github.com/partnersim/partnersim/internal/sandboxtest"
	"github.com/partnersim/partnersim/receiver"
)

// buildBinary compiles partnersim once per test binary run.
var buildOnce = sync.OnceValues(func() (string, error) {
	dir, err := os.MkdirTemp("", "partnersim-bin")
	if err != nil {
		return "", err
	}
	bin := filepath.Join(dir, "partnersim")
	out, err := exec.Command("go", "build", "-o", bin, ".").CombinedOutput()
	if err != nil {
		return "", fmt.Errorf("go build: %v\n%s", err, out)
	}
	return bin, nil
})

// child is a real `partnersim serve` process.
type child struct {
	cmd  *exec.Cmd
	base string
}

var baseRE = regexp.MustCompile(`API base URL\s+(http://\S+)/v1`)

func startChild(tb testing.TB, db string, extra ...string) *child {
	tb.Helper()
	bin, err := buildOnce()
	require.NoError(tb, err)
	args := append([]string{"serve", "--addr", "127.0.0.1:0", "--db", db, "--log-level", "error", "--sandbox-token", "crash-token"}, extra...)
	cmd := exec.Command(bin, args...)
	stdout, err := cmd.StdoutPipe()
	require.NoError(tb, err)
	cmd.Stderr = os.Stderr
	require.NoError(tb, cmd.Start())
	tb.Cleanup(func() { _ = cmd.Process.Kill(); _ = cmd.Wait() })
	found := make(chan string, 1)
	go func() {
		sc := bufio.NewScanner(stdout)
		for sc.Scan() {
			if m := baseRE.FindStringSubmatch(sc.Text()); m != nil {
				found <- m[1]
			}
		}
	}()
	select {
	case base := <-found:
		return &child{cmd: cmd, base: base}
	case <-time.After(30 * time.Second):
		tb.Fatal("partnersim serve did not print its base URL within 30s")
		return nil
	}
}

func (c *child) call(method, path string, body any) (gjson.Result, int, error) {
	var rd io.Reader
	if body != nil {
		b, _ := json.Marshal(body)
		rd = bytes.NewReader(b)
	}
	req, _ := http.NewRequest(method, c.base+path, rd)
	req.Header.Set("x-sandbox-token", "crash-token")
	req.Header.Set("Content-Type", "application/json")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return gjson.Result{}, 0, err
	}
	defer resp.Body.Close()
	raw, _ := io.ReadAll(resp.Body)
	return gjson.ParseBytes(raw), resp.StatusCode, nil
}

func (c *child) mustCall(tb testing.TB, method, path string, body any) gjson.Result {
	tb.Helper()
	res, code, err := c.call(method, path, body)
	require.NoError(tb, err)
	require.Less(tb, code, 300, "%s %s: %d %s", method, path, code, res.Raw)
	return res
}

// tenant creates an institution named name and a key of scopes in it.
func (c *child) tenant(tb testing.TB, name string, scopes ...string) (inst, key string) {
	tb.Helper()
	inst = c.mustCall(tb, "POST", "/_sandbox/institutions", map[string]any{"name": name, "vendors": map[string]any{"core": nil, "dbp": nil}}).Get("institution_id").String()
	key = c.mustCall(tb, "POST", "/_sandbox/institutions/"+inst+"/keys", map[string]any{"scopes": scopes}).Get("key").String()
	return inst, key
}

// approvedUsers creates n users of inst (prefix-0, prefix-1, …), each with an approved crypto
// account, and returns their platform ids.
func (c *child) approvedUsers(tb testing.TB, inst, prefix string, n int) []string {
	tb.Helper()
	users := make([]string, n)
	for i := range users {
		users[i] = c.mustCall(tb, "POST", "/_sandbox/institutions/"+inst+"/users", map[string]any{"user_account_id": fmt.Sprintf("%s-%d", prefix, i),
			"accounts": []any{map[string]any{"product": "crypto", "kyc_status": "approved"}}}).Get("platform_id").String()
	}
	return users
}

// deliveries walks the delivery log: the events it holds, and how many of its deliveries are
// not delivered yet.
func (c *child) deliveries(tb testing.TB) (events map[string]bool, pending int) {
	tb.Helper()
	events = map[string]bool{}
	for q := "/_sandbox/deliveries?limit=1000"; q != ""; {
		res := c.mustCall(tb, "GET", q, nil)
		for _, d := range res.Get("deliveries").Array() {
			events[d.Get("event_id").String()] = true
			if d.Get("status").String() != "delivered" {
				pending++
			}
		}
		q = ""
		if next := res.Get("next_cursor").String(); next != "" {
			q = "/_sandbox/deliveries?limit=1000&cursor=" + url.QueryEscape(next)
		}
	}
	return events, pending
}

// TestKill9DuringStormLosesNothing creates events through a real partnersim process, kills it
// with SIGKILL in the middle of the storm, restarts it on the same file, and checks that every
// event the store holds was delivered to the receiver at least once. PARTNERSIM_CRASH_EVENTS
// sets the storm's size (default 600; BENCHMARKS.md records a 10,000-event run).
func TestKill9DuringStormLosesNothing(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and kills a real process")
	}
	total := 600
	if n, err := strconv.Atoi(os.Getenv("PARTNERSIM_CRASH_EVENTS")); err == nil && n > 0 {
		total = n
	}
	// Deliveries go to the reference receiver (verify, dedupe on event_id in its own bbolt
	// file, acknowledge, then process); a wrapper counts raw arrivals per event id.
	var (
		mu        sync.Mutex
		received  = map[string]int{}
		processed = map[string]int{}
		secret    atomic.Value
	)
	var rcv *receiver.Receiver
	recv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		mu.Lock()
		received[gjson.GetBytes(b, "event_id").String()]++
		mu.Unlock()
		// A slow-ish receiver keeps deliveries in flight when the kill lands.
		time.Sleep(time.Millisecond)
		r.Body = io.NopCloser(bytes.NewReader(b))
		rcv.ServeHTTP(w, r)
	}))
	defer recv.Close()
	openReceiver := func() {
		var err error
		rcv, err = receiver.Open(filepath.Join(t.TempDir(), "receiver.db"), receiver.Config{
			Secrets: []string{secret.Load().(string)},
			Process: func(_ context.Context, ev receiver.Event) error {
				mu.Lock()
				processed[ev.EventID]++
				mu.Unlock()
				return nil
			},
		})
		require.NoError(t, err)
	}
	defer func() {
		if rcv != nil {
			rcv.Close()
		}
	}()

	db := filepath.Join(t.TempDir(), "crash.db")
	c := startChild(t, db)
	inst, key := c.tenant(t, "Crash CU", "manage:webhooks")
	req, _ := http.NewRequest("POST", c.base+"/v1/webhooks/subscriptions", bytes.NewReader([]byte(`{"event_type":"kyc","url":"`+recv.URL+`/hook"}`)))
	req.Header.Set("x-api-key", key)
	req.Header.Set("Content-Type", "application/json")
	resp, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	subBody, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	require.Equal(t, 201, resp.StatusCode)
	secret.Store(gjson.GetBytes(subBody, "signing_secret").String())
	openReceiver()

	// Each worker toggles its own user approved ↔ account_takeover: every call is one event.
	const workers = 8
	users := c.approvedUsers(t, inst, "storm", workers)
	var created atomic.Int64
	// storm makes events through c until total exist or c dies; killAt > 0 kills c at that count.
	storm := func(c *child, killAt int64) {
		var wg sync.WaitGroup
		for w := range workers {
			wg.Add(1)
			go func() {
				defer wg.Done()
				next := "account_takeover"
				for created.Load() < int64(total) {
					_, code, err := c.call("POST", "/_sandbox/users/"+users[w]+"/kyc", map[string]string{"product": "crypto", "status": next})
					if err != nil {
						return // the process is gone
					}
					if code == 409 { // after a restart the user may already be where we were going
						next = map[string]string{"approved": "account_takeover", "account_takeover": "approved"}[next]
						continue
					}
					if code != 200 {
						t.Errorf("kyc: %d", code)
						return
					}
					next = map[string]string{"approved": "account_takeover", "account_takeover": "approved"}[next]
					if created.Add(1) == killAt {
						_ = c.cmd.Process.Signal(syscall.SIGKILL)
					}
				}
			}()
		}
		wg.Wait()
	}
	storm(c, int64(total/2))
	_ = c.cmd.Wait()
	acked := created.Load()
	mu.Lock()
	before := len(received)
	mu.Unlock()
	t.Logf("killed after %d acknowledged events; %d distinct events had arrived", acked, before)

	// Restart on the same file and finish the storm: every event the store holds must arrive.
	c2 := startChild(t, db)
	storm(c2, 0)
	var events map[string]bool
	deadline := time.Now().Add(60 * time.Second)
	for {
		var pending int
		events, pending = c2.deliveries(t)
		if pending == 0 || time.Now().After(deadline) {
			require.Zero(t, pending, "deliveries still not delivered after restart")
			break
		}
		time.Sleep(50 * time.Millisecond)
	}
	require.GreaterOrEqual(t, int64(len(events)), acked, "every acknowledged event is in the store")
	// The receiver processes after acknowledging: wait until it has processed every event.
	deadline = time.Now().Add(30 * time.Second)
	for {
		mu.Lock()
		n := len(processed)
		mu.Unlock()
		if n >= len(events) || time.Now().After(deadline) {
			break
		}
		time.Sleep(20 * time.Millisecond)
	}
	mu.Lock()
	defer mu.Unlock()
	for id := range events {
		require.GreaterOrEqual(t, received[id], 1, "event %s was never delivered", id)
		require.Equal(t, 1, processed[id], "event %s processed exactly once", id)
	}
	dups := 0
	for _, n := range received {
		dups += n - 1
	}
	t.Logf("events created %d (acknowledged before the kill %d); delivered at least once %d; redelivered duplicates %d; processed exactly once %d",
		len(events), acked, len(events), dups, len(processed))
}

// A scenario run in flight is state, like a delivery in the outbox: killed with SIGKILL between
// its steps (the user created, the deposit waiting on the virtual clock), the process restarts on
// the same file, the run is still there with what it did, and a clock advance plays the rest.
func TestScenarioRunSurvivesKill9(t *testing.T) {
	db := filepath.Join(t.TempDir(), "scenario.db")
	c := startChild(t, db)
	run := c.mustCall(t, "POST", "/_sandbox/scenarios/robo-deposit/run", map[string]string{"institution_id": "ins_harbor"})
	id := run.Get("run_id").String()
	require.Equal(t, "running", run.Get("status").String(), run.Raw)
	require.Equal(t, "done", run.Get("steps.0.status").String(), "step 1 (create_user) is due at once: %s", run.Raw)
	require.Equal(t, "pending", run.Get("steps.1.status").String(), run.Raw)
	user := run.Get("bound.u").String()
	require.NotEmpty(t, user, run.Raw)

	require.NoError(t, c.cmd.Process.Signal(syscall.SIGKILL))
	_ = c.cmd.Wait()

	c = startChild(t, db)
	got, code, err := c.call("GET", "/_sandbox/scenarios/runs/"+id, nil)
	require.NoError(t, err)
	require.Equal(t, 200, code, "the run outlives the process: %s", got.Raw)
	assert.Equal(t, "running", got.Get("status").String())
	assert.Equal(t, "done", got.Get("steps.0.status").String())
	assert.Equal(t, user, got.Get("bound.u").String(), "what step 1 bound is kept")
	assert.Equal(t, "pending", got.Get("steps.1.status").String())
	listed := c.mustCall(t, "GET", "/_sandbox/scenarios/runs?status=running", nil)
	assert.Contains(t, listed.Raw, id, "the run is listed")

	c.mustCall(t, "POST", "/_sandbox/clock/advance", map[string]int{"seconds": 3600})
	var end string
	sandboxtest.Eventually(t, func() bool {
		end = c.mustCall(t, "GET", "/_sandbox/scenarios/runs/"+id, nil).Get("status").String()
		return end != "running"
	}, "the run ends once the clock passed its last step")
	assert.Equal(t, "completed", end, "the run went on from where it was")
	users := c.mustCall(t, "GET", "/_sandbox/institutions/ins_harbor/users?limit=1000", nil)
	n := 0
	for _, u := range users.Get("items").Array() {
		if u.Get("platform_id").String() == user {
			n++
		}
	}
	assert.Equal(t, 1, n, "step 1 was not played again")
}

// TestSIGTERMUnderLoadDrains sends SIGTERM to a real partnersim process while partners' calls
// (some held 300 ms by an injected latency) and webhook deliveries (to a receiver that takes
// 100 ms each) are in flight, behind a balancer that stops routing on /readyz's 503 (the
// --drain-delay is longer than its probe period). The drain must fail no request — every call
// routed is answered 2xx, those in flight at the signal included — exit 0, and lose no delivery: after a restart on the same file every event is delivered, and
// none twice (attempts in flight finished and were recorded before the store closed, and none
// recorded was attempted again).
func TestSIGTERMUnderLoadDrains(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and signals a real process")
	}
	var (
		mu       sync.Mutex
		received = map[string]int{}
	)
	recv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		time.Sleep(100 * time.Millisecond) // a receiver slow enough that attempts are in flight at the signal
		mu.Lock()
		received[gjson.GetBytes(b, "event_id").String()]++
		mu.Unlock()
	}))
	defer recv.Close()

	db := filepath.Join(t.TempDir(), "drain.db")
	c := startChild(t, db, "--shutdown-timeout", "20s", "--drain-delay", "1s")
	inst, key := c.tenant(t, "Drain CU", "manage:webhooks", "read:user")
	send := func(req *http.Request) (int, error) {
		req.Header.Set("Content-Type", "application/json")
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			return 0, err
		}
		defer resp.Body.Close()
		_, err = io.ReadAll(resp.Body)
		return resp.StatusCode, err
	}
	apiCall := func(method, path, body string) (int, error) {
		req, _ := http.NewRequest(method, c.base+path, bytes.NewReader([]byte(body)))
		req.Header.Set("x-api-key", key)
		return send(req)
	}
	controlCall := func(method, path, body string) (int, error) {
		req, _ := http.NewRequest(method, c.base+path, bytes.NewReader([]byte(body)))
		req.Header.Set("x-sandbox-token", "crash-token")
		return send(req)
	}
	code, err := apiCall("POST", "/v1/webhooks/subscriptions", `{"event_type":"kyc","url":"`+recv.URL+`/hook"}`)
	require.NoError(t, err)
	require.Equal(t, 201, code)
	c.mustCall(t, "PUT", "/_sandbox/faults", map[string]any{"rules": []map[string]any{{"method": "GET", "path": "/v1/users/", "latency_ms": 300, "probability": 1}}})

	const workers = 6
	users := c.approvedUsers(t, inst, "drain", workers)
	var (
		created, answered atomic.Int64
		signalled, routed atomic.Bool
		wg                sync.WaitGroup
	)
	// The partners' calls go through a balancer, as a Kubernetes Service or a proxy with
	// health checks is: it polls /readyz and stops routing new calls on its first 503. Every
	// call routed must be answered 2xx, those in flight at the signal included.
	routed.Store(true)
	polled := make(chan struct{})
	go func() {
		defer close(polled)
		for routed.Load() {
			resp, err := http.Get(c.base + "/readyz")
			if err == nil {
				resp.Body.Close()
			}
			if err != nil || resp.StatusCode != http.StatusOK {
				routed.Store(false)
			}
			time.Sleep(50 * time.Millisecond) // the balancer's probe period
		}
	}()
	judge := func(what string, code int, err error) (stop bool) {
		if err != nil {
			t.Errorf("%s failed (signalled %v): %v", what, signalled.Load(), err)
			return true
		}
		answered.Add(1)
		if code >= 300 {
			t.Errorf("%s answered %d (signalled %v)", what, code, signalled.Load())
			return true
		}
		return !routed.Load()
	}
	for w := range workers {
		wg.Add(2)
		go func() { // a storm of KYC changes: each one event, one delivery
			defer wg.Done()
			next := map[string]string{"approved": "account_takeover", "account_takeover": "approved"}
			status := "account_takeover"
			for {
				code, err := controlCall("POST", "/_sandbox/users/"+users[w]+"/kyc", `{"product":"crypto","status":"`+status+`"}`)
				if judge("kyc", code, err) {
					return
				}
				created.Add(1)
				status = next[status]
			}
		}()
		go func() { // partner reads held 300 ms: in flight when the signal lands
			defer wg.Done()
			for {
				code, err := apiCall("GET", "/v1/users/?per_page=1", "")
				if judge("users", code, err) {
					return
				}
			}
		}()
	}
	require.Eventually(t, func() bool { return created.Load() >= 300 }, 30*time.Second, 5*time.Millisecond)
	signalled.Store(true)
	require.NoError(t, c.cmd.Process.Signal(syscall.SIGTERM))
	wg.Wait()
	<-polled
	require.NoError(t, c.cmd.Wait(), "partnersim exits 0 after a drain")
	mu.Lock()
	before, posts := maps.Clone(received), 0
	mu.Unlock()
	for _, n := range before {
		posts += n
	}
	t.Logf("SIGTERM after %d events; %d calls answered; %d events delivered in %d POSTs before the exit", created.Load(), answered.Load(), len(before), posts)

	// Restart on the same file: what the drain left in the outbox is delivered now.
	c2 := startChild(t, db)
	var events map[string]bool
	require.Eventually(t, func() bool {
		var pending int
		events, pending = c2.deliveries(t)
		return pending == 0
	}, 60*time.Second, 50*time.Millisecond, "deliveries still pending after restart")
	assert.GreaterOrEqual(t, int64(len(events)), created.Load(), "every acknowledged event is in the store")
	mu.Lock()
	defer mu.Unlock()
	for id := range events {
		assert.Equal(t, 1, received[id], "event %s: POSTs %d before the exit, %d in all; want 1 (a drain within its timeout doubles none)", id, before[id], received[id])
	}
}
