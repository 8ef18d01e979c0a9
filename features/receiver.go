package features

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"sync"
	"time"
)

// hub is the run's webhook receiver: one listener, one path per scenario receiver
// (/r/<token>/), so scenarios catch their own deliveries however many run at once.
type hub struct {
	ln   net.Listener
	srv  *http.Server
	base string // URL the implementation posts to, no trailing slash
	// base6 is the same hub on the IPv6 loopback address, when the hub listens on loopback and
	// the machine has ::1 ("" otherwise).
	base6 string
	srv6  *http.Server

	mu    sync.Mutex
	recvs map[string]*receiver
}

func newHub(listen, public string) (*hub, error) {
	ln, err := net.Listen("tcp", listen)
	if err != nil {
		return nil, err
	}
	h := &hub{ln: ln, recvs: map[string]*receiver{}}
	h.base = strings.TrimSuffix(public, "/")
	if h.base == "" {
		h.base = "http://" + ln.Addr().String()
	}
	h.srv = &http.Server{Handler: h, ReadHeaderTimeout: 10 * time.Second}
	go func() { _ = h.srv.Serve(ln) }()
	if a, ok := ln.Addr().(*net.TCPAddr); ok && public == "" && a.IP.IsLoopback() {
		if ln6, err := net.Listen("tcp", "[::1]:0"); err == nil {
			h.base6 = "http://" + ln6.Addr().String()
			h.srv6 = &http.Server{Handler: h, ReadHeaderTimeout: 10 * time.Second}
			go func() { _ = h.srv6.Serve(ln6) }()
		}
	}
	return h, nil
}

func (h *hub) close() {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	_ = h.srv.Shutdown(ctx)
	if h.srv6 != nil {
		_ = h.srv6.Shutdown(ctx)
	}
}

// add registers a receiver and returns it with its URL.
func (h *hub) add(name string) *receiver {
	tok := randomToken(8)
	r := &receiver{name: name, token: tok, url: h.base + "/r/" + tok + "/" + name, status: http.StatusOK, changed: make(chan struct{})}
	h.mu.Lock()
	h.recvs[tok] = r
	h.mu.Unlock()
	return r
}

func (h *hub) remove(r *receiver) {
	h.mu.Lock()
	delete(h.recvs, r.token)
	h.mu.Unlock()
}

// ServeHTTP routes /r/<token>/… to its receiver; anything else is 404.
func (h *hub) ServeHTTP(w http.ResponseWriter, req *http.Request) {
	rest, ok := strings.CutPrefix(req.URL.Path, "/r/")
	if !ok {
		http.NotFound(w, req)
		return
	}
	tok, _, _ := strings.Cut(rest, "/")
	h.mu.Lock()
	r := h.recvs[tok]
	h.mu.Unlock()
	if r == nil {
		http.NotFound(w, req)
		return
	}
	r.serve(w, req)
}

// receiver records every request it gets and answers a scripted status.
type receiver struct {
	name, token, url string
	inst             string   // the scenario institution that subscribed it
	subs             []string // its subscriptions

	mu       sync.Mutex
	status   int   // the answer after the scripted ones
	script   []int // answers to the first deliveries, in order
	got      []*delivery
	changed  chan struct{} // closed and replaced on every new delivery
	consumed int           // deliveries already taken by "receives a delivery"
	hold     chan struct{} // when set, answers wait until it is closed (at most 5s)
}

// delivery is one request a receiver got.
type delivery struct {
	Method string
	Header http.Header
	Body   []byte
	At     time.Time
	Answer int
}

// signature is the delivery's X-Partner-Webhook-Signature header as written (spec §6.1).
func (d *delivery) signature() string { return d.Header.Get("X-Partner-Webhook-Signature") }

func (r *receiver) serve(w http.ResponseWriter, req *http.Request) {
	body, _ := io.ReadAll(io.LimitReader(req.Body, 1<<20))
	r.mu.Lock()
	answer := r.status
	if n := len(r.got); n < len(r.script) {
		answer = r.script[n]
	}
	r.got = append(r.got, &delivery{Method: req.Method, Header: req.Header.Clone(), Body: body, At: time.Now(), Answer: answer})
	close(r.changed)
	r.changed = make(chan struct{})
	hold := r.hold
	r.mu.Unlock()
	if hold != nil {
		t := time.NewTimer(5 * time.Second)
		select {
		case <-hold:
		case <-t.C:
		case <-req.Context().Done():
		}
		t.Stop()
	}
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(answer)
	fmt.Fprintf(w, `{"received":true}`)
}

func (r *receiver) answer(status int, first int) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if first <= 0 {
		r.status = status
		return
	}
	r.script = nil
	for range first {
		r.script = append(r.script, status)
	}
}

// holdAnswers makes the receiver keep every request open until release is called.
func (r *receiver) holdAnswers() {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.hold = make(chan struct{})
}

// release lets held requests be answered.
func (r *receiver) release() {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.hold != nil {
		close(r.hold)
		r.hold = nil
	}
}

func (r *receiver) snapshot() ([]*delivery, chan struct{}) {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]*delivery(nil), r.got...), r.changed
}

// waitCount waits until the receiver has at least n deliveries.
func (r *receiver) waitCount(ctx context.Context, n int, d time.Duration) ([]*delivery, error) {
	timer := time.NewTimer(d)
	defer timer.Stop()
	for {
		got, ch := r.snapshot()
		if len(got) >= n {
			return got, nil
		}
		select {
		case <-ch:
		case <-timer.C:
			return got, fmt.Errorf("expected receiver %q to get %d deliveries within %s, got %d", r.name, n, d, len(got))
		case <-ctx.Done():
			return got, ctx.Err()
		}
	}
}

// waitQuiet waits until no delivery arrived for quiet (at most max in all) and returns what
// the receiver got.
func (r *receiver) waitQuiet(ctx context.Context, quiet, max time.Duration) []*delivery {
	deadline := time.NewTimer(max)
	defer deadline.Stop()
	for {
		got, ch := r.snapshot()
		t := time.NewTimer(quiet)
		select {
		case <-ch:
			t.Stop()
		case <-t.C:
			return got
		case <-deadline.C:
			t.Stop()
			got, _ = r.snapshot()
			return got
		case <-ctx.Done():
			t.Stop()
			return got
		}
	}
}

// next waits for the first delivery not yet taken and takes it.
func (r *receiver) next(ctx context.Context, d time.Duration) (*delivery, error) {
	r.mu.Lock()
	want := r.consumed + 1
	r.mu.Unlock()
	got, err := r.waitCount(ctx, want, d)
	if err != nil {
		return nil, err
	}
	r.mu.Lock()
	r.consumed = want
	r.mu.Unlock()
	return got[want-1], nil
}

// unreachableURL returns a loopback URL on which nothing listens.
func unreachableURL() (string, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return "", err
	}
	addr := ln.Addr().String()
	if err := ln.Close(); err != nil {
		return "", err
	}
	return "http://" + addr + "/unreachable", nil
}

func randomToken(n int) string {
	b := make([]byte, n)
	if _, err := rand.Read(b); err != nil {
		panic(errors.New("crypto/rand failed: " + err.Error()))
	}
	return hex.EncodeToString(b)
}
