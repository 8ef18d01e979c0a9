package httpapi

import (
	"bytes"
	"io"
	"net"
	"strings"
	"testing"
	"testing/iotest"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// streamConn is a connection whose client sent stream; reads come in the sizes r gives.
type streamConn struct {
	net.Conn
	r io.Reader
}

func (c streamConn) Read(p []byte) (int, error) { return c.r.Read(p) }

// framed reads everything a server would read through escapeConn, the client's bytes handed
// over in reads of every size from one byte up, and read in small reads (framed in the
// connection's own buffer) and in net/http's (framed where they lie, readDirect, as far as
// they can be).
func framed(t *testing.T, stream string) string {
	t.Helper()
	var outs []string
	for _, mk := range []func(io.Reader) io.Reader{iotest.OneByteReader, iotest.HalfReader, func(r io.Reader) io.Reader { return r }} {
		for _, size := range []int{7, 4096} {
			c := &escapeConn{Conn: nil}
			c.Conn = streamConn{r: mk(strings.NewReader(stream))}
			var out bytes.Buffer
			buf := make([]byte, size)
			for {
				n, err := c.Read(buf)
				out.Write(buf[:n])
				if err == io.EOF {
					break
				}
				require.NoError(t, err)
			}
			outs = append(outs, out.String())
		}
	}
	for i, out := range outs[1:] {
		assert.Equal(t, outs[0], out, "the framing does not depend on how the bytes arrive or are read (%d)", i+1)
	}
	return outs[0]
}

// TestEscapeConnRewritesOnlyRequestLines: every request line's invalid escapes become %25, and
// nothing else changes — bodies (sized, chunked with extensions and trailers) that hold text
// like a request line pass as sent, as do HTTP/1.0's ignored Transfer-Encoding and pipelined
// requests.
func TestEscapeConnRewritesOnlyRequestLines(t *testing.T) {
	lookalike := "GET /%zz HTTP/1.1\r\n"
	in := "GET /v1/transactions/%zz/?q=%zz HTTP/1.1\r\nHost: h\r\n\r\n" +
		"POST /v1/sessions/revoke/ HTTP/1.1\r\nHost: h\r\nContent-Length: 19\r\n\r\n" + lookalike +
		"POST /a%2 HTTP/1.1\r\nHost: h\r\nTransfer-Encoding: chunked\r\n\r\n13;x=y\r\n" + lookalike + "\r\n5\r\nabcde\r\n0\r\nX-T: GET /%zz HTTP/1.1\r\n\r\n" +
		"POST /b HTTP/1.0\r\nTransfer-Encoding: chunked\r\nContent-Length: 19\r\n\r\n" + lookalike +
		"POST /c HTTP/1.1\r\nhost: h\r\ncontent-length: 19\r\n\r\n" + lookalike +
		"POST /d HTTP/1.1\r\nHost: h\r\ntransfer-encoding: chunked\r\n\r\n13\r\n" + lookalike + "\r\n0\r\n\r\n" +
		"GET /%%41%4 HTTP/1.1\r\nHost: h\r\n\r\n" +
		"GET /ok%41 HTTP/1.1\r\nHost: h\r\n\r\n"
	want := strings.NewReplacer(
		"GET /v1/transactions/%zz/?q=%zz HTTP", "GET /v1/transactions/%25zz/?q=%zz HTTP",
		"POST /a%2 HTTP", "POST /a%252 HTTP",
		"GET /%%41%4 HTTP", "GET /%25%41%254 HTTP",
	).Replace(in)
	assert.Equal(t, want, framed(t, in))
}

// TestEscapeConnStopsWhereNetHTTPRefuses: after a request whose framing net/http refuses (and
// answers by closing the connection), nothing more is rewritten.
func TestEscapeConnStopsWhereNetHTTPRefuses(t *testing.T) {
	next := "GET /%zz HTTP/1.1\r\nHost: h\r\n\r\n"
	for name, head := range map[string]string{
		"gzip":              "Transfer-Encoding: gzip\r\n",
		"two encodings":     "Transfer-Encoding: chunked\r\nTransfer-Encoding: chunked\r\n",
		"two lengths":       "Content-Length: 1\r\nContent-Length: 2\r\n",
		"a signed length":   "Content-Length: +1\r\n",
		"a bare LF chunk":   "Transfer-Encoding: chunked\r\n\r\n1\nx\r\n0\r\n",
		"a bad chunk size":  "Transfer-Encoding: chunked\r\n\r\nzz\r\n",
		"a bad chunk end":   "Transfer-Encoding: chunked\r\n\r\n1\r\nxy",
		"a malformed trail": "Transfer-Encoding: chunked\r\n\r\n0\r\nnocolon\r\n\r\n",
	} {
		in := "POST /a HTTP/1.1\r\nHost: h\r\n" + head + "\r\n" + next
		if strings.Contains(head, "chunked\r\n\r\n") {
			in = "POST /a HTTP/1.1\r\nHost: h\r\n" + head + next
		}
		assert.Equal(t, in, framed(t, in), name)
	}
	for _, in := range []string{
		"NOT-A-REQUEST-LINE\r\n\r\n" + next,
		"POST /a HTTP/1.1\r\n folded: x\r\nHost: h\r\n\r\n" + next,
	} {
		assert.Equal(t, in, framed(t, in))
	}
}

// BenchmarkEscapeConn is the listener's cost per request: a typical GET with a key, framed, the
// requests sent back to back (pipelined: reads end anywhere in a request) and one a read (a
// keep-alive client waiting for each answer).
func BenchmarkEscapeConn(b *testing.B) {
	req := "GET /v1/users/usr_hfcu_0001/?user_account_id_type=platform HTTP/1.1\r\nHost: 127.0.0.1:8080\r\n" +
		"User-Agent: wrk\r\nx-api-key: sbx_harborAllScopes0000000000000000000000001\r\n\r\n"
	stream := strings.Repeat(req, 64)
	for _, bench := range []struct {
		name   string
		reader func() io.Reader
	}{
		{"pipelined", func() io.Reader { return strings.NewReader(stream) }},
		{"one-a-read", func() io.Reader { return &requestsReader{req: req, n: 64} }},
	} {
		b.Run(bench.name, func(b *testing.B) {
			buf := make([]byte, 4096)
			b.ReportAllocs()
			b.SetBytes(int64(len(req)))
			for i := 0; i < b.N; i += 64 {
				c := &escapeConn{Conn: streamConn{r: bench.reader()}}
				for {
					if _, err := c.Read(buf); err != nil {
						break
					}
				}
			}
		})
	}
}

// requestsReader reads as req n times, one whole req a read.
type requestsReader struct {
	req string
	n   int
}

func (r *requestsReader) Read(p []byte) (int, error) {
	if r.n == 0 {
		return 0, io.EOF
	}
	r.n--
	return copy(p, r.req), nil
}
