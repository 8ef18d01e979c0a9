package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"math"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/spf13/cobra"
	"github.com/tidwall/gjson"
)

// scenarioExample is scenario --help's example: a scenario and an institution of the default
// fixtures.
const scenarioExample = "  partnersim scenario list\n  partnersim scenario run onboarding-approved --institution ins_harbor --wait"

// newScenarioCmd is `partnersim scenario list|run`.
func newScenarioCmd() *cobra.Command {
	return newGroupCmd("scenario", "list or run a fixture scenario in a running sandbox",
		scenarioExample,
		newScenarioListCmd(), newScenarioRunCmd(), newScenarioShowCmd())
}

func newScenarioListCmd() *cobra.Command {
	cmd := &cobra.Command{Use: "list", Short: "list the fixture scenarios with their steps", Args: func(cmd *cobra.Command, args []string) error {
		if len(args) > 0 {
			return fmt.Errorf("scenario list takes no arguments, got %q", args)
		}
		return nil
	}}
	c := controlFlags(cmd.Flags())
	cmd.RunE = func(cmd *cobra.Command, _ []string) error {
		if err := c.ready(); err != nil {
			return err
		}
		res, printed, err := c.answer(cmd.Context(), cmd.OutOrStdout(), http.MethodGet, "/_sandbox/scenarios", nil)
		if err != nil || printed {
			return err
		}
		for _, s := range res.Get("scenarios").Array() {
			fmt.Fprintf(cmd.OutOrStdout(), "%-24s %2d steps  %s\n", s.Get("name"), s.Get("steps").Int(), s.Get("description"))
		}
		return nil
	}
	return cmd
}

func newScenarioRunCmd() *cobra.Command {
	cmd := &cobra.Command{Use: "run NAME [--institution ID] [--wait [--advance]]", Short: "play a scenario; delayed steps wait on the virtual clock",
		Args: exactlyOne("partnersim scenario run NAME [--institution ID] [--wait [--advance]]: give one NAME (partnersim scenario list shows the names)")}
	c := controlFlags(cmd.Flags())
	inst := cmd.Flags().String("institution", "", "institution to play it in (default: the fixtures' first)")
	wait := cmd.Flags().Bool("wait", false, "wait until the run has ended, printing each step as it runs (delayed steps wait on the virtual clock, which runs at wall-clock speed: --advance, or trigger clock, moves it)")
	advance := cmd.Flags().Bool("advance", false, "with --wait: advance the run's institution's virtual clock through the run's last step, so it ends at once")
	timeout := cmd.Flags().Duration("timeout", 10*time.Minute, "with --wait: give up after this long (it says what is still pending)")
	cmd.RunE = func(cmd *cobra.Command, args []string) error {
		if err := c.ready(); err != nil {
			return err
		}
		if *advance && !*wait {
			return errors.New("--advance plays a run through while --wait follows it: give both")
		}
		return runScenario(cmd.Context(), c, args[0], *inst, scenarioWait{on: *wait, advance: *advance, timeout: *timeout}, cmd.OutOrStdout(), cmd.ErrOrStderr())
	}
	return cmd
}

// scenarioWait is how scenario run --wait follows a run: on at all, advancing the clock
// through the run itself, and for how long at most.
type scenarioWait struct {
	on, advance bool
	timeout     time.Duration
}

// runScenario starts scenario name and prints its steps as they stand, or, with wait, as
// each runs until the run has ended.
func runScenario(ctx context.Context, c *controlClient, name, inst string, wait scenarioWait, stdout, stderr io.Writer) error {
	var body any
	if inst != "" {
		body = map[string]string{"institution_id": inst}
	}
	res, err := c.do(ctx, http.MethodPost, "/_sandbox/scenarios/"+url.PathEscape(name)+"/run", body)
	if err != nil {
		return err
	}
	runID := res.Get("run_id").String()
	if !c.json() {
		fmt.Fprintf(stdout, "scenario %s run %s: %s\n", name, runID, res.Get("status"))
	}
	printed := 0 // steps end in order: print each once, as it ends (all: pending ones too)
	printSteps := func(res gjson.Result, all bool) {
		steps := res.Get("steps").Array()
		for ; printed < len(steps); printed++ {
			if !all && steps[printed].Get("status").String() == "pending" {
				return
			}
			fmt.Fprintln(stdout, "  "+stepLine(printed, steps[printed]))
		}
	}
	if wait.on {
		if res.Get("status").String() == "running" {
			secs := c.secondsToStep(ctx, res, true)
			if wait.advance {
				body := map[string]any{"seconds": secs, "institution_id": res.Get("bound.institution").String()}
				if _, err := c.do(ctx, http.MethodPost, "/_sandbox/clock/advance", body); err != nil {
					return err
				}
				if !c.json() {
					fmt.Fprintf(stdout, "advanced %s's virtual clock by %ds to play the run through\n", res.Get("bound.institution"), secs)
				}
			} else if !c.json() {
				fmt.Fprintf(stderr, "waiting for the run to end: its steps wait on the virtual clock, which runs at wall-clock speed; %s finishes it now (or give --advance)\n",
					c.hint("trigger", "clock", "--seconds", strconv.FormatInt(secs, 10)))
			}
		}
		deadline := time.Now().Add(wait.timeout)
		for res.Get("status").String() == "running" {
			if !c.json() {
				printSteps(res, false)
			}
			if time.Now().After(deadline) {
				return c.stillPending(ctx, res, "still running after --timeout "+wait.timeout.String())
			}
			if err := pause(ctx, 200*time.Millisecond); err != nil {
				return c.stillPending(context.WithoutCancel(ctx), res, "stopped waiting ("+err.Error()+")")
			}
			if res, err = c.do(ctx, http.MethodGet, "/_sandbox/scenarios/runs/"+url.PathEscape(runID), nil); err != nil {
				return err
			}
		}
	}
	if c.json() {
		printJSON(stdout, res)
	} else {
		printSteps(res, true)
		if wait.on {
			fmt.Fprintf(stdout, "run %s %s\n", runID, res.Get("status"))
		}
		if res.Get("status").String() == "running" {
			fmt.Fprintf(stdout, "later steps wait on the virtual clock: %s plays the next now\n", c.clockHint(ctx, res))
		}
	}
	if res.Get("status").String() == "failed" {
		return errReported
	}
	return nil
}

// stepLine says what a scenario step did or will do.
func stepLine(i int, st gjson.Result) string {
	return fmt.Sprintf("%d. %-18s %-8s due %s", i+1, st.Get("action"), st.Get("status"), st.Get("due_at")) + stepOutcome(st, " ")
}

// stepOutcome is what a played scenario step gave: " → result", then its event and its error
// where it has them, each after sep.
func stepOutcome(st gjson.Result, sep string) string {
	out := ""
	if r := st.Get("result").String(); r != "" {
		out += " → " + r
	}
	if e := st.Get("event_id").String(); e != "" {
		out += sep + "event " + e
	}
	if e := st.Get("error").String(); e != "" {
		out += sep + "error: " + e
	}
	return out
}

// clockHint is the trigger clock command that makes a running run's next step due.
func (c *controlClient) clockHint(ctx context.Context, run gjson.Result) string {
	return c.hint("trigger", "clock", "--seconds", strconv.FormatInt(c.secondsToStep(ctx, run, false), 10))
}

// secondsToStep is how far the virtual clock must move (whole seconds, at least one) for a
// running run's next pending step to be due, or with last its last one: the run's end.
func (c *controlClient) secondsToStep(ctx context.Context, run gjson.Result, last bool) int64 {
	secs := int64(1)
	clock, err := c.do(ctx, http.MethodGet, "/_sandbox/clock?limit=1", nil)
	if err != nil {
		return secs
	}
	now, _ := time.Parse(time.RFC3339Nano, clock.Get("virtual_now").String())
	for _, st := range run.Get("steps").Array() {
		if st.Get("status").String() != "pending" {
			continue
		}
		if due, err := time.Parse(time.RFC3339Nano, st.Get("due_at").String()); err == nil {
			secs = max(secs, int64(math.Ceil(due.Sub(now).Seconds())))
		}
		if !last {
			break
		}
	}
	return secs
}

// stillPending is the error of a --wait that ended before its run: what it says, the steps
// still pending, and the commands that finish the run and show it.
func (c *controlClient) stillPending(ctx context.Context, run gjson.Result, why string) error {
	var pending []string
	for i, st := range run.Get("steps").Array() {
		if st.Get("status").String() == "pending" {
			pending = append(pending, fmt.Sprintf("%d. %s due %s", i+1, st.Get("action"), st.Get("due_at")))
		}
	}
	id := run.Get("run_id").String()
	return fmt.Errorf("scenario run %s %s; pending: %s. %s finishes it; %s shows it", id, why, strings.Join(pending, ", "),
		c.hint("trigger", "clock", "--seconds", strconv.FormatInt(c.secondsToStep(ctx, run, true), 10)), c.hint("scenario", "show", id))
}

func newScenarioShowCmd() *cobra.Command {
	return idCmd("show RUN_ID", "print a scenario run's steps as they stand",
		"partnersim scenario show RUN_ID: give the run id scenario run printed", http.MethodGet,
		func(id string) string { return "/_sandbox/scenarios/runs/" + url.PathEscape(id) },
		func(_ context.Context, w io.Writer, _ *controlClient, _ string, res gjson.Result) {
			fmt.Fprintf(w, "scenario %s run %s: %s\n", res.Get("scenario"), res.Get("run_id"), res.Get("status"))
			for i, st := range res.Get("steps").Array() {
				fmt.Fprintln(w, "  "+stepLine(i, st))
			}
		})
}
