package webhook

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"sync"
	"sync/atomic"
	"time"

	"github.com/partnersim/partnersim/simulator"
	"github.com/partnersim/partnersim/simulator/webhook/signature"
)

// Store is what the dispatcher needs from the outbox.
type Store interface {
	// Due walks the outbox from the position from ("" for its start): up to limit due
	// deliveries in due order, each taken, passed over (in flight) or held back (its
	// institution has enough waiting) as check says from its delivery and subscription ids
	// before it is read, and the position the next walk starts at ("" after the last due
	// entry; the first entry held back when one was).
	Due(ctx context.Context, now time.Time, from string, limit int, check func(id, subID []byte) (take, hold bool)) ([]*simulator.Delivery, string, error)
	// NextDue returns the earliest next attempt later than after.
	NextDue(ctx context.Context, after time.Time) (time.Time, bool, error)
	RecordAttempts(ctx context.Context, recs []simulator.AttemptRecord) error
	SigningSecrets(ctx context.Context, instID string) (simulator.SigningSecrets, error)
}

// DefaultSchedule is the retry schedule of decisions D8 (Svix's): after the first attempt, retries
// 5s, 5m, 30m, 2h, 5h, 10h and 10h later — 8 attempts over about 27.6 hours.
var DefaultSchedule = []time.Duration{5 * time.Second, 5 * time.Minute, 30 * time.Minute, 2 * time.Hour, 5 * time.Hour, 10 * time.Hour, 10 * time.Hour}

// Config tunes the dispatcher.
type Config struct {
	// Workers is how many deliveries are attempted at once (default 32).
	Workers int
	// PerInstitution is how many of the workers one institution's deliveries may hold at once
	// (default three quarters of them, at least 1): one partner's slow or hanging receivers
	// can never take the workers the other partners' deliveries need.
	PerInstitution int
	// Schedule is the delay before each retry; its length is the number of retries.
	Schedule []time.Duration
	// Timeout bounds one attempt (default 10s).
	Timeout time.Duration
	// Dial connects to callback hosts; use netguard's checked dialer. Nil is net.Dialer.
	Dial func(ctx context.Context, network, addr string) (net.Conn, error)
	// Clock stamps attempts (Now) and schedules retries (SchedulerNow).
	Clock *simulator.Clock
	// Log receives one line per attempt.
	Log *slog.Logger
	// Observe, when set, hears each attempt's outcome for its institution: "delivered",
	// "retrying" (a retry is scheduled), "failed" (no retry left) or "returned" (cut short by
	// shutdown; the delivery stays pending in the outbox). Metrics count them.
	Observe func(institution, outcome string)
	// Wake, when set, is the signal that makes the dispatcher look for due deliveries: made
	// before the store, whose Notify it is (nil: one of its own).
	Wake *Waker
}

// A Waker makes a dispatcher look for due deliveries now. It exists apart from the dispatcher
// so that the store can be opened with its Wake (bolt.Options.Notify) before the dispatcher,
// which reads that store, is made with it (Config.Wake).
type Waker struct{ c chan struct{} }

// NewWaker returns a waker for one dispatcher.
func NewWaker() *Waker { return &Waker{c: make(chan struct{}, 1)} }

// Wake makes the dispatcher look for due deliveries now; it never blocks.
func (w *Waker) Wake() {
	select {
	case w.c <- struct{}{}:
	default:
	}
}

// Dispatcher drains the outbox.
type Dispatcher struct {
	store  Store
	cfg    Config
	client *http.Client
	wake   *Waker
	// turn is held by Run while it takes due deliveries from the outbox and by Settle for the
	// whole of its work: what Settle attempts is never taken by Run meanwhile.
	turn     sync.Mutex
	inflight inflight
	records  chan simulator.AttemptRecord
	// queue is the running Run's queue (nil between runs), for Queued.
	queue atomic.Pointer[fairQueue]
	// responses hold the start of answers while they are read (most are empty or short).
	responses sync.Pool
}

// New returns a dispatcher; call Run to start it.
func New(store Store, cfg Config) *Dispatcher {
	if cfg.Workers <= 0 {
		cfg.Workers = 32
	}
	if cfg.PerInstitution <= 0 {
		cfg.PerInstitution = max(1, cfg.Workers-cfg.Workers/4)
	}
	if cfg.Schedule == nil {
		cfg.Schedule = DefaultSchedule
	}
	if cfg.Timeout <= 0 {
		cfg.Timeout = 10 * time.Second
	}
	if cfg.Clock == nil {
		cfg.Clock = simulator.NewClock(nil)
	}
	if cfg.Log == nil {
		cfg.Log = slog.New(slog.NewTextHandler(io.Discard, nil))
	}
	dial := cfg.Dial
	if dial == nil {
		dial = (&net.Dialer{Timeout: cfg.Timeout}).DialContext
	}
	transport := &http.Transport{
		DialContext:         dial,
		MaxIdleConns:        cfg.Workers * 2,
		MaxIdleConnsPerHost: cfg.Workers,
		IdleConnTimeout:     90 * time.Second,
		ForceAttemptHTTP2:   false,
		Proxy:               nil, // callbacks are dialled directly: a proxy would bypass the address guard
	}
	client := &http.Client{
		Transport: transport,
		// Redirects are never followed: a 3xx is a failed attempt (decisions D8).
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse },
	}
	if cfg.Wake == nil {
		cfg.Wake = NewWaker()
	}
	d := &Dispatcher{store: store, cfg: cfg, client: client, wake: cfg.Wake,
		records: make(chan simulator.AttemptRecord, 2*maxGroup)}
	d.inflight.init()
	return d
}

// Wake makes the dispatcher look for due deliveries now (after new events, or after the
// virtual clock moved).
func (d *Dispatcher) Wake() { d.wake.Wake() }

// Run delivers until ctx ends. Deliveries in flight when it ends stay pending in the outbox
// and are attempted again by the next Run (at-least-once).
func (d *Dispatcher) Run(ctx context.Context) error { return d.RunDraining(ctx, ctx) }

// RunDraining delivers until ctx ends, then drains: it takes nothing more from the outbox,
// what was queued and never attempted stays pending, and the attempts in flight finish and
// are recorded — unless abort ends first, which cuts them short and leaves them pending too,
// to be attempted again by the next Run (at-least-once: one whose POST had reached its
// receiver before the cut is then delivered twice, under the same webhook-id).
func (d *Dispatcher) RunDraining(ctx, abort context.Context) error {
	queue := newFairQueue(d.cfg.PerInstitution, d.Wake)
	d.queue.Store(queue)
	defer d.queue.Store(nil)
	defer d.start(abort, queue)()
	const batch = 256
	timer := time.NewTimer(0)
	defer timer.Stop()
	var (
		from    string    // where the next walk of the outbox starts
		started time.Time // when the walk from the outbox's start began
	)
	for {
		// A walk resumes where the last one stopped, so a backlog is read once, not once per
		// fetch; it starts over at the outbox's start once it has reached the last due entry,
		// and at least every second (an entry due before the position — the wall clock stepped
		// back — waits no longer).
		if from == "" || time.Since(started) > time.Second {
			from, started = "", time.Now()
		}
		d.turn.Lock()
		now := d.cfg.Clock.SchedulerNow()
		due, next, held, err := d.fetch(ctx, queue, now, from, batch)
		for _, dl := range due {
			d.inflight.add(dl.ID)
			queue.push(dl)
		}
		d.turn.Unlock()
		if err != nil {
			if ctx.Err() != nil {
				return nil
			}
			d.cfg.Log.Error("outbox read failed", slog.Any("err", err))
		}
		from = next
		if len(due) == batch || next != "" && !held {
			continue // more is due beyond this walk's bounds
		}
		// Everything due was taken, is in flight (its record wakes the loop when it is to be
		// retried) or is held back (the queue wakes it as the institution drains): wait for
		// what falls due next.
		wait := time.Second
		if next, ok, err := d.store.NextDue(ctx, now); err == nil && ok {
			if w := next.Sub(d.cfg.Clock.SchedulerNow()); w > 0 && w < wait {
				wait = w
			}
		}
		timer.Reset(wait)
		select {
		case <-ctx.Done():
			return nil
		case <-d.wake.c:
		case <-timer.C:
		}
	}
}

// Queued returns, per institution, how many deliveries are queued for a worker or being
// attempted now (nil when not running).
func (d *Dispatcher) Queued() map[string]int {
	if q := d.queue.Load(); q != nil {
		return q.depths()
	}
	return nil
}

// start starts Run's workers, which attempt what queue hands them until abort ends, and its
// recorder; the function it returns stops them once their attempts end, leaving what was never
// attempted to the next Run.
func (d *Dispatcher) start(ctx context.Context, queue *fairQueue) (stop func()) {
	var wg sync.WaitGroup
	for range d.cfg.Workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				dl, ok := queue.pop()
				if !ok {
					return
				}
				d.deliver(ctx, dl)
				queue.done(dl.InstitutionID)
			}
		}()
	}
	recorded := make(chan struct{})
	go func() {
		defer close(recorded)
		d.record(ctx)
	}()
	return func() {
		for _, dl := range queue.close() {
			d.inflight.remove(dl.ID) // never attempted: fetched again by the next Run
		}
		wg.Wait()
		close(d.records)
		<-recorded
		d.records = make(chan simulator.AttemptRecord, 2*maxGroup) // ready for another Run
	}
}

// fetch walks the outbox from from for up to batch deliveries due at now, taking what is not
// in flight (queued, being attempted or being recorded) for institutions that do not already
// have enough waiting; an institution found full stays full for the rest of the walk. held
// says whether any due delivery was held back that way; next is where the walk stopped.
func (d *Dispatcher) fetch(ctx context.Context, queue *fairQueue, now time.Time, from string, batch int) (due []*simulator.Delivery, next string, held bool, err error) {
	fetched, full := map[string]int{}, map[string]bool{}
	check := func(id, subID []byte) (take, hold bool) {
		if full[string(subID)] {
			held = true
			return false, true
		}
		if d.inflight.has(id) {
			return false, false
		}
		inst, isFull := queue.full(string(subID), fetched)
		if isFull {
			full[string(subID)], held = true, true
			return false, true
		}
		if inst != "" {
			fetched[inst]++
		}
		return true, false
	}
	defer d.inflight.walk()()
	due, next, err = d.store.Due(ctx, now, from, batch, check)
	return due, next, held, err
}

// inflight holds the ids of the deliveries fetched and not yet recorded: they are never
// fetched again, so an attempt is never made twice. A walk of the outbox reads the store as it
// was when the walk began, where a delivery recorded since still stands pending and due: an id
// removed while a walk is under way leaves the set only once that walk ends.
type inflight struct {
	mu      sync.Mutex
	ids     map[string]struct{}
	walking bool
	left    []string   // removed while walking
	empty   *sync.Cond // broadcast when ids empties
}

func (f *inflight) init() {
	f.ids = map[string]struct{}{}
	f.empty = sync.NewCond(&f.mu)
}

// wait returns once no delivery is in flight.
func (f *inflight) wait() {
	f.mu.Lock()
	for len(f.ids) > 0 {
		f.empty.Wait()
	}
	f.mu.Unlock()
}

func (f *inflight) add(id string) {
	f.mu.Lock()
	f.ids[id] = struct{}{}
	f.mu.Unlock()
}

func (f *inflight) has(id []byte) bool {
	f.mu.Lock()
	_, ok := f.ids[string(id)]
	f.mu.Unlock()
	return ok
}

// remove takes id out of the set, at the end of the walk under way if there is one.
func (f *inflight) remove(id string) {
	f.mu.Lock()
	if f.walking {
		f.left = append(f.left, id)
	} else {
		f.delete(id)
	}
	f.mu.Unlock()
}

// walk marks a walk of the outbox under way until the function it returns is called, which
// takes out what was removed meanwhile.
func (f *inflight) walk() (end func()) {
	f.mu.Lock()
	f.walking = true
	f.mu.Unlock()
	return func() {
		f.mu.Lock()
		f.walking = false
		for _, id := range f.left {
			f.delete(id)
		}
		f.left = f.left[:0]
		f.mu.Unlock()
	}
}

func (f *inflight) delete(id string) {
	delete(f.ids, id)
	if len(f.ids) == 0 {
		f.empty.Broadcast()
	}
}

// deliver makes one attempt of a delivery and records it with what comes next.
func (d *Dispatcher) deliver(ctx context.Context, dl *simulator.Delivery) {
	r, ok := d.attempt(ctx, dl)
	if !ok {
		d.inflight.remove(dl.ID)
		return
	}
	d.records <- r
}

// attempt makes one attempt of a delivery and returns its record with what comes next; false
// when no attempt was made (the secrets could not be read, or ctx ended: the delivery stays
// pending and is attempted again).
func (d *Dispatcher) attempt(ctx context.Context, dl *simulator.Delivery) (simulator.AttemptRecord, bool) {
	secrets, err := d.store.SigningSecrets(ctx, dl.InstitutionID)
	if err != nil {
		d.cfg.Log.Error("signing secrets", slog.String("delivery_id", dl.ID), slog.Any("err", err))
		return simulator.AttemptRecord{}, false
	}
	// A retry's delay counts from here, however long the answer takes, on the institution's
	// virtual clock (decisions D9).
	started := d.cfg.Clock.InstitutionNow(dl.InstitutionID)
	a := d.Send(ctx, dl.URL, dl.Body, dl.EventID, secrets.Active(d.cfg.Clock, dl.InstitutionID))
	if ctx.Err() != nil {
		d.observe(dl.InstitutionID, "returned")
		return simulator.AttemptRecord{}, false
	}
	r := dl.Outcome(a, d.cfg.Schedule, started)
	switch {
	case r.OK:
		d.observe(dl.InstitutionID, "delivered")
	case r.Next != nil:
		d.observe(dl.InstitutionID, "retrying")
	default:
		d.observe(dl.InstitutionID, "failed")
	}
	if d.cfg.Log.Enabled(ctx, slog.LevelDebug) {
		d.cfg.Log.Debug("webhook attempt", slog.String("delivery_id", dl.ID), slog.String("event_id", dl.EventID),
			slog.Int("attempt", len(dl.Attempts)+1), slog.Int("status_code", a.StatusCode), slog.String("error", a.Error),
			slog.Float64("latency_ms", a.LatencyMS), slog.Bool("delivered", r.OK))
	}
	return r, true
}

// Hold stops Run taking deliveries from the outbox until release is called, and returns once
// the attempts Run had in flight are recorded: from then on the caller alone attempts what
// falls due, through Settle. An advance of the virtual clock holds the dispatcher while it
// plays its window (decisions D8), so nothing due in it is attempted out of its order.
func (d *Dispatcher) Hold() (release func()) {
	d.turn.Lock()
	d.inflight.wait()
	return d.turn.Unlock
}

// Settle makes every attempt due at the virtual time now returns (read afresh for each walk
// of the outbox), each once, and returns once they are recorded, with what each did, in due
// order; call it while holding the dispatcher (Hold). A retry an attempt makes due at once
// (its answer took longer than the delay) is made too.
func (d *Dispatcher) Settle(ctx context.Context, now func() time.Time) ([]simulator.FiredAttempt, error) {
	var fired []simulator.FiredAttempt
	for {
		due, _, err := d.store.Due(ctx, now(), "", maxGroup, func(_, _ []byte) (take, hold bool) { return true, false })
		if err != nil || len(due) == 0 {
			return fired, err
		}
		recs := make([]simulator.AttemptRecord, len(due))
		made := make([]bool, len(due))
		next := make(chan int)
		var wg sync.WaitGroup
		for range min(d.cfg.Workers, len(due)) {
			wg.Add(1)
			go func() {
				defer wg.Done()
				for i := range next {
					recs[i], made[i] = d.attempt(ctx, due[i])
				}
			}()
		}
		for i := range due {
			next <- i
		}
		close(next)
		wg.Wait()
		if err := ctx.Err(); err != nil {
			return fired, err
		}
		kept := recs[:0:0]
		for i, r := range recs {
			if made[i] {
				kept = append(kept, r)
				fired = append(fired, simulator.Fired(due[i], r))
			}
		}
		if len(kept) < len(recs) {
			return fired, fmt.Errorf("settle: %d of %d due attempts could not be made", len(recs)-len(kept), len(recs))
		}
		if err := d.store.RecordAttempts(context.WithoutCancel(ctx), kept); err != nil {
			return fired, err
		}
	}
}

func (d *Dispatcher) observe(inst, outcome string) {
	if d.cfg.Observe != nil {
		d.cfg.Observe(inst, outcome)
	}
}

// maxGroup bounds how many attempt records one transaction commits; the records channel holds
// two groups. When another process's writes make fdatasync slow (commits of 150–630 ms were
// seen on the shared benchmark machine), the records of ~half a second of attempts wait in the
// channel instead of the workers waiting on it; at most 8,000 records, each with the first 4 KiB
// of an answer at most.
const maxGroup = 4000

// commitGap is the least time between the starts of two commits while attempts keep finishing:
// records gather meanwhile, so a busy dispatcher commits a few large groups instead of many
// small ones (each commit writes the freelist and a meta page and waits for two fdatasyncs,
// whatever its size). A record that finds the committer idle that long is committed at once.
const commitGap = 10 * time.Millisecond

// record commits attempt records in groups: one durable bbolt transaction for everything that
// arrived while the previous one was committing or gathering, so throughput does not wait on
// one fsync per attempt. A delivery stays in flight (never fetched again) until its record is
// committed and no walk of the outbox begun before the commit is under way (inflight); a crash
// before the commit leaves it pending in the outbox, to be attempted again (at-least-once).
func (d *Dispatcher) record(ctx context.Context) {
	group := make([]simulator.AttemptRecord, 0, maxGroup)
	var began time.Time
	for r := range d.records {
		// Let records gather: a commit begins at least commitGap after the one before. The
		// channel holds more than arrive meanwhile, so no worker waits for it.
		if wait := commitGap - time.Since(began); wait > 0 {
			time.Sleep(wait)
		}
		group = append(group[:0], r)
	fill:
		for len(group) < maxGroup {
			select {
			case r, more := <-d.records:
				if !more {
					break fill
				}
				group = append(group, r)
			default:
				break fill
			}
		}
		began = time.Now()
		err := d.store.RecordAttempts(context.WithoutCancel(ctx), group)
		if err != nil {
			d.cfg.Log.Error("record attempts", slog.Int("n", len(group)), slog.Any("err", err))
		}
		// Recorded, a delivery may be fetched again: look now if one is to be retried (its
		// retry may be due already: the clock may have moved) or was left pending.
		retry := err != nil
		for _, r := range group {
			d.inflight.remove(r.DeliveryID)
			retry = retry || r.Next != nil
		}
		if retry {
			d.Wake()
		}
	}
}

// maxResponse is how much of a callback's answer an attempt keeps.
const maxResponse = 4 << 10

// Send makes one signed POST of body to url, as simulator.CallbackTarget gives it, and reports
// it as an attempt: StatusCode when the callback answered (any status, 3xx included, never
// followed), Error otherwise. The signature header is sent once the institution has a secret
// (one v1 entry per active secret).
func (d *Dispatcher) Send(ctx context.Context, url string, body []byte, eventID string, secrets []string) simulator.Attempt {
	ctx, cancel := context.WithTimeout(ctx, d.cfg.Timeout)
	defer cancel()
	start := time.Now()
	a := simulator.Attempt{At: d.cfg.Clock.Now()}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, simulator.CallbackTarget(url), bytes.NewReader(body))
	if err != nil {
		a.Error = "bad callback url: " + err.Error()
		return a
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("User-Agent", "partnersim-webhooks/1")
	req.Header.Set(signature.HeaderID, eventID)
	if len(secrets) > 0 {
		a.Signature = signature.Sign(a.At, body, secrets...)
		req.Header.Set(signature.HeaderSignature, a.Signature)
	}
	resp, err := d.client.Do(req)
	if err != nil {
		a.LatencyMS = ms(time.Since(start))
		a.Error = attemptError(err, d.cfg.Timeout)
		return a
	}
	head, _ := d.responses.Get().(*[maxResponse]byte)
	if head == nil {
		head = new([maxResponse]byte)
	}
	n, _ := io.ReadFull(resp.Body, head[:])
	_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, 1<<20))
	resp.Body.Close()
	a.LatencyMS = ms(time.Since(start))
	a.StatusCode = resp.StatusCode
	a.ResponseBody = string(head[:n])
	d.responses.Put(head)
	return a
}

func ms(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }

// attemptError words a transport failure for the delivery log.
func attemptError(err error, timeout time.Duration) string {
	if errors.Is(err, context.DeadlineExceeded) {
		return fmt.Sprintf("timeout after %s", timeout)
	}
	var ue interface{ Unwrap() error }
	if errors.As(err, &ue) && ue.Unwrap() != nil {
		return ue.Unwrap().Error()
	}
	return err.Error()
}
