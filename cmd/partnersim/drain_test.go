package main

import (
	"bytes"
	"io"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"github.com/tidwall/gjson"
)

// TestSIGTERMUnderLoadDrains sends SIGTERM to a real partnersim process while partners' calls
// (some held 300 ms by an injected latency) and webhook deliveries (to a receiver that takes
// 100 ms each) are in flight, behind a balancer that stops routing on /readyz's 503 (the
// --drain-delay is longer than its probe period). The drain must fail no request — every call
// routed is answered 2xx, those in flight at the signal included — exit 0, and lose no delivery: after a restart on the same file every event is delivered, and
// none twice (attempts in flight finished and were recorded before the store closed).
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
	before := len(received)
	mu.Unlock()
	t.Logf("SIGTERM after %d events; %d calls answered; %d events delivered before the exit", created.Load(), answered.Load(), before)

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
		assert.Equal(t, 1, received[id], "event %s: delivered once (a drain within its timeout doubles none)", id)
	}
}
