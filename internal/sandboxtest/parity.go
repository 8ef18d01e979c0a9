package sandboxtest

import (
	"bufio"
	"encoding/json"
	"io"
	"net"
	"net/http"
	"os"
	"strconv"
	"strings"
	"testing"
	"time"
)

// ParityTable is the parity harness's record (internal/parity): requests, and what a FastAPI
// app declaring the partner API as docs/decisions.md says answered to each (decisions D19).
type ParityTable struct {
	// Framework names the versions that answered.
	Framework map[string]string `json:"framework"`
	Cases     []ParityCase      `json:"cases"`
}

// ParityCase is one request and the framework's answer to it.
type ParityCase struct {
	Name    string        `json:"name"`
	Request ParityRequest `json:"request"`
	Answer  ParityAnswer  `json:"answer"`
}

// ParityRequest is a request as it goes on the wire. Target is sent as written (Go's client
// would refuse "/%zz"); a Host header is added unless NoHost.
type ParityRequest struct {
	Method  string   `json:"method"`
	Target  string   `json:"target"`
	Proto   string   `json:"proto,omitempty"` // HTTP/1.1 unless given
	NoHost  bool     `json:"no_host,omitempty"`
	Headers []string `json:"headers,omitempty"` // "Name: value"
	Body    string   `json:"body,omitempty"`
}

// ParityAnswer is what of an answer the table compares. Location has the server's own base
// URL as "{base}". Handler names the reference app's handler when the request reached one
// (everything before it passed); then Body is the handler's, not the framework's.
type ParityAnswer struct {
	Status          int    `json:"status"`
	ContentType     string `json:"content_type,omitempty"`
	Location        string `json:"location,omitempty"`
	Allow           string `json:"allow,omitempty"`
	WWWAuthenticate string `json:"www_authenticate,omitempty"`
	Handler         string `json:"handler,omitempty"`
	Body            string `json:"body,omitempty"`
}

// ParityTablePath is the committed table, relative to the module's root.
const ParityTablePath = "simulator/httpapi/testdata/fastapi_parity.json"

// ReadParityTable reads the table at path.
func ReadParityTable(tb testing.TB, path string) ParityTable {
	tb.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		tb.Fatalf("read the parity table: %v", err)
	}
	var t ParityTable
	if err := json.Unmarshal(b, &t); err != nil {
		tb.Fatalf("parse the parity table %s: %v", path, err)
	}
	return t
}

// Exchange sends req to the server at addr (host:port) on a connection of its own and reads
// the answer, with the server's base URL in Location written "{base}".
func Exchange(tb testing.TB, addr string, req ParityRequest) ParityAnswer {
	tb.Helper()
	conn, err := net.Dial("tcp", addr)
	if err != nil {
		tb.Fatalf("dial %s: %v", addr, err)
	}
	defer conn.Close()
	_ = conn.SetDeadline(time.Now().Add(30 * time.Second))
	proto := req.Proto
	if proto == "" {
		proto = "HTTP/1.1"
	}
	var b strings.Builder
	b.WriteString(req.Method + " " + req.Target + " " + proto + "\r\n")
	if !req.NoHost {
		b.WriteString("Host: " + addr + "\r\n")
	}
	for _, h := range req.Headers {
		b.WriteString(h + "\r\n")
	}
	if req.Body != "" {
		b.WriteString("Content-Type: application/json\r\nContent-Length: " + strconv.Itoa(len(req.Body)) + "\r\n")
	}
	b.WriteString("Connection: close\r\n\r\n" + req.Body)
	if _, err := io.WriteString(conn, b.String()); err != nil {
		tb.Fatalf("send %s %s: %v", req.Method, req.Target, err)
	}
	res, err := http.ReadResponse(bufio.NewReader(conn), &http.Request{Method: req.Method})
	if err != nil {
		tb.Fatalf("read the answer to %s %s: %v", req.Method, req.Target, err)
	}
	defer res.Body.Close()
	body, err := io.ReadAll(res.Body)
	if err != nil {
		tb.Fatalf("read the answer to %s %s: %v", req.Method, req.Target, err)
	}
	a := ParityAnswer{Status: res.StatusCode, ContentType: res.Header.Get("Content-Type"), Allow: res.Header.Get("Allow"),
		WWWAuthenticate: res.Header.Get("WWW-Authenticate"), Handler: res.Header.Get("X-Parity-Handler"), Body: string(body)}
	if loc := res.Header.Get("Location"); loc != "" {
		a.Location = strings.Replace(loc, "http://"+addr, "{base}", 1)
	}
	return a
}

// ParityMismatch says how got, the sandbox's answer, differs from want, the framework's, or
// returns "". Where the framework's answer is its reference handler's, the sandbox must have
// reached its own handler of the route: no redirect, no authentication, scope, routing or
// validation answer, no 5xx. Otherwise the status, Content-Type, Location, Allow,
// WWW-Authenticate and a JSON body must be the same bytes.
func ParityMismatch(want, got ParityAnswer) string {
	if want.Handler != "" {
		switch {
		case got.Status == 307, got.Status == 401, got.Status == 403, got.Status == 405, got.Status == 422, got.Status >= 500,
			got.Status == 404 && got.Body == `{"detail":"Not Found"}`:
			return "the framework reached its handler (" + want.Handler + "); the sandbox answered before its own: " + got.String()
		}
		return ""
	}
	if got.Handler = ""; want == got || !strings.HasPrefix(want.ContentType, "application/json") && want.Status == got.Status &&
		want.Location == got.Location && want.Allow == got.Allow && want.WWWAuthenticate == got.WWWAuthenticate && want.ContentType == got.ContentType {
		return ""
	}
	return "want " + want.String() + ", got " + got.String()
}

// String is the answer in one line.
func (a ParityAnswer) String() string {
	s := strconv.Itoa(a.Status)
	for _, kv := range [][2]string{{"Content-Type", a.ContentType}, {"Location", a.Location}, {"Allow", a.Allow}, {"WWW-Authenticate", a.WWWAuthenticate}} {
		if kv[1] != "" {
			s += " " + kv[0] + ": " + kv[1]
		}
	}
	return s + " " + strconv.Quote(clip(a.Body))
}

func clip(s string) string {
	if len(s) > 300 {
		return s[:300] + "…"
	}
	return s
}
