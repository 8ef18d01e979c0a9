package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/tidwall/gjson"

	"partnersim/fixtures"
)

// controlClient speaks to a running sandbox's control plane.
type controlClient struct {
	base  string
	token string
	http  *http.Client
}

// controlFlags adds --sandbox-url and --sandbox-token to fs.
func controlFlags(fs *flag.FlagSet) *controlClient {
	c := &controlClient{http: &http.Client{Timeout: 30 * time.Second}}
	fs.StringVar(&c.base, "sandbox-url", "http://127.0.0.1:8080", "base URL of the running sandbox")
	fs.StringVar(&c.token, "sandbox-token", "", "control-plane token (default: the default fixtures' token; serve prints it)")
	return c
}

func (c *controlClient) ready() error {
	if c.token == "" {
		if set, err := fixtures.Open(fixtures.Default()); err == nil {
			c.token = set.SandboxToken
		}
	}
	if c.token == "" {
		return errors.New("no sandbox token: pass --sandbox-token (partnersim serve prints it)")
	}
	c.base = strings.TrimRight(c.base, "/")
	return nil
}

// do sends one control-plane request and returns the answer, turning a non-2xx into an error
// that quotes the sandbox's detail.
func (c *controlClient) do(ctx context.Context, method, path string, body any) (gjson.Result, error) {
	var rd io.Reader
	if body != nil {
		b, err := json.Marshal(body)
		if err != nil {
			return gjson.Result{}, err
		}
		rd = bytes.NewReader(b)
	}
	req, err := http.NewRequestWithContext(ctx, method, c.base+path, rd)
	if err != nil {
		return gjson.Result{}, err
	}
	req.Header.Set("x-sandbox-token", c.token)
	req.Header.Set("Content-Type", "application/json")
	resp, err := c.http.Do(req)
	if err != nil {
		return gjson.Result{}, fmt.Errorf("%s %s: %w (is `partnersim serve` running at %s?)", method, path, err, c.base)
	}
	defer resp.Body.Close()
	raw, _ := io.ReadAll(io.LimitReader(resp.Body, 8<<20))
	res := gjson.ParseBytes(raw)
	if resp.StatusCode >= 300 {
		d := res.Get("detail")
		msg := d.String()
		if d.IsArray() {
			var parts []string
			for _, it := range d.Array() {
				parts = append(parts, fmt.Sprintf("%s: %s", it.Get("loc").String(), it.Get("msg").String()))
			}
			msg = strings.Join(parts, "; ")
		}
		return res, fmt.Errorf("%s %s: %d %s", method, path, resp.StatusCode, msg)
	}
	return res, nil
}

// showDeliveries waits briefly for an event's first attempts and prints them.
func (c *controlClient) showDeliveries(ctx context.Context, w io.Writer, eventID string) {
	if eventID == "" {
		return
	}
	var ds gjson.Result
	deadline := time.Now().Add(3 * time.Second)
	for {
		res, err := c.do(ctx, http.MethodGet, "/_sandbox/deliveries?event_id="+url.QueryEscape(eventID), nil)
		if err != nil {
			fmt.Fprintf(w, "  deliveries: %v\n", err)
			return
		}
		ds = res.Get("deliveries")
		pending := false
		for _, d := range ds.Array() {
			pending = pending || len(d.Get("attempts").Array()) == 0 && d.Get("status").String() == "pending"
		}
		if !pending || time.Now().After(deadline) {
			break
		}
		time.Sleep(100 * time.Millisecond)
	}
	if len(ds.Array()) == 0 {
		fmt.Fprintln(w, "  no deliveries: the institution has no enabled subscription for this event type")
		return
	}
	for _, d := range ds.Array() {
		line := fmt.Sprintf("  delivery %s -> %s: %s", d.Get("delivery_id"), d.Get("url"), d.Get("status"))
		if atts := d.Get("attempts").Array(); len(atts) > 0 {
			a := atts[len(atts)-1]
			if a.Get("status_code").Exists() {
				line += fmt.Sprintf(" (attempt %d: HTTP %d in %.1fms)", len(atts), a.Get("status_code").Int(), a.Get("latency_ms").Float())
			} else {
				line += fmt.Sprintf(" (attempt %d: %s)", len(atts), a.Get("error"))
			}
		}
		if n := d.Get("next_attempt_at"); n.Exists() && n.Type != gjson.Null && len(d.Get("attempts").Array()) > 0 {
			line += ", next attempt " + n.String()
		}
		fmt.Fprintln(w, line)
	}
}

func runTrigger(ctx context.Context, args []string, getenv func(string) string, stdout, stderr io.Writer) error {
	const usage = "usage: partnersim trigger kyc|order|robo|fill|cancel|fail|clock [flags] (add -h for a kind's flags)"
	if len(args) > 0 && isHelp(args[0]) {
		fmt.Fprintln(stdout, usage)
		return nil
	}
	if len(args) == 0 {
		return errors.New(usage)
	}
	kind := args[0]
	fs := flag.NewFlagSet("partnersim trigger "+kind, flag.ContinueOnError)
	fs.SetOutput(stderr)
	c := controlFlags(fs)
	var (
		user, product, status, side, symbol, notional, quantity, recurring, txn, price, typ, amount string
		seconds                                                                                     int
	)
	switch kind {
	case "kyc":
		fs.StringVar(&user, "user", "", "platform id of the user (usr_…)")
		fs.StringVar(&product, "product", "", "securities, robo, crypto or roth_ira")
		fs.StringVar(&status, "status", "", "the KYC status to move to")
	case "order":
		fs.StringVar(&user, "user", "", "platform id of the user (usr_…)")
		fs.StringVar(&product, "product", "securities", "product of the account that trades")
		fs.StringVar(&side, "side", "buy", "buy or sell")
		fs.StringVar(&symbol, "symbol", "", "symbol, e.g. AAPL")
		fs.StringVar(&notional, "notional", "", "dollar amount (a dollar order)")
		fs.StringVar(&quantity, "quantity", "", "share quantity (a share order)")
		fs.StringVar(&recurring, "recurring-order-id", "", "mark the order as part of a recurring plan")
	case "robo":
		fs.StringVar(&user, "user", "", "platform id of the user (usr_…)")
		fs.StringVar(&typ, "type", "deposit", "deposit, withdrawal or rebalance")
		fs.StringVar(&amount, "amount", "", "amount of a deposit or withdrawal")
	case "fill", "cancel", "fail":
		fs.StringVar(&txn, "transaction", "", "transaction id (txn_…)")
		if kind == "fill" {
			fs.StringVar(&price, "price", "", "fill price (one order) or SYMBOL=PRICE,… (default: current prices)")
		}
	case "clock":
		fs.IntVar(&seconds, "seconds", 0, "seconds to advance the virtual clock (due retries and scenario steps run at once)")
	default:
		return fmt.Errorf("unknown trigger %q: use kyc, order, robo, fill, cancel, fail or clock", kind)
	}
	if err := parseFlags(fs, args[1:], getenv); err != nil {
		return err
	}
	if err := c.ready(); err != nil {
		return err
	}
	need := func(name, v string) error {
		if v == "" {
			return fmt.Errorf("trigger %s needs --%s", kind, name)
		}
		return nil
	}
	switch kind {
	case "kyc":
		if err := errors.Join(need("user", user), need("product", product), need("status", status)); err != nil {
			return err
		}
		res, err := c.do(ctx, http.MethodPost, "/_sandbox/users/"+url.PathEscape(user)+"/kyc", map[string]string{"product": product, "status": status})
		if err != nil {
			return err
		}
		fmt.Fprintf(stdout, "kyc: the %s account of %s is now %s\n", res.Get("product"), user, res.Get("kyc_status"))
		if ev := res.Get("event_id").String(); ev != "" {
			fmt.Fprintf(stdout, "event %s (kyc)\n", ev)
			c.showDeliveries(ctx, stdout, ev)
		} else {
			fmt.Fprintln(stdout, "no event: a move into pending is not delivered")
		}
	case "order":
		body := map[string]any{"platform_id": user, "product": product, "side": side, "symbol": symbol}
		if notional != "" {
			body["notional"] = notional
		}
		if quantity != "" {
			body["quantity"] = quantity
		}
		if recurring != "" {
			body["recurring_order_id"] = recurring
		}
		if err := errors.Join(need("user", user), need("symbol", symbol)); err != nil {
			return err
		}
		res, err := c.do(ctx, http.MethodPost, "/_sandbox/orders", body)
		if err != nil {
			return err
		}
		fmt.Fprintf(stdout, "order %s placed (pending) in transaction %s\n", res.Get("order_id"), res.Get("transaction_id"))
		fmt.Fprintf(stdout, "fill it: partnersim trigger fill --transaction %s\n", res.Get("transaction_id"))
	case "robo":
		if err := need("user", user); err != nil {
			return err
		}
		body := map[string]any{"platform_id": user, "product": "robo", "type": typ}
		if amount != "" {
			body["amount"] = amount
		}
		res, err := c.do(ctx, http.MethodPost, "/_sandbox/transactions", body)
		if err != nil {
			return err
		}
		fmt.Fprintf(stdout, "robo %s %s placed (pending) with %d legs\n", typ, res.Get("transaction_id"), len(res.Get("orders").Array()))
		for _, o := range res.Get("orders").Array() {
			fmt.Fprintf(stdout, "  %s %s %s notional %s\n", o.Get("order_id"), o.Get("side"), o.Get("symbol"), o.Get("notional"))
		}
		fmt.Fprintf(stdout, "fill it: partnersim trigger fill --transaction %s\n", res.Get("transaction_id"))
	case "fill", "cancel", "fail":
		if err := need("transaction", txn); err != nil {
			return err
		}
		var body any
		if price != "" {
			p, err := parsePrice(price)
			if err != nil {
				return err
			}
			body = map[string]any{"price": p}
		}
		res, err := c.do(ctx, http.MethodPost, "/_sandbox/transactions/"+url.PathEscape(txn)+"/"+kind, body)
		if err != nil {
			return err
		}
		fmt.Fprintf(stdout, "transaction %s is now %s\n", txn, res.Get("status"))
		for _, o := range res.Get("orders").Array() {
			fmt.Fprintf(stdout, "  %s %s %s quantity %s notional %s fee %s\n", o.Get("order_id"), o.Get("side"), o.Get("symbol"), o.Get("quantity"), o.Get("notional"), o.Get("fee"))
		}
		if ev := res.Get("event_id").String(); ev != "" {
			fmt.Fprintf(stdout, "event %s (transaction)\n", ev)
			c.showDeliveries(ctx, stdout, ev)
		} else {
			fmt.Fprintln(stdout, "no event: cancellations and failures are not delivered")
		}
	case "clock":
		res, err := c.do(ctx, http.MethodPost, "/_sandbox/clock/advance", map[string]int{"seconds": seconds})
		if err != nil {
			return err
		}
		fmt.Fprintf(stdout, "virtual clock now %s\n", res.Get("now"))
	}
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

func runScenario(ctx context.Context, args []string, getenv func(string) string, stdout, stderr io.Writer) error {
	verb, done, err := subcommand(args, "usage: partnersim scenario list | partnersim scenario run NAME [--institution ID]", stdout, "list", "run")
	if done || err != nil {
		return err
	}
	fs := flag.NewFlagSet("partnersim scenario "+verb, flag.ContinueOnError)
	fs.SetOutput(stderr)
	c := controlFlags(fs)
	inst := fs.String("institution", "", "institution to play it in (default: the fixtures' first)")
	if err := parseFlags(fs, args[1:], getenv); err != nil {
		return err
	}
	var name string
	switch {
	case verb == "list" && fs.NArg() > 0:
		return fmt.Errorf("scenario list takes no arguments, got %q", fs.Args())
	case verb == "run" && fs.NArg() != 1:
		return errors.New("usage: partnersim scenario run NAME [--institution ID]: give one NAME (partnersim scenario list shows the names)")
	case verb == "run":
		name = fs.Arg(0)
	}
	if err := c.ready(); err != nil {
		return err
	}
	if verb == "list" {
		res, err := c.do(ctx, http.MethodGet, "/_sandbox/scenarios", nil)
		if err != nil {
			return err
		}
		for _, s := range res.Get("scenarios").Array() {
			fmt.Fprintf(stdout, "%-24s %2d steps  %s\n", s.Get("name"), s.Get("steps").Int(), s.Get("description"))
		}
		return nil
	}
	var body any
	if *inst != "" {
		body = map[string]string{"institution_id": *inst}
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

func runSnapshot(ctx context.Context, args []string, getenv func(string) string, stdout, stderr io.Writer) error {
	const usage = "usage: partnersim snapshot save|restore NAME [--sandbox-url URL] [--sandbox-token TOKEN]"
	verb, done, err := subcommand(args, usage, stdout, "save", "restore")
	if done || err != nil {
		return err
	}
	fs := flag.NewFlagSet("partnersim snapshot "+verb, flag.ContinueOnError)
	fs.SetOutput(stderr)
	c := controlFlags(fs)
	if err := parseFlags(fs, args[1:], getenv); err != nil {
		return err
	}
	if fs.NArg() != 1 {
		return fmt.Errorf("%s: give one NAME, got %q", usage, fs.Args())
	}
	if err := c.ready(); err != nil {
		return err
	}
	path := "/_sandbox/snapshots/" + url.PathEscape(fs.Arg(0))
	if verb == "restore" {
		path += "/restore"
	}
	res, err := c.do(ctx, http.MethodPost, path, nil)
	if err != nil {
		return err
	}
	fmt.Fprintf(stdout, "snapshot %s %s\n", res.Get("snapshot"), res.Get("action"))
	return nil
}
