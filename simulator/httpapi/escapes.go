package httpapi

import (
	"bufio"
	"bytes"
	"net"
	"net/textproto"
	"strconv"
	"strings"
)

// Listener returns ln with its connections' request lines made routable as Starlette routes
// them (decisions D19): uvicorn decodes a path with urllib.parse.unquote, which keeps an invalid
// percent-escape ("%zz", "%", "%2") as it is, while Go's net/http refuses such a request line
// with a plain-text 400 before any handler runs, and offers no hook to do otherwise. So the
// connection escapes each such "%" as "%25" in the request line's path before net/http reads
// it: the path the server decodes is then exactly the one uvicorn hands Starlette, and every
// answer is the API's JSON. Nothing else of a request is touched.
//
// To know where each request line starts, the connection follows HTTP/1.1's framing as net/http
// reads it (Content-Length, or chunked when Transfer-Encoding says so on HTTP/1.1). On
// anything it does not follow exactly — an unsupported or repeated length, a malformed chunk,
// trailers, a head over net/http's bound — it stops rewriting and passes the rest of the
// connection through untouched: net/http refuses such a request and closes the connection, so
// a request line is never looked for where net/http would not read one.
func Listener(ln net.Listener) net.Listener { return escapeListener{ln} }

type escapeListener struct{ net.Listener }

func (l escapeListener) Accept() (net.Conn, error) {
	c, err := l.Listener.Accept()
	if err != nil {
		return nil, err
	}
	return &escapeConn{Conn: c}, nil
}

// The states of a connection's framing.
const (
	atRequestLine = iota
	inHead
	inBody
	atChunkLine
	inChunk
	atChunkEnd // the CRLF after a chunk's data
	atTrailer  // after the last chunk: its CRLF (trailers are not followed)
	passThrough
)

// maxHead is what net/http reads of a head at most (DefaultMaxHeaderBytes and its 4096-byte
// allowance); a longer one is refused, so the connection stops following it.
const maxHead = 1<<20 + 4096

// maxChunkLine is net/http's bound on a chunk-size line (its reader's buffer).
const maxChunkLine = 4096

type escapeConn struct {
	net.Conn
	in      []byte // read, not yet framed
	out     []byte // framed, not yet handed to the server
	state   int
	http11  bool   // the current request is HTTP/1.1 or later
	head    []byte // the current request's header lines
	framed  bool   // they name a length or an encoding, or fold a line
	remain  uint64 // bytes left of the body or of the chunk
	excess  int64  // net/http's count of a chunked body's overhead
	scratch [4096]byte
	// direct says that c.in is the caller's buffer, framed where it lies (readDirect): what is
	// framed stays there rather than being copied to c.out; stopped says a request line there
	// needs rewriting, which only a copy can hold.
	direct, stopped bool
	// held is what the connection keeps of a response being written (holdResponse), nil when
	// it holds nothing: net/http writes from the connection's own goroutine, the handler's.
	held *[]byte
}

func (c *escapeConn) Read(p []byte) (int, error) {
	var err error // the last read's, returned once what it brought is framed
	if len(c.in) == 0 && len(c.out) == 0 && c.state != passThrough && len(p) >= minDirect {
		var n int
		if n, err = c.readDirect(p); n > 0 || err != nil && len(c.in) == 0 {
			return n, err
		}
	}
	for len(c.out) == 0 {
		if err != nil {
			for len(c.out) == 0 && c.step() {
			}
			if len(c.out) == 0 {
				return 0, err
			}
			break
		}
		if c.step() {
			continue
		}
		if c.state == passThrough { // nothing held back
			return c.Conn.Read(p)
		}
		var n int
		n, err = c.Conn.Read(c.scratch[:])
		c.in = append(c.in, c.scratch[:n]...)
	}
	n := copy(p, c.out)
	c.out = c.out[n:]
	return n, nil
}

// minDirect is the smallest read readDirect serves: net/http reads a connection through a
// 4 KB buffer, and a smaller read (its background read's one byte) would seldom hold a line.
const minDirect = 1 << 10

// readDirect reads from the connection straight into p and frames the bytes where they lie,
// as far as they need no rewriting: a client that escapes its paths as it should has every
// request handed to net/http without a copy. What does not frame there — a line not yet
// whole, a request line to rewrite, and what follows — is held back in c.in for Read's
// copying path, which frames it as ever. It returns how many bytes of p are framed, and the
// read's error when there are none (otherwise, as in the copying path, the next read meets
// the error again).
func (c *escapeConn) readDirect(p []byte) (int, error) {
	n, err := c.Conn.Read(p)
	held := c.in[:0]
	c.in, c.direct = p[:n], true
	for !c.stopped && c.step() {
	}
	framed := n - len(c.in)
	c.in, c.direct, c.stopped = append(held, c.in...), false, false
	if framed > 0 {
		return framed, nil
	}
	return 0, err
}

// step frames what it can of c.in into c.out and reports whether it made progress.
func (c *escapeConn) step() bool {
	if len(c.in) == 0 {
		return false
	}
	switch c.state {
	case passThrough:
		c.emit(len(c.in))
	case atRequestLine, inHead, atChunkLine:
		i := bytes.IndexByte(c.in, '\n')
		if i < 0 {
			if len(c.in)+len(c.head) > maxHead || c.state == atChunkLine && len(c.in) >= maxChunkLine {
				c.state = passThrough
				return true
			}
			return false
		}
		c.line(i + 1)
	case inBody, inChunk:
		n := min(uint64(len(c.in)), c.remain)
		c.emit(int(n))
		if c.remain -= n; c.remain == 0 && c.state == inBody {
			c.state = atRequestLine
		} else if c.remain == 0 {
			c.state = atChunkEnd
		}
	case atTrailer:
		return c.trailer()
	case atChunkEnd:
		if len(c.in) < 2 {
			return false
		}
		if string(c.in[:2]) != "\r\n" {
			c.state = passThrough
			return true
		}
		c.emit(2)
		c.state = atChunkLine
	}
	return true
}

// line frames the n bytes of c.in that end with its first newline.
func (c *escapeConn) line(n int) {
	l := c.in[:n]
	switch c.state {
	case atRequestLine:
		fixed, http11, ok := fixRequestLine(l)
		if c.direct && len(fixed) != len(l) {
			c.stopped = true // a rewritten line is longer than the bytes it stands for
			return
		}
		if !c.direct {
			c.out = append(c.out, fixed...)
		}
		c.in = c.in[n:]
		c.head, c.http11, c.state = c.head[:0], http11, inHead
		if !ok {
			c.state = passThrough
		}
	case inHead:
		if n == 1 || n == 2 && l[0] == '\r' { // the blank line: the head's end
			c.head = append(c.head, l...)
			c.emit(n)
			c.frame()
			return
		}
		// Only a head naming a length or an encoding, or folding a line, needs reading as
		// net/http reads it: any other has no body.
		if !c.framed {
			switch l[0] {
			case ' ', '\t':
				c.framed = true
			case 'c', 'C':
				c.framed = hasPrefixFold(l, "content-length:")
			case 't', 'T':
				c.framed = hasPrefixFold(l, "transfer-encoding:")
			}
		}
		c.head = append(c.head, l...)
		c.emit(n)
	case atChunkLine:
		// net/http's chunked reader: CRLF and no other CR, under its bound, a hex size
		// once blanks and any extension are cut, and a bound on the overhead.
		if n > maxChunkLine || n < 2 || bytes.IndexByte(l, '\r') != n-2 {
			c.state = passThrough
			return
		}
		c.excess += int64(n)
		size, ok := chunkSize(l[:n-2])
		c.excess = max(c.excess-16-2*int64(min(size, 1<<40)), 0)
		if !ok || c.excess > 16*1024 {
			c.state = passThrough
			return
		}
		c.emit(n)
		c.remain, c.state = size, inChunk
		if size == 0 {
			c.state = atTrailer
		}
	}
}

// trailer frames what follows a chunked body's last chunk as net/http's body.readTrailer reads
// it: a CRLF, or trailer lines ending in "\r\n\r\n" within its reader's buffer that
// textproto reads as a header.
func (c *escapeConn) trailer() bool {
	if len(c.in) < 2 {
		return false
	}
	if string(c.in[:2]) == "\r\n" {
		c.emit(2)
		c.state = atRequestLine
		return true
	}
	end := bytes.Index(c.in, []byte("\r\n\r\n"))
	if end < 0 {
		if len(c.in) >= maxChunkLine {
			c.state = passThrough
			return true
		}
		return false
	}
	section := c.in[:end+4]
	r := bufio.NewReader(bytes.NewReader(section))
	if _, err := textproto.NewReader(r).ReadMIMEHeader(); err != nil || r.Buffered() != 0 {
		c.state = passThrough // not a header, or one that ends before the CRLFCRLF
		return true
	}
	c.emit(len(section))
	c.state = atRequestLine
	return true
}

// frame decides the current request's body from its head, as net/http's readTransfer does.
func (c *escapeConn) frame() {
	if !c.framed {
		c.head, c.state = c.head[:0], atRequestLine
		return
	}
	h, err := textproto.NewReader(bufio.NewReader(bytes.NewReader(c.head))).ReadMIMEHeader()
	c.head, c.framed = c.head[:0], false
	if err != nil {
		c.state = passThrough
		return
	}
	te, chunked := h["Transfer-Encoding"]
	chunked = chunked && c.http11 // net/http ignores it on HTTP/1.0
	if chunked && (len(te) != 1 || !strings.EqualFold(te[0], "chunked")) {
		c.state = passThrough
		return
	}
	var n uint64
	if cl := h["Content-Length"]; len(cl) > 0 {
		first := textproto.TrimString(cl[0])
		for _, v := range cl[1:] {
			if textproto.TrimString(v) != first {
				c.state = passThrough
				return
			}
		}
		if n, err = strconv.ParseUint(first, 10, 63); err != nil {
			c.state = passThrough
			return
		}
	}
	switch {
	case chunked:
		c.state, c.excess = atChunkLine, 0
	case n > 0:
		c.state, c.remain = inBody, n
	default:
		c.state = atRequestLine
	}
}

func hasPrefixFold(l []byte, prefix string) bool {
	return len(l) >= len(prefix) && strings.EqualFold(string(l[:len(prefix)]), prefix)
}

// emit frames the next n bytes of c.in as they are.
func (c *escapeConn) emit(n int) {
	if !c.direct {
		c.out = append(c.out, c.in[:n]...)
	}
	c.in = c.in[n:]
}

// chunkSize parses a chunk-size line without its CRLF as net/http does: trailing blanks
// dropped, any extension cut at ";", then at most 16 hex digits.
func chunkSize(p []byte) (uint64, bool) {
	p = bytes.TrimRight(p, " \t")
	p, _, _ = bytes.Cut(p, []byte(";"))
	if len(p) == 0 || len(p) > 16 {
		return 0, false
	}
	n, err := strconv.ParseUint(string(p), 16, 64)
	return n, err == nil
}

// fixRequestLine escapes each "%" of the line's path that does not start a valid escape, and
// reports whether the request is HTTP/1.1 or later, and whether the line is one net/http
// reads (method, target, "HTTP/x.y" parted by single spaces); a line that is not is left alone.
func fixRequestLine(l []byte) (fixed []byte, http11, ok bool) {
	s := bytes.TrimSuffix(bytes.TrimSuffix(l, []byte("\n")), []byte("\r"))
	_, rest, ok1 := cutByte(s, ' ')
	target, proto, ok2 := cutByte(rest, ' ')
	major, minor, ok3 := parseProto(proto)
	if !ok1 || !ok2 || !ok3 {
		return l, false, false
	}
	http11 = major > 1 || major == 1 && minor >= 1
	path, _, _ := cutByte(target, '?')
	if len(path) == 0 || path[0] != '/' || validEscapes(path) {
		return l, http11, true
	}
	at := len(s) - len(rest) // the target starts after the method and its space
	b := make([]byte, 0, len(l)+8)
	b = append(b, l[:at]...)
	for i := 0; i < len(path); i++ {
		b = append(b, path[i])
		if path[i] == '%' && !(i+2 < len(path) && isHex(path[i+1]) && isHex(path[i+2])) {
			b = append(b, "25"...)
		}
	}
	return append(b, l[at+len(path):]...), http11, true
}

// cutByte is bytes.Cut around a one-byte separator, without its search for a longer one.
func cutByte(s []byte, sep byte) (before, after []byte, found bool) {
	if i := bytes.IndexByte(s, sep); i >= 0 {
		return s[:i], s[i+1:], true
	}
	return s, nil, false
}

func validEscapes(path []byte) bool {
	if bytes.IndexByte(path, '%') < 0 {
		return true
	}
	for i := 0; i < len(path); i++ {
		if path[i] == '%' && (i+2 >= len(path) || !isHex(path[i+1]) || !isHex(path[i+2])) {
			return false
		}
	}
	return true
}

func isHex(c byte) bool { return c >= '0' && c <= '9' || c >= 'a' && c <= 'f' || c >= 'A' && c <= 'F' }

// parseProto reads "HTTP/x.y" as http.ParseHTTPVersion does for the versions it accepts.
func parseProto(p []byte) (major, minor int, ok bool) {
	rest, found := bytes.CutPrefix(p, []byte("HTTP/"))
	if !found || len(rest) != 3 || rest[1] != '.' || rest[0] < '0' || rest[0] > '9' || rest[2] < '0' || rest[2] > '9' {
		return 0, 0, false
	}
	return int(rest[0] - '0'), int(rest[2] - '0'), true
}
