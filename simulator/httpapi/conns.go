package httpapi

import (
	"errors"
	"io"
	"net"
	"net/http"
	"os"
	"strconv"
	"sync"
	"sync/atomic"
	"time"
)

// ConnLimits bound the server's connections in time and number (decisions D18), as D17 bounds
// requests in size: no connection may cost unbounded time or a file descriptor for ever.
type ConnLimits struct {
	// Idle is how long a keep-alive connection may wait for its next request.
	Idle time.Duration
	// Request is how long a request's line, headers and body may take to arrive.
	Request time.Duration
	// Head is how long its line and headers may take; 0 means 10 seconds, or Request if sooner.
	Head time.Duration
	// MaxConns is the most connections open at once; beyond it a new one is answered 503 with
	// Retry-After and closed.
	MaxConns int
}

// DefaultConnLimits are serve's: 2 minutes idle, 30 seconds a request (10 its line and
// headers), 4,096 connections (well under a usual open-file limit, well over what a test suite
// or load run opens).
func DefaultConnLimits() ConnLimits {
	return ConnLimits{Idle: 2 * time.Minute, Request: 30 * time.Second, Head: 10 * time.Second, MaxConns: 4096}
}

// head is how long a request's line and headers may take: Head, else 10 seconds or Request
// if sooner.
func (l ConnLimits) head() time.Duration {
	if l.Head > 0 {
		return l.Head
	}
	return min(l.Request, 10*time.Second)
}

// HTTPServer returns an http.Server serving h within l's times (the request line and headers
// within Head, all of it within Request). Serve it on l.Listener's listener for the
// cap on connections and for its deadlines' cost (boundConn). ReadTimeout bounds the client's
// sending only: http.Server clears the deadline once the body is in, so a handler may take
// longer. A connection of Listener sends each JSON answer in one write (holdResponse).
func (l ConnLimits) HTTPServer(h http.Handler) *http.Server {
	return &http.Server{Handler: h, ReadHeaderTimeout: l.head(), ReadTimeout: l.Request, IdleTimeout: l.Idle,
		ConnContext: ConnContext}
}

// Listener wraps ln so that at most l.MaxConns accepted connections are open at once (no cap
// when MaxConns is 0 or less); one more is answered 503 with Retry-After and closed.
// golang.org/x/net/netutil.LimitListener bounds the count too, but by not accepting: a client
// beyond the cap waits in the kernel's backlog with no answer until its own timeout, where
// D18 wants it told to retry. Its connections keep their read deadlines at less cost
// (boundConn), as l.HTTPServer sets them.
func (l ConnLimits) Listener(ln net.Listener) net.Listener {
	return &capListener{Listener: ln, max: int64(l.MaxConns), head: l.head(), refusing: make(chan struct{}, maxRefusing)}
}

// maxRefusing is the most refusals (503 answers) written at once; beyond it a connection over
// the cap is closed unanswered.
const maxRefusing = 64

// refusal is the whole answer to a connection over the cap.
var refusal = []byte("HTTP/1.1 503 Service Unavailable\r\nContent-Type: application/json\r\nRetry-After: 1\r\nConnection: close\r\nContent-Length: " +
	strconv.Itoa(len(refusalBody)) + "\r\n\r\n" + refusalBody)

const refusalBody = `{"detail":"Service Unavailable: too many open connections; retry after the time Retry-After gives"}`

type capListener struct {
	net.Listener
	max      int64 // no cap when 0 or less
	head     time.Duration
	open     atomic.Int64
	refusing chan struct{}
}

func (c *capListener) Accept() (net.Conn, error) {
	for {
		conn, err := c.Listener.Accept()
		if err != nil {
			return nil, err
		}
		if c.open.Add(1) <= c.max || c.max <= 0 {
			return &boundConn{Conn: conn, open: &c.open, head: c.head}, nil
		}
		c.open.Add(-1)
		select {
		case c.refusing <- struct{}{}:
			go func() {
				defer func() { <-c.refusing }()
				refuse(conn)
			}()
		default:
			conn.Close()
		}
	}
}

// refuse answers a connection over the cap: it reads what the client sent first (within a
// second; closing with unread data would reset the connection and lose the answer), writes the
// 503 and closes.
func refuse(conn net.Conn) {
	defer conn.Close()
	_ = conn.SetDeadline(time.Now().Add(time.Second))
	var buf [4096]byte
	_, _ = conn.Read(buf[:])
	_, _ = conn.Write(refusal)
	if tc, ok := conn.(interface{ CloseWrite() error }); ok {
		_ = tc.CloseWrite()
		_, _ = io.Copy(io.Discard, conn)
	}
}

// boundConn is a connection of Listener. It gives its place back when closed (once, however
// often Close is called), and it keeps its read deadline lazily. net/http sets a read deadline
// six times a request — for the idle wait, the head, the whole request, none while the handler
// runs, one in the past to stop its background read, then none again — and each is a runtime
// timer's change, where the ceiling's server (no ReadTimeout, no IdleTimeout) changes a timer
// twice. A deadline needs arming only when it comes sooner than the one armed: a later one
// (or none) is kept as wanted, and when the armed one passes first, Read arms the one wanted
// and reads on. So a read still fails exactly when the deadline last set passes, never sooner;
// only the timer is changed less often. And a deadline armed for the idle wait is armed at most
// the head's time ahead (it may come sooner than wanted, never later): the head's deadline, set
// once the next request's first bytes arrive, then comes no sooner than it and needs no change
// either, nor does the whole request's. A request then arms the timer twice, as the ceiling's:
// for the idle wait, and in the past when its answer is done.
type boundConn struct {
	net.Conn
	open *atomic.Int64
	head time.Duration
	once sync.Once

	mu    sync.Mutex
	want  time.Time // the read deadline last set (zero: none)
	armed time.Time // the read deadline set on Conn: never later than want (zero: none)
	// lazy says that want may not be the deadline armed (one sooner is); expired that armed
	// has passed (a read fails at once).
	lazy, expired bool
	write         time.Time // the write deadline set on Conn
}

// CloseWrite half-closes a TCP connection: http.Server does so before closing a connection
// whose request it did not read whole (a 413), so that the client reads the answer rather than
// a reset.
func (c *boundConn) CloseWrite() error {
	if cw, ok := c.Conn.(interface{ CloseWrite() error }); ok {
		return cw.CloseWrite()
	}
	return nil
}

func (c *boundConn) Close() error {
	c.once.Do(func() { c.open.Add(-1) })
	return c.Conn.Close()
}

// Read reads from Conn; when the armed deadline passed before the one wanted, it arms that one
// and reads on.
func (c *boundConn) Read(p []byte) (int, error) {
	for {
		n, err := c.Conn.Read(p)
		if n > 0 || err == nil || !c.rearm(err) {
			return n, err
		}
	}
}

// rearm arms the deadline wanted when err is the passing of an armed one that came sooner, and
// reports whether it did: then the read goes on.
func (c *boundConn) rearm(err error) bool {
	c.mu.Lock()
	if !c.lazy || !errors.Is(err, os.ErrDeadlineExceeded) {
		c.mu.Unlock()
		return false
	}
	c.armed, c.lazy = c.want, false
	if c.expired = !c.want.IsZero() && !time.Now().Before(c.want); c.expired {
		c.mu.Unlock()
		return false
	}
	err = c.Conn.SetReadDeadline(c.want)
	c.mu.Unlock()
	return err == nil
}

// SetReadDeadline sets the read deadline: on Conn when it comes sooner than the one armed, or
// that one has passed; else it is kept for Read to arm when the armed one passes.
func (c *boundConn) SetReadDeadline(t time.Time) error {
	c.mu.Lock()
	c.want = t
	if t.IsZero() || !c.expired && !c.armed.IsZero() && !t.Before(c.armed) {
		c.lazy = true
		c.mu.Unlock()
		return nil
	}
	now := time.Now()
	ahead := t.Sub(now)
	c.armed, c.lazy, c.expired = t, false, ahead <= 0
	if ahead > c.head {
		c.armed, c.lazy = now.Add(c.head), true
	}
	err := c.Conn.SetReadDeadline(c.armed)
	c.mu.Unlock()
	return err
}

// SetWriteDeadline sets the write deadline on Conn, unless it is the one set already (net/http
// sets none after every answer).
func (c *boundConn) SetWriteDeadline(t time.Time) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	if t.Equal(c.write) {
		return nil
	}
	c.write = t
	return c.Conn.SetWriteDeadline(t)
}

// SetDeadline sets both deadlines as SetReadDeadline and SetWriteDeadline do.
func (c *boundConn) SetDeadline(t time.Time) error {
	return errors.Join(c.SetReadDeadline(t), c.SetWriteDeadline(t))
}
