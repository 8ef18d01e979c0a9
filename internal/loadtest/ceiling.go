package loadtest

import (
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"os/exec"
	"strconv"
	"sync"
	"time"

	"github.com/labstack/echo/v4"
)

// Captured is a real response kept byte for byte: what the ceiling answers.
type Captured struct {
	Status int
	Header http.Header
	Body   []byte
}

// Capture GETs path (with the key) from baseURL and keeps the whole answer.
func Capture(ctx context.Context, client *http.Client, baseURL, key, path string) (*Captured, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, baseURL+path, nil)
	if err != nil {
		return nil, err
	}
	req.Header.Set("x-api-key", key)
	res, err := client.Do(req)
	if err != nil {
		return nil, err
	}
	defer res.Body.Close()
	body, err := io.ReadAll(res.Body)
	if err != nil {
		return nil, fmt.Errorf("GET %s: %w", path, err)
	}
	if res.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("GET %s: status %d: %.200s", path, res.StatusCode, body)
	}
	h := res.Header.Clone()
	// net/http writes these itself, for the ceiling exactly as for the target.
	for _, k := range []string{"Date", "Content-Length", "Transfer-Encoding", "Connection", "Keep-Alive"} {
		h.Del(k)
	}
	return &Captured{Status: res.StatusCode, Header: h, Body: body}, nil
}

// captureConns is how many requests CapturePool keeps in flight.
const captureConns = 4

// CapturePool captures the target's answer to every request of the pool, keyed by path and
// query as the client sends them: the ceiling then answers each request with the very bytes
// the target answered to it.
func CapturePool(ctx context.Context, baseURL, key string, pool *Pool) (map[string]*Captured, error) {
	client := NewClient(captureConns, 10*time.Second)
	defer client.CloseIdleConnections()
	out := make(map[string]*Captured, len(pool.Paths))
	var (
		mu    sync.Mutex
		first error
		wg    sync.WaitGroup
	)
	paths := make(chan string)
	for range captureConns {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for p := range paths {
				c, err := Capture(ctx, client, baseURL, key, p)
				mu.Lock()
				if err != nil && first == nil {
					first = fmt.Errorf("loadtest: capturing the ceiling's answers: %w", err)
				}
				out[p] = c
				mu.Unlock()
			}
		}()
	}
	sent := make(map[string]bool, len(pool.Paths))
	for _, p := range pool.Paths {
		mu.Lock()
		failed := first != nil
		mu.Unlock()
		if failed {
			break
		}
		if !sent[p] {
			sent[p] = true
			paths <- p
		}
	}
	close(paths)
	wg.Wait()
	if first != nil {
		return nil, first
	}
	return out, nil
}

// Ceiling is the bare echo v4 server of a run: one handler that answers each request with the
// captured bytes and headers of its path and query. Nothing is computed per request beyond
// echo's routing, one map lookup and net/http's framing, so it is what loopback HTTP on this
// machine can do at best for those very answers.
//
// A ceiling runs where its target runs. Against a sandbox in this process it is served from
// this process too ([StartCeiling]); against a sandbox in its own process (`partnersim serve`)
// it is served from its own process ([StartCeilingProcess]): on a small machine the client, the
// server and the scheduler share the cores, and a server in the client's process is spared the
// switches between processes that a server beside it pays, which would flatter the ceiling.
type Ceiling struct {
	URL string
	srv *http.Server
	// cmd and stdin are the ceiling's own process, when it has one: closing stdin ends it.
	cmd   *exec.Cmd
	stdin io.WriteCloser
}

// StartCeiling serves captured (by path and query, as CapturePool keys them) on 127.0.0.1:0.
// A request for anything else is answered 404.
func StartCeiling(captured map[string]*Captured) (*Ceiling, error) {
	// Each answer framed as the target frames it, its length given: net/http would send a body
	// past its 2 KB buffer chunked, bytes (and a client's work) the target's answer has not.
	answers := make(map[string]*Captured, len(captured))
	for uri, cp := range captured {
		h := cp.Header.Clone()
		h[echo.HeaderContentLength] = []string{strconv.Itoa(len(cp.Body))}
		answers[uri] = &Captured{Status: cp.Status, Header: h, Body: cp.Body}
	}
	e := echo.New()
	e.HideBanner, e.HidePort = true, true
	e.GET("/*", func(c echo.Context) error {
		cp := answers[c.Request().RequestURI]
		if cp == nil {
			return c.String(http.StatusNotFound, "not captured: "+c.Request().RequestURI)
		}
		h := c.Response().Header()
		for k, v := range cp.Header {
			h[k] = v
		}
		c.Response().WriteHeader(cp.Status)
		_, err := c.Response().Write(cp.Body)
		return err
	})
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	srv := newHTTPServer(e)
	go func() { _ = srv.Serve(ln) }()
	return &Ceiling{URL: "http://" + ln.Addr().String(), srv: srv}, nil
}

// Close stops the ceiling, and its process when it has one.
func (c *Ceiling) Close() error {
	if c.cmd != nil {
		c.stdin.Close()
		done := make(chan error, 1)
		go func() { done <- c.cmd.Wait() }()
		select {
		case err := <-done:
			return err
		case <-time.After(5 * time.Second):
			_ = c.cmd.Process.Kill()
			return fmt.Errorf("loadtest: the ceiling's process did not end when told to: %w", <-done)
		}
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	return c.srv.Shutdown(ctx)
}

// newHTTPServer is the http.Server both the self-hosted sandbox and the ceiling run on, as
// `partnersim serve` does.
func newHTTPServer(h http.Handler) *http.Server {
	return &http.Server{Handler: h, ReadHeaderTimeout: 10 * time.Second}
}
