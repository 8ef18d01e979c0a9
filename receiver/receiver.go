package receiver

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"sync"
	"time"
	"unicode/utf8"

	"github.com/partnersim/partnersim/simulator/webhook/signature"
)

// Receiver is a webhook endpoint (ServeHTTP) with its store, its processing worker and its
// inspection API (Inspector). It is safe for concurrent use.
type Receiver struct {
	cfg    Config
	store  *store
	faults faults

	wake      chan struct{}
	stop      context.CancelFunc
	stopped   <-chan struct{} // closed when Close begins: ends injected delays
	worker    sync.WaitGroup
	closeOnce sync.Once
	closeErr  error
}

// Open opens (creating if needed) the receiver's bbolt file at path and starts the worker,
// which first takes up any event acknowledged but not processed before the last shutdown.
func Open(path string, cfg Config) (*Receiver, error) {
	cfg, err := cfg.withDefaults()
	if err != nil {
		return nil, err
	}
	st, err := openStore(path, cfg.MaxArrivals)
	if err != nil {
		return nil, err
	}
	ctx, cancel := context.WithCancel(context.Background())
	r := &Receiver{cfg: cfg, store: st, wake: make(chan struct{}, 1), stop: cancel, stopped: ctx.Done()}
	r.faults.set(cfg.Faults)
	r.worker.Go(func() { r.work(ctx) })
	return r, nil
}

// Close stops the worker (an event being processed stays queued for the next Open), then
// closes the file. Deliveries still in flight are answered 500.
func (r *Receiver) Close() error {
	r.closeOnce.Do(func() {
		r.stop()
		r.worker.Wait()
		r.closeErr = r.store.close()
	})
	return r.closeErr
}

// Faults returns the injected failures in force (FailFirst is what is left of it).
func (r *Receiver) Faults() Faults { return r.faults.get() }

// SetFaults replaces the injected failures; the zero Faults switches them off.
func (r *Receiver) SetFaults(f Faults) error {
	if err := f.Validate(); err != nil {
		return err
	}
	r.faults.set(f)
	return nil
}

// reply is the body of every answer to a delivery.
type reply struct {
	Verdict Verdict `json:"verdict"`
	Reason  string  `json:"reason,omitempty"`
}

// ServeHTTP is the webhook endpoint: POST only. It answers 200 for a new or duplicate event,
// 400 (413 for an oversized body) with the reason for a delivery that fails verification, the
// injected status under a fault, and 500 when the event could not be stored.
func (r *Receiver) ServeHTTP(w http.ResponseWriter, req *http.Request) {
	if req.Method != http.MethodPost {
		w.Header().Set("Allow", http.MethodPost)
		writeJSON(w, http.StatusMethodNotAllowed, map[string]string{"detail": "Method Not Allowed"})
		return
	}
	a := r.receive(req)
	if r.cfg.OnEvent != nil {
		r.cfg.OnEvent(a)
	}
	writeJSON(w, a.StatusCode, reply{Verdict: a.Verdict, Reason: a.Reason})
}

// receive decides a delivery's answer and records it, in decisions D11's order: faults,
// signature (before the body is parsed), envelope, header id, then dedupe and store.
func (r *Receiver) receive(req *http.Request) Arrival {
	a := Arrival{ReceivedAt: r.cfg.Now().UTC(), HeaderID: req.Header.Get(signature.HeaderID)}
	body, err := io.ReadAll(http.MaxBytesReader(nil, req.Body, r.cfg.MaxBodyBytes))
	a.Body = string(body[:min(len(body), 4096)])
	if err != nil {
		if _, tooLarge := errors.AsType[*http.MaxBytesError](err); tooLarge {
			return r.finish(a, VerdictRefused, http.StatusRequestEntityTooLarge, fmt.Sprintf("body exceeds %d bytes", r.cfg.MaxBodyBytes))
		}
		return r.finish(a, VerdictRefused, http.StatusBadRequest, "reading body: "+err.Error())
	}

	if err := r.delay(req.Context()); err != nil {
		return r.finish(a, VerdictFault, http.StatusServiceUnavailable, "injected delay cut short: "+err.Error())
	}
	if status, reason, ok := r.faults.take(); ok {
		return r.finish(a, VerdictFault, status, reason)
	}

	err = signature.Verify(req.Header.Get(signature.HeaderSignature), body, r.cfg.Secrets, r.cfg.Tolerance, r.cfg.Now())
	if err != nil {
		return r.finish(a, VerdictRefused, http.StatusBadRequest, err.Error())
	}
	var env Envelope
	if err := json.Unmarshal(body, &env); err != nil {
		return r.finish(a, VerdictRefused, http.StatusBadRequest, "body is not a JSON event: "+err.Error())
	}
	if env.EventID == "" {
		return r.finish(a, VerdictRefused, http.StatusBadRequest, "body has no event_id")
	}
	a.EventID, a.EventType, a.IsTest = env.EventID, env.EventType, env.IsTest
	switch {
	case a.HeaderID == "":
		return r.finish(a, VerdictRefused, http.StatusBadRequest, signature.HeaderID+" header is missing")
	case a.HeaderID != env.EventID:
		return r.finish(a, VerdictRefused, http.StatusBadRequest,
			fmt.Sprintf("%s %q differs from the body's event_id %q", signature.HeaderID, a.HeaderID, env.EventID))
	}

	rec := Record{EventID: env.EventID, EventType: env.EventType, IsTest: env.IsTest, ReceivedAt: a.ReceivedAt}
	rec.State, rec.Reason = classify(env)
	if rec.State != StateQueued {
		rec.FinishedAt = &a.ReceivedAt
	}
	a.StatusCode = http.StatusOK
	if err := r.store.accept(rec, body, &a); err != nil {
		return r.finish(a, VerdictError, http.StatusInternalServerError, "storing the event: "+err.Error())
	}
	if rec.State == StateQueued && a.Verdict == VerdictAccepted {
		select {
		case r.wake <- struct{}{}:
		default: // the worker already has a wake-up pending
		}
	}
	return a
}

// MaxKept bounds the ids kept from a delivery that was not accepted, and MaxReason the reason
// answered and logged for it (which may quote them); the body is kept to 4 KiB.
const (
	MaxKept   = 256
	MaxReason = 1024
)

// clip cuts s to n bytes at a rune boundary, marking the cut with "…".
func clip(s string, n int) string {
	if len(s) <= n {
		return s
	}
	n -= len("…")
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return s[:n] + "…"
}

// finish sets a's outcome and logs it; a log failure is reported but does not change the
// answer (the delivery itself stored nothing).
func (r *Receiver) finish(a Arrival, v Verdict, status int, reason string) Arrival {
	// What a refused delivery sent is untrusted: keep and print only so much of it.
	a.HeaderID, a.EventID = clip(a.HeaderID, MaxKept), clip(a.EventID, MaxKept)
	a.Verdict, a.StatusCode, a.Reason = v, status, clip(reason, MaxReason)
	if err := r.store.recordArrival(&a); err != nil {
		r.cfg.Logger.Error("receiver: recording an arrival", "verdict", v, "err", err)
	}
	return a
}

// delay waits out the injected delay, unless the sender gives up or the receiver closes.
func (r *Receiver) delay(ctx context.Context) error {
	d := time.Duration(r.faults.get().DelayMS) * time.Millisecond
	if d <= 0 {
		return nil
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	case <-r.stopped:
		return errors.New("receiver closing")
	}
}

// classify applies D11's filters: is_test events are never processed; transaction events only
// when data.status is "completed"; only kyc and transaction events are known.
func classify(env Envelope) (State, string) {
	switch {
	case env.IsTest:
		return StateSkipped, "is_test event: acknowledged, never processed"
	case env.EventType == "kyc":
		return StateQueued, ""
	case env.EventType == "transaction":
		var data struct {
			Status string `json:"status"`
		}
		if json.Unmarshal(env.Data, &data) != nil || data.Status != "completed" {
			return StateSkipped, fmt.Sprintf("transaction data.status is %q, not \"completed\"", data.Status)
		}
		return StateQueued, ""
	default:
		return StateSkipped, fmt.Sprintf("unknown event_type %q", env.EventType)
	}
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(v) // the status is sent; a failed write has no one to tell
}
