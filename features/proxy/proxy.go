package proxy

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httputil"
	"net/url"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/partnersim/partnersim/simulator/hostcheck"
	"github.com/partnersim/partnersim/simulator/openapi/check"
)

// MaxBody is the largest request or response body the proxy reads for its checks (decisions
// D17): a larger one is forwarded whole, streamed, and its exchange is not checked against the
// document (the upstream's own bound answers it).
const MaxBody = 1 << 20

// Config is what a proxy needs.
type Config struct {
	Upstream *url.URL // the deployment's origin
	Receiver *url.URL // the partner's webhook receiver (nil: no receiver side)
	// SigningSecrets are the institution's signing secrets (two during a rotation's overlap).
	SigningSecrets []string
	// Checker checks exchanges and deliveries against the document (nil: not checked).
	Checker *check.Checker
	// Loopback is set when the proxy listens on loopback only: then it answers only requests
	// whose Host is a loopback name or one of AllowedHosts (decisions D18).
	Loopback     bool
	AllowedHosts []string
	Slow         time.Duration // an upstream answer later than this is a violation
	PollInterval time.Duration // the same GET repeated sooner is lint (0: not checked)
	Live         io.Writer     // a line per finding (nil: none)
	Now          func() time.Time
	// Record, when set, keeps the users and orders answered, for WriteRecord.
	Record bool
	// Transport reaches the upstream and the receiver (nil: http.DefaultTransport's clone).
	Transport http.RoundTripper
	// SandboxToken, when the upstream is a sandbox, is its control-plane token: the proxy then
	// reports its rules and recent exchanges to the sandbox (PUT /_sandbox/proxy-report) every
	// ReportEvery (a second) something was checked, and once more when it closes, for the QA
	// console's Contract proxy page. Keys and secrets are masked in the report.
	SandboxToken string
	ReportEvery  time.Duration
	// Address is where the app calls the proxy, as the report names it.
	Address string
	// WhenBehind is what happens when the checks fall behind the traffic: Wait (the default)
	// or Shed.
	WhenBehind Behind
	// queue is how many answered exchanges wait for the checks (0: defaultQueue); the
	// package's tests set it small.
	queue int
}

// Behind is what the proxy does when its checks fall behind the traffic.
type Behind string

const (
	// Wait makes the answer to the app wait for room in the checks' queue: every exchange gets
	// every check, and the app is slowed to the checks' pace.
	Wait Behind = "wait"
	// Shed answers the app at once and counts what it could not check: the document's check is
	// skipped past half a queue, every check with the queue full.
	Shed Behind = "shed"
)

// defaultQueue is how many answered exchanges wait for the checks.
const defaultQueue = 4096

// Proxy forwards and checks. Its handlers are API and Receiver.
type Proxy struct {
	cfg      Config
	book     *Book
	api      *httputil.ReverseProxy
	hooks    *httputil.ReverseProxy
	state    *state
	hosts    *hostcheck.Policy
	record   *recorder
	recent   *recent
	buffers  *bufferPool
	queue    chan *exchange
	wg       sync.WaitGroup
	closeOne sync.Once
	// open guards closed; answering counts the exchanges being answered, which Close waits
	// for: an app has its answer before the proxy has read the body's end (a 204, a body of a
	// known length), and an exchange it has seen answered is checked.
	open      sync.RWMutex
	closed    bool
	answering sync.WaitGroup
	// seen counts the exchanges checked or shed, so the report is sent only when it changed;
	// stopReports and reported end the report loop (nil without a SandboxToken).
	seen        atomic.Int64
	stopReports chan struct{}
	reported    chan struct{}
	refused     atomic.Bool // the sandbox refused a report for good
}

// exchange is one request and its answer as the checks see them.
type exchange struct {
	method  string
	url     *url.URL
	header  http.Header // the request's, the key removed
	key     string      // the key's hash (never the key)
	reqBody []byte
	unread  bool // the request body was over MaxBody: forwarded, not read for the checks
	status  int
	resHdr  http.Header
	body    []byte
	whole   bool // body holds the whole answer
	start   time.Time
	end     time.Time
	err     error // the upstream could not be reached
	hook    bool  // a delivery to the receiver
	// w0 and busy are the writes started before this exchange and whether one was in flight
	// then, w1 the writes started before it ended (state.writes); deleting, for a
	// subscriptions list, the DELETEs in flight when it ended.
	w0, w1   int64
	busy     bool
	deleting []string
	said     string // String's
}

// String names the exchange in findings (METHOD path?query → status). The checks name it a
// dozen times: it is worded once, by the worker, the exchange's one reader then.
func (x *exchange) String() string {
	if x.said == "" {
		x.said = x.say()
	}
	return x.said
}

func (x *exchange) say() string {
	u := x.url.Path
	if x.url.RawQuery != "" {
		u += "?" + x.url.RawQuery
	}
	if x.err != nil {
		return fmt.Sprintf("%s %s → no answer", x.method, u)
	}
	return fmt.Sprintf("%s %s → %d", x.method, u, x.status)
}

// New makes a proxy; Close it to finish its checks.
func New(cfg Config) (*Proxy, error) {
	if cfg.Upstream == nil || cfg.Upstream.Scheme == "" || cfg.Upstream.Host == "" {
		return nil, errors.New("proxy: the upstream must be an absolute URL (https://staging.example)")
	}
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	if cfg.Slow == 0 {
		cfg.Slow = 10 * time.Second
	}
	if cfg.Transport == nil {
		t := http.DefaultTransport.(*http.Transport).Clone()
		t.MaxIdleConnsPerHost = 256
		cfg.Transport = t
	}
	switch cfg.WhenBehind {
	case "":
		cfg.WhenBehind = Wait
	case Wait, Shed:
	default:
		return nil, fmt.Errorf("proxy: when behind, %q: want %q or %q", cfg.WhenBehind, Wait, Shed)
	}
	if cfg.queue <= 0 {
		cfg.queue = defaultQueue
	}
	p := &Proxy{cfg: cfg, book: newBook(cfg.Live, cfg.Now()), state: newState(), queue: make(chan *exchange, cfg.queue)}
	p.hosts = hostcheck.New(cfg.Loopback, cfg.AllowedHosts)
	p.buffers = &bufferPool{pool: sync.Pool{New: func() any { b := make([]byte, 32<<10); return &b }}}
	p.recent = &recent{ring: make([]seenExchange, 200)}
	if cfg.Record {
		p.record = newRecorder(cfg.Now())
	}
	p.api = p.reverse(cfg.Upstream, false)
	if cfg.Receiver != nil {
		p.hooks = p.reverse(cfg.Receiver, true)
	}
	p.wg.Add(1)
	go p.work()
	if cfg.SandboxToken != "" {
		if p.cfg.ReportEvery <= 0 {
			p.cfg.ReportEvery = time.Second
		}
		p.stopReports, p.reported = make(chan struct{}), make(chan struct{})
		go p.reportLoop(p.stopReports, p.reported)
	}
	return p, nil
}

// Book is the proxy's record of its rules.
func (p *Proxy) Book() *Book { return p.book }

// Close waits for the exchanges being answered and the checks of every exchange answered so
// far, and ends what only the end decides (walks stopped early). An exchange that starts after
// Close is forwarded and not checked. Stop the servers first (http.Server.Shutdown), so no
// answer is still streaming.
func (p *Proxy) Close() {
	p.closeOne.Do(func() {
		p.open.Lock()
		p.closed = true
		p.open.Unlock()
		p.answering.Wait()
		close(p.queue)
		p.wg.Wait()
		p.finish()
		if p.stopReports != nil {
			close(p.stopReports)
			<-p.reported
			if !p.refused.Load() {
				p.sendReport(true)
			}
		}
	})
}

type ctxKey struct{}

func (p *Proxy) reverse(target *url.URL, hook bool) *httputil.ReverseProxy {
	return &httputil.ReverseProxy{
		Rewrite: func(r *httputil.ProxyRequest) {
			r.SetURL(target)
			r.Out.Header["X-Forwarded-For"] = r.In.Header["X-Forwarded-For"] // unchanged: SetURL adds none, nor do we
		},
		Transport: p.cfg.Transport,
		// An answer of unknown length (and an event stream) is flushed as the upstream writes
		// it, whatever FlushInterval says; one of known length is written as it fills the
		// server's buffer, without a flush (a system call) per read.
		FlushInterval: 0,
		BufferPool:    p.buffers,
		ModifyResponse: func(res *http.Response) error {
			x, checked := res.Request.Context().Value(ctxKey{}).(*exchange)
			if !checked {
				return nil
			}
			x.status, x.resHdr = res.StatusCode, res.Header.Clone()
			res.Body = &tee{ReadCloser: res.Body, x: x, done: p.enqueue, now: p.cfg.Now}
			return nil
		},
		ErrorHandler: func(w http.ResponseWriter, r *http.Request, err error) {
			if r.Context().Err() != nil {
				return // the app went away: nothing to judge
			}
			if x, checked := r.Context().Value(ctxKey{}).(*exchange); checked {
				x.err, x.end = err, p.cfg.Now()
				p.enqueue(x)
			}
			who := "upstream"
			if hook {
				who = "receiver"
			}
			w.Header().Set("Content-Type", "application/json")
			w.WriteHeader(http.StatusBadGateway)
			fmt.Fprintf(w, `{"detail":"partnersim proxy: the %s did not answer"}`, who)
		},
	}
}

// API is the handler the partner's app calls in place of the deployment.
func (p *Proxy) API() http.Handler { return p.handler(p.api, false) }

// Receiver is the handler deployments deliver webhooks to in place of the partner's receiver
// (nil without one).
func (p *Proxy) Receiver() http.Handler {
	if p.hooks == nil {
		return nil
	}
	return p.handler(p.hooks, true)
}

func (p *Proxy) handler(rp *httputil.ReverseProxy, hook bool) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if !p.hosts.Allows(r.Host) {
			writeDetail(w, http.StatusMisdirectedRequest, "Misdirected Request")
			return
		}
		if !hook && r.URL.Path == pagePath {
			p.page(w, r)
			return
		}
		p.open.RLock()
		if p.closed {
			p.open.RUnlock()
			rp.ServeHTTP(w, r) // closed: forwarded, not checked
			return
		}
		p.answering.Add(1)
		p.open.RUnlock()
		defer p.answering.Done()
		x := &exchange{method: r.Method, url: r.URL, start: p.cfg.Now(), hook: hook}
		if r.Body != nil && r.Body != http.NoBody {
			b, err := io.ReadAll(io.LimitReader(r.Body, MaxBody+1))
			if err != nil {
				writeDetail(w, http.StatusBadRequest, "partnersim proxy: the request body could not be read")
				return
			}
			if len(b) > MaxBody {
				// Forwarded whole, streamed, and not checked: the upstream judges its size.
				x.unread = true
				r.Body = struct {
					io.Reader
					io.Closer
				}{io.MultiReader(bytes.NewReader(b), r.Body), r.Body}
			} else {
				x.reqBody = b
				r.Body = io.NopCloser(bytes.NewReader(b))
			}
		}
		if !hook {
			x.key = keyID(r.Header.Get("X-Api-Key"))
			x.header = r.Header.Clone()
			x.header.Del("X-Api-Key")
		} else {
			x.header = r.Header.Clone()
		}
		x.w0, x.busy = p.state.writes.Load(), p.state.inflight.Load() > 0
		if writing(r.Method) {
			p.state.writes.Add(1)
			p.state.inflight.Add(1)
			defer p.state.inflight.Add(-1)
			if rt, id := routeOf(r.URL.Path); r.Method == http.MethodDelete && rt == subscription {
				p.state.deleting.Store(id, true)
				defer p.state.deleting.Delete(id)
			}
		}
		rp.ServeHTTP(w, r.WithContext(context.WithValue(r.Context(), ctxKey{}, x)))
	})
}

// bufferPool lends the copy buffers of answers (httputil.BufferPool): the reverse proxy
// otherwise allocates 32 KiB per exchange.
type bufferPool struct{ pool sync.Pool }

func (b *bufferPool) Get() []byte  { return *b.pool.Get().(*[]byte) }
func (b *bufferPool) Put(s []byte) { b.pool.Put(&s) }

// keyID names a key in findings and state without revealing it: a prefix of its SHA-256.
func keyID(k string) string {
	if k == "" {
		return ""
	}
	s := sha256.Sum256([]byte(k))
	return "key#" + hex.EncodeToString(s[:6])
}

func writeDetail(w http.ResponseWriter, status int, detail string) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	fmt.Fprintf(w, `{"detail":%q}`, detail)
}

// tee copies the head of an answer's body for the checks while the app reads it, and hands
// the exchange to the checks when the body ends.
type tee struct {
	io.ReadCloser
	x    *exchange
	buf  bytes.Buffer
	over bool
	once sync.Once
	done func(*exchange)
	now  func() time.Time
}

func (t *tee) Read(b []byte) (int, error) {
	n, err := t.ReadCloser.Read(b)
	if n > 0 && !t.over {
		if t.buf.Len()+n > MaxBody {
			t.over = true
		} else {
			t.buf.Write(b[:n])
		}
	}
	if err == io.EOF {
		t.finish(true)
	}
	return n, err
}

func (t *tee) Close() error {
	err := t.ReadCloser.Close()
	t.finish(false)
	return err
}

func (t *tee) finish(eof bool) {
	t.once.Do(func() {
		t.x.body, t.x.whole = t.buf.Bytes(), eof && !t.over
		t.x.end = t.now()
		t.done(t.x)
	})
}

// enqueue hands an answered exchange to the checks. With Wait, when the checks have fallen a
// queue behind, it waits for room, and the app for the end of its answer; with Shed the app
// never waits and the exchange is counted as unchecked instead.
func (p *Proxy) enqueue(x *exchange) {
	x.w1 = p.state.writes.Load()
	if x.method == http.MethodGet && strings.Contains(x.url.Path, "/webhooks/subscriptions") {
		p.state.deleting.Range(func(id, _ any) bool {
			x.deleting = append(x.deleting, id.(string))
			return true
		})
	}
	if p.cfg.WhenBehind != Shed {
		p.queue <- x
		return
	}
	select {
	case p.queue <- x:
	default:
		p.book.shed.Add(1)
		p.seen.Add(1)
	}
}

// work checks the exchanges in the order they ended.
func (p *Proxy) work() {
	defer p.wg.Done()
	for x := range p.queue {
		if x.end.IsZero() {
			x.end = p.cfg.Now()
		}
		before := p.book.total()
		if x.hook {
			p.checkDelivery(x)
		} else {
			p.checkExchange(x)
		}
		e := seenExchange{At: x.end, Exchange: x.String()}
		if x.hook {
			e.Exchange = "delivery " + e.Exchange
		}
		e.Findings = p.book.since(before)
		p.recent.add(e)
		p.seen.Add(1)
	}
}

// WriteRecord writes the users and orders the app was answered as a fixture set into dir
// (Config.Record must be set): one institution per key, each with a fresh key of its own; users
// keep their ids (the platform id when a detail showed it), their accounts' values as cash.
func (p *Proxy) WriteRecord(dir string) error {
	if p.record == nil {
		return errors.New("proxy: nothing recorded (Config.Record is off)")
	}
	return p.record.write(dir)
}
