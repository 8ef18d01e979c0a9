package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
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

	"github.com/stretchr/testify/require"
	"github.com/tidwall/gjson"

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
