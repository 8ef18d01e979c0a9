package sandbox

import (
	"encoding/json"
	"net/http"
	"strconv"
	"sync"
	"sync/atomic"
)

// Gate is the handler a listener serves from the moment it is bound: the probes (/livez: the
// process answers; /readyz: store open, set built, dispatcher running) and, until the sandbox
// is ready, 503 {"detail":"sandbox is loading"} with Retry-After and the build's progress on
// every other path, so a probe or a partner hears "loading" instead of hanging on a port that
// accepts and answers nothing. Once Ready it passes every other request to the sandbox; once
// draining, /readyz answers 503 so a load balancer stops sending, and every answer closes its
// connection (Connection: close), so that no client is left holding a kept-alive connection
// the shutdown would close under its next request. The probes bypass the Host check (decisions D18): kubelet names the pod's address.
type Gate struct {
	mu       sync.Mutex
	phase    string
	done     int
	total    int
	next     atomic.Pointer[http.Handler]
	ready    atomic.Pointer[func() error]
	draining atomic.Bool
}

// NewGate returns a gate that answers "loading" until Ready.
func NewGate() *Gate { return &Gate{phase: "open"} }

// Progress records the build's progress (a Progress function), shown in "loading" answers.
func (g *Gate) Progress(phase string, done, total int) {
	g.mu.Lock()
	g.phase, g.done, g.total = phase, done, total
	g.mu.Unlock()
}

// Ready starts passing requests to h; check says whether the sandbox can serve (/readyz).
func (g *Gate) Ready(h http.Handler, check func() error) {
	g.ready.Store(&check)
	g.next.Store(&h)
}

// Drain makes /readyz answer 503, and every answer close its connection, from now on: the
// sandbox is shutting down.
func (g *Gate) Drain() { g.draining.Store(true) }

// LoadingRetryAfter is the Retry-After, in seconds, of a "loading" answer.
const LoadingRetryAfter = 5

func (g *Gate) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if g.draining.Load() {
		w.Header().Set("Connection", "close")
	}
	switch r.URL.Path {
	case "/livez":
		writeGateJSON(w, http.StatusOK, map[string]string{"status": "ok"})
		return
	case "/readyz":
		g.serveReady(w)
		return
	}
	if h := g.next.Load(); h != nil {
		(*h).ServeHTTP(w, r)
		return
	}
	g.loading(w)
}

func (g *Gate) serveReady(w http.ResponseWriter) {
	check := g.ready.Load()
	switch {
	case check == nil:
		g.loading(w)
	case g.draining.Load():
		w.Header().Set("Retry-After", strconv.Itoa(LoadingRetryAfter))
		writeGateJSON(w, http.StatusServiceUnavailable, map[string]string{"detail": "sandbox is shutting down"})
	default:
		if err := (*check)(); err != nil {
			w.Header().Set("Retry-After", strconv.Itoa(LoadingRetryAfter))
			writeGateJSON(w, http.StatusServiceUnavailable, map[string]string{"detail": "sandbox is not ready: " + err.Error()})
			return
		}
		writeGateJSON(w, http.StatusOK, map[string]string{"status": "ready"})
	}
}

// loadingBody is a "loading" answer: the detail every client reads, and the build's progress.
type loadingBody struct {
	Detail   string          `json:"detail"`
	Progress loadingProgress `json:"progress"`
}

type loadingProgress struct {
	// Phase is "open" (the store is opening), "read" (records checked; Total unknown, 0) or
	// "write" (store entries written of Total).
	Phase string `json:"phase"`
	Done  int    `json:"done"`
	Total int    `json:"total"`
}

func (g *Gate) loading(w http.ResponseWriter) {
	g.mu.Lock()
	p := loadingProgress{Phase: g.phase, Done: g.done, Total: g.total}
	g.mu.Unlock()
	w.Header().Set("Retry-After", strconv.Itoa(LoadingRetryAfter))
	writeGateJSON(w, http.StatusServiceUnavailable, loadingBody{Detail: "sandbox is loading", Progress: p})
}

func writeGateJSON(w http.ResponseWriter, status int, v any) {
	b, _ := json.Marshal(v)
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Content-Length", strconv.Itoa(len(b)))
	w.WriteHeader(status)
	_, _ = w.Write(b)
}
