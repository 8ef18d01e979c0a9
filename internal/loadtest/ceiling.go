package loadtest

import (
	"context"
	"fmt"
	"io"
	"math/rand/v2"
	"net"
	"net/http"
	"slices"
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

// CaptureScenario captures, for each kind of sc, a typical real answer: of samples requests
// drawn from the kind, the one of median body size.
func CaptureScenario(ctx context.Context, client *http.Client, baseURL, key string, sc *Scenario, samples int) ([]*Captured, error) {
	out := make([]*Captured, len(sc.Kinds))
	r := rand.New(rand.NewPCG(7, 7))
	for i, k := range sc.Kinds {
		var got []*Captured
		for range max(samples, 1) {
			c, err := Capture(ctx, client, baseURL, key, k.Next(r))
			if err != nil {
				return nil, fmt.Errorf("loadtest: capturing %s for the ceiling: %w", k.Name, err)
			}
			got = append(got, c)
		}
		slices.SortFunc(got, func(a, b *Captured) int { return len(a.Body) - len(b.Body) })
		out[i] = got[len(got)/2]
	}
	return out, nil
}

// Ceiling is the bare echo v4 server of a run: one handler that answers each request with the
// captured bytes and headers of its kind. Nothing is computed per request beyond echo's routing
// and net/http's framing, so it is what loopback HTTP on this machine can do at best.
type Ceiling struct {
	URL string
	srv *http.Server
}

// StartCeiling serves captured (indexed like sc.Kinds) on 127.0.0.1:0.
func StartCeiling(sc *Scenario, captured []*Captured) (*Ceiling, error) {
	e := echo.New()
	e.HideBanner, e.HidePort = true, true
	e.GET("/*", func(c echo.Context) error {
		cp := captured[0]
		if len(captured) > 1 {
			cp = captured[sc.Classify(c.Request().URL.Path, c.QueryParams())]
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

// Close stops the ceiling.
func (c *Ceiling) Close() error {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	return c.srv.Shutdown(ctx)
}

// newHTTPServer is the http.Server both the self-hosted sandbox and the ceiling run on, as
// `partnersim serve` does.
func newHTTPServer(h http.Handler) *http.Server {
	return &http.Server{Handler: h, ReadHeaderTimeout: 10 * time.Second}
}
