package features

import (
	"errors"
	"fmt"
	"math"
	"net/http"
	"net/url"
	"regexp"
	"time"

	"github.com/cucumber/godog"
	"github.com/partnersim/partnersim/features/laws"
	"github.com/tidwall/gjson"
)

// The delivery log (GET /_sandbox/deliveries) says what a sandbox has sent and what it will
// send next: every attempt, and for a pending delivery the virtual-clock time of the next one.
// With a control plane the suite reads it to decide "nothing more arrived" instead of waiting for
// a quiet window: once no delivery of a receiver's subscriptions is due on the virtual clock and
// the log has recorded every attempt the receiver saw, nothing more can arrive until the clock
// moves (decisions D8, D9).

// loggedDelivery is one delivery of the log.
type loggedDelivery struct {
	ID, EventID, Status string
	Attempts            int
	Next                time.Time // zero unless pending
	Raw                 string
}

// deliveryLog reads the log's deliveries to the receiver's subscriptions (all events).
func (w *world) deliveryLog(r *receiver) ([]loggedDelivery, error) {
	var out []loggedDelivery
	for _, sub := range r.subs {
		res, err := w.control(http.MethodGet, "/_sandbox/deliveries?limit=1000&subscription_id="+url.QueryEscape(sub), nil, http.StatusOK)
		if err != nil {
			return nil, err
		}
		for _, d := range res.Get("deliveries").Array() {
			ld := loggedDelivery{ID: d.Get("delivery_id").String(), EventID: d.Get("event_id").String(),
				Status: d.Get("status").String(), Attempts: len(d.Get("attempts").Array()), Raw: d.Raw}
			if n := d.Get("next_attempt_at"); n.Type == gjson.String {
				t, err := time.Parse(time.RFC3339Nano, n.Str)
				if err != nil {
					return nil, fmt.Errorf("control plane: next_attempt_at %q is not RFC 3339: %w", n.Str, err)
				}
				ld.Next = t
			}
			out = append(out, ld)
		}
	}
	return out, nil
}

// virtualNow is the virtual time of the scenario's institution: its clock advanced by nothing.
// An adapter without a virtual clock to move has one time for every institution, which GET
// /_sandbox/clock (part of the delivery log's capability) reads.
func (w *world) virtualNow() (time.Time, error) {
	if w.run.can("virtual_clock") {
		return w.advance(0)
	}
	return w.controlTime(http.MethodGet, "/_sandbox/clock?limit=1", nil, "virtual_now")
}

// advance moves the virtual clock by secs and returns its new time: the clock of the
// scenario's active institution (decisions D9), so a run never moves another tenant's schedule;
// the process-wide one before the scenario has an institution.
func (w *world) advance(secs int64) (time.Time, error) {
	body := map[string]any{"seconds": secs}
	if in := w.insts[w.active]; in != nil && in.ID != "" {
		body["institution_id"] = in.ID
	}
	return w.controlTime(http.MethodPost, "/_sandbox/clock/advance", body, "now")
}

// controlTime makes a control-plane call answering 200 and reads the time at field of its answer.
func (w *world) controlTime(method, path string, body any, field string) (time.Time, error) {
	r, err := w.control(method, path, body, http.StatusOK)
	if err != nil {
		return time.Time{}, err
	}
	t, err := time.Parse(time.RFC3339Nano, r.Get(field).String())
	if err != nil {
		return time.Time{}, fmt.Errorf("control plane: %s %s answered %s %s: %w", method, path, field, orAbsent(r.Get(field)), err)
	}
	return t, nil
}

// settled waits (bounded by the run's wait) until the log has recorded every attempt the
// receiver saw and none of the receiver's deliveries is due on the virtual clock; it returns
// the number of attempts logged. From then on nothing more arrives until the clock moves.
func (w *world) settled(r *receiver) (int, error) {
	deadline := time.Now().Add(w.run.opts.Wait)
	for {
		got, _ := r.snapshot()
		log, err := w.deliveryLog(r)
		if err != nil {
			return 0, err
		}
		now, err := w.virtualNow()
		if err != nil {
			return 0, err
		}
		attempts, due := 0, ""
		for _, d := range log {
			attempts += d.Attempts
			if d.Status == "pending" && !d.Next.After(now) {
				due = d.Raw
			}
		}
		if due == "" && attempts >= len(got) {
			return attempts, nil
		}
		if time.Now().After(deadline) {
			if due != "" {
				return 0, fmt.Errorf("expected no delivery to %q to be due on the virtual clock (%s), got %s", r.name, now.Format(time.RFC3339Nano), truncate(due, 400))
			}
			return 0, fmt.Errorf("expected the delivery log to record the %d attempts %q received, got %d", len(got), r.name, attempts)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// checkExactly checks the receiver got exactly want deliveries and nothing more is on its way:
// from the delivery log where there is a control plane, else by a bounded quiet window.
func (w *world) checkExactly(r *receiver, want int) ([]*delivery, error) {
	if !w.run.can("delivery_log") {
		// No delivery log to ask: the receiver must stay silent for a quiet window (at most the
		// run's wait). Deliveries of one change are queued together, so a straggler is quick.
		got := r.waitQuiet(w.ctx, quiet, w.run.opts.Wait)
		if len(got) != want {
			return got, fmt.Errorf("expected receiver %q to get exactly %d deliveries, got %d: %s", r.name, want, len(got), describeDeliveries(got))
		}
		return got, nil
	}
	attempts, err := w.settled(r)
	if err != nil {
		return nil, err
	}
	got, _ := r.snapshot()
	if attempts != want || len(got) != want {
		return got, fmt.Errorf("expected receiver %q to get exactly %d deliveries, got %d (the delivery log records %d attempts): %s",
			r.name, want, len(got), attempts, describeDeliveries(got))
	}
	return got, nil
}

// retrySchedule checks the whole retry schedule of the current event's delivery to a receiver
// that refuses every attempt (decisions D8): after each attempt the log's next attempt lies
// exactly the schedule's delay after the attempt started on the virtual clock, the attempt does
// not come a second early and comes when due, every attempt carries the same id and body bytes
// with a fresh signature, and after the last the delivery is failed for good. The scenario must
// be @serial: nothing else may move the clock meanwhile.
//
// The virtual clock runs on with the wall clock between moves, so the next attempt is ahead of
// the clock by the delay less however long ago the attempt started — which is as long as the
// suite takes to notice the attempt and read the clock, unbounded on a loaded machine. The
// step bounds it by what it observed instead (retryAhead): the attempt started before it
// arrived at the receiver, at most sendSlack before, and the clock was read between two
// instants of the suite's wall clock. Only differences of the suite's wall clock and of the
// sandbox's virtual clock are compared, so a deployment whose clock is skewed is judged alike.
func (w *world) retrySchedule(recv, schedule string) error {
	if !hasTag(w.tags, "serial") {
		return errors.New("the retry schedule step moves the process-wide virtual clock: tag the scenario @serial")
	}
	r, err := w.receiver(recv)
	if err != nil {
		return err
	}
	var delays []time.Duration
	for _, s := range splitList(unq(schedule)) {
		d, err := time.ParseDuration(s)
		if err != nil {
			return fmt.Errorf("schedule entry %q: %w", s, err)
		}
		delays = append(delays, d)
	}
	for k, d := range delays {
		if err := w.retryWhenDue(r, k+1, len(delays)+1, d); err != nil {
			return err
		}
	}
	return w.retriesEnd(r, len(delays)+1, delays[len(delays)-1])
}

// retryWhenDue checks the retry after attempt (of all the schedule's attempts) lies delay
// after the attempt on the virtual clock, does not come a second early, comes when due, and
// resends the first attempt's id and bytes.
func (w *world) retryWhenDue(r *receiver, attempt, of int, delay time.Duration) error {
	ld, err := w.waitLogged(r, attempt)
	if err != nil {
		return err
	}
	if ld.Status != "pending" {
		return fmt.Errorf("expected the delivery to be pending after attempt %d of %d, got %s", attempt, of, truncate(ld.Raw, 400))
	}
	seen, _ := r.snapshot()
	if len(seen) < attempt {
		return fmt.Errorf("the delivery log records attempt %d, but %q got %d: %s", attempt, r.name, len(seen), describeDeliveries(seen))
	}
	arrived := seen[attempt-1].At
	read := time.Now() // the virtual clock reads at least this late
	now, err := w.virtualNow()
	if err != nil {
		return err
	}
	read2 := time.Now() // and at most this late
	rem := ld.Next.Sub(now)
	if lo, hi := retryAhead(delay, read.Sub(arrived), read2.Sub(arrived)); rem <= lo || rem > hi {
		return fmt.Errorf("expected retry %d %s after attempt %d (no jitter): the next attempt more than %s and at most %s ahead of the virtual clock, read %s to %s after the attempt arrived; got it %s ahead (%s)",
			attempt, delay, attempt, lo.Round(time.Millisecond), hi.Round(time.Millisecond), read.Sub(arrived).Round(time.Millisecond),
			read2.Sub(arrived).Round(time.Millisecond), rem.Round(time.Millisecond), truncate(ld.Raw, 300))
	}
	if err := w.retryNotEarly(r, attempt, rem, read); err != nil {
		return err
	}
	if _, err := w.advance(1); err != nil {
		return err
	}
	got, err := r.waitCount(w.ctx, attempt+1, w.run.opts.Wait)
	if err != nil {
		return fmt.Errorf("retry %d (due %s after attempt %d): %w", attempt, delay, attempt, err)
	}
	if err := sameDelivery(got[0], got[attempt]); err != nil {
		return fmt.Errorf("attempt %d: %w", attempt+1, err)
	}
	return nil
}

// retryNotEarly moves the virtual clock to a second before the retry after attempt, due rem
// ahead of the clock as read at read, and checks no attempt came.
//
// The virtual clock runs on with the wall clock after an advance: the retry is left margin
// ahead. On a machine so loaded that the margin passes before the checks are done, an attempt
// then is on time, not early: the check is inconclusive, not failed — and so it is when the
// retry fell due while the suite was reading (under a second ahead).
func (w *world) retryNotEarly(r *receiver, attempt int, rem time.Duration, read time.Time) error {
	secs := int64(math.Ceil(rem.Seconds()))
	if secs < 1 {
		return nil
	}
	margin := rem - time.Duration(secs-1)*time.Second
	if _, err := w.advance(secs - 1); err != nil {
		return err
	}
	early, earlyErr := w.waitLogged(r, attempt)
	before, _ := r.snapshot()
	if inTime := time.Since(read) < margin; !inTime {
		return nil
	}
	if earlyErr != nil || early.Attempts != attempt {
		return fmt.Errorf("expected no attempt a second before retry %d was due, got %v %s", attempt, earlyErr, truncate(early.Raw, 300))
	}
	if len(before) != attempt {
		return fmt.Errorf("expected %d attempts a second before retry %d was due, %q got %d", attempt, attempt, r.name, len(before))
	}
	return nil
}

// retriesEnd checks the delivery is failed for good after its last attempt: nothing more comes
// once the last delay has passed too, and every attempt was signed when it was sent.
func (w *world) retriesEnd(r *receiver, last int, lastDelay time.Duration) error {
	ld, err := w.waitLogged(r, last)
	if err != nil {
		return err
	}
	if ld.Status != "failed" || ld.Attempts != last {
		return fmt.Errorf("expected the delivery to be failed after %d attempts, got %s", last, truncate(ld.Raw, 400))
	}
	if _, err := w.advance(int64(lastDelay / time.Second)); err != nil {
		return err
	}
	if _, err := w.checkExactly(r, last); err != nil {
		return err
	}
	w.event = nil
	got, _ := r.snapshot()
	for i, d := range got {
		s, err := laws.ParseSignature(d.signature())
		if err != nil {
			return fmt.Errorf("attempt %d: %w", i+1, err)
		}
		if skew := d.At.Sub(s.Time()); skew > sendSlack || skew < -sendSlack {
			return fmt.Errorf("expected attempt %d to be signed with a fresh t (the wall clock when it was sent), got t=%s, %s before it arrived", i+1, s.T, skew.Round(time.Millisecond))
		}
	}
	return nil
}

// sendSlack bounds how long an attempt takes from its start on the sandbox to its arrival at
// the receiver, and how far a signature's t may be from the arrival.
const sendSlack = 2 * time.Second

// retryAhead bounds how far ahead of the virtual clock a retry delay after an attempt's start
// may lie, the clock read between sinceBefore and sinceAfter after the attempt arrived at the
// receiver (the suite's wall clock). The clock ran on with the wall clock from the start, which
// came at most sendSlack before the arrival: the retry is ahead by more than delay less
// sinceAfter and sendSlack, and by at most delay less sinceBefore — plus a millisecond, as the
// log and the clock are rendered to the microsecond.
func retryAhead(delay, sinceBefore, sinceAfter time.Duration) (lo, hi time.Duration) {
	return delay - sinceAfter - sendSlack, delay - sinceBefore + time.Millisecond
}

// waitLogged polls the log until the receiver's one delivery has at least n attempts recorded.
func (w *world) waitLogged(r *receiver, n int) (loggedDelivery, error) {
	deadline := time.Now().Add(w.run.opts.Wait)
	var last loggedDelivery
	for {
		log, err := w.deliveryLog(r)
		if err != nil {
			return last, err
		}
		if len(log) > 1 {
			return last, fmt.Errorf("expected one delivery to %q, the log has %d", r.name, len(log))
		}
		if len(log) == 1 {
			last = log[0]
			if last.Attempts >= n {
				return last, nil
			}
		}
		if time.Now().After(deadline) {
			return last, fmt.Errorf("expected the delivery log to record attempt %d to %q, got %s", n, r.name, orNone(last.Raw))
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// sameDelivery checks a retry carries the first attempt's id and body bytes.
func sameDelivery(first, d *delivery) error {
	if a, b := first.Header.Get("X-Partner-Webhook-Id"), d.Header.Get("X-Partner-Webhook-Id"); a == "" || a != b {
		return fmt.Errorf("expected the retry to reuse X-Partner-Webhook-Id %q, got %q", a, b)
	}
	if string(first.Body) != string(d.Body) {
		return fmt.Errorf("expected the retry to send the same body bytes, got %s, first was %s", truncate(string(d.Body), 200), truncate(string(first.Body), 200))
	}
	return nil
}

// controlAs calls the control plane with a literal token (or none) and records the answer as
// the scenario's current response, for scenarios about the control plane itself.
func (w *world) controlAs(method, path string, body []byte, token *string) error {
	if !w.run.sandbox() {
		return errors.New("this step needs the control plane (--sandbox-url)")
	}
	p, err := w.expand(path)
	if err != nil {
		return err
	}
	if err := w.needCapability(method, p); err != nil {
		return err
	}
	return w.controlRequest(w.run.opts.SandboxURL, method, p, body, token)
}

func (w *world) controlRequest(root, method, path string, body []byte, token *string) error {
	hdr := http.Header{}
	if token != nil {
		hdr.Set("x-sandbox-token", *token)
	}
	ct := ""
	if body != nil {
		ct = "application/json"
	}
	_, err := w.doHeaders(method, root+path, body, ct, hdr, authNone)
	return err
}

// controlRefusing calls the control plane without its token (or with a wrong one), which
// needs none of its capabilities; a run given no control plane skips the scenario.
func (w *world) controlRefusing(method, path string, token *string) error {
	p, err := w.expand(path)
	if err != nil {
		return err
	}
	if !w.run.sandbox() {
		// Without --sandbox-url the run knows no control plane: whatever the base URL's origin
		// serves under /_sandbox/ is no operation the run was given to check.
		w.skip = "the run was given no control plane (--sandbox-url): the control plane's own rules are checked only with it"
		return godog.ErrSkip
	}
	w.noteCapability(capabilityOf(method, p))
	return w.controlRequest(w.run.opts.SandboxURL, method, p, nil, token)
}

// controlCallJSON calls the control plane with its token and a JSON body, its {variables}
// expanded, and keeps the answer as the response.
func (w *world) controlCallJSON(method, path string, doc *godog.DocString) error {
	b, err := w.expand(doc.Content)
	if err != nil {
		return err
	}
	tok := w.run.opts.SandboxToken
	return w.controlAs(method, unq(path), []byte(b), &tok)
}

func (w *world) controlNoToken(method, path string) error {
	return w.controlRefusing(method, unq(path), nil)
}

func (w *world) controlWithToken(method, path, token string) error {
	t, err := w.expand(unq(token))
	if err != nil {
		return err
	}
	if t == w.run.opts.SandboxToken {
		return w.controlAs(method, unq(path), nil, &t)
	}
	return w.controlRefusing(method, unq(path), &t)
}

// tryKYC asks the control plane to move an account and keeps its answer (e.g. a 409).
func (w *world) tryKYC(product, alias, status string) error {
	pid, err := w.platformID(alias)
	if err != nil {
		return err
	}
	tok := w.run.opts.SandboxToken
	body := fmt.Sprintf(`{"product":%q,"status":%q}`, unq(product), unq(status))
	return w.controlAs(http.MethodPost, "/_sandbox/users/"+url.PathEscape(pid)+"/kyc", []byte(body), &tok)
}

// keyMatches checks an issued key's plaintext against a pattern (decisions D3's key format).
func (w *world) keyMatches(name, pattern string) error {
	k, ok := w.keys[unq(name)]
	if !ok {
		return fmt.Errorf("no key named %q in this scenario", unq(name))
	}
	re, err := regexp.Compile(unq(pattern))
	if err != nil {
		return err
	}
	if !re.MatchString(k) {
		return fmt.Errorf("expected the key %q to match %s, got %q", unq(name), unq(pattern), k)
	}
	return nil
}
