package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"time"

	"github.com/tidwall/gjson"
)

// firedWait bounds how long trigger clock waits for what it made due: an attempt's timeout
// (10 s by default) and some.
const firedWait = 15 * time.Second

// dueDelivery is a delivery an advance made due, with its attempts before it.
type dueDelivery struct {
	id, event string
	attempts  int64
}

// dueStep is a scenario step an advance made due.
type dueStep struct {
	run, scenario string
	index         int
}

// fired is what an advance of the virtual clock made due, and what each did once it ran.
type fired struct {
	now        string // the virtual clock after the advance
	listed     int    // deliveries the clock listed as next due before it
	deliveries []dueDelivery
	attempted  []gjson.Result // each delivery's state after its attempt
	steps      []dueStep
	played     []gjson.Result // each step's outcome
}

// triggerClock advances the virtual clock and says what that made happen: the delivery
// attempts and the scenario steps that came due, each once it has run.
func triggerClock(ctx context.Context, c *controlClient, a *triggerArgs, w io.Writer) error {
	before, err := c.do(ctx, http.MethodGet, "/_sandbox/clock?limit=100", nil)
	if err != nil {
		return err
	}
	runs, err := c.do(ctx, http.MethodGet, "/_sandbox/scenarios/runs?status=running&limit=1000", nil)
	if err != nil {
		return err
	}
	res, err := c.do(ctx, http.MethodPost, "/_sandbox/clock/advance", map[string]int{"seconds": a.seconds})
	if err != nil {
		return err
	}
	now, err := time.Parse(time.RFC3339Nano, res.Get("now").String())
	if err != nil {
		return fmt.Errorf("the sandbox answered a clock it cannot have: %s", res.Raw)
	}
	f := cameDue(before, runs, now)
	f.now = res.Get("now").String()
	if err := f.wait(ctx, c); err != nil {
		return err
	}
	if c.json() {
		return f.printJSON(w)
	}
	f.print(w, c)
	return nil
}

// cameDue picks, from the clock's list of next due deliveries and the running scenario runs
// read before the advance, what the clock's move to now made due.
func cameDue(before, runs gjson.Result, now time.Time) *fired {
	f := &fired{}
	listed := before.Get("next_due").Array()
	f.listed = len(listed)
	for _, d := range listed {
		if t, err := time.Parse(time.RFC3339Nano, d.Get("next_attempt_at").String()); err == nil && !t.After(now) {
			f.deliveries = append(f.deliveries, dueDelivery{d.Get("delivery_id").String(), d.Get("event_id").String(), d.Get("attempts.#").Int()})
		}
	}
	for _, r := range runs.Get("runs").Array() {
		for i, st := range r.Get("steps").Array() {
			if t, err := time.Parse(time.RFC3339Nano, st.Get("due_at").String()); err == nil && st.Get("status").String() == "pending" && !t.After(now) {
				f.steps = append(f.steps, dueStep{r.Get("run_id").String(), r.Get("scenario").String(), i})
			}
		}
	}
	return f
}

// wait waits, up to firedWait in all, for each due delivery's attempt and each due step.
func (f *fired) wait(ctx context.Context, c *controlClient) error {
	deadline := time.Now().Add(firedWait)
	f.attempted = make([]gjson.Result, len(f.deliveries))
	for i, d := range f.deliveries {
		var err error
		if f.attempted[i], err = waitAttempt(ctx, c, d, deadline); err != nil {
			return err
		}
	}
	f.played = make([]gjson.Result, len(f.steps))
	for i, st := range f.steps {
		var err error
		if f.played[i], err = waitStep(ctx, c, st, deadline); err != nil {
			return err
		}
	}
	return nil
}

// printJSON writes what came due as one JSON object (--json).
func (f *fired) printJSON(w io.Writer) error {
	type stepJSON struct {
		RunID    string          `json:"run_id"`
		Scenario string          `json:"scenario"`
		Step     int             `json:"step"`
		Result   json.RawMessage `json:"result"`
	}
	out := struct {
		Now        string            `json:"now"`
		Deliveries []json.RawMessage `json:"deliveries"`
		Steps      []stepJSON        `json:"steps"`
	}{Now: f.now, Deliveries: []json.RawMessage{}, Steps: []stepJSON{}}
	for _, d := range f.attempted {
		out.Deliveries = append(out.Deliveries, json.RawMessage(d.Raw))
	}
	for i, st := range f.played {
		out.Steps = append(out.Steps, stepJSON{f.steps[i].run, f.steps[i].scenario, f.steps[i].index + 1, json.RawMessage(st.Raw)})
	}
	b, err := json.Marshal(out)
	if err != nil {
		return err
	}
	printJSON(w, gjson.ParseBytes(b))
	return nil
}

// print writes what came due for people: one line per attempt and per step.
func (f *fired) print(w io.Writer, c *controlClient) {
	fmt.Fprintf(w, "virtual clock now %s\n", f.now)
	if len(f.deliveries) == 0 && len(f.steps) == 0 {
		fmt.Fprintln(w, "nothing came due: no delivery attempt and no scenario step")
	}
	if len(f.deliveries) > 0 {
		fmt.Fprintf(w, "%d delivery attempt(s) came due:\n", len(f.deliveries))
	}
	for i, d := range f.attempted {
		fmt.Fprintf(w, "  %s (event %s)\n", deliveryLine(d), f.deliveries[i].event)
	}
	if f.listed == 100 && len(f.deliveries) == 100 {
		fmt.Fprintf(w, "  … only the first 100 are listed: %s\n", c.hint("deliveries", "--status", "pending"))
	}
	if len(f.steps) > 0 {
		fmt.Fprintf(w, "%d scenario step(s) came due:\n", len(f.steps))
	}
	for i, st := range f.played {
		fmt.Fprintf(w, "  %s run %s step %d %s: %s%s\n", f.steps[i].scenario, f.steps[i].run, f.steps[i].index+1, st.Get("action"), st.Get("status"), stepOutcome(st, ", "))
	}
}

// waitAttempt polls a due delivery until it has a new attempt or has ended, or the deadline.
func waitAttempt(ctx context.Context, c *controlClient, d dueDelivery, deadline time.Time) (gjson.Result, error) {
	for {
		res, err := c.do(ctx, http.MethodGet, "/_sandbox/deliveries?event_id="+url.QueryEscape(d.event), nil)
		if err != nil {
			return gjson.Result{}, err
		}
		got := gjson.Parse("null") // not listed: gone with a reset
		for _, x := range res.Get("deliveries").Array() {
			if x.Get("delivery_id").String() == d.id {
				got = x
			}
		}
		if got.Get("attempts.#").Int() > d.attempts || got.Get("status").String() == "failed" || time.Now().After(deadline) {
			return got, nil
		}
		if err := pause(ctx, 50*time.Millisecond); err != nil {
			return gjson.Result{}, err
		}
	}
}

// waitStep polls a due scenario step until it is no longer pending, or the deadline.
func waitStep(ctx context.Context, c *controlClient, st dueStep, deadline time.Time) (gjson.Result, error) {
	for {
		res, err := c.do(ctx, http.MethodGet, "/_sandbox/scenarios/runs/"+url.PathEscape(st.run), nil)
		if err != nil {
			return gjson.Result{}, err
		}
		got := res.Get(fmt.Sprintf("steps.%d", st.index))
		if !got.Exists() {
			got = gjson.Parse("null")
		}
		if got.Get("status").String() != "pending" || time.Now().After(deadline) {
			return got, nil
		}
		if err := pause(ctx, 50*time.Millisecond); err != nil {
			return gjson.Result{}, err
		}
	}
}

// pause waits d, or less when ctx ends (its error then).
func pause(ctx context.Context, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-t.C:
		return nil
	}
}
