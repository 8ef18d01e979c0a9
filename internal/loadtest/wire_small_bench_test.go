package loadtest

import (
	"bufio"
	"bytes"
	"context"
	"io"
	"net"
	"net/http"
	"path/filepath"
	"testing"
	"time"

	"github.com/partnersim/partnersim/simulator"
	"github.com/partnersim/partnersim/simulator/sandbox"
)

// BenchmarkWireSmall asks for Get User Detail of the default set's unfunded user
// (usr_hfcu_0009, a 493-byte answer) over one loopback connection, again and again, from three
// servers in the same harness:
//
//   - sandbox: served as `partnersim serve` serves it — its http.Server and connection limits,
//     its listener (the cap and the sandbox's own wrapping), the gate, metrics on the API;
//   - ceiling: the bare echo server of `partnersim load` answering the very same bytes, served
//     as `partnersim ceiling` serves it;
//   - raw: one read and one write of the same bytes a request, with no HTTP server at all: the
//     client's own cost (and the kernel's), to take from the other two.
//
// What a request costs the sandbox beyond the ceiling is then its handler's work and its
// connection's (deadlines, wrappers, contexts): count the whole process's instructions, e.g.
//
//	go test -c -o /tmp/lt.test ./internal/loadtest
//	perf stat -e instructions:u /tmp/lt.test -test.run '^$' -test.bench 'WireSmall/sandbox' -test.benchtime 100000x
//
// at two -benchtime counts and divide the difference by the difference of the counts.
func BenchmarkWireSmall(b *testing.B) {
	ctx := context.Background()
	sb, err := sandbox.Open(ctx, sandbox.Config{DBPath: filepath.Join(b.TempDir(), "w.db"), RetrySchedule: []time.Duration{},
		Metrics: sandbox.NewMetrics(), MetricsOnAPI: true})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { _ = sb.Close() })
	key := ""
	for _, k := range sb.Fixtures.Keys {
		if k.InstitutionID == "ins_harbor" && k.HasScope(simulator.ScopeReadUser) {
			key = k.Plaintext
			break
		}
	}
	if key == "" {
		b.Fatal("no read:user key of ins_harbor")
	}
	const path = "/v1/users/usr_hfcu_0009/?user_account_id_type=platform"

	// The sandbox, as serve starts it.
	limits := sandbox.DefaultConnLimits()
	gate := sandbox.NewGate()
	gate.Ready(sb.Server, sb.Ready)
	srv := limits.HTTPServer(gate)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		b.Fatal(err)
	}
	go func() { _ = srv.Serve(sb.Listener(limits.Listener(ln))) }()
	b.Cleanup(func() { _ = srv.Close() })
	sandboxURL := "http://" + ln.Addr().String()

	// The ceiling, answering what the sandbox answered.
	cp, err := Capture(ctx, http.DefaultClient, sandboxURL, key, path)
	if err != nil {
		b.Fatal(err)
	}
	ceiling, err := StartCeiling(map[string]*Captured{path: cp})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { _ = ceiling.Close() })

	// raw answers every request with one whole answer of the sandbox's, as it came.
	answer := rawExchange(b, ln.Addr().String(), request(ln.Addr().String(), path, key))
	rawLn, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { _ = rawLn.Close() })
	go serveRaw(rawLn, answer)

	for _, t := range []struct{ name, addr string }{
		{"sandbox", ln.Addr().String()},
		{"ceiling", ceiling.URL[len("http://"):]},
		{"raw", rawLn.Addr().String()},
	} {
		req := request(t.addr, path, key)
		b.Run(t.name, func(b *testing.B) { askAgain(b, t.addr, req, int64(len(cp.Body))) })
	}
}

// request is a GET of path with the key as wrk sends it.
func request(addr, path, key string) []byte {
	return []byte("GET " + path + " HTTP/1.1\r\nHost: " + addr + "\r\nx-api-key: " + key + "\r\n\r\n")
}

// rawExchange sends req on a new connection to addr and returns the whole answer's bytes.
func rawExchange(tb testing.TB, addr string, req []byte) []byte {
	tb.Helper()
	conn, err := net.Dial("tcp", addr)
	if err != nil {
		tb.Fatal(err)
	}
	defer conn.Close()
	if _, err := conn.Write(req); err != nil {
		tb.Fatal(err)
	}
	var buf bytes.Buffer
	res, err := http.ReadResponse(bufio.NewReader(io.TeeReader(conn, &buf)), nil)
	if err != nil {
		tb.Fatal(err)
	}
	if _, err := io.Copy(io.Discard, res.Body); err != nil {
		tb.Fatal(err)
	}
	return buf.Bytes()
}

// serveRaw answers each request (one read: the client sends the next only once answered) with
// answer, on every connection ln accepts, until ln closes.
func serveRaw(ln net.Listener, answer []byte) {
	for {
		conn, err := ln.Accept()
		if err != nil {
			return
		}
		go func() {
			defer conn.Close()
			var buf [4096]byte
			for {
				if _, err := conn.Read(buf[:]); err != nil {
					return
				}
				if _, err := conn.Write(answer); err != nil {
					return
				}
			}
		}()
	}
}
