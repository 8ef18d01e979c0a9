package main

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"time"

	"github.com/tidwall/gjson"
)

// triggerClock advances the virtual clock — the process-wide one, or with --institution that
// institution's — and says what the advance played: each delivery attempt and scenario step
// that fell due within its window, in the order they ran (decisions D8), as the sandbox
// answers them.
func triggerClock(ctx context.Context, c *controlClient, a *triggerArgs, w io.Writer) error {
	body := map[string]any{"seconds": a.seconds}
	if a.institution != "" {
		body["institution_id"] = a.institution
	}
	res, err := c.do(ctx, http.MethodPost, "/_sandbox/clock/advance", body)
	if err != nil {
		return err
	}
	if c.json() {
		printJSON(w, res)
		return nil
	}
	printAdvance(w, res, a.institution)
	return nil
}

// printAdvance writes an advance's answer for people: where the clock stands, then one line
// per attempt and per step it played.
func printAdvance(w io.Writer, res gjson.Result, inst string) {
	if inst != "" {
		fmt.Fprintf(w, "virtual clock of %s now %s\n", inst, res.Get("now"))
	} else {
		fmt.Fprintf(w, "virtual clock now %s\n", res.Get("now"))
	}
	attempts, steps := res.Get("attempts").Array(), res.Get("steps").Array()
	if len(attempts) == 0 && len(steps) == 0 {
		fmt.Fprintln(w, "nothing came due: no delivery attempt and no scenario step")
	}
	if len(attempts) > 0 {
		fmt.Fprintf(w, "%d delivery attempt(s) came due:\n", len(attempts))
	}
	for _, at := range attempts {
		fmt.Fprintf(w, "  %s\n", firedLine(at))
	}
	if len(steps) > 0 {
		fmt.Fprintf(w, "%d scenario step(s) came due:\n", len(steps))
	}
	for _, st := range steps {
		fmt.Fprintf(w, "  %s run %s step %d %s at %s: %s%s\n", st.Get("scenario"), st.Get("run_id"), st.Get("step").Int(), st.Get("action"),
			st.Get("due_at"), st.Get("status"), stepOutcome(st, ", "))
	}
}

// firedLine says what one played attempt did: its delivery, event, number and virtual time,
// the callback's answer, and where the delivery stands after it.
func firedLine(at gjson.Result) string {
	answer := at.Get("error").String()
	if code := at.Get("status_code"); code.Exists() {
		answer = "HTTP " + code.String()
	}
	line := fmt.Sprintf("delivery %s attempt %d at %s (event %s): %s, %s", at.Get("delivery_id"), at.Get("attempt").Int(), at.Get("due_at"),
		at.Get("event_id"), answer, at.Get("status"))
	if next := at.Get("next_attempt_at").String(); next != "" {
		line += ", next attempt " + next
	}
	return line
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
