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
	"time"

	"partnersim/simulator"
	"partnersim/simulator/webhook/signature"
)

// Store is what the dispatcher needs from the outbox.
type Store interface {
	// DueDeliveries returns up to limit due deliveries, in due order, passing over those skip
	// reports (given the delivery's id and subscription id, before it is decoded).
	DueDeliveries(ctx context.Context, now time.Time, limit int, skip func(id, subID string) bool) ([]*simulator.Delivery, error)
	NextDue(ctx context.Context) (time.Time, bool, error)
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
}

// Dispatcher drains the outbox.
type Dispatcher struct {
	store    Store
	cfg      Config
	client   *http.Client
	wake     chan struct{}
	inflight sync.Map
	records  chan simulator.AttemptRecord
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
	return &Dispatcher{store: store, cfg: cfg, client: client, wake: make(chan struct{}, 1),
		records: make(chan simulator.AttemptRecord, cfg.Workers*4)}
}

// Wake makes the dispatcher look for due deliveries now (after new events, or after the
// virtual clock moved).
func (d *Dispatcher) Wake() {
	select {
	case d.wake <- struct{}{}:
	default:
	}
}

// Run delivers until ctx ends. Deliveries in flight when it ends stay pending in the outbox
// and are attempted again by the next Run (at-least-once).
func (d *Dispatcher) Run(ctx context.Context) error {
	queue := newFairQueue(d.cfg.PerInstitution)
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
	defer func() {
		for _, dl := range queue.close() {
			d.inflight.Delete(dl.ID) // never attempted: fetched again by the next Run
		}
		wg.Wait()
		close(d.records)
		<-recorded
		d.records = make(chan simulator.AttemptRecord, d.cfg.Workers*4) // ready for another Run
	}()
	const batch = 256
	timer := time.NewTimer(0)
	defer timer.Stop()
	for {
		// Fetch what is not in flight (queued or being attempted) for institutions that do not
		// already have enough waiting: a backlog held back by its share costs a bounded scan.
		fetched := map[string]int{}
		skip := func(id, subID string) bool {
			if _, ok := d.inflight.Load(id); ok {
				return true
			}
			inst, full := queue.full(subID, fetched)
			if full {
				return true
			}
			if inst != "" {
				fetched[inst]++
			}
			return false
		}
		due, err := d.store.DueDeliveries(ctx, d.cfg.Clock.SchedulerNow(), batch, skip)
		if err != nil {
			if ctx.Err() != nil {
				return nil
			}
			d.cfg.Log.Error("outbox read failed", slog.Any("err", err))
		}
		for _, dl := range due {
			d.inflight.Store(dl.ID, struct{}{})
			queue.push(dl)
		}
		if len(due) == batch {
			continue
		}
		wait := time.Second
		if next, ok, err := d.store.NextDue(ctx); err == nil && ok {
			if w := next.Sub(d.cfg.Clock.SchedulerNow()); w > 0 && w < wait {
				wait = w
			}
		}
		timer.Reset(wait)
		select {
		case <-ctx.Done():
			return nil
		case <-d.wake:
		case <-timer.C:
		}
	}
}

// deliver makes one attempt of a delivery and records it with what comes next.
func (d *Dispatcher) deliver(ctx context.Context, dl *simulator.Delivery) {
	secrets, err := d.store.SigningSecrets(ctx, dl.InstitutionID)
	if err != nil {
		d.inflight.Delete(dl.ID)
		d.cfg.Log.Error("signing secrets", slog.String("delivery_id", dl.ID), slog.Any("err", err))
		return
	}
	started := d.cfg.Clock.SchedulerNow() // a retry's delay counts from here, however long the answer takes
	a := d.Send(ctx, dl.URL, dl.Body, dl.EventID, secrets.Active(d.cfg.Clock.Now()))
	if ctx.Err() != nil {
		d.inflight.Delete(dl.ID)
		return // shutting down: the delivery stays pending and is attempted after restart
	}
	r := dl.Outcome(a, d.cfg.Schedule, started)
	d.cfg.Log.Debug("webhook attempt", slog.String("delivery_id", dl.ID), slog.String("event_id", dl.EventID),
		slog.Int("attempt", len(dl.Attempts)+1), slog.Int("status_code", a.StatusCode), slog.String("error", a.Error),
		slog.Float64("latency_ms", a.LatencyMS), slog.Bool("delivered", r.OK))
	d.records <- r
}

// maxGroup bounds how many attempt records one transaction commits.
const maxGroup = 1000

// record commits attempt records in groups: one durable bbolt transaction for everything that
// arrived while the previous one was committing, so throughput does not wait on one fsync per
// attempt. A delivery stays in flight (never fetched again) until its record is committed; a
// crash before that leaves it pending in the outbox, to be attempted again (at-least-once).
func (d *Dispatcher) record(ctx context.Context) {
	group := make([]simulator.AttemptRecord, 0, maxGroup)
	for r := range d.records {
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
		if err := d.store.RecordAttempts(context.WithoutCancel(ctx), group); err != nil {
			d.cfg.Log.Error("record attempts", slog.Int("n", len(group)), slog.Any("err", err))
		}
		for _, r := range group {
			d.inflight.Delete(r.DeliveryID)
		}
		d.Wake()
	}
}

// maxResponse is how much of a callback's answer an attempt keeps.
const maxResponse = 4 << 10

// Send makes one signed POST of body to url and reports it as an attempt: StatusCode when the
// callback answered (any status, 3xx included, never followed), Error otherwise. The signature
// header is sent once the institution has a secret (one v1 entry per active secret).
func (d *Dispatcher) Send(ctx context.Context, url string, body []byte, eventID string, secrets []string) simulator.Attempt {
	ctx, cancel := context.WithTimeout(ctx, d.cfg.Timeout)
	defer cancel()
	start := time.Now()
	a := simulator.Attempt{At: d.cfg.Clock.Now()}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, url, bytes.NewReader(body))
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
	head, _ := io.ReadAll(io.LimitReader(resp.Body, maxResponse))
	_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, 1<<20))
	resp.Body.Close()
	a.LatencyMS = ms(time.Since(start))
	a.StatusCode = resp.StatusCode
	a.ResponseBody = string(head)
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
