package httpapi_test

import (
	"bufio"
	"errors"
	"io"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/partnersim/partnersim/simulator/httpapi"
)

// serveLimited serves the sandbox's handler as serve does, within limits, on a loopback port.
func serveLimited(t *testing.T, limits httpapi.ConnLimits) string {
	t.Helper()
	a := MustServe(t)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	srv := limits.HTTPServer(a.SB.Server)
	go func() { _ = srv.Serve(limits.Listener(ln)) }()
	t.Cleanup(func() { _ = srv.Close() })
	return ln.Addr().String()
}

// closedByServer waits (at most 20 s) for the server to close conn, reading and discarding what
// it answers first, and reports whether it did.
func closedByServer(t *testing.T, conn net.Conn) bool {
	t.Helper()
	require.NoError(t, conn.SetReadDeadline(time.Now().Add(20*time.Second)))
	_, err := io.Copy(io.Discard, conn)
	var ne net.Error
	if errors.As(err, &ne) && ne.Timeout() {
		return false
	}
	return true
}

func dial(t *testing.T, addr string) net.Conn {
	t.Helper()
	conn, err := net.Dial("tcp", addr)
	require.NoError(t, err)
	t.Cleanup(func() { conn.Close() })
	return conn
}

// healthy dials addr and asks for /health on the connection, which it leaves open (keep-alive).
func healthy(t *testing.T, addr string) net.Conn {
	t.Helper()
	c := dial(t, addr)
	_, err := io.WriteString(c, "GET /health HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n")
	require.NoError(t, err)
	res, err := http.ReadResponse(bufio.NewReader(c), nil)
	require.NoError(t, err)
	res.Body.Close()
	require.Equal(t, http.StatusOK, res.StatusCode)
	return c
}

// Connections are bounded in time as requests are in size (decisions D18): an idle keep-alive
// connection, a connection that sends nothing, a request head that never ends and a body sent
// too slowly are all closed by the server (here within 300 ms, so that the test does not wait
// the defaults' 2 minutes and 30 seconds).
func TestConnectionsAreClosedInTime(t *testing.T) {
	// Each bound on a server whose other bound is a minute, so that each is seen to hold alone.
	idleOnly := serveLimited(t, httpapi.ConnLimits{Idle: 300 * time.Millisecond, Request: time.Minute, MaxConns: 1000})
	addr := serveLimited(t, httpapi.ConnLimits{Idle: time.Minute, Request: 300 * time.Millisecond, MaxConns: 1000})
	var idle, silent, slowHead, slowBody []net.Conn
	for range 40 {
		idle = append(idle, healthy(t, idleOnly))

		silent = append(silent, dial(t, addr))

		c := dial(t, addr)
		_, err := io.WriteString(c, "GET /health HTTP/1.1\r\nHost: 127.0.0.1\r\n")
		require.NoError(t, err)
		slowHead = append(slowHead, c)

		c = dial(t, addr)
		_, err = io.WriteString(c, "PUT /v1/users/x HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nContent-Length: 100\r\n\r\n{")
		require.NoError(t, err)
		slowBody = append(slowBody, c)
	}
	for what, conns := range map[string][]net.Conn{"idle keep-alive": idle, "silent": silent, "unfinished head": slowHead, "slow body": slowBody} {
		open := 0
		for _, c := range conns {
			if !closedByServer(t, c) {
				open++
			}
		}
		assert.Zero(t, open, "%d of %d %s connections still open after 20 s", open, len(conns), what)
	}
}

// Beyond the cap on open connections a new one is answered 503 with Retry-After in the API's
// shape and closed (decisions D18); once one closes, the next is served again.
func TestConnectionCapAnswers503(t *testing.T) {
	addr := serveLimited(t, httpapi.ConnLimits{Idle: time.Minute, Request: time.Minute, MaxConns: 4})
	var held []net.Conn
	for range 4 {
		held = append(held, healthy(t, addr))
	}
	c := dial(t, addr)
	_, err := io.WriteString(c, "GET /health HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n")
	require.NoError(t, err)
	res, err := http.ReadResponse(bufio.NewReader(c), nil)
	require.NoError(t, err)
	body, _ := io.ReadAll(res.Body)
	assert.Equal(t, http.StatusServiceUnavailable, res.StatusCode)
	assert.NotEmpty(t, res.Header.Get("Retry-After"))
	assert.Equal(t, "application/json", res.Header.Get("Content-Type"))
	assert.Contains(t, string(body), `"detail"`)
	assert.True(t, closedByServer(t, c), "the refused connection is closed")

	held[0].Close()
	deadline := time.Now().Add(20 * time.Second)
	for {
		res, err := http.Get("http://" + addr + "/health")
		if err == nil {
			res.Body.Close()
			if res.StatusCode == http.StatusOK {
				break
			}
		}
		require.True(t, time.Now().Before(deadline), "no connection served after one of the four closed: %v", err)
	}
}

// A request with both Content-Length and Transfer-Encoding is answered and its connection
// closed (RFC 9112 §6.1: the two lengths may be read differently by a proxy in front, the
// request smuggling that keeping the connection would allow).
func TestBothLengthsCloseTheConnection(t *testing.T) {
	addr := serveLimited(t, httpapi.DefaultConnLimits())
	c := dial(t, addr)
	_, err := io.WriteString(c, "POST /v1/webhooks/subscriptions HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n"+
		"Content-Length: 4\r\nTransfer-Encoding: chunked\r\n\r\n2\r\n{}\r\n0\r\n\r\n")
	require.NoError(t, err)
	res, err := http.ReadResponse(bufio.NewReader(c), nil)
	require.NoError(t, err)
	res.Body.Close()
	assert.Equal(t, http.StatusUnauthorized, res.StatusCode, "answered (no key)")
	assert.True(t, res.Close, "Connection: close")
	assert.True(t, closedByServer(t, c), "the connection is closed")
}

// A handler may take longer than the request's time once the body is in (a reset of a large
// set, a scenario run): the bound is on the client's sending, and the request's context is not
// cancelled by it.
func TestSlowHandlerKeepsItsContext(t *testing.T) {
	limits := httpapi.ConnLimits{Idle: time.Minute, Request: 300 * time.Millisecond, MaxConns: 10}
	cancelled := make(chan bool, 2)
	srv := limits.HTTPServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.Copy(io.Discard, r.Body)
		select {
		case <-r.Context().Done():
			cancelled <- true
		case <-time.After(time.Second): // three times the request's time, as a long reset takes
			cancelled <- false
		}
	}))
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	go func() { _ = srv.Serve(limits.Listener(ln)) }()
	t.Cleanup(func() { _ = srv.Close() })
	for _, body := range []io.Reader{nil, strings.NewReader(`{"a":1}`)} {
		res, err := http.Post("http://"+ln.Addr().String()+"/", "application/json", body)
		require.NoError(t, err)
		res.Body.Close()
		assert.False(t, <-cancelled, "the handler's context was cancelled (body %v)", body != nil)
	}
}

// Each of a connection's times holds on its own, however its deadlines are kept (decisions
// D18): a head is cut at the head's time though the request's is longer; a body may arrive
// after the head's time, within the request's; and a keep-alive connection may idle past the
// head's time, within its idle time. The waits are the bounds under test: time must pass.
func TestConnectionTimesHoldEachAlone(t *testing.T) {
	const head, request, idle = 200 * time.Millisecond, 3 * time.Second, 3 * time.Second
	addr := serveLimited(t, httpapi.ConnLimits{Idle: idle, Request: request, Head: head, MaxConns: 100})

	c := dial(t, addr)
	start := time.Now()
	_, err := io.WriteString(c, "GET /health HTTP/1.1\r\nHost: 127.0.0.1\r\n")
	require.NoError(t, err)
	require.True(t, closedByServer(t, c), "an unfinished head is closed")
	assert.Less(t, time.Since(start), request*2/3, "an unfinished head is closed at the head's time, not the request's")

	c = dial(t, addr)
	_, err = io.WriteString(c, "POST /v1/sessions/revoke/ HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nContent-Length: 2\r\n\r\n")
	require.NoError(t, err)
	<-time.After(3 * head)
	_, err = io.WriteString(c, "{}")
	require.NoError(t, err)
	require.NoError(t, c.SetReadDeadline(time.Now().Add(20*time.Second)))
	res, err := http.ReadResponse(bufio.NewReader(c), nil)
	require.NoError(t, err, "a body sent after the head's time, within the request's, is answered")
	res.Body.Close()
	assert.Equal(t, http.StatusUnauthorized, res.StatusCode, "answered (no key)")

	c = healthy(t, addr)
	<-time.After(3 * head)
	_, err = io.WriteString(c, "GET /health HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n")
	require.NoError(t, err)
	require.NoError(t, c.SetReadDeadline(time.Now().Add(20*time.Second)))
	res, err = http.ReadResponse(bufio.NewReader(c), nil)
	require.NoError(t, err, "a connection idle past the head's time, within its idle time, is served")
	res.Body.Close()
	assert.Equal(t, http.StatusOK, res.StatusCode)
}
