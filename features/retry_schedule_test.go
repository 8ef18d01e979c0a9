package features_test

import (
	"context"
	"net/http"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/tidwall/gjson"

	"github.com/partnersim/partnersim/features"
	"github.com/partnersim/partnersim/internal/sandboxtest"
)

// The retry-schedule step judges the delivery log's next attempt against the virtual clock,
// which runs on with the wall clock while the suite reads it. A suite slowed down between an
// attempt and its reading (a loaded machine) must not see a broken schedule, and a schedule
// shifted by a few seconds must be seen however slow the suite is.

// slowLogReads delays the first read of the delivery log that shows a new attempt of a pending
// delivery by delay — the suite notices each attempt that much later, as on a loaded machine —
// and moves every next_attempt_at it passes by shift (0: the sandbox's schedule as it is).
func slowLogReads(delay, shift time.Duration) breaker {
	var mu sync.Mutex
	seen := map[string]int{} // delivery id → attempts already shown
	next := regexp.MustCompile(`"next_attempt_at":"([^"]+)"`)
	return func(r *http.Request, status int, body []byte) (int, []byte) {
		if r.Method != http.MethodGet || r.URL.Path != "/_sandbox/deliveries" || status != http.StatusOK {
			return status, body
		}
		slow := false
		mu.Lock()
		for _, d := range gjson.GetBytes(body, "deliveries").Array() {
			id, n := d.Get("delivery_id").String(), len(d.Get("attempts").Array())
			if n > seen[id] {
				seen[id] = n
				slow = slow || d.Get("status").String() == "pending"
			}
		}
		mu.Unlock()
		if slow {
			time.Sleep(delay)
		}
		if shift == 0 {
			return status, body
		}
		return status, next.ReplaceAllFunc(body, func(m []byte) []byte {
			t, err := time.Parse(time.RFC3339Nano, string(next.FindSubmatch(m)[1]))
			if err != nil {
				return m
			}
			return []byte(`"next_attempt_at":"` + t.Add(shift).Format(time.RFC3339Nano) + `"`)
		})
	}
}

func TestRetryScheduleJudgedByWhatTheSuiteObserved(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("runs a scenario against the simulator; skipped with -short")
	}
	const scenario = "A refused delivery follows the retry schedule exactly, then fails"
	// Longer than the 2 s the step once allowed for reading the log, shorter than the shifts.
	const delay = 2500 * time.Millisecond
	cases := []struct {
		name    string
		shift   time.Duration
		because string // "" when the scenario must pass
	}{
		{"every attempt noticed late", 0, ""},
		{"retries scheduled 4 s late, noticed late", 4 * time.Second, "expected retry 1 5s after attempt 1"},
		{"retries scheduled 4 s early, noticed late", -4 * time.Second, "expected retry 1 5s after attempt 1"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			// A sandbox of its own: the scenario is @serial, it moves the virtual clock.
			srv := sandboxtest.MustServe(t)
			u := breakingProxy(t, srv.URL, slowLogReads(delay, c.shift))
			ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
			defer cancel()
			start := time.Now()
			rep, err := features.Run(ctx, features.Options{BaseURL: u + "/v1", SandboxURL: u, SandboxToken: srv.SB.Token,
				Paths: []string{"webhook_events.feature"}, Name: "^" + regexp.QuoteMeta(scenario) + "$"})
			if err != nil {
				t.Fatal(err)
			}
			r, ok := rep.Result(scenario)
			if !ok {
				t.Fatalf("the run did not report %q", scenario)
			}
			t.Logf("%s in %s %s", r.Status, time.Since(start).Round(time.Millisecond), r.Err)
			if c.because == "" {
				if r.Status != features.Passed {
					t.Fatalf("with the log read %s after each attempt, expected %q to pass, got %s: %s", delay, scenario, r.Status, r.Err)
				}
				return
			}
			if r.Status != features.Failed {
				t.Fatalf("with every retry shifted by %s, expected %q to fail, got %s", c.shift, scenario, r.Status)
			}
			if !strings.Contains(r.Err, c.because) {
				t.Errorf("expected the failure to name the broken schedule (%q), got: %s", c.because, r.Err)
			}
		})
	}
}
