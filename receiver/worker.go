package receiver

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"
	"time"
)

// work takes the queue in order until ctx ends.
func (r *Receiver) work(ctx context.Context) {
	for ctx.Err() == nil {
		seq, id, ok, err := r.store.head()
		switch {
		case err != nil:
			r.cfg.Logger.Error("receiver: reading the queue", "err", err)
			r.wait(ctx, r.cfg.RetryBackoff)
		case !ok:
			select {
			case <-r.wake:
			case <-ctx.Done():
			}
		default:
			r.processQueued(ctx, seq, id)
		}
	}
}

// wait blocks for d or until ctx ends.
func (r *Receiver) wait(ctx context.Context, d time.Duration) {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
	case <-ctx.Done():
	}
}

// processQueued runs one queued event to a final state, retrying with backoff. If ctx ends
// first, the event stays queued, an attempt cut short uncounted.
func (r *Receiver) processQueued(ctx context.Context, seq []byte, id string) {
	rec, err := r.store.record(id, true)
	if err != nil {
		r.cfg.Logger.Error("receiver: dropping an unreadable queue entry", "event_id", id, "err", err)
		if err := r.store.dropQueued(seq); err != nil {
			r.cfg.Logger.Error("receiver: dropping a queue entry", "event_id", id, "err", err)
			r.wait(ctx, r.cfg.RetryBackoff)
		}
		return
	}
	ev := Event{Body: []byte(rec.Body)}
	if err := json.Unmarshal(ev.Body, &ev.Envelope); err != nil { // parsed once already, at acceptance
		err = r.finishRecord(rec, seq, StateFailed, "body no longer parses: "+err.Error())
		r.logIf(err, id)
		return
	}
	backoff := r.cfg.RetryBackoff
	for {
		resource, err := r.attempt(ctx, ev)
		if err != nil && ctx.Err() != nil {
			return // cut short by Close: not a failure of the event
		}
		rec.Attempts++
		if err == nil {
			rec.Resource = resource
			r.logIf(r.finishRecord(rec, seq, StateProcessed, ""), id)
			return
		}
		reason := fmt.Sprintf("attempt %d: %v", rec.Attempts, err)
		if isPermanent(err) || rec.Attempts >= r.cfg.MaxAttempts {
			r.cfg.Logger.Warn("receiver: processing failed", "event_id", id, "attempts", rec.Attempts, "err", err)
			r.logIf(r.finishRecord(rec, seq, StateFailed, reason), id)
			return
		}
		rec.Reason = reason
		r.logIf(r.store.save(rec, seq, false), id)
		r.wait(ctx, backoff)
		if ctx.Err() != nil {
			return
		}
		backoff = min(2*backoff, time.Minute)
	}
}

// finishRecord stores rec's final state and then tells Config.OnDone (only once it is stored,
// so what is printed is what the inspection API shows).
func (r *Receiver) finishRecord(rec Record, seq []byte, state State, reason string) error {
	now := r.cfg.Now().UTC()
	rec.State, rec.Reason, rec.FinishedAt = state, reason, &now
	if err := r.store.save(rec, seq, true); err != nil {
		return err
	}
	if r.cfg.OnDone != nil {
		r.cfg.OnDone(rec)
	}
	return nil
}

func (r *Receiver) logIf(err error, id string) {
	if err != nil {
		r.cfg.Logger.Error("receiver: saving a record", "event_id", id, "err", err)
	}
}

// attempt refetches the event's resource (when an API is configured) and hands it to Process.
func (r *Receiver) attempt(ctx context.Context, ev Event) (json.RawMessage, error) {
	if r.cfg.APIBaseURL != "" {
		res, err := r.refetch(ctx, ev.Links.Self)
		if err != nil {
			return nil, err
		}
		ev.Resource = res
	}
	if r.cfg.Process != nil {
		if err := r.cfg.Process(ctx, ev); err != nil {
			return nil, fmt.Errorf("process: %w", err)
		}
	}
	return ev.Resource, nil
}

// refetch GETs links.self from the API with the API key. The link must be a path: the key is
// never sent anywhere but APIBaseURL. A 4xx other than 408 and 429 is permanent.
func (r *Receiver) refetch(ctx context.Context, self string) (json.RawMessage, error) {
	if !strings.HasPrefix(self, "/") || strings.HasPrefix(self, "//") {
		return nil, Permanent(fmt.Errorf("refetch: links.self %q is not a path on the API", self))
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, r.cfg.APIBaseURL+self, nil)
	if err != nil {
		return nil, Permanent(fmt.Errorf("refetch: %w", err))
	}
	req.Header.Set("x-api-key", r.cfg.APIKey)
	req.Header.Set("Accept", "application/json")
	resp, err := r.cfg.HTTPClient.Do(req)
	if err != nil {
		return nil, fmt.Errorf("refetch: %w", err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(io.LimitReader(resp.Body, 4<<20))
	if err != nil {
		return nil, fmt.Errorf("refetch %s: reading the response: %w", self, err)
	}
	if resp.StatusCode/100 != 2 {
		err := fmt.Errorf("refetch %s: status %d: %s", self, resp.StatusCode, body[:min(len(body), 512)])
		if resp.StatusCode/100 == 4 && resp.StatusCode != http.StatusRequestTimeout && resp.StatusCode != http.StatusTooManyRequests {
			return nil, Permanent(err)
		}
		return nil, err
	}
	if !json.Valid(body) {
		return nil, errors.New("refetch " + self + ": the response is not JSON")
	}
	return body, nil
}
