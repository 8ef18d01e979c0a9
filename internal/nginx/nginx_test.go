package nginx_test

import (
	"errors"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/partnersim/partnersim/internal/nginx"
)

// TestForward: a request through Forward's nginx reaches the upstream with the upstream's Host,
// its path, query, method and headers as sent, and the answer comes back as given, on
// connections nginx keeps open to the upstream; Stop ends nginx.
func TestForward(t *testing.T) {
	var conns atomic.Int32
	up := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("X-Seen", r.Method+" "+r.Host+" "+r.URL.RequestURI()+" "+r.Header.Get("X-Api-Key"))
		w.WriteHeader(http.StatusTeapot)
		io.WriteString(w, `{"ok":true}`)
	}))
	up.Config.ConnState = func(_ net.Conn, s http.ConnState) {
		if s == http.StateNew {
			conns.Add(1)
		}
	}
	up.Start()
	defer up.Close()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	listen := ln.Addr().String()
	ln.Close()
	upstream := strings.TrimPrefix(up.URL, "http://")
	s, err := nginx.Start(t.TempDir(), nginx.Forward(listen, upstream), listen, 1)
	if errors.Is(err, nginx.ErrMissing) {
		t.Skip(err)
	}
	if err != nil {
		t.Fatal(err)
	}
	defer s.Stop()
	for range 3 {
		req, _ := http.NewRequest(http.MethodDelete, "http://"+listen+"/v1/users/a%2Fb/?x=1&x=2", nil)
		req.Header.Set("X-Api-Key", "k")
		res, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		b, _ := io.ReadAll(res.Body)
		res.Body.Close()
		if want := "DELETE " + upstream + " /v1/users/a%2Fb/?x=1&x=2 k"; res.StatusCode != http.StatusTeapot || string(b) != `{"ok":true}` || res.Header.Get("X-Seen") != want {
			t.Fatalf("through nginx: %d %s, X-Seen %q; want 418 {\"ok\":true}, %q\n%s", res.StatusCode, b, res.Header.Get("X-Seen"), want, s.ErrorLog())
		}
	}
	if n := conns.Load(); n != 1 {
		t.Errorf("nginx opened %d connections to the upstream for three requests in a row, want 1 (kept alive)", n)
	}
	s.Stop()
	if _, err := net.Dial("tcp", listen); err == nil {
		t.Error("nginx still listens after Stop")
	}
}
