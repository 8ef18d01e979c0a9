package main

import (
	"fmt"
	"net/http"
	"net/url"

	"github.com/spf13/cobra"
)

// newEventsCmd is `partnersim events resend EVENT_ID`.
func newEventsCmd() *cobra.Command {
	return newGroupCmd("events", "act on the events of a running sandbox: resend",
		"  partnersim events resend evt_…", newEventsResendCmd())
}

// newEventsResendCmd sends an event again (same event_id and bytes), a new delivery to each
// enabled subscription of its type, and prints their first attempts.
func newEventsResendCmd() *cobra.Command {
	cmd := &cobra.Command{Use: "resend EVENT_ID", Short: "send an event again (same id and bytes) to its institution's subscriptions",
		Args: exactlyOne("partnersim events resend EVENT_ID: give one event id (partnersim deliveries lists them)")}
	c := controlFlags(cmd.Flags())
	cmd.RunE = func(cmd *cobra.Command, args []string) error {
		if err := c.ready(); err != nil {
			return err
		}
		w := cmd.OutOrStdout()
		res, printed, err := c.answer(cmd.Context(), w, http.MethodPost, "/_sandbox/events/"+url.PathEscape(args[0])+"/redeliver", nil)
		if err != nil || printed {
			return err
		}
		fmt.Fprintf(w, "event %s sent again: %d new deliveries\n", args[0], len(res.Get("deliveries").Array()))
		var ids []string
		for _, id := range res.Get("deliveries.#.delivery_id").Array() {
			ids = append(ids, id.String())
		}
		c.showDeliveries(cmd.Context(), w, args[0], ids...)
		return nil
	}
	return cmd
}
