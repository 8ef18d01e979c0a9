package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"

	"github.com/spf13/cobra"
)

// newScenarioCmd is `partnersim scenario list|run`.
func newScenarioCmd() *cobra.Command {
	return newGroupCmd("scenario", "list or run a fixture scenario in a running sandbox",
		"  partnersim scenario list\n  partnersim scenario run onboarding --institution inst_hfcu",
		newScenarioListCmd(), newScenarioRunCmd())
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
		res, err := c.do(cmd.Context(), http.MethodGet, "/_sandbox/scenarios", nil)
		if err != nil {
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
	const usage = "usage: partnersim scenario run NAME [--institution ID]"
	cmd := &cobra.Command{Use: "run NAME [--institution ID]", Short: "play a scenario; delayed steps wait on the virtual clock", Args: func(cmd *cobra.Command, args []string) error {
		if len(args) != 1 {
			return errors.New(usage + ": give one NAME (partnersim scenario list shows the names)")
		}
		return nil
	}}
	c := controlFlags(cmd.Flags())
	inst := cmd.Flags().String("institution", "", "institution to play it in (default: the fixtures' first)")
	cmd.RunE = func(cmd *cobra.Command, args []string) error {
		if err := c.ready(); err != nil {
			return err
		}
		return runScenario(cmd.Context(), c, args[0], *inst, cmd.OutOrStdout())
	}
	return cmd
}

// runScenario starts scenario name and prints its steps as they stand.
func runScenario(ctx context.Context, c *controlClient, name, inst string, stdout io.Writer) error {
	var body any
	if inst != "" {
		body = map[string]string{"institution_id": inst}
	}
	res, err := c.do(ctx, http.MethodPost, "/_sandbox/scenarios/"+url.PathEscape(name)+"/run", body)
	if err != nil {
		return err
	}
	fmt.Fprintf(stdout, "scenario %s run %s: %s\n", name, res.Get("run_id"), res.Get("status"))
	for i, st := range res.Get("steps").Array() {
		line := fmt.Sprintf("  %d. %-18s %-8s due %s", i+1, st.Get("action"), st.Get("status"), st.Get("due_at"))
		if r := st.Get("result").String(); r != "" {
			line += " → " + r
		}
		if e := st.Get("event_id").String(); e != "" {
			line += " event " + e
		}
		if e := st.Get("error").String(); e != "" {
			line += " error: " + e
		}
		fmt.Fprintln(stdout, line)
	}
	if res.Get("status").String() == "running" {
		fmt.Fprintln(stdout, "later steps wait on the virtual clock: partnersim trigger clock --seconds N plays them now")
	}
	if res.Get("status").String() == "failed" {
		return errReported
	}
	return nil
}
