package loadtest

import (
	"bufio"
	"io"
	"net"
	"net/http"
	"testing"

	"github.com/partnersim/partnersim/simulator/httpapi"
)

// BenchmarkWireDetail asks for one Get User Detail (usr_hfcu_0001 of the default set, 11 KB,
// its view kept after the first) over one loopback connection, again and again: the cost of a
// request on the wire — the client's and the server's CPU, the kernel's included — with each
// answer in one write (as serve sends it, httpapi.ConnContext) and as net/http writes it
// (its 4 KB buffer: two writes).
func BenchmarkWireDetail(b *testing.B) {
	h, _, key := benchHost(b, HostConfig{})
	req := []byte("GET /v1/users/usr_hfcu_0001/?user_account_id_type=platform HTTP/1.1\r\nHost: 127.0.0.1\r\nx-api-key: " + key + "\r\n\r\n")
	for _, bench := range []struct {
		name string
		one  bool
	}{{"one-write", true}, {"net-http", false}} {
		limits := httpapi.DefaultConnLimits()
		srv := limits.HTTPServer(h.Sandbox.Server)
		if !bench.one {
			srv.ConnContext = nil
		}
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			b.Fatal(err)
		}
		go func() { _ = srv.Serve(h.Sandbox.Listener(limits.Listener(ln))) }()
		b.Run(bench.name, func(b *testing.B) { askAgain(b, ln.Addr().String(), req, -1) })
		_ = srv.Close()
	}
}

// askAgain sends req on one connection to addr and reads its answer, again and again for the
// benchmark's loop, failing on any answer but a 200 (of wantLen bytes, when not negative).
func askAgain(b *testing.B, addr string, req []byte, wantLen int64) {
	conn, err := net.Dial("tcp", addr)
	if err != nil {
		b.Fatal(err)
	}
	defer conn.Close()
	r := bufio.NewReaderSize(conn, 32<<10)
	start := sampleCPU()
	for b.Loop() {
		if _, err := conn.Write(req); err != nil {
			b.Fatal(err)
		}
		res, err := http.ReadResponse(r, nil)
		if err != nil {
			b.Fatal(err)
		}
		_, _ = io.Copy(io.Discard, res.Body)
		res.Body.Close()
		if res.StatusCode != http.StatusOK || wantLen >= 0 && res.ContentLength != wantLen {
			b.Fatalf("status %d, %d bytes", res.StatusCode, res.ContentLength)
		}
	}
	reportCPU(b, start)
}
