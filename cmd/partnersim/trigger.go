package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
)

// triggerArgs holds every trigger's flag values; each kind defines the flags it reads.
type triggerArgs struct {
	kind                                                    string
	user, product, status, side, symbol, notional, quantity string
	recurring, txn, price, typ, amount                      string
	seconds                                                 int
	institution                                             string
}

// triggerKind is one `partnersim trigger KIND`: its flags, the flags it cannot do without, and
// the control-plane call it makes. One table row per kind, read by newTriggerCmd.
type triggerKind struct {
	name, short string
	flags       func(fs *pflag.FlagSet, a *triggerArgs)
	need        []string
	do          func(ctx context.Context, c *controlClient, a *triggerArgs, w io.Writer) error
}

// userFlag is --user, which every kind acting on a user takes.
func userFlag(fs *pflag.FlagSet, a *triggerArgs) {
	fs.StringVar(&a.user, "user", "", "platform id of the user (usr_…)")
}

// transactionFlag is --transaction, which fill, cancel and fail take.
func transactionFlag(fs *pflag.FlagSet, a *triggerArgs) {
	fs.StringVar(&a.txn, "transaction", "", "transaction id (txn_…)")
}

func triggerKinds() []triggerKind {
	return []triggerKind{
		{name: "kyc", short: "move a user's account to a KYC status (the kyc event and its deliveries)",
			flags: func(fs *pflag.FlagSet, a *triggerArgs) {
				userFlag(fs, a)
				fs.StringVar(&a.product, "product", "", "securities, robo, crypto or roth_ira")
				fs.StringVar(&a.status, "status", "", "the KYC status to move to")
			},
			need: []string{"user", "product", "status"}, do: triggerKYC},
		{name: "order", short: "place a pending order (fill it with trigger fill)",
			flags: func(fs *pflag.FlagSet, a *triggerArgs) {
				userFlag(fs, a)
				fs.StringVar(&a.product, "product", "securities", "product of the account that trades")
				fs.StringVar(&a.side, "side", "buy", "buy or sell")
				fs.StringVar(&a.symbol, "symbol", "", "symbol, e.g. AAPL")
				fs.StringVar(&a.notional, "notional", "", "dollar amount (a dollar order)")
				fs.StringVar(&a.quantity, "quantity", "", "share quantity (a share order)")
				fs.StringVar(&a.recurring, "recurring-order-id", "", "mark the order as part of a recurring plan")
			},
			need: []string{"user", "symbol"}, do: triggerOrder},
		{name: "robo", short: "place a pending robo deposit, withdrawal or rebalance",
			flags: func(fs *pflag.FlagSet, a *triggerArgs) {
				userFlag(fs, a)
				fs.StringVar(&a.typ, "type", "deposit", "deposit, withdrawal or rebalance")
				fs.StringVar(&a.amount, "amount", "", "amount of a deposit or withdrawal")
			},
			need: []string{"user"}, do: triggerRobo},
		{name: "fill", short: "fill a pending transaction (the transaction event and its deliveries)",
			flags: func(fs *pflag.FlagSet, a *triggerArgs) {
				transactionFlag(fs, a)
				fs.StringVar(&a.price, "price", "", "fill price (one order) or SYMBOL=PRICE,… (default: current prices)")
			},
			need: []string{"transaction"}, do: triggerEnd},
		{name: "cancel", short: "cancel a pending transaction", flags: transactionFlag, need: []string{"transaction"}, do: triggerEnd},
		{name: "fail", short: "fail a pending transaction", flags: transactionFlag, need: []string{"transaction"}, do: triggerEnd},
		{name: "clock", short: "advance the virtual clock, playing every retry and scenario step due on the way",
			flags: func(fs *pflag.FlagSet, a *triggerArgs) {
				fs.IntVar(&a.seconds, "seconds", 0, "seconds to advance the virtual clock (every retry and scenario step due within them runs, in order)")
				fs.StringVar(&a.institution, "institution", "", "advance only this institution's clock (ins_…)")
			},
			do: triggerClock},
	}
}

// newTriggerCmd is `partnersim trigger KIND`: one subcommand per row of triggerKinds.
func newTriggerCmd() *cobra.Command {
	var verbs []*cobra.Command
	for _, k := range triggerKinds() {
		a := &triggerArgs{kind: k.name}
		cmd := &cobra.Command{Use: k.name, Short: k.short, Args: noArgs}
		c := controlFlags(cmd.Flags())
		k.flags(cmd.Flags(), a)
		cmd.RunE = func(cmd *cobra.Command, _ []string) error {
			if err := c.ready(); err != nil {
				return err
			}
			var missing []error
			for _, name := range k.need {
				if cmd.Flags().Lookup(name).Value.String() == "" {
					missing = append(missing, fmt.Errorf("trigger %s needs --%s", k.name, name))
				}
			}
			if err := errors.Join(missing...); err != nil {
				return err
			}
			return k.do(cmd.Context(), c, a, cmd.OutOrStdout())
		}
		verbs = append(verbs, cmd)
	}
	return newGroupCmd("trigger", "make something happen in a running sandbox: kyc, order, robo, fill, cancel, fail, clock",
		"  partnersim trigger kyc --user usr_hfcu_0002 --product crypto --status approved\n  partnersim trigger clock --seconds 300",
		verbs...)
}

func triggerKYC(ctx context.Context, c *controlClient, a *triggerArgs, w io.Writer) error {
	res, printed, err := c.answer(ctx, w, http.MethodPost, "/_sandbox/users/"+url.PathEscape(a.user)+"/kyc", map[string]string{"product": a.product, "status": a.status})
	if err != nil || printed {
		return err
	}
	fmt.Fprintf(w, "kyc: the %s account of %s is now %s\n", res.Get("product"), a.user, res.Get("kyc_status"))
	c.showEvent(ctx, w, res.Get("event_id").String(), "kyc", "no event: a move into pending is not delivered")
	return nil
}

func triggerOrder(ctx context.Context, c *controlClient, a *triggerArgs, w io.Writer) error {
	body := map[string]any{"platform_id": a.user, "product": a.product, "side": a.side, "symbol": a.symbol}
	for k, v := range map[string]string{"notional": a.notional, "quantity": a.quantity, "recurring_order_id": a.recurring} {
		if v != "" {
			body[k] = v
		}
	}
	res, printed, err := c.answer(ctx, w, http.MethodPost, "/_sandbox/orders", body)
	if err != nil || printed {
		return err
	}
	fmt.Fprintf(w, "order %s placed (pending) in transaction %s\n", res.Get("order_id"), res.Get("transaction_id"))
	fmt.Fprintf(w, "fill it: %s\n", c.hint("trigger", "fill", "--transaction", res.Get("transaction_id").String()))
	return nil
}

func triggerRobo(ctx context.Context, c *controlClient, a *triggerArgs, w io.Writer) error {
	body := map[string]any{"platform_id": a.user, "product": "robo", "type": a.typ}
	if a.amount != "" {
		body["amount"] = a.amount
	}
	res, printed, err := c.answer(ctx, w, http.MethodPost, "/_sandbox/transactions", body)
	if err != nil || printed {
		return err
	}
	fmt.Fprintf(w, "robo %s %s placed (pending) with %d legs\n", a.typ, res.Get("transaction_id"), len(res.Get("orders").Array()))
	for _, o := range res.Get("orders").Array() {
		fmt.Fprintf(w, "  %s %s %s notional %s\n", o.Get("order_id"), o.Get("side"), o.Get("symbol"), o.Get("notional"))
	}
	fmt.Fprintf(w, "fill it: %s\n", c.hint("trigger", "fill", "--transaction", res.Get("transaction_id").String()))
	return nil
}

// triggerEnd is fill, cancel and fail: POST /_sandbox/transactions/{id}/{kind}.
func triggerEnd(ctx context.Context, c *controlClient, a *triggerArgs, w io.Writer) error {
	var body any
	if a.price != "" {
		p, err := parsePrice(a.price)
		if err != nil {
			return err
		}
		body = map[string]any{"price": p}
	}
	res, printed, err := c.answer(ctx, w, http.MethodPost, "/_sandbox/transactions/"+url.PathEscape(a.txn)+"/"+a.kind, body)
	if err != nil || printed {
		return err
	}
	fmt.Fprintf(w, "transaction %s is now %s\n", a.txn, res.Get("status"))
	for _, o := range res.Get("orders").Array() {
		fmt.Fprintf(w, "  %s %s %s quantity %s notional %s fee %s\n", o.Get("order_id"), o.Get("side"), o.Get("symbol"), o.Get("quantity"), o.Get("notional"), o.Get("fee"))
	}
	c.showEvent(ctx, w, res.Get("event_id").String(), "transaction", "no event: cancellations and failures are not delivered")
	return nil
}

// parsePrice reads "190.12" or "VTI=250.10,BND=72.40".
func parsePrice(s string) (any, error) {
	if !strings.Contains(s, "=") {
		return s, nil
	}
	m := map[string]string{}
	for _, kv := range strings.Split(s, ",") {
		k, v, ok := strings.Cut(kv, "=")
		if !ok || k == "" || v == "" {
			return nil, fmt.Errorf("--price %q: use 190.12 or SYMBOL=PRICE,SYMBOL=PRICE", s)
		}
		m[strings.TrimSpace(k)] = strings.TrimSpace(v)
	}
	return m, nil
}
