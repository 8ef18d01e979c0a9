package sandbox

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/tidwall/gjson"

	"partnersim/fixtures"
	"partnersim/simulator"
	"partnersim/simulator/httpapi"
)

// A scenario (fixtures/<set>/scenarios/*.json) is data played through the control plane itself:
// each step becomes the control-plane request a person would make, so a scripted KYC move or
// fill goes through exactly the same validation, state machine and outbox as a manual one.
// Steps run in order; a step's delay_seconds counts on the virtual clock from the step before,
// so `POST /_sandbox/clock/advance` plays a delayed scenario at once.

// scenarioRuns keeps the runs of this process, for GET /_sandbox/scenarios/runs/{id}.
type scenarioRuns struct {
	mu   sync.Mutex
	runs map[string]*httpapi.ScenarioRun
}

// RunScenario starts a scenario in an institution (default: the fixtures' first). Steps due now
// run before it answers; later ones run when the virtual clock reaches them.
func (c *control) RunScenario(ctx context.Context, name, instID string) (*httpapi.ScenarioRun, error) {
	sc, ok := c.sb.Fixtures.Scenarios[name]
	if !ok {
		names := c.sb.Fixtures.ScenarioNames()
		return nil, simulator.Errorf(simulator.ENOTFOUND, "no scenario named %q (known: %s)", name, strings.Join(names, ", "))
	}
	if instID == "" && len(c.sb.Fixtures.Institutions) > 0 {
		instID = c.sb.Fixtures.Institutions[0].ID
	}
	if _, err := c.DB.Institution(ctx, instID); err != nil {
		return nil, err
	}
	run := &httpapi.ScenarioRun{Scenario: name, RunID: c.DB.IDs.New("run"), Status: "running", Bound: map[string]string{"institution": instID}}
	due := c.sb.Clock.SchedulerNow()
	dues := make([]time.Time, len(sc.Steps))
	for i, st := range sc.Steps {
		due = due.Add(time.Duration(st.DelaySeconds) * time.Second)
		dues[i] = due
		run.Steps = append(run.Steps, httpapi.ScenarioStep{Action: st.Action, DueAt: simulator.FormatTime(due), Status: "pending"})
	}
	c.runs.mu.Lock()
	if c.runs.runs == nil {
		c.runs.runs = map[string]*httpapi.ScenarioRun{}
	}
	c.runs.runs[run.RunID] = run
	c.runs.mu.Unlock()

	i := c.playDue(run, sc, dues, 0)
	if i < len(sc.Steps) {
		// Later steps wait on the virtual clock: the run is woken when it moves, until it ends
		// or the sandbox closes (Close waits for it).
		wake := make(chan struct{}, 1)
		remove := c.sb.addWaker(func() {
			select {
			case wake <- struct{}{}:
			default:
			}
		})
		c.sb.runs.Add(1)
		go func() {
			defer c.sb.runs.Done()
			defer remove()
			for i < len(sc.Steps) {
				wait := dues[i].Sub(c.sb.Clock.SchedulerNow())
				if wait > 0 {
					t := time.NewTimer(wait)
					select {
					case <-wake:
					case <-t.C:
					case <-c.sb.runCtx.Done():
						t.Stop()
						return
					}
					t.Stop()
				}
				i = c.playDue(run, sc, dues, i)
			}
		}()
	}
	return c.snapshotRun(run.RunID), nil
}

// playDue runs the steps from i that are due on the virtual clock and returns the next one.
// A failed step ends the run.
func (c *control) playDue(run *httpapi.ScenarioRun, sc fixtures.Scenario, dues []time.Time, i int) int {
	for ; i < len(sc.Steps); i++ {
		if dues[i].After(c.sb.Clock.SchedulerNow()) {
			return i
		}
		res, ev, err := c.playStep(run, sc.Steps[i])
		c.runs.mu.Lock()
		st := &run.Steps[i]
		if err != nil {
			st.Status, st.Error = "failed", err.Error()
			run.Status = "failed"
			for j := i + 1; j < len(run.Steps); j++ {
				run.Steps[j].Status = "skipped"
			}
			c.runs.mu.Unlock()
			return len(sc.Steps)
		}
		st.Status, st.Result, st.EventID = "done", res, ev
		if i == len(sc.Steps)-1 {
			run.Status = "completed"
		}
		c.runs.mu.Unlock()
	}
	return i
}

// playStep turns one step into its control-plane request.
func (c *control) playStep(run *httpapi.ScenarioRun, st fixtures.Step) (result, eventID string, err error) {
	c.runs.mu.Lock()
	args := c.bind(run, st.Args)
	inst := run.Bound["institution"]
	c.runs.mu.Unlock()
	a := gjson.ParseBytes(args)
	var (
		method, path string
		body         []byte
		bindPath     string
	)
	switch st.Action {
	case "create_user":
		method, path, body, bindPath = http.MethodPost, "/_sandbox/institutions/"+inst+"/users", args, "platform_id"
		if !a.Get("user_account_id").Exists() {
			// Each run makes its own user, so a scenario can be played again and again.
			m := map[string]any{}
			if err := json.Unmarshal(args, &m); err == nil {
				m["user_account_id"] = run.Scenario + "-" + strings.TrimPrefix(run.RunID, "run_")
				body, _ = json.Marshal(m)
			}
		}
	case "kyc":
		method, path, bindPath = http.MethodPost, "/_sandbox/users/"+a.Get("user").String()+"/kyc", "kyc_status"
		body, _ = json.Marshal(map[string]string{"product": a.Get("product").String(), "status": a.Get("status").String()})
	case "place_order":
		method, path, bindPath = http.MethodPost, "/_sandbox/orders", "transaction_id"
		body = withPlatformID(a)
	case "place_transaction":
		method, path, bindPath = http.MethodPost, "/_sandbox/transactions", "transaction_id"
		body = withPlatformID(a)
	case "fill", "cancel", "fail":
		method, path, bindPath = http.MethodPost, "/_sandbox/transactions/"+a.Get("transaction").String()+"/"+st.Action, "status"
		if p := a.Get("price"); p.Exists() {
			body = []byte(`{"price":` + p.Raw + `}`)
		}
	case "set_prices":
		method, path, body, bindPath = http.MethodPut, "/_sandbox/institutions/"+inst+"/prices", args, ""
	default:
		return "", "", fmt.Errorf("unknown action %q", st.Action)
	}
	req := httptest.NewRequest(method, path, bytes.NewReader(body))
	req.Header.Set("x-sandbox-token", c.sb.Token)
	req.Header.Set("Content-Type", "application/json")
	rec := httptest.NewRecorder()
	c.sb.Server.ServeHTTP(rec, req)
	out := gjson.ParseBytes(rec.Body.Bytes())
	if rec.Code >= 300 {
		return "", "", fmt.Errorf("%s %s: %d %s", method, path, rec.Code, strings.TrimSpace(rec.Body.String()))
	}
	if bindPath != "" {
		result = out.Get(bindPath).String()
	}
	if st.As != "" {
		c.runs.mu.Lock()
		run.Bound[st.As] = result
		c.runs.mu.Unlock()
	}
	return result, out.Get("event_id").String(), nil
}

// bind replaces "$name" string values bound by earlier steps, and "{run}" inside strings with
// the run's id, so a scenario can run many times (user_account_id "onboard-{run}").
func (c *control) bind(run *httpapi.ScenarioRun, raw json.RawMessage) []byte {
	var v any
	if err := json.Unmarshal(raw, &v); err != nil {
		return raw
	}
	var walk func(any) any
	walk = func(x any) any {
		switch t := x.(type) {
		case string:
			if strings.HasPrefix(t, "$") {
				if b, ok := run.Bound[t[1:]]; ok {
					return b
				}
			}
			return strings.ReplaceAll(t, "{run}", strings.TrimPrefix(run.RunID, "run_"))
		case map[string]any:
			for k, e := range t {
				t[k] = walk(e)
			}
		case []any:
			for i, e := range t {
				t[i] = walk(e)
			}
		}
		return x
	}
	b, err := json.Marshal(walk(v))
	if err != nil {
		return raw
	}
	return b
}

// withPlatformID renames a step's "user" argument to the control plane's "platform_id".
func withPlatformID(a gjson.Result) []byte {
	m := map[string]any{}
	for k, v := range a.Map() {
		if k == "user" {
			k = "platform_id"
		}
		m[k] = v.Value()
	}
	b, _ := json.Marshal(m)
	return b
}

// snapshotRun copies a run for answering.
func (c *control) snapshotRun(id string) *httpapi.ScenarioRun {
	c.runs.mu.Lock()
	defer c.runs.mu.Unlock()
	r, ok := c.runs.runs[id]
	if !ok {
		return nil
	}
	cp := *r
	cp.Steps = slices.Clone(r.Steps)
	cp.Bound = map[string]string{}
	for k, v := range r.Bound {
		cp.Bound[k] = v
	}
	return &cp
}

// ScenarioRun returns a run of this process.
func (c *control) ScenarioRun(_ context.Context, id string) (*httpapi.ScenarioRun, error) {
	if r := c.snapshotRun(id); r != nil {
		return r, nil
	}
	return nil, simulator.Errorf(simulator.ENOTFOUND, "no scenario run %s", id)
}

// Scenarios lists the fixture scenarios.
func (c *control) Scenarios(_ context.Context) ([]httpapi.ScenarioInfo, error) {
	var out []httpapi.ScenarioInfo
	for _, n := range c.sb.Fixtures.ScenarioNames() {
		sc := c.sb.Fixtures.Scenarios[n]
		out = append(out, httpapi.ScenarioInfo{Name: n, Description: sc.Description, Steps: len(sc.Steps)})
	}
	return out, nil
}
