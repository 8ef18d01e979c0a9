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
	var deliveries []dueDelivery
	listed := before.Get("next_due").Array()
	for _, d := range listed {
		if t, err := time.Parse(time.RFC3339Nano, d.Get("next_attempt_at").String()); err == nil && !t.After(now) {
			deliveries = append(deliveries, dueDelivery{d.Get("delivery_id").String(), d.Get("event_id").String(), d.Get("attempts.#").Int()})
		}
	}
	var steps []dueStep
	for _, r := range runs.Get("runs").Array() {
		for i, st := range r.Get("steps").Array() {
			if t, err := time.Parse(time.RFC3339Nano, st.Get("due_at").String()); err == nil && st.Get("status").String() == "pending" && !t.After(now) {
				steps = append(steps, dueStep{r.Get("run_id").String(), r.Get("scenario").String(), i})
			}
		}
	}

	deadline := time.Now().Add(firedWait)
	attempted := make([]gjson.Result, len(deliveries))
	for i, d := range deliveries {
		if attempted[i], err = waitAttempt(ctx, c, d, deadline); err != nil {
			return err
		}
	}
	played := make([]gjson.Result, len(steps))
	for i, st := range steps {
		if played[i], err = waitStep(ctx, c, st, deadline); err != nil {
			return err
		}
	}

	if c.json() {
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
		}{Now: res.Get("now").String(), Deliveries: []json.RawMessage{}, Steps: []stepJSON{}}
		for _, d := range attempted {
			out.Deliveries = append(out.Deliveries, json.RawMessage(d.Raw))
		}
		for i, st := range played {
			out.Steps = append(out.Steps, stepJSON{steps[i].run, steps[i].scenario, steps[i].index + 1, json.RawMessage(st.Raw)})
		}
		b, err := json.Marshal(out)
		if err != nil {
			return err
		}
		printJSON(w, gjson.ParseBytes(b))
		return nil
	}
	fmt.Fprintf(w, "virtual clock now %s\n", res.Get("now"))
	if len(deliveries) == 0 && len(steps) == 0 {
		fmt.Fprintln(w, "nothing came due: no delivery attempt and no scenario step")
	}
	if len(deliveries) > 0 {
		fmt.Fprintf(w, "%d delivery attempt(s) came due:\n", len(deliveries))
	}
	for i, d := range attempted {
		fmt.Fprintf(w, "  %s (event %s)\n", deliveryLine(d), deliveries[i].event)
	}
	if len(listed) == 100 && len(deliveries) == 100 {
		fmt.Fprintf(w, "  … only the first 100 are listed: %s\n", c.hint("deliveries", "--status", "pending"))
	}
	if len(steps) > 0 {
		fmt.Fprintf(w, "%d scenario step(s) came due:\n", len(steps))
	}
	for i, st := range played {
		line := fmt.Sprintf("  %s run %s step %d %s: %s", steps[i].scenario, steps[i].run, steps[i].index+1, st.Get("action"), st.Get("status"))
		if r := st.Get("result").String(); r != "" {
			line += " → " + r
		}
		if e := st.Get("event_id").String(); e != "" {
			line += ", event " + e
		}
		if e := st.Get("error").String(); e != "" {
			line += ", error: " + e
		}
		fmt.Fprintln(w, line)
	}
	return nil
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
