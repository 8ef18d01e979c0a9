package main

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"net/url"

	"github.com/spf13/cobra"
	"github.com/tidwall/gjson"
)

// newEventsCmd is `partnersim events resend EVENT_ID`.
func newEventsCmd() *cobra.Command {
	return newGroupCmd("events", "act on the events of a running sandbox: resend",
		"  partnersim events resend evt_…", newEventsResendCmd())
}

// newEventsResendCmd sends an event again (same event_id and bytes), a new delivery to each
// enabled subscription of its type, and prints their first attempts.
func newEventsResendCmd() *cobra.Command {
	return idCmd("resend EVENT_ID", "send an event again (same id and bytes) to its institution's subscriptions",
		"partnersim events resend EVENT_ID: give one event id (partnersim deliveries lists them)", http.MethodPost,
		func(id string) string { return "/_sandbox/events/" + url.PathEscape(id) + "/redeliver" },
		func(ctx context.Context, w io.Writer, c *controlClient, event string, res gjson.Result) {
			fmt.Fprintf(w, "event %s sent again: %d new deliveries\n", event, len(res.Get("deliveries").Array()))
			var ids []string
			for _, id := range res.Get("deliveries.#.delivery_id").Array() {
				ids = append(ids, id.String())
			}
			c.showDeliveries(ctx, w, event, ids...)
		})
}
