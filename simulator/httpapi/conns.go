package httpapi

import (
	"io"
	"net"
	"net/http"
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
	// MaxConns is the most connections open at once; beyond it a new one is answered 503 with
	// Retry-After and closed.
	MaxConns int
}

// DefaultConnLimits are serve's: 2 minutes idle, 30 seconds a request, 4,096 connections (well
// under a usual open-file limit, well over what a test suite or load run opens).
func DefaultConnLimits() ConnLimits {
	return ConnLimits{Idle: 2 * time.Minute, Request: 30 * time.Second, MaxConns: 4096}
}

// HTTPServer returns an http.Server serving h within l's times (the request line and headers
// within 10 seconds at most, all of it within Request). Serve it on l.Listener's listener for the
// cap on connections. ReadTimeout bounds the client's sending only: http.Server clears the
// deadline once the body is in, so a handler may take longer. A connection of Listener sends
// each JSON answer in one write (holdResponse).
func (l ConnLimits) HTTPServer(h http.Handler) *http.Server {
	return &http.Server{Handler: h, ReadHeaderTimeout: min(l.Request, 10*time.Second), ReadTimeout: l.Request, IdleTimeout: l.Idle,
		ConnContext: ConnContext}
}

// Listener wraps ln so that at most l.MaxConns accepted connections are open at once (none
// when MaxConns is 0 or less); one more is answered 503 with Retry-After and closed.
// golang.org/x/net/netutil.LimitListener bounds the count too, but by not accepting: a client
// beyond the cap waits in the kernel's backlog with no answer until its own timeout, where
// D18 wants it told to retry.
func (l ConnLimits) Listener(ln net.Listener) net.Listener {
	if l.MaxConns <= 0 {
		return ln
	}
	return &capListener{Listener: ln, max: int64(l.MaxConns), refusing: make(chan struct{}, maxRefusing)}
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
	max      int64
	open     atomic.Int64
	refusing chan struct{}
}

func (c *capListener) Accept() (net.Conn, error) {
	for {
		conn, err := c.Listener.Accept()
		if err != nil {
			return nil, err
		}
		if c.open.Add(1) <= c.max {
			return &countedConn{Conn: conn, open: &c.open}, nil
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

// countedConn gives its place back when closed (once, however often Close is called).
type countedConn struct {
	net.Conn
	open *atomic.Int64
	once sync.Once
}

// CloseWrite half-closes a TCP connection: http.Server does so before closing a connection
// whose request it did not read whole (a 413), so that the client reads the answer rather than
// a reset.
func (c *countedConn) CloseWrite() error {
	if cw, ok := c.Conn.(interface{ CloseWrite() error }); ok {
		return cw.CloseWrite()
	}
	return nil
}

func (c *countedConn) Close() error {
	c.once.Do(func() { c.open.Add(-1) })
	return c.Conn.Close()
}
