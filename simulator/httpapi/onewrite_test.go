package httpapi_test

import (
	"bufio"
	"io"
	"net"
	"net/http"
	"sync/atomic"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/partnersim/partnersim/simulator/httpapi"
)

// writesListener counts the writes to its connections.
type writesListener struct {
	net.Listener
	writes atomic.Int64
}

func (l *writesListener) Accept() (net.Conn, error) {
	c, err := l.Listener.Accept()
	if err != nil {
		return nil, err
	}
	return writesConn{c, &l.writes}, nil
}

type writesConn struct {
	net.Conn
	writes *atomic.Int64
}

func (c writesConn) Write(p []byte) (int, error) {
	c.writes.Add(1)
	return c.Conn.Write(p)
}

// A JSON answer leaves the server in one write, head and body, however much larger than
// net/http's 4 KB buffer (an 11 KB detail or a list page was two writes): each write is a loopback
// segment through the kernel's stack, a fixed cost of every request on the wire. Its bytes are
// those of the sandbox served without it (the harness's server).
func TestAnswerInOneWrite(t *testing.T) {
	a := MustServe(t)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	counted := &writesListener{Listener: ln}
	limits := httpapi.DefaultConnLimits()
	srv := limits.HTTPServer(a.SB.Server)
	go func() { _ = srv.Serve(httpapi.Listener(limits.Listener(counted))) }()
	t.Cleanup(func() { _ = srv.Close() })

	conn := dial(t, ln.Addr().String())
	r := bufio.NewReader(conn)
	for _, path := range []string{
		"/v1/users/usr_hfcu_0001/?user_account_id_type=platform", // 11 KB
		"/v1/users/?per_page=100",                                // a list page
		"/v1/users/usr_hfcu_0009/?user_account_id_type=platform", // under 1 KB
		"/v1/users/usr_nobody/?user_account_id_type=platform",    // 404
	} {
		t.Run(path, func(t *testing.T) {
			want := a.Get(t, path, keyAll)
			before := counted.writes.Load()
			_, err := io.WriteString(conn, "GET "+path+" HTTP/1.1\r\nHost: 127.0.0.1\r\nx-api-key: "+keyAll+"\r\n\r\n")
			require.NoError(t, err)
			res, err := http.ReadResponse(r, nil)
			require.NoError(t, err)
			body, err := io.ReadAll(res.Body)
			require.NoError(t, err)
			res.Body.Close()
			assert.Equal(t, int64(1), counted.writes.Load()-before, "writes of one answer")
			assert.Equal(t, want.Status, res.StatusCode)
			assert.Equal(t, string(want.Body), string(body))
			assert.Equal(t, want.Header.Get("Content-Length"), res.Header.Get("Content-Length"))
		})
	}
}
