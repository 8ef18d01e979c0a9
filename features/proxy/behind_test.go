package proxy_test

import (
	"bytes"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"sync"
	"testing"

	"github.com/partnersim/partnersim/features/proxy"
	"github.com/partnersim/partnersim/internal/sandboxtest"
)

// stuckLive is a live output that holds the proxy's worker on its first line until released (a
// terminal nobody reads): the checks fall behind while the app goes on calling.
type stuckLive struct {
	syncBuffer
	once    sync.Once
	stuck   chan struct{} // closed when the worker is held
	release chan struct{}
}

func newStuckLive() *stuckLive {
	return &stuckLive{stuck: make(chan struct{}), release: make(chan struct{})}
}

func (s *stuckLive) Write(b []byte) (int, error) {
	s.once.Do(func() {
		close(s.stuck)
		<-s.release
	})
	return s.syncBuffer.Write(b)
}

const (
	queued = 4  // the checks' queue in these tests
	burst  = 64 // exchanges sent at once while the worker is held: far more than the queue
)

// behindProxy fronts upstream with a queue of `queued` exchanges, checked against the sandbox's
// documents, its worker held on its first live line: first is sent and answered, and the worker
// is held checking it, before this returns.
func behindProxy(t *testing.T, upstream string, sb *sandboxtest.Sandbox, mode proxy.Behind, first string) (*proxy.Proxy, string, *stuckLive) {
	t.Helper()
	u, _ := url.Parse(upstream)
	live := newStuckLive()
	t.Cleanup(func() {
		select {
		case <-live.release:
		default:
			close(live.release)
		}
	})
	p, err := proxy.New(proxy.WithQueue(proxy.Config{Upstream: u, Checker: documents(t, sb.URL), Loopback: true, Live: live, WhenBehind: mode}, queued))
	if err != nil {
		t.Fatal(err)
	}
	api := httptest.NewServer(p.API())
	t.Cleanup(api.Close)
	sandboxtest.Do(t, http.DefaultClient, http.MethodGet, api.URL+first, "", "", "x-api-key: "+harborKey)
	<-live.stuck
	return p, api.URL, live
}

// detail is the burst's i-th exchange: a user's detail, each with its own query so that its
// findings name it alone.
func detail(i int) string {
	return fmt.Sprintf("/v1/users/usr_hfcu_0001/?user_account_id_type=platform&n=%d", i)
}

// sendBurst sends the burst at once; each exchange's index arrives on the channel once its
// answer has been read whole.
func sendBurst(t *testing.T, base string) <-chan int {
	answered := make(chan int, burst)
	for i := range burst {
		go func() {
			req, _ := http.NewRequest(http.MethodGet, base+detail(i), nil)
			req.Header.Set("x-api-key", harborKey)
			res, err := http.DefaultClient.Do(req)
			if err == nil {
				var b bytes.Buffer
				_, err = b.ReadFrom(res.Body)
				res.Body.Close()
			}
			if err != nil {
				t.Error(err)
			}
			answered <- i
		}()
	}
	return answered
}

// With --when-behind wait (the default) a burst far larger than the queue is answered at the
// checks' pace: while the worker is held the app gets only the answers the queue has room for,
// and every exchange, once answered, gets every check — none unchecked, none skipped by the
// document's check, each exchange's finding reported.
func TestWhenBehindWaitChecksEveryExchange(t *testing.T) {
	sb := sandboxtest.MustServe(t)
	// A deployment whose every detail breaks the document: a required field renamed.
	broken := mutate(t, sb.URL, nil, func(_ *http.Request, b []byte) []byte {
		return bytes.Replace(b, []byte(`"user_account_id"`), []byte(`"user_account_ident"`), 1)
	})
	p, base, live := behindProxy(t, broken, sb, "", detail(-1)) // "": the default
	answered := sendBurst(t, base)
	for range queued {
		<-answered
	}
	select {
	case i := <-answered:
		t.Errorf("expected the app to wait while the queue is full, got exchange %d answered", i)
	default:
	}
	close(live.release)
	for range burst - queued {
		<-answered
	}
	p.Close()
	none, document := p.Book().Unchecked()
	if none != 0 || document != 0 {
		t.Errorf("expected every exchange checked, got %d unchecked and %d not checked against the document", none, document)
	}
	for _, r := range p.Book().Results() {
		if r.ID == proxy.OpenAPI && (r.Observed != burst+1 || r.Failed != burst+1) {
			t.Errorf("expected the document's check on all %d exchanges, each failed, got observed %d, failed %d", burst+1, r.Observed, r.Failed)
		}
	}
	for i := -1; i < burst; i++ {
		if want := "violation " + proxy.OpenAPI + ": GET " + detail(i) + " → 200: "; !strings.Contains(live.String(), want) {
			t.Errorf("expected exchange %d's finding %q, got none", i, want)
		}
	}
	if err := p.Book().Verdict("violations"); err == nil || strings.Contains(err.Error(), "--when-behind") {
		t.Errorf("expected --fail-on violations to fail for the violations alone, got %v", err)
	}
	if page := sandboxtest.Do(t, http.DefaultClient, http.MethodGet, base+"/_proxy/", "", ""); !strings.Contains(page.Body, "Every exchange is checked") {
		t.Errorf("expected the page to say every exchange is checked, got %s", page.Body)
	}
}

// With --when-behind shed the app never waits: the whole burst is answered while the worker is
// held, what the queue could not take is counted unchecked and, past half a queue, not checked
// against the document — and --fail-on violations fails for it, naming --when-behind wait,
// though no violation was seen.
func TestWhenBehindShedCountsAndFailsTheRun(t *testing.T) {
	sb := sandboxtest.MustServe(t)
	// The app's own 422 is a lint line: the worker is held on it.
	p, base, live := behindProxy(t, sb.URL, sb, proxy.Shed, "/v1/users/?per_page=0")
	answered := sendBurst(t, base)
	for range burst {
		<-answered // all answered with the worker held
	}
	close(live.release)
	p.Close()
	none, document := p.Book().Unchecked()
	if none != burst-queued || document == 0 {
		t.Errorf("expected %d exchanges unchecked and some not checked against the document, got %d and %d", burst-queued, none, document)
	}
	if v := broken(p, proxy.Violation); len(v) != 0 {
		t.Errorf("expected no violation, got %v:\n%s", v, live.String())
	}
	err := p.Book().Verdict("violations")
	if err == nil || !strings.Contains(err.Error(), fmt.Sprintf("%d exchanges forwarded unchecked", none)) || !strings.Contains(err.Error(), "--when-behind wait") {
		t.Errorf("expected --fail-on violations to fail for the unchecked exchanges, naming --when-behind wait, got %v", err)
	}
	if page := sandboxtest.Do(t, http.DefaultClient, http.MethodGet, base+"/_proxy/", "", ""); !strings.Contains(page.Body, fmt.Sprintf("%d exchanges forwarded unchecked", none)) {
		t.Errorf("expected the page to count the unchecked exchanges, got %s", page.Body)
	}
	if err := p.Book().Verdict(""); err != nil {
		t.Errorf("expected a run without --fail-on to pass, got %v", err)
	}
}
