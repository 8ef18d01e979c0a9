package sandbox

import (
	"context"
	"encoding/json"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/shopspring/decimal"

	"github.com/partnersim/partnersim/fixtures"
	"github.com/partnersim/partnersim/simulator"
	"github.com/partnersim/partnersim/simulator/httpapi"
)

// A scenario (fixtures/<set>/scenarios/*.json) is data played through the control plane's own
// services: each step's args are decoded into the typed form the fixture checker reads and
// become the call a person's control-plane request makes, so a scripted KYC move or fill goes
// through exactly the same domain rules, state machine and outbox as a manual one. Steps run in
// order; a step's delay_seconds counts on the institution's virtual clock from the step before,
// so `POST /_sandbox/clock/advance` (process-wide or for that institution) plays a delayed
// scenario at once.

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
	due := c.sb.Clock.InstitutionNow(instID)
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
				wait := dues[i].Sub(c.sb.Clock.InstitutionNow(instID))
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
		if dues[i].After(c.sb.Clock.InstitutionNow(run.Bound["institution"])) {
			return i
		}
		res, ev, err := c.playStep(c.sb.runCtx, run, sc.Steps[i])
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

// playStep plays one step: its args, bound, decoded into the typed form the fixture checker
// reads, then the control plane's own service called — the same validation of the domain, the
// same state machine, the same outbox as a person's request, without HTTP.
func (c *control) playStep(ctx context.Context, run *httpapi.ScenarioRun, st fixtures.Step) (result, eventID string, err error) {
	c.runs.mu.Lock()
	args := c.bind(run, st.Args)
	inst := run.Bound["institution"]
	c.runs.mu.Unlock()
	decoded, err := fixtures.DecodeArgs(st.Action, args)
	if err != nil {
		return "", "", err
	}
	var ev *simulator.Event
	switch a := decoded.(type) {
	case *fixtures.CreateUserArgs:
		r, err := a.Request()
		if err != nil {
			return "", "", err
		}
		if r.UserAccountID == "" {
			// Each run makes its own user, so a scenario can be played again and again.
			r.UserAccountID = run.Scenario + "-" + strings.TrimPrefix(run.RunID, "run_")
		}
		u := simulator.NewUser(inst, r, c.sb.Clock.Now())
		if err := c.CreateUser(ctx, u); err != nil {
			return "", "", err
		}
		result = u.PlatformID
	case *fixtures.KYCArgs:
		var acct *simulator.Account
		if acct, ev, err = c.TransitionKYC(ctx, a.User, simulator.Product(a.Product), simulator.KYCStatus(a.Status)); err != nil {
			return "", "", err
		}
		result = string(acct.KYCStatus)
	case *fixtures.PlaceOrderArgs:
		r, err := a.Request()
		if err != nil {
			return "", "", err
		}
		t, _, err := c.PlaceOrder(ctx, r)
		if err != nil {
			return "", "", err
		}
		result = t.ID
	case *fixtures.PlaceTxnArgs:
		amount, err := a.AmountValue()
		if err != nil {
			return "", "", err
		}
		t, _, err := c.PlaceRobo(ctx, a.User, simulator.TransactionType(a.Type), amount)
		if err != nil {
			return "", "", err
		}
		result = t.ID
	case *fixtures.SettleArgs:
		var t *simulator.Transaction
		if st.Action != fixtures.ActionFill {
			to := map[string]simulator.OrderStatus{fixtures.ActionCancel: simulator.OrderCanceled, fixtures.ActionFail: simulator.OrderFailed}[st.Action]
			if t, _, err = c.EndTransaction(ctx, a.Transaction, to); err != nil {
				return "", "", err
			}
		} else {
			_, orders, err := c.TransactionAny(ctx, a.Transaction)
			if err != nil {
				return "", "", err
			}
			prices, err := a.Prices(orders[0].Symbol) // a single price is checked to name a one-order transaction
			if err != nil {
				return "", "", err
			}
			if t, _, ev, err = c.FillTransaction(ctx, a.Transaction, prices); err != nil {
				return "", "", err
			}
		}
		result = string(t.Status)
	case map[string]decimal.Decimal:
		if _, err := c.SetPrices(ctx, inst, a); err != nil {
			return "", "", err
		}
	}
	if st.As != "" {
		c.runs.mu.Lock()
		run.Bound[st.As] = result
		c.runs.mu.Unlock()
	}
	if ev != nil {
		eventID = ev.ID
	}
	return result, eventID, nil
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

// ScenarioRuns lists up to limit runs in the given status ("" for any), by run id.
func (c *control) ScenarioRuns(_ context.Context, status string, limit int) ([]*httpapi.ScenarioRun, error) {
	c.runs.mu.Lock()
	ids := make([]string, 0, len(c.runs.runs))
	for id, r := range c.runs.runs {
		if status == "" || r.Status == status {
			ids = append(ids, id)
		}
	}
	c.runs.mu.Unlock()
	slices.Sort(ids)
	out := []*httpapi.ScenarioRun{}
	for _, id := range ids[:min(len(ids), limit)] {
		out = append(out, c.snapshotRun(id))
	}
	return out, nil
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
