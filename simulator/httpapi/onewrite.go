package httpapi

import (
	"context"
	"net"
	"net/http"
	"sync"
)

// A response goes out in one write. net/http buffers a connection's output 4 KB at a time, so
// the head and a 9 KB detail left in two or three write(2)s, each a loopback segment sent and
// received through the kernel's whole stack: on the wire, those writes were a quarter of the
// server's CPU a random detail. While a connection holds (holdResponse), what net/http writes
// to it is kept; writeRaw then flushes net/http's buffers into it and releases it, one write
// with the head and the whole body. The bytes are the same; only their grouping into writes
// changes.

// connKey keys a request's connection in its context (ConnContext).
type connKey struct{}

// ConnContext is the ConnContext of an http.Server serving Listener's connections (HTTPServer's,
// the tests' harness): it keeps a connection of Listener in its requests' context, for writeRaw
// to send each answer in one write. Without it answers are written as net/http writes them.
func ConnContext(ctx context.Context, c net.Conn) context.Context {
	if ec, ok := c.(*escapeConn); ok {
		return context.WithValue(ctx, connKey{}, ec)
	}
	return ctx
}

// maxHeld bounds what a connection holds: a larger answer goes out as net/http writes it.
const maxHeld = 256 << 10

// heldBuffers recycles the held bytes of responses.
var heldBuffers = sync.Pool{New: func() any { b := make([]byte, 0, 16<<10); return &b }}

// holdResponse makes the connection of r (when it is one of Listener's, served with
// ConnContext) keep what is written to it until release, for a body of n bytes that may not fit
// net/http's buffer with the head; it returns nil otherwise.
func holdResponse(r *http.Request, n int) *escapeConn {
	if n <= 2<<10 {
		return nil
	}
	c, _ := r.Context().Value(connKey{}).(*escapeConn)
	if c != nil && c.held == nil {
		c.held = heldBuffers.Get().(*[]byte)
	}
	return c
}

// release flushes w's buffers into c and writes what c held at once.
func (c *escapeConn) release(w http.ResponseWriter) {
	if f, ok := w.(interface{ FlushError() error }); ok {
		_ = f.FlushError() // a write's error is the connection's: net/http sees it on its next use
	}
	_ = c.writeHeld()
}

// writeHeld writes what c holds and stops holding.
func (c *escapeConn) writeHeld() error {
	b := c.held
	if b == nil {
		return nil
	}
	c.held = nil
	var err error
	if len(*b) > 0 {
		_, err = c.Conn.Write(*b)
	}
	*b = (*b)[:0]
	heldBuffers.Put(b)
	return err
}

// Write keeps p while c holds (up to maxHeld; then it writes what it held and p as they come).
func (c *escapeConn) Write(p []byte) (int, error) {
	if c.held != nil {
		if len(*c.held)+len(p) <= maxHeld {
			*c.held = append(*c.held, p...)
			return len(p), nil
		}
		if err := c.writeHeld(); err != nil {
			return 0, err
		}
	}
	return c.Conn.Write(p)
}
