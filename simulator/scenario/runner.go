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
// by the store (simulator/bolt) as they are for the HTTP handlers. The runner treats every error alike — the step fails with its message
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
}

// ClockMoves tells the runner when the virtual clock moves (control.Service, which moves it).
type ClockMoves interface {
	// OnClockMove registers wake to be called whenever the virtual clock moves, for the runs
	// waiting on it; remove unregisters it. It cannot fail.
	OnClockMove(wake func()) (remove func())
}

// Store keeps the runs (simulator/bolt's DB): the runner writes a run when it starts and after
// each step, and Resume reads them back when the process starts again, so a run in flight is
// state like a delivery in the outbox.
type Store interface {
	// PutScenarioRun stores a run as it stands.
	PutScenarioRun(ctx context.Context, run *simulator.ScenarioRun) error
	// ScenarioRuns returns every stored run.
	ScenarioRuns(ctx context.Context) ([]*simulator.ScenarioRun, error)
}

// Config is what a Runner plays.
type Config struct {
	// Service runs each step; Moves wakes the runs waiting on the virtual clock.
	Service Service
	Moves   ClockMoves
	// Store keeps the runs across restarts (nil: the runs live in this process only).
	Store Store
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
// the clock (process-wide or for that institution) plays a delayed scenario: the advance plays
// the steps due in its window itself (PlayDue), in order with the deliveries they cause, and a
// run's own waiter plays what the wall clock brings due.
type Runner struct {
	cfg     Config
	ctx     context.Context
	stop    context.CancelFunc
	waiting sync.WaitGroup // runs waiting on the virtual clock

	mu   sync.Mutex
	runs map[string]*simulator.ScenarioRun
	live map[string]*liveRun // the runs with steps still to play, by run id
}

// liveRun is a run with steps still to play.
type liveRun struct {
	mu   sync.Mutex // held while its steps are played, by its waiter or by PlayDue
	run  *simulator.ScenarioRun
	sc   fixtures.Scenario
	dues []time.Time // each step's due time on the institution's virtual clock
	next int         // the first step not yet played
}

// NewRunner returns a runner; Close stops the runs still waiting on the clock.
func NewRunner(cfg Config) *Runner {
	ctx, stop := context.WithCancel(context.Background())
	return &Runner{cfg: cfg, ctx: ctx, stop: stop, runs: map[string]*simulator.ScenarioRun{}, live: map[string]*liveRun{}}
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
	if err := r.save(ctx, run.RunID); err != nil {
		return nil, err
	}
	r.play(run, sc, dues, 0)
	return r.snapshot(run.RunID), nil
}

// play runs the steps from i that are due and waits on the virtual clock for the rest.
func (r *Runner) play(run *simulator.ScenarioRun, sc fixtures.Scenario, dues []time.Time, i int) {
	l := &liveRun{run: run, sc: sc, dues: dues, next: i}
	l.mu.Lock()
	r.playDue(l)
	more := l.next < len(sc.Steps)
	l.mu.Unlock()
	if more {
		r.mu.Lock()
		r.live[run.RunID] = l
		r.mu.Unlock()
		r.wait(l)
	}
}

// save writes a run as it stands to the store, if there is one.
func (r *Runner) save(ctx context.Context, id string) error {
	if r.cfg.Store == nil {
		return nil
	}
	return r.cfg.Store.PutScenarioRun(ctx, r.snapshot(id))
}

// Resume reads the stored runs back after a restart: each is listed again, and each still
// running goes on from its first pending step, on the virtual clock as before. A step whose
// effect was committed by a process killed before it recorded the step is played again (the
// window is one step's store write; steps are at least once across a kill, as deliveries are). A
// run whose scenario the fixture set no longer has fails, saying so.
func (r *Runner) Resume(ctx context.Context) error {
	if r.cfg.Store == nil {
		return nil
	}
	runs, err := r.cfg.Store.ScenarioRuns(ctx)
	if err != nil {
		return err
	}
	for _, run := range runs {
		r.mu.Lock()
		r.runs[run.RunID] = run
		r.mu.Unlock()
		if run.Status != "running" {
			continue
		}
		sc, ok := r.cfg.Scenarios[run.Scenario]
		dues, next, err := resumePoint(run)
		if !ok || len(sc.Steps) != len(run.Steps) || err != nil {
			r.fail(run, next, "the fixture set no longer has this scenario as the run started it: the run cannot go on after the restart")
			if err := r.save(ctx, run.RunID); err != nil {
				return err
			}
			continue
		}
		r.play(run, sc, dues, next)
	}
	return nil
}

// resumePoint reads a stored run's step due times and its first pending step.
func resumePoint(run *simulator.ScenarioRun) ([]time.Time, int, error) {
	dues := make([]time.Time, len(run.Steps))
	next := len(run.Steps)
	for i, st := range run.Steps {
		t, err := time.Parse(time.RFC3339Nano, st.DueAt)
		if err != nil {
			return nil, 0, err
		}
		dues[i] = t
		if st.Status == "pending" && next == len(run.Steps) {
			next = i
		}
	}
	return dues, next, nil
}

// fail ends run at step i with msg, skipping the steps after it. The caller holds no lock.
func (r *Runner) fail(run *simulator.ScenarioRun, i int, msg string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	run.Status = "failed"
	if i < len(run.Steps) {
		run.Steps[i].Status, run.Steps[i].Error = "failed", msg
	}
	for j := i + 1; j < len(run.Steps); j++ {
		run.Steps[j].Status = "skipped"
	}
}

// wait plays a run's remaining steps as the virtual clock reaches them: the run is woken when
// the clock moves, until it ends or the runner closes (Close waits for it).
func (r *Runner) wait(l *liveRun) {
	wake := make(chan struct{}, 1)
	remove := r.cfg.Moves.OnClockMove(func() {
		select {
		case wake <- struct{}{}:
		default:
		}
	})
	instID := l.run.Bound["institution"]
	r.waiting.Add(1)
	go func() {
		defer r.waiting.Done()
		defer remove()
		defer func() {
			r.mu.Lock()
			delete(r.live, l.run.RunID)
			r.mu.Unlock()
		}()
		for {
			l.mu.Lock()
			if l.next == len(l.sc.Steps) {
				l.mu.Unlock()
				return
			}
			wait := l.dues[l.next].Sub(r.cfg.Clock.InstitutionNow(instID))
			l.mu.Unlock()
			if wait > 0 {
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
			l.mu.Lock()
			r.playDue(l)
			l.mu.Unlock()
		}
	}()
}

// NextStep returns when the earliest step not yet played falls due: on institution instID's
// virtual clock among its runs, or with instID "" on the process-wide one (SchedulerNow)
// among every run.
func (r *Runner) NextStep(instID string) (time.Time, bool) {
	var (
		first time.Time
		found bool
	)
	for _, l := range r.lives() {
		inst := l.run.Bound["institution"]
		if instID != "" && inst != instID {
			continue
		}
		l.mu.Lock()
		if l.next < len(l.dues) {
			due := l.dues[l.next]
			if instID == "" {
				due = due.Add(-r.cfg.Clock.Offset(inst))
			}
			if !found || due.Before(first) {
				first, found = due, true
			}
		}
		l.mu.Unlock()
	}
	return first, found
}

// PlayDue plays every step due now on its institution's virtual clock, run after run in the
// order their next steps fell due, and returns what it played.
func (r *Runner) PlayDue() []simulator.FiredStep {
	lives := r.lives()
	nextDue := func(l *liveRun) time.Time {
		l.mu.Lock()
		defer l.mu.Unlock()
		if l.next == len(l.dues) {
			return time.Time{}
		}
		return l.dues[l.next].Add(-r.cfg.Clock.Offset(l.run.Bound["institution"]))
	}
	dues := make(map[*liveRun]time.Time, len(lives))
	for _, l := range lives {
		dues[l] = nextDue(l)
	}
	slices.SortStableFunc(lives, func(a, b *liveRun) int { return dues[a].Compare(dues[b]) })
	var fired []simulator.FiredStep
	for _, l := range lives {
		l.mu.Lock()
		fired = append(fired, r.playDue(l)...)
		l.mu.Unlock()
	}
	return fired
}

// lives lists the runs with steps still to play, by run id.
func (r *Runner) lives() []*liveRun {
	r.mu.Lock()
	defer r.mu.Unlock()
	ids := slices.Sorted(maps.Keys(r.live))
	out := make([]*liveRun, len(ids))
	for i, id := range ids {
		out[i] = r.live[id]
	}
	return out
}

// playDue runs a run's steps that are due on the virtual clock from its next one, each
// recorded in the store as it is played, and returns them (l.mu held). A failed step ends the
// run.
func (r *Runner) playDue(l *liveRun) []simulator.FiredStep {
	var fired []simulator.FiredStep
	run, sc := l.run, l.sc
	inst := run.Bound["institution"]
	for ; l.next < len(sc.Steps); l.next++ {
		i := l.next
		if l.dues[i].After(r.cfg.Clock.InstitutionNow(inst)) {
			return fired
		}
		res, ev, err := r.playStep(r.ctx, run, sc.Steps[i])
		if err != nil {
			r.fail(run, i, err.Error())
			_ = r.save(r.ctx, run.RunID) // a store that cannot write fails the next call that needs it too
			l.next = len(sc.Steps)
			return append(fired, r.fired(run, i))
		}
		r.mu.Lock()
		st := &run.Steps[i]
		st.Status, st.Result, st.EventID = "done", res, ev
		if i == len(sc.Steps)-1 {
			run.Status = "completed"
		}
		r.mu.Unlock()
		fired = append(fired, r.fired(run, i))
		if err := r.save(r.ctx, run.RunID); err != nil {
			l.next = len(sc.Steps) // the store is closing (the runner with it): stop here, the record says where
			return fired
		}
	}
	return fired
}

// fired describes step i of run as it was just played.
func (r *Runner) fired(run *simulator.ScenarioRun, i int) simulator.FiredStep {
	r.mu.Lock()
	defer r.mu.Unlock()
	return simulator.FiredStep{RunID: run.RunID, Scenario: run.Scenario, InstitutionID: run.Bound["institution"], Number: i + 1, ScenarioStep: run.Steps[i]}
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
