package sandboxtest

import (
	"io"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"
)

// Callback is a partner's webhook endpoint for a test, a real HTTP server on loopback: it
// records every request it is sent and answers each with the status answer gives for its
// number (0 for the first); a 3xx points elsewhere, so a sender that follows redirects shows.
// It stops when the test ends.
type Callback struct {
	*httptest.Server
	answer func(n int) int
	mu     sync.Mutex
	got    []Received
}

// Received is one request a Callback was sent.
type Received struct {
	Path   string
	Header http.Header
	Body   []byte
}

// NewCallback starts a Callback.
func NewCallback(tb testing.TB, answer func(n int) int) *Callback {
	tb.Helper()
	c := &Callback{answer: answer}
	c.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		c.mu.Lock()
		n := len(c.got)
		c.got = append(c.got, Received{Path: r.URL.Path, Header: r.Header.Clone(), Body: b})
		c.mu.Unlock()
		st := c.answer(n)
		if st >= 300 && st < 400 {
			w.Header().Set("Location", "http://127.0.0.1:1/elsewhere")
		}
		w.WriteHeader(st)
		_, _ = w.Write([]byte(`{"ok":true}`))
	}))
	tb.Cleanup(c.Close)
	return c
}

// Answering returns an answer that is always status.
func Answering(status int) func(int) int { return func(int) int { return status } }

// Received returns the requests received so far, in order.
func (c *Callback) Received() []Received {
	c.mu.Lock()
	defer c.mu.Unlock()
	return append([]Received(nil), c.got...)
}
