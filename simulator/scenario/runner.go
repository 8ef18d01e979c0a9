package scenario

import (
	"context"
	"maps"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/shopspring/decimal"

	"github.com/partnersim/partnersim/fixtures"
	"github.com/partnersim/partnersim/simulator"
)

// Service is what the runner plays steps through: the control plane's own operations, served
// by control.Service. The runner treats every error alike — the step fails with its message
// and the run ends — so the codes each method returns (ENOTFOUND, ECONFLICT, EINVALID) are
// documented once, on the control plane's interface of the same method
// (simulator/httpapi/surface).
type Service interface {
	// Institution reads the institution a run plays in, checked before the run starts.
	Institution(ctx context.Context, id string) (*simulator.Institution, error)
	// CreateUser plays create_user; it gives u its platform id.
	CreateUser(ctx context.Context, u *simulator.User) error
	// TransitionKYC plays kyc.
	TransitionKYC(ctx context.Context, platformID string, p simulator.Product, to simulator.KYCStatus) (*simulator.KYCMove, error)
	// PlaceOrder plays place_order.
	PlaceOrder(ctx context.Context, r simulator.OrderRequest) (*simulator.Transaction, []*simulator.Order, error)
	// PlaceRobo plays place_transaction.
	PlaceRobo(ctx context.Context, platformID string, typ simulator.TransactionType, amount decimal.Decimal) (*simulator.Transaction, []*simulator.Order, error)
	// FillTransaction plays fill.
	FillTransaction(ctx context.Context, txnID string, prices map[string]decimal.Decimal) (*simulator.Transaction, []*simulator.Order, *simulator.Event, error)
	// EndTransaction plays cancel and fail.
	EndTransaction(ctx context.Context, txnID string, to simulator.OrderStatus) (*simulator.Transaction, []*simulator.Order, error)
	// TransactionAny reads the transaction a fill names, whose one order a single price fills.
	TransactionAny(ctx context.Context, id string) (*simulator.Transaction, []*simulator.Order, error)
	// SetPrices plays set_prices in the run's institution.
	SetPrices(ctx context.Context, instID string, prices map[string]decimal.Decimal) (map[string]decimal.Decimal, error)
	// OnClockMove registers wake to be called whenever the virtual clock moves, for the runs
	// waiting on it; remove unregisters it. It cannot fail.
	OnClockMove(wake func()) (remove func())
}

// Config is what a Runner plays.
type Config struct {
	// Service runs each step.
	Service Service
	// Clock is the virtual clock the steps' delays count on; IDs issue run ids.
	Clock *simulator.Clock
	IDs   *simulator.IDs
	// Scenarios are the fixture set's, by name.
	Scenarios map[string]fixtures.Scenario
	// Institution is where a scenario runs when none is named (the set's first).
	Institution string
}

// Runner plays scenarios and keeps the runs of this process. Steps run in order; a step's
// delay_seconds counts on the institution's virtual clock from the step before, so advancing
// the clock (process-wide or for that institution) plays a delayed scenario at once.
type Runner struct {
	cfg     Config
	ctx     context.Context
	stop    context.CancelFunc
	waiting sync.WaitGroup // runs waiting on the virtual clock

	mu   sync.Mutex
	runs map[string]*simulator.ScenarioRun
}

// NewRunner returns a runner; Close stops the runs still waiting on the clock.
func NewRunner(cfg Config) *Runner {
	ctx, stop := context.WithCancel(context.Background())
	return &Runner{cfg: cfg, ctx: ctx, stop: stop, runs: map[string]*simulator.ScenarioRun{}}
}

// Close ends the runs waiting on the virtual clock and waits for them to end.
func (r *Runner) Close() {
	r.stop()
	r.waiting.Wait()
}

// RunScenario starts a scenario in an institution (default: the fixtures' first). Steps due
// now run before it answers; later ones run when the virtual clock reaches them.
func (r *Runner) RunScenario(ctx context.Context, name, instID string) (*simulator.ScenarioRun, error) {
	sc, ok := r.cfg.Scenarios[name]
	if !ok {
		return nil, simulator.Errorf(simulator.ENOTFOUND, "no scenario named %q (known: %s)", name, strings.Join(r.names(), ", "))
	}
	if instID == "" {
		instID = r.cfg.Institution
	}
	if _, err := r.cfg.Service.Institution(ctx, instID); err != nil {
		return nil, err
	}
	run := &simulator.ScenarioRun{Scenario: name, RunID: r.cfg.IDs.New("run"), Status: "running", Bound: map[string]string{"institution": instID}}
	due := r.cfg.Clock.InstitutionNow(instID)
	dues := make([]time.Time, len(sc.Steps))
	for i, st := range sc.Steps {
		due = due.Add(time.Duration(st.DelaySeconds) * time.Second)
		dues[i] = due
		run.Steps = append(run.Steps, simulator.ScenarioStep{Action: st.Action, DueAt: simulator.FormatTime(due), Status: "pending"})
	}
	r.mu.Lock()
	r.runs[run.RunID] = run
	r.mu.Unlock()

	if i := r.playDue(run, sc, dues, 0); i < len(sc.Steps) {
		r.wait(run, sc, dues, i)
	}
	return r.snapshot(run.RunID), nil
}

// wait plays the steps from i as the virtual clock reaches them: the run is woken when the
// clock moves, until it ends or the runner closes (Close waits for it).
func (r *Runner) wait(run *simulator.ScenarioRun, sc fixtures.Scenario, dues []time.Time, i int) {
	wake := make(chan struct{}, 1)
	remove := r.cfg.Service.OnClockMove(func() {
		select {
		case wake <- struct{}{}:
		default:
		}
	})
	instID := run.Bound["institution"]
	r.waiting.Add(1)
	go func() {
		defer r.waiting.Done()
		defer remove()
		for i < len(sc.Steps) {
			if wait := dues[i].Sub(r.cfg.Clock.InstitutionNow(instID)); wait > 0 {
				t := time.NewTimer(wait)
				select {
				case <-wake:
				case <-t.C:
				case <-r.ctx.Done():
					t.Stop()
					return
				}
				t.Stop()
			}
			i = r.playDue(run, sc, dues, i)
		}
	}()
}

// playDue runs the steps from i that are due on the virtual clock and returns the next one.
// A failed step ends the run.
func (r *Runner) playDue(run *simulator.ScenarioRun, sc fixtures.Scenario, dues []time.Time, i int) int {
	for ; i < len(sc.Steps); i++ {
		if dues[i].After(r.cfg.Clock.InstitutionNow(run.Bound["institution"])) {
			return i
		}
		res, ev, err := r.playStep(r.ctx, run, sc.Steps[i])
		r.mu.Lock()
		st := &run.Steps[i]
		if err != nil {
			st.Status, st.Error = "failed", err.Error()
			run.Status = "failed"
			for j := i + 1; j < len(run.Steps); j++ {
				run.Steps[j].Status = "skipped"
			}
			r.mu.Unlock()
			return len(sc.Steps)
		}
		st.Status, st.Result, st.EventID = "done", res, ev
		if i == len(sc.Steps)-1 {
			run.Status = "completed"
		}
		r.mu.Unlock()
	}
	return i
}

// snapshot copies a run for answering; nil when there is none.
func (r *Runner) snapshot(id string) *simulator.ScenarioRun {
	r.mu.Lock()
	defer r.mu.Unlock()
	run, ok := r.runs[id]
	if !ok {
		return nil
	}
	cp := *run
	cp.Steps = slices.Clone(run.Steps)
	cp.Bound = map[string]string{}
	for k, v := range run.Bound {
		cp.Bound[k] = v
	}
	return &cp
}

// ScenarioRun returns a run of this process (ENOTFOUND when there is none).
func (r *Runner) ScenarioRun(_ context.Context, id string) (*simulator.ScenarioRun, error) {
	if run := r.snapshot(id); run != nil {
		return run, nil
	}
	return nil, simulator.Errorf(simulator.ENOTFOUND, "no scenario run %s", id)
}

// ScenarioRuns lists up to limit runs in the given status ("" for any), by run id.
func (r *Runner) ScenarioRuns(_ context.Context, status string, limit int) ([]*simulator.ScenarioRun, error) {
	r.mu.Lock()
	ids := make([]string, 0, len(r.runs))
	for id, run := range r.runs {
		if status == "" || run.Status == status {
			ids = append(ids, id)
		}
	}
	r.mu.Unlock()
	slices.Sort(ids)
	out := []*simulator.ScenarioRun{}
	for _, id := range ids[:min(len(ids), limit)] {
		out = append(out, r.snapshot(id))
	}
	return out, nil
}

// Scenarios lists the fixture scenarios, by name.
func (r *Runner) Scenarios(_ context.Context) ([]simulator.ScenarioInfo, error) {
	var out []simulator.ScenarioInfo
	for _, n := range r.names() {
		sc := r.cfg.Scenarios[n]
		out = append(out, simulator.ScenarioInfo{Name: n, Description: sc.Description, Steps: len(sc.Steps)})
	}
	return out, nil
}

func (r *Runner) names() []string { return slices.Sorted(maps.Keys(r.cfg.Scenarios)) }
