package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"time"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
	"github.com/tidwall/gjson"

	"github.com/partnersim/partnersim/fixtures"
)

// defaultSandboxURL is where `partnersim serve` listens unless told otherwise.
const defaultSandboxURL = "http://127.0.0.1:8080"

// controlClient speaks to a running sandbox's control plane.
type controlClient struct {
	base   string
	token  string
	output string
	http   *http.Client
}

// controlFlags adds --sandbox-url, --sandbox-token and -o/--output to fs.
func controlFlags(fs *pflag.FlagSet) *controlClient {
	c := &controlClient{http: &http.Client{Timeout: 30 * time.Second}}
	fs.StringVar(&c.base, "sandbox-url", defaultSandboxURL, "base URL of the running sandbox")
	fs.StringVar(&c.token, "sandbox-token", "", "control-plane token (default: the default fixtures' token; serve prints it)")
	fs.StringVarP(&c.output, "output", "o", "table", "table (for people) or json (the control plane's answer, for scripts)")
	return c
}

// defaultSandboxToken is the default fixtures' control-plane token ("" if they have none).
func defaultSandboxToken() string {
	if set, err := fixtures.Open(fixtures.Default()); err == nil {
		return set.SandboxToken
	}
	return ""
}

func (c *controlClient) ready() error {
	if c.output != "table" && c.output != "json" {
		return fmt.Errorf("--output %q: use table or json", c.output)
	}
	if c.token == "" {
		c.token = fallbackToken(c.base)
	}
	if c.token == "" {
		return errNoToken(c.base)
	}
	c.base = strings.TrimRight(c.base, "/")
	return nil
}

// fallbackToken is the token a command uses for the sandbox at base when none is given: the
// default fixtures' token on loopback (where `partnersim serve` starts with it), none beyond
// (an exposed sandbox refuses the published token; decisions D18).
func fallbackToken(base string) string {
	u, err := url.Parse(base)
	if err != nil {
		return ""
	}
	host := u.Hostname()
	if ip := net.ParseIP(host); host != "localhost" && (ip == nil || !ip.IsLoopback()) {
		return ""
	}
	return defaultSandboxToken()
}

// errNoToken says what to do when the sandbox at base needs a token nobody gave.
func errNoToken(base string) error {
	return fmt.Errorf("no sandbox token for %s: export PARTNERSIM_SANDBOX_TOKEN=… or pass --sandbox-token (partnersim serve prints it)", base)
}

// answer makes one control-plane call and, with -o json, prints its answer: printed tells the
// caller that nothing is left to print.
func (c *controlClient) answer(ctx context.Context, w io.Writer, method, path string, body any) (res gjson.Result, printed bool, err error) {
	res, err = c.do(ctx, method, path, body)
	if err != nil || !c.json() {
		return res, false, err
	}
	printJSON(w, res)
	return res, true, nil
}

// idCmd is a control command on one id, its positional argument (usage says so when it is
// missing): it sends method to path(id) and, unless --output json printed the answer, hands
// the answer to show, which writes it for people.
func idCmd(use, short, usage, method string, path func(id string) string,
	show func(ctx context.Context, w io.Writer, c *controlClient, id string, res gjson.Result)) *cobra.Command {
	cmd := &cobra.Command{Use: use, Short: short, Args: exactlyOne(usage)}
	c := controlFlags(cmd.Flags())
	cmd.RunE = func(cmd *cobra.Command, args []string) error {
		if err := c.ready(); err != nil {
			return err
		}
		w := cmd.OutOrStdout()
		res, printed, err := c.answer(cmd.Context(), w, method, path(args[0]), nil)
		if err != nil || printed {
			return err
		}
		show(cmd.Context(), w, c, args[0], res)
		return nil
	}
	return cmd
}

// exactlyOne is a command's Args check for one positional argument; usage says which.
func exactlyOne(usage string) cobra.PositionalArgs {
	return func(_ *cobra.Command, args []string) error {
		if len(args) != 1 {
			return fmt.Errorf("usage: %s, got %q", usage, args)
		}
		return nil
	}
}

// json reports whether the output is for scripts (-o json).
func (c *controlClient) json() bool { return c.output == "json" }

// printJSON writes a control-plane answer indented, as -o json prints it.
func printJSON(w io.Writer, res gjson.Result) {
	fmt.Fprint(w, res.Get("@pretty").Raw)
}

// hint is a partnersim command line that reaches this sandbox as it runs: --sandbox-url and
// --sandbox-token are added when they are not the defaults, so it runs as printed.
func (c *controlClient) hint(args ...string) string {
	return sandboxHint(c.base, c.token, args...)
}

// sandboxHint is a partnersim command line for the sandbox at base with token.
func sandboxHint(base, token string, args ...string) string {
	parts := append([]string{"partnersim"}, args...)
	if strings.TrimRight(base, "/") != defaultSandboxURL {
		parts = append(parts, "--sandbox-url", base)
	}
	if token != defaultSandboxToken() {
		parts = append(parts, "--sandbox-token", token)
	}
	for i, p := range parts {
		parts[i] = shellQuote(p)
	}
	return strings.Join(parts, " ")
}

// shellQuote quotes s for a POSIX shell when it holds anything beyond plain word characters.
func shellQuote(s string) string {
	plain := s != ""
	for _, r := range s {
		plain = plain && (r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || strings.ContainsRune("-_./:=,@%+", r))
	}
	if plain {
		return s
	}
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
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

// showEvent prints the event a change emitted and its first deliveries, or why there is none.
func (c *controlClient) showEvent(ctx context.Context, w io.Writer, eventID, typ, none string) {
	if eventID == "" {
		fmt.Fprintln(w, none)
		return
	}
	fmt.Fprintf(w, "event %s (%s)\n", eventID, typ)
	c.showDeliveries(ctx, w, eventID)
}

// showDeliveries waits briefly for an event's first attempts and prints them: the deliveries
// named in only, or all of the event's when only is empty.
func (c *controlClient) showDeliveries(ctx context.Context, w io.Writer, eventID string, only ...string) {
	if eventID == "" {
		return
	}
	var ds []gjson.Result
	deadline := time.Now().Add(3 * time.Second)
	for {
		res, err := c.do(ctx, http.MethodGet, "/_sandbox/deliveries?event_id="+url.QueryEscape(eventID), nil)
		if err != nil {
			fmt.Fprintf(w, "  deliveries: %v\n", err)
			return
		}
		ds = ds[:0]
		pending := false
		for _, d := range res.Get("deliveries").Array() {
			if len(only) > 0 && !slices.Contains(only, d.Get("delivery_id").String()) {
				continue
			}
			ds = append(ds, d)
			pending = pending || len(d.Get("attempts").Array()) == 0 && d.Get("status").String() == "pending"
		}
		if !pending || time.Now().After(deadline) {
			break
		}
		time.Sleep(100 * time.Millisecond)
	}
	if len(ds) == 0 {
		fmt.Fprintln(w, "  no deliveries: the institution has no enabled subscription for this event type")
		return
	}
	for _, d := range ds {
		fmt.Fprintln(w, "  "+deliveryLine(d))
	}
}

// deliveryLine says where a delivery stands: its URL, status and last attempt.
func deliveryLine(d gjson.Result) string {
	line := fmt.Sprintf("delivery %s -> %s: %s", d.Get("delivery_id"), d.Get("url"), d.Get("status"))
	if atts := d.Get("attempts").Array(); len(atts) > 0 {
		line += fmt.Sprintf(" (attempt %d: %s)", len(atts), attemptResult(atts[len(atts)-1]))
	}
	if n := d.Get("next_attempt_at"); n.Exists() && n.Type != gjson.Null && len(d.Get("attempts").Array()) > 0 {
		line += ", next attempt " + n.String()
	}
	return line
}

// attemptResult is an attempt's answer ("HTTP 200 in 1.2ms") or its error.
func attemptResult(a gjson.Result) string {
	if a.Get("status_code").Exists() {
		return fmt.Sprintf("HTTP %d in %.1fms", a.Get("status_code").Int(), a.Get("latency_ms").Float())
	}
	return a.Get("error").String()
}
