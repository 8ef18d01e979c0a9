package proxy

import (
	"html/template"
	"net/http"
	"sync"
	"time"
)

// pagePath is the proxy's own page: its rules and recent exchanges. It is the proxy's, on its
// listener, not the deployment's: the proxy answers it and forwards nothing.
const pagePath = "/_proxy/"

// recent keeps the last exchanges checked, newest last.
type recent struct {
	mu   sync.Mutex
	ring []seenExchange
	next int
	full bool
}

type seenExchange struct {
	At       time.Time `json:"at"`
	Exchange string    `json:"exchange"`
	Findings []string  `json:"findings"`
}

func (r *recent) add(e seenExchange) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.ring[r.next] = e
	r.next = (r.next + 1) % len(r.ring)
	r.full = r.full || r.next == 0
}

// list returns the exchanges kept, newest first.
func (r *recent) list() []seenExchange {
	r.mu.Lock()
	defer r.mu.Unlock()
	n := r.next
	if r.full {
		n = len(r.ring)
	}
	out := make([]seenExchange, 0, n)
	for i := 1; i <= n; i++ {
		out = append(out, r.ring[(r.next-i+len(r.ring))%len(r.ring)])
	}
	return out
}

var pageTmpl = template.Must(template.New("page").Parse(`<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>partnersim proxy</title>
<style>body{font:14px system-ui,sans-serif;margin:2em}table{border-collapse:collapse}td,th{padding:2px 8px;text-align:left;border-bottom:1px solid #ddd}.failed{color:#b00}.passed{color:#070}.not{color:#777}code{font-size:13px}</style></head>
<body><h1>partnersim proxy</h1>
<p>Upstream <code>{{.Upstream}}</code>. {{if .Shed}}The app never waits for the checks (<code>--when-behind shed</code>): {{.Unchecked}} exchanges forwarded unchecked, {{.DocUnchecked}} not checked against the document (the checks fell behind).{{else}}Every exchange is checked: when the checks fall behind, the app's answers wait for them (<code>--when-behind wait</code>).{{end}}</p>
<h2>Rules</h2><table><tr><th>rule</th><th>kind</th><th>status</th><th>observed</th><th>failed</th><th>last finding</th></tr>
{{range .Rules}}<tr><td><code>{{.ID}}</code></td><td>{{.Kind}}</td><td class="{{if eq .Status "failed"}}failed{{else if eq .Status "passed"}}passed{{else}}not{{end}}">{{.Status}}</td><td>{{.Observed}}</td><td>{{.Failed}}</td><td>{{with .Findings}}{{(index . 0).Exchange}}: {{(index . 0).Detail}}{{end}}</td></tr>
{{end}}</table>
<h2>Recent exchanges</h2><table><tr><th>at</th><th>exchange</th><th>findings</th></tr>
{{range .Recent}}<tr><td>{{.At.Format "15:04:05.000"}}</td><td><code>{{.Exchange}}</code></td><td class="failed">{{range .Findings}}{{.}}<br>{{end}}</td></tr>
{{end}}</table></body></html>
`))

// page answers the proxy's page.
func (p *Proxy) page(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodGet && r.Method != http.MethodHead {
		w.Header().Set("Allow", "GET, HEAD")
		writeDetail(w, http.StatusMethodNotAllowed, "Method Not Allowed")
		return
	}
	none, doc := p.book.Unchecked()
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	w.Header().Set("X-Content-Type-Options", "nosniff")
	w.Header().Set("X-Frame-Options", "DENY")
	w.Header().Set("Content-Security-Policy", "frame-ancestors 'none'")
	w.Header().Set("Cache-Control", "no-store")
	pageTmpl.Execute(w, map[string]any{"Upstream": p.cfg.Upstream.String(), "Unchecked": none, "DocUnchecked": doc, "Shed": p.cfg.WhenBehind == Shed,
		"Rules": p.book.Results(), "Recent": p.recent.list()})
}
