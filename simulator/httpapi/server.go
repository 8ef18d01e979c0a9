package httpapi

import (
	"encoding/binary"
	"fmt"
	"io"
	"log/slog"
	"math/rand/v2"
	"net"
	"net/http"
	"net/netip"
	"strings"
	"sync"
	"unsafe"

	"github.com/labstack/echo/v4"

	"github.com/partnersim/partnersim/simulator"
	"github.com/partnersim/partnersim/simulator/hostcheck"
	"github.com/partnersim/partnersim/simulator/httpapi/surface"
	"github.com/partnersim/partnersim/simulator/validate"
)

// Store is what the partner API needs from storage: the small interfaces each handler asks
// for (declared beside it), served by one store.
type Store interface {
	KeyAuthenticator
	UserReader
	OrderReader
	TransactionReader
	SessionRevoker
}

// Deps are the server's collaborators.
type Deps struct {
	Store    Store
	Webhooks Webhooks
	Guard    URLChecker
	Tester   Tester
	// The control plane by concern (the QA console is handed the same); a nil Sandbox switches
	// /_sandbox/ off (404 like any unknown path).
	surface.Operations
}

// Config is the server's behaviour.
type Config struct {
	// APIVersions are the mounted versions, "v1" first.
	APIVersions []string
	// Clock stamps generated history; nil means the wall clock.
	Clock *simulator.Clock
	// MaxBodyBytes bounds request bodies (413 beyond it).
	MaxBodyBytes int64
	// SandboxToken is the control plane's x-sandbox-token.
	SandboxToken string
	// LoopbackOnly answers only requests whose Host is a loopback name or address, or one of
	// AllowedHosts; others get 421 before routing (decisions D18). Without it, any Host is
	// answered unless AllowedHosts is given (then loopback Hosts and those).
	LoopbackOnly bool
	AllowedHosts []string
	// RateLimit, when positive, limits each key to that many requests a second (burst
	// RateBurst), answering 429 with Retry-After (decisions D12).
	RateLimit float64
	RateBurst int
	// Metrics, when set, counts every request; with ServeMetrics the server also answers GET
	// /metrics with them — to anyone while LoopbackOnly, otherwise only with the sandbox token
	// (x-sandbox-token), as the control plane.
	Metrics      *Metrics
	ServeMetrics bool
	// TrustedProxies are the peers whose X-Forwarded-For is believed (decisions D18): from one of
	// them the client is the right-most address of the header that is not a trusted proxy; from
	// any other peer the header is ignored.
	TrustedProxies []netip.Prefix
}

// Server is the sandbox's HTTP handler.
type Server struct {
	e       *echo.Echo
	log     *slog.Logger
	routes  routeTable
	deps    Deps
	cfg     Config
	clock   *simulator.Clock
	journal *journal
	faults  *faults
	proxies *proxyReports
	reader  *bodyReader
	// throttle counts failed sandbox-token checks per client address (decisions D18).
	throttle *surface.TokenThrottle
	// serve is every request's way through: the checks before routing, then the route.
	serve echo.HandlerFunc
	// clientIP, with trusted proxies, is the client's address (echo's X-Forwarded-For
	// extractor); nil without them.
	clientIP echo.IPExtractor
	// contexts recycles the requests' reqContexts, each with its echo context (echo's own pool
	// would be a second Get and Put a request).
	contexts sync.Pool
}

// NewServer builds the handler with every route of routes.go.
func NewServer(cfg Config, deps Deps, log *slog.Logger) *Server {
	if len(cfg.APIVersions) == 0 {
		cfg.APIVersions = []string{"v1"}
	}
	if cfg.MaxBodyBytes == 0 {
		cfg.MaxBodyBytes = 1 << 20
	}
	if log == nil {
		log = slog.New(slog.NewTextHandler(io.Discard, nil))
	}
	clock := cfg.Clock
	if clock == nil {
		clock = simulator.NewClock(nil)
	}
	e := echo.New()
	e.HideBanner, e.HidePort = true, true
	s := &Server{e: e, log: log, deps: deps, cfg: cfg, clock: clock, journal: newJournal(1000), faults: &faults{}, proxies: &proxyReports{},
		reader: newBodyReader(cfg.MaxBodyBytes), throttle: surface.NewTokenThrottle(nil)}
	s.contexts.New = func() any { return &reqContext{Context: e.NewContext(nil, nil)} }
	s.faults.setRate(cfg.RateLimit, cfg.RateBurst)
	if len(cfg.TrustedProxies) > 0 {
		s.clientIP = forwardedClient(cfg.TrustedProxies)
	}
	e.HTTPErrorHandler = s.errorHandler
	mw := []echo.MiddlewareFunc{requestID, checkHost(hostcheck.New(cfg.LoopbackOnly, cfg.AllowedHosts)), boundHead, noOptions, decodedPath}
	if cfg.Metrics != nil {
		mw = append([]echo.MiddlewareFunc{cfg.Metrics.observe}, mw...)
	}
	s.serve = wrap(s.route, mw...)
	s.addRoutes()
	return s
}

// wrap wraps h in mw, the first outermost.
func wrap(h echo.HandlerFunc, mw ...echo.MiddlewareFunc) echo.HandlerFunc {
	for i := len(mw) - 1; i >= 0; i-- {
		h = mw[i](h)
	}
	return h
}

// route finds the request's route (its handler, or the routing error's) and runs it. A path
// that is a route only without its final newline is routed as that route, as Starlette does.
// echo's router sets the route on echo's own context, which c wraps.
func (s *Server) route(c echo.Context) error {
	r := c.Request()
	s.e.Router().Find(r.Method, s.routes.beforeFinalNewline(r.Method, echo.GetPath(r)), c.(*reqContext).Context)
	return c.Handler()(c)
}

// TokenThrottle is the server's count of failed sandbox-token checks, for the console's sign-in
// to share (decisions D18).
func (s *Server) TokenThrottle() *surface.TokenThrottle { return s.throttle }

// Mount serves h for every method under prefix (which ends in "/"), behind the server's own
// request-id, head-bound and path middleware. The sandbox mounts the QA console with it.
func (s *Server) Mount(prefix string, h http.Handler) {
	wrapped := echo.WrapHandler(h)
	for _, m := range []string{http.MethodGet, http.MethodHead, http.MethodPost} {
		s.handle(m, prefix, wrapped)
		s.handle(m, prefix+"*", wrapped)
	}
}

// Clock is the server's clock: the stamped time and the virtual clock.
func (s *Server) Clock() *simulator.Clock { return s.clock }

// Requests returns up to n journal entries, newest first.
func (s *Server) Requests(n int) []surface.JournalEntry { return s.journal.last(n) }

// Faults returns the fault rules in force.
func (s *Server) Faults() []surface.FaultRule { return s.faults.get() }

// SetFaults replaces the fault rules (bounded as PUT /_sandbox/faults bounds them).
func (s *Server) SetFaults(rules []surface.FaultRule) { s.faults.set(rules) }

// RateLimit returns the per-key rate limit (0: off) and its burst.
func (s *Server) RateLimit() (rps float64, burst int) { return s.faults.rate() }

// SetRateLimit sets the per-key rate limit; 0 switches it off.
func (s *Server) SetRateLimit(rps float64, burst int) { s.faults.setRate(rps, burst) }

// ClearJournal empties the request journal (a reset does, through the control service's
// AfterReset).
func (s *Server) ClearJournal() { s.journal.reset() }

// ServeHTTP implements http.Handler. It is echo's ServeHTTP with the checks every request
// passes before routing (s.serve: request id, Host, head size, OPTIONS, decoded path) wrapped
// around the routing once, at NewServer: echo's own pre-middleware is wrapped anew on every
// request, a closure each, which showed in the fixed cost of every request.
//
// Before that, a request from a trusted proxy takes its client's address as its RemoteAddr, so
// that the token throttle, the console and the journal see the client; and a request sent with
// a Transfer-Encoding closes its connection once answered (RFC 9112 §6.1: Go's server drops a
// Content-Length sent beside one before any handler sees it, so every such request is treated
// as one that may have had both, whose lengths a proxy in front may have read differently).
func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if len(r.TransferEncoding) > 0 {
		w.Header()["Connection"] = []string{"close"}
	}
	if s.clientIP != nil {
		r.RemoteAddr = net.JoinHostPort(s.clientIP(r), "0")
	}
	rc := s.contexts.Get().(*reqContext)
	c := rc.Context
	c.Reset(r, w)
	rc.req, rc.res = r, c.Response()
	if err := s.serve(rc); err != nil {
		s.e.HTTPErrorHandler(err, c)
	}
	*rc = reqContext{Context: c} // nothing of this request kept past it
	s.contexts.Put(rc)
}

// forwardedClient returns echo's X-Forwarded-For extractor believing only the trusted ranges
// (echo otherwise trusts every loopback, link-local and private peer).
func forwardedClient(trusted []netip.Prefix) echo.IPExtractor {
	opts := []echo.TrustOption{echo.TrustLoopback(false), echo.TrustLinkLocal(false), echo.TrustPrivateNet(false)}
	for _, p := range trusted {
		p = p.Masked()
		opts = append(opts, echo.TrustIPRange(&net.IPNet{IP: p.Addr().AsSlice(), Mask: net.CIDRMask(p.Bits(), p.Addr().BitLen())}))
	}
	return echo.ExtractIPFromXFFHeader(opts...)
}

// handle registers a route on echo and in the route table. The route's middleware is wrapped
// around its handler once, here: echo wraps a route's own middleware anew on every request
// (a closure each), which showed in the fixed cost of every request.
func (s *Server) handle(method, path string, h echo.HandlerFunc, mw ...echo.MiddlewareFunc) {
	s.e.Add(method, path, nonEmptyParams(wrap(h, mw...)))
	s.routes.add(method, path)
}

// nonEmptyParams makes echo's router match as Starlette's does: a path parameter is one or more
// characters other than "/" (the convertor's [^/]+), so a request with an empty one
// (/v1/users//), or one echo stretched over a slash (/docs/x.js/ for /docs/:file), matched no
// route and is answered by the routing error (404, or 405/307 where routeTable finds a twin)
// before any key is asked for. A mount's wildcard ("*") spans slashes.
func nonEmptyParams(next echo.HandlerFunc) echo.HandlerFunc {
	return func(c echo.Context) error {
		names := c.ParamNames()
		for i, v := range c.ParamValues() {
			if v == "" || strings.IndexByte(v, '/') >= 0 && i < len(names) && names[i] != "*" {
				return echo.ErrNotFound
			}
		}
		return next(c)
	}
}

const headerRequestID = "X-Request-Id"

// requestID echoes the request's X-Request-Id or generates one, on every response. It makes
// the request's headValues (on c, the request's reqContext, when it is one).
func requestID(next echo.HandlerFunc) echo.HandlerFunc {
	return func(c echo.Context) error {
		hv := new(headValues)
		id := headerValue(c.Request().Header, headerRequestID)
		if id == "" || len(id) > 200 {
			// An id names a request in logs and the journal; it is no secret, so the runtime's
			// fast generator serves (crypto/rand's getrandom call showed in a page's cost).
			hv.idBytes = [len(hv.idBytes)]byte{'r', 'e', 'q', '_'}
			for i, x := range [2]uint64{rand.Uint64(), rand.Uint64()} {
				binary.LittleEndian.PutUint64(hv.idBytes[4+16*i:], hexDigits(uint32(x)))
				binary.LittleEndian.PutUint64(hv.idBytes[12+16*i:], hexDigits(uint32(x>>32)))
			}
			id = unsafe.String(&hv.idBytes[0], len(hv.idBytes)) // never written again
		}
		hv.id[0] = id
		c.Response().Header()[headerRequestID] = hv.id[:] // canonical already
		if rc, ok := c.(*reqContext); ok {
			rc.head = hv
		}
		return next(c)
	}
}

// hexDigits returns x's eight hex digits (lowercase) as the bytes of a little-endian word, the
// least significant digit first: each nibble spread to a byte of its own, then made a digit by
// adding '0', and 'a'-'0'-10 more to those over 9 — every byte at once, where hex.Encode took a
// table lookup a digit.
func hexDigits(x uint32) uint64 {
	v := uint64(x)
	v = (v | v<<16) & 0x0000ffff0000ffff
	v = (v | v<<8) & 0x00ff00ff00ff00ff
	v = (v | v<<4) & 0x0f0f0f0f0f0f0f0f
	over9 := (v + 0x0606060606060606) >> 4 & 0x0101010101010101
	return v + 0x3030303030303030 + over9*('a'-'0'-10)
}

// headValues are the values of a response's own headers — its request id (a generated one's
// bytes too) and its Content-Length (contentLength) — and the one-value slices net/http's header
// map takes them in: one allocation a request rather than four. Each is set at most once and
// its bytes never change after: net/http copies the header map's slices when the head is
// written, not the strings, which keep this alive until then.
type headValues struct {
	id, length  [1]string
	idBytes     [len("req_") + 2*16]byte
	lengthBytes [20]byte
}

// MaxHeadBytes bounds a request's line and headers together (decisions D17). Go's http.Server
// refuses heads over its MaxHeaderBytes (1 MiB by default) with a plain-text 431 before any
// handler runs; below that, boundHead answers in the API's own shape.
const MaxHeadBytes = 64 << 10

// boundHead refuses a request whose line and headers exceed MaxHeadBytes: 414 when the
// request line alone does, 431 otherwise (as nginx sorts its large_client_header_buffers).
func boundHead(next echo.HandlerFunc) echo.HandlerFunc {
	return func(c echo.Context) error {
		r := c.Request()
		line := len(r.Method) + 1 + len(r.RequestURI) + 1 + len(r.Proto) + 2
		head := line
		for k, vs := range r.Header {
			for _, v := range vs {
				head += len(k) + 2 + len(v) + 2
			}
		}
		switch {
		case line > MaxHeadBytes:
			return echo.NewHTTPError(http.StatusRequestURITooLong, fmt.Sprintf("Request URI too long: the request line and headers may take at most %d bytes", MaxHeadBytes))
		case head > MaxHeadBytes:
			return echo.NewHTTPError(http.StatusRequestHeaderFieldsTooLarge, fmt.Sprintf("Request header fields too large: the request line and headers may take at most %d bytes", MaxHeadBytes))
		}
		return next(c)
	}
}

// noOptions answers OPTIONS as FastAPI without CORS middleware does: 405 with Allow on a known
// path (404 on an unknown one), through the one routing-error path. echo would otherwise
// answer its own 204 before any authentication.
func noOptions(next echo.HandlerFunc) echo.HandlerFunc {
	return func(c echo.Context) error {
		if c.Request().Method == http.MethodOptions {
			return echo.ErrMethodNotAllowed
		}
		return next(c)
	}
}

// decodedPath routes on the decoded path, as Starlette does (an encoded slash in an id is a
// path separator there too), decoded as uvicorn decodes it (urllib.parse.unquote: invalid UTF-8
// becomes U+FFFD).
func decodedPath(next echo.HandlerFunc) echo.HandlerFunc {
	return func(c echo.Context) error {
		u := c.Request().URL
		u.RawPath = ""
		u.Path = validate.PyDecodeUTF8(u.Path)
		return next(c)
	}
}
