package proxy_test

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"os"
	"runtime"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/partnersim/partnersim/features/proxy"
	"github.com/partnersim/partnersim/internal/nginx"
	"github.com/partnersim/partnersim/internal/sandboxtest"
)

var via = flag.String("via", "proxy", "BenchmarkDetailAt32's path to the sandbox: proxy, nodoc (the proxy without a document), bare (httputil.ReverseProxy alone), nginx (nginx's proxy_pass: the reference) or direct")

// BenchmarkForward is one GET of a 25-user page through the proxy, checks included (no
// document: kin-openapi's cost is openapi/check's), against a server answering fixed bytes.
func BenchmarkForward(b *testing.B) {
	item := `{"user_account_id":"HFCU-1","total_current_market_value":"12.50","accounts":[{"product":"crypto","current_market_value":"12.50","kyc_status":"approved","kyc_approved_at":"2025-01-01T00:00:00Z"}]}`
	page := `{"items":[` + strings.Repeat(item+",", 24) + item + `],"total_records":100,"last_record_number":25,"per_page":25}`
	up := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		w.Header().Set("X-Request-Id", "r")
		io.WriteString(w, page)
	}))
	defer up.Close()
	u, _ := url.Parse(up.URL)
	p, err := proxy.New(proxy.Config{Upstream: u, Loopback: true})
	if err != nil {
		b.Fatal(err)
	}
	front := httptest.NewServer(p.API())
	defer front.Close()
	client := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 8}}
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		req, _ := http.NewRequest(http.MethodGet, front.URL+"/v1/users/?per_page=25", nil)
		req.Header.Set("x-api-key", "k")
		res, err := client.Do(req)
		if err != nil {
			b.Fatal(err)
		}
		io.Copy(io.Discard, res.Body)
		res.Body.Close()
	}
	b.StopTimer()
	p.Close()
}

// BenchmarkDetailAt32 is the bench-http proxy row in one process: Get User Detail of the
// default set through the proxy (checked against the sandbox's documents) by 32 clients at
// once, or by another path (-via). Its CPU profile splits the proxy's share (package proxy,
// httputil, check) from the sandbox's (httpapi, bolt).
//
// cpu-µs/op is CPU time per request, and ns/op, B/op and allocs/op the same, with the checks the
// proxy had queued included (Close waits for them). With -via nginx it counts this process and nginx's workers: the reference, the
// least a forwarding proxy costs. The proxy runs as by default (--when-behind wait): it sheds no
// check, so cpu-µs/op is every check's cost, and unchecked and doc-unchecked are 0.
func BenchmarkDetailAt32(b *testing.B) {
	sb := sandboxtest.MustServe(b)
	target := sb.URL
	u, _ := url.Parse(sb.URL)
	var p *proxy.Proxy
	children := false // nginx's workers: their CPU counts too
	switch *via {
	case "proxy", "nodoc":
		cfg := proxy.Config{Upstream: u, Loopback: true}
		if *via == "proxy" {
			cfg.Checker = documents(b, sb.URL)
		}
		var err error
		if p, err = proxy.New(cfg); err != nil {
			b.Fatal(err)
		}
		front := httptest.NewServer(p.API())
		defer front.Close()
		target = front.URL
	case "nginx":
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			b.Fatal(err)
		}
		listen := ln.Addr().String()
		ln.Close()
		ngx, err := nginx.Start(b.TempDir(), nginx.Forward(listen, u.Host), listen, 1)
		if errors.Is(err, nginx.ErrMissing) {
			b.Skipf("the reference needs nginx: %v", err)
		}
		if err != nil {
			b.Fatal(err)
		}
		defer ngx.Stop()
		children = true
		target = "http://" + listen
	case "bare":
		t := http.DefaultTransport.(*http.Transport).Clone()
		t.MaxIdleConnsPerHost = 256
		front := httptest.NewServer(&httputil.ReverseProxy{Rewrite: func(r *httputil.ProxyRequest) { r.SetURL(u) }, Transport: t})
		defer front.Close()
		target = front.URL
	}
	client := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 64}}
	b.SetParallelism(32 / runtime.GOMAXPROCS(0))
	b.ReportAllocs()
	cpu0 := cpuTime(b, children)
	b.ResetTimer()
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			req, _ := http.NewRequest(http.MethodGet, target+"/v1/users/usr_hfcu_0001/?user_account_id_type=platform", nil)
			req.Header.Set("x-api-key", harborKey)
			res, err := client.Do(req)
			if err != nil {
				b.Error(err)
				return
			}
			io.Copy(io.Discard, res.Body)
			res.Body.Close()
			if res.StatusCode != http.StatusOK {
				b.Errorf("status %d", res.StatusCode)
				return
			}
		}
	})
	if p != nil {
		p.Close() // the checks still queued: their time and allocations count
	}
	b.StopTimer()
	// CPU time per request (the process's: client, proxy and sandbox) holds on a busy machine,
	// where ns/op does not.
	b.ReportMetric(float64((cpuTime(b, children)-cpu0).Microseconds())/float64(b.N), "cpu-µs/op")
	if p != nil {
		none, doc := p.Book().Unchecked()
		b.ReportMetric(float64(none), "unchecked")
		b.ReportMetric(float64(doc), "doc-unchecked")
		if v := p.Book().Failed(""); v != 0 {
			b.Errorf("%d findings", v)
		}
	}
}

// cpuTime is the CPU time the process has used, user and system, and with children that of
// its children still running (nginx's master and workers, from /proc: RUSAGE_CHILDREN counts
// only children waited for).
func cpuTime(b *testing.B, children bool) time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		b.Fatal(err)
	}
	t := time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
	if children {
		t += childrenCPU(b, os.Getpid())
	}
	return t
}

// childrenCPU is the CPU time of pid's descendants, from /proc/PID/stat (utime and stime, in
// clock ticks of 1/100 s: Linux's USER_HZ).
func childrenCPU(b *testing.B, pid int) time.Duration {
	tasks, err := os.ReadDir(fmt.Sprintf("/proc/%d/task", pid))
	if err != nil {
		b.Fatalf("the reference's CPU time is read from /proc: %v", err)
	}
	var kids []string // each thread's: a child belongs to the thread that forked it
	for _, task := range tasks {
		c, _ := os.ReadFile(fmt.Sprintf("/proc/%d/task/%s/children", pid, task.Name()))
		kids = append(kids, strings.Fields(string(c))...)
	}
	var t time.Duration
	for _, f := range kids {
		kid, _ := strconv.Atoi(f)
		stat, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", kid))
		if err != nil {
			continue // gone
		}
		// The fields after the command's closing parenthesis: state is the 3rd, utime the 14th.
		_, rest, _ := strings.Cut(string(stat), ") ")
		fs := strings.Fields(rest)
		ut, _ := strconv.Atoi(fs[11])
		st, _ := strconv.Atoi(fs[12])
		t += time.Duration(ut+st)*10*time.Millisecond + childrenCPU(b, kid)
	}
	return t
}
