package console

import (
	"bytes"
	"encoding/json"
	"fmt"
	"html/template"
	"net/url"
	"strings"
	"time"

	"github.com/shopspring/decimal"

	"github.com/partnersim/partnersim/simulator"
)

// timeFormat is the console's one way of showing a time: UTC, to the second.
const timeFormat = "2006-01-02 15:04:05Z"

// timestamp shows a time.Time, a *time.Time or an RFC 3339 string in timeFormat ("—" for
// none).
func timestamp(v any) string {
	var t time.Time
	switch x := v.(type) {
	case time.Time:
		t = x
	case *time.Time:
		if x != nil {
			t = *x
		}
	case string:
		p, err := time.Parse(time.RFC3339Nano, x)
		if err != nil {
			return x
		}
		t = p
	}
	if t.IsZero() {
		return "—"
	}
	return t.UTC().Format(timeFormat)
}

// funcs are the templates' helpers.
var funcs = template.FuncMap{
	// status is the CSS class of a state badge: KYC, order and delivery states share a palette.
	"status": func(s any) string {
		switch fmt.Sprint(s) {
		case "approved", "completed", "delivered":
			return "st-good"
		case "pending", "running", "document_requested":
			return "st-wait"
		case "rejected", "failed", "account_takeover":
			return "st-bad"
		default:
			return "st-neutral"
		}
	},
	"label": func(s any) string { return strings.ReplaceAll(fmt.Sprint(s), "_", " ") },
	"money": simulator.FormatMoney,
	"qty":   simulator.FormatQuantity,
	"dec":   func(d decimal.Decimal) string { return d.String() },
	"ts":    timestamp,
	"rfc":   simulator.FormatTime, // a time as the control plane writes it, for data- attributes
	// pretty indents a JSON body for reading (as given when it is not JSON).
	"pretty": func(b any) string {
		var raw []byte
		switch x := b.(type) {
		case []byte:
			raw = x
		case json.RawMessage:
			raw = x
		case string:
			raw = []byte(x)
		}
		var out bytes.Buffer
		if json.Indent(&out, raw, "", "  ") != nil {
			return string(raw)
		}
		return out.String()
	},
	"path": url.PathEscape,
	"qs":   url.QueryEscape,
	// excerpt cuts s to n characters for a table cell.
	"excerpt": func(s string, n int) string {
		r := []rune(s)
		if len(r) <= n {
			return s
		}
		return string(r[:n]) + "…"
	},
	"join": func(v any) string {
		switch x := v.(type) {
		case []string:
			return strings.Join(x, ", ")
		case []simulator.Scope:
			out := make([]string, len(x))
			for i, s := range x {
				out[i] = string(s)
			}
			return strings.Join(out, ", ")
		}
		return fmt.Sprint(v)
	},
	"deref": func(s *string) string {
		if s == nil {
			return "—"
		}
		return *s
	},
	"get":    func(q url.Values, k string) string { return q.Get(k) },
	"kycKey": func(p simulator.Product) string { return string(p) + "_kyc_status" },
	"add":    func(a, b int) int { return a + b },
	"last": func(as []simulator.Attempt) *simulator.Attempt {
		if len(as) == 0 {
			return nil
		}
		return &as[len(as)-1]
	},
	"pending":   func(s simulator.OrderStatus) bool { return s == simulator.OrderPending },
	"raw":       func(b []byte) string { return string(b) },
	"prefix":    func() string { return Prefix },
	"hasPrefix": strings.HasPrefix,
	// txnCtx gives the transaction buttons the page's view (for the CSRF token) and an id.
	"txnCtx": func(v any, id string) map[string]any { return map[string]any{"V": v, "ID": id} },
	// list is the per-page choices, the API's default first.
	"list": func() []int { return []int{25, 50, 100, 10} },
}
