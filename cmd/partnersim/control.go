package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/spf13/pflag"
	"github.com/tidwall/gjson"

	"github.com/partnersim/partnersim/fixtures"
)

// controlClient speaks to a running sandbox's control plane.
type controlClient struct {
	base  string
	token string
	http  *http.Client
}

// controlFlags adds --sandbox-url and --sandbox-token to fs.
func controlFlags(fs *pflag.FlagSet) *controlClient {
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

// showEvent prints the event a change emitted and its first deliveries, or why there is none.
func (c *controlClient) showEvent(ctx context.Context, w io.Writer, eventID, typ, none string) {
	if eventID == "" {
		fmt.Fprintln(w, none)
		return
	}
	fmt.Fprintf(w, "event %s (%s)\n", eventID, typ)
	c.showDeliveries(ctx, w, eventID)
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
