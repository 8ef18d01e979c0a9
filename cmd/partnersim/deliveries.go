package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strconv"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"
	"github.com/tidwall/gjson"
)

// deliveryQuery is `partnersim deliveries`' filters, each the query parameter of GET
// /_sandbox/deliveries it sets.
type deliveryQuery struct {
	status, event, subscription, institution, eventType, user, since, until, cursor string
	limit                                                                           int
}

// values is the query string of q; flags are the flags that give it, for a hint.
func (q *deliveryQuery) values() (url.Values, []string) {
	v := url.Values{}
	var flags []string
	for _, p := range []struct{ param, flag, value string }{
		{"status", "status", q.status}, {"event_id", "event", q.event}, {"subscription_id", "subscription", q.subscription},
		{"institution_id", "institution", q.institution}, {"event_type", "event-type", q.eventType}, {"platform_id", "user", q.user},
		{"created_at_start", "since", q.since}, {"created_at_end", "until", q.until},
	} {
		if p.value != "" {
			v.Set(p.param, p.value)
			flags = append(flags, "--"+p.flag, p.value)
		}
	}
	v.Set("limit", strconv.Itoa(q.limit))
	if q.limit != 20 {
		flags = append(flags, "--limit", strconv.Itoa(q.limit))
	}
	if q.cursor != "" {
		v.Set("cursor", q.cursor)
	}
	return v, flags
}

// newDeliveriesCmd is `partnersim deliveries`: the delivery log, a page at a time, or followed
// as attempts are made (--follow).
func newDeliveriesCmd() *cobra.Command {
	var q deliveryQuery
	var follow bool
	var every time.Duration
	cmd := &cobra.Command{
		Use:   "deliveries [--status S] [--event ID] [--institution ID] [--event-type T] [--follow]",
		Short: "list the webhook deliveries of a running sandbox, newest first, or follow new attempts",
		Example: "  partnersim deliveries --status failed\n  partnersim deliveries --institution ins_harbor --event-type kyc -o json\n" +
			"  partnersim deliveries --follow",
		Args: noArgs,
	}
	c := controlFlags(cmd.Flags())
	fs := cmd.Flags()
	fs.StringVar(&q.status, "status", "", "pending, delivered or failed")
	fs.StringVar(&q.event, "event", "", "one event's deliveries (evt_…)")
	fs.StringVar(&q.subscription, "subscription", "", "one subscription's deliveries (sub_…)")
	fs.StringVar(&q.institution, "institution", "", "one institution's deliveries (ins_…)")
	fs.StringVar(&q.eventType, "event-type", "", "kyc or transaction")
	fs.StringVar(&q.user, "user", "", "deliveries of events about one user (platform id usr_…)")
	fs.StringVar(&q.since, "since", "", "created at or after this time (RFC 3339, or a date)")
	fs.StringVar(&q.until, "until", "", "created before this time (RFC 3339, or a date)")
	fs.StringVar(&q.cursor, "cursor", "", "go on from an earlier page (the command it printed passes it)")
	fs.IntVar(&q.limit, "limit", 20, "deliveries a page (1 to 1000); with --follow, how many of the newest are watched")
	fs.BoolVar(&follow, "follow", false, "print each new attempt as it is made, until interrupted (Ctrl-C)")
	fs.DurationVar(&every, "interval", time.Second, "with --follow: how often to look")
	cmd.RunE = func(cmd *cobra.Command, _ []string) error {
		if err := c.ready(); err != nil {
			return err
		}
		if q.limit < 1 || q.limit > 1000 {
			return fmt.Errorf("--limit %d: 1 to 1000", q.limit)
		}
		if follow {
			if q.cursor != "" {
				return errors.New("--follow watches the newest deliveries: it takes no --cursor")
			}
			return followDeliveries(cmd.Context(), c, &q, max(every, 100*time.Millisecond), cmd.OutOrStdout(), cmd.ErrOrStderr())
		}
		v, flags := q.values()
		w := cmd.OutOrStdout()
		res, printed, err := c.answer(cmd.Context(), w, http.MethodGet, "/_sandbox/deliveries?"+v.Encode(), nil)
		if err != nil || printed {
			return err
		}
		ds := res.Get("deliveries").Array()
		if len(ds) == 0 {
			fmt.Fprintln(w, "no deliveries match")
		} else {
			printDeliveryTable(w, ds)
		}
		if next := res.Get("next_cursor").String(); next != "" {
			fmt.Fprintf(w, "more: %s\n", c.hint(append(append([]string{"deliveries"}, flags...), "--cursor", next)...))
		}
		return nil
	}
	cmd.AddCommand(newDeliveriesRedeliverCmd())
	return cmd
}

// newDeliveriesRedeliverCmd sends one delivery's event again (same id and bytes) to that
// delivery's subscription only, and prints the new delivery's first attempt. `partnersim events
// resend` sends an event to every enabled subscription of its type.
func newDeliveriesRedeliverCmd() *cobra.Command {
	return idCmd("redeliver DELIVERY_ID", "send one delivery's event again, to that delivery's subscription only",
		"partnersim deliveries redeliver DELIVERY_ID: give one delivery id (partnersim deliveries lists them)", http.MethodPost,
		func(id string) string { return "/_sandbox/deliveries/" + url.PathEscape(id) + "/redeliver" },
		func(ctx context.Context, w io.Writer, c *controlClient, old string, res gjson.Result) {
			id := res.Get("delivery_id").String()
			fmt.Fprintf(w, "delivery %s sent again as %s, to its subscription only (partnersim events resend %s sends to every subscription)\n", old, id, res.Get("event_id"))
			c.showDeliveries(ctx, w, res.Get("event_id").String(), id)
		})
}

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

// printDeliveryTable writes deliveries as a table for people, times in UTC.
func printDeliveryTable(w io.Writer, ds []gjson.Result) {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "CREATED (UTC)\tDELIVERY\tEVENT\tTYPE\tINSTITUTION\tSTATUS\tATTEMPTS\tLAST ATTEMPT\tNEXT ATTEMPT (VIRTUAL)\tURL")
	for _, d := range ds {
		last := "-"
		if atts := d.Get("attempts").Array(); len(atts) > 0 {
			last = attemptResult(atts[len(atts)-1])
		} else if e := d.Get("error").String(); e != "" {
			last = e
		}
		next := "-"
		if at := d.Get("next_attempt_at").String(); at != "" {
			next = utcSeconds(at)
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\t%d\t%s\t%s\t%s\n", utcSeconds(d.Get("created_at").String()), d.Get("delivery_id"), d.Get("event_id"),
			d.Get("event_type"), d.Get("institution_id"), d.Get("status"), d.Get("attempts.#").Int(), last, next, d.Get("url"))
	}
	tw.Flush()
}

// utcSeconds renders a control-plane timestamp to the second, in UTC (as given when it is not
// one).
func utcSeconds(ts string) string {
	t, err := time.Parse(time.RFC3339Nano, ts)
	if err != nil {
		return ts
	}
	return t.UTC().Format("2006-01-02 15:04:05Z")
}

// followDeliveries prints every attempt made from now on to the newest q.limit deliveries that
// match q, one line each (one JSON object a line with -o json), until ctx ends.
func followDeliveries(ctx context.Context, c *controlClient, q *deliveryQuery, every time.Duration, stdout, stderr io.Writer) error {
	v, _ := q.values()
	path := "/_sandbox/deliveries?" + v.Encode()
	seen := map[string]int64{} // delivery id → attempts printed
	first := true
	for {
		res, err := c.do(ctx, http.MethodGet, path, nil)
		if ctx.Err() != nil {
			return nil // interrupted: following ends there
		}
		if err != nil {
			return err
		}
		ds := res.Get("deliveries").Array()
		for i := len(ds) - 1; i >= 0; i-- { // oldest first, so lines come in the order made
			d := ds[i]
			id := d.Get("delivery_id").String()
			atts := d.Get("attempts").Array()
			from, known := seen[id]
			seen[id] = int64(len(atts))
			if first {
				continue // what was there before following began
			}
			if !known {
				from = 0
			}
			for n := from; n < int64(len(atts)); n++ {
				printAttempt(stdout, c.json(), d, atts[n], n+1)
			}
		}
		if first {
			fmt.Fprintf(stderr, "following new delivery attempts at %s (Ctrl-C to stop)\n", c.base)
			first = false
		}
		if len(seen) > 10*q.limit { // forget what fell off the watched page
			keep := map[string]int64{}
			for _, d := range ds {
				keep[d.Get("delivery_id").String()] = seen[d.Get("delivery_id").String()]
			}
			seen = keep
		}
		if err := pause(ctx, every); err != nil {
			return nil
		}
	}
}

// printAttempt writes one attempt of d (the n-th) as a line, or as one JSON object.
func printAttempt(w io.Writer, asJSON bool, d, a gjson.Result, n int64) {
	if asJSON {
		fmt.Fprintf(w, `{"delivery_id":%s,"event_id":%s,"event_type":%s,"institution_id":%s,"url":%s,"attempt":%d,"attempt_detail":%s,"status":%s}`+"\n",
			d.Get("delivery_id").Raw, d.Get("event_id").Raw, d.Get("event_type").Raw, d.Get("institution_id").Raw, d.Get("url").Raw, n,
			a.Get("@ugly").Raw, d.Get("status").Raw)
		return
	}
	fmt.Fprintf(w, "%s  %s  %s %s  attempt %d: %s  -> %s  now %s\n", utcSeconds(a.Get("at").String()), d.Get("delivery_id"), d.Get("event_id"),
		d.Get("event_type"), n, attemptResult(a), d.Get("url"), d.Get("status"))
}
