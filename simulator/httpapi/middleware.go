package httpapi

import (
	"math"
	"math/rand/v2"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"
	"unicode/utf8"

	"github.com/labstack/echo/v4"
	"golang.org/x/time/rate"

	"github.com/partnersim/partnersim/simulator"
	"github.com/partnersim/partnersim/simulator/httpapi/surface"
)

// journal keeps the last API requests for GET /_sandbox/requests (decisions D9).
type journal struct {
	mu   sync.Mutex
	buf  []journalEntry
	next int
	full bool
}

// journalEntry is an entry as the journal keeps it: its time unformatted until read.
type journalEntry struct {
	at time.Time
	surface.JournalEntry
}

// journalFieldMax bounds what one entry keeps of a path or a query (decisions D17), so the
// journal's 1,000 entries hold at most ~8 MiB whatever clients send.
const journalFieldMax = 4 << 10

// clip returns s cut to journalFieldMax bytes at a rune boundary, and whether it cut. The
// journal keeps copies (copied): net/http's strings are cut from the request's own bytes, and
// keeping one would pin the whole request line in the journal.
func clip(s string) (string, bool) {
	if len(s) <= journalFieldMax {
		return s, false
	}
	n := journalFieldMax
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return s[:n], true
}

// copied returns copies of strs, made as one string they are cut from: one allocation an entry.
func copied(strs ...*string) {
	var b strings.Builder
	n := 0
	for _, s := range strs {
		n += len(*s)
	}
	b.Grow(n)
	for _, s := range strs {
		b.WriteString(*s)
	}
	all := b.String()
	for _, s := range strs {
		n := len(*s)
		*s, all = all[:n], all[n:]
	}
}

func newJournal(n int) *journal { return &journal{buf: make([]journalEntry, n)} }

func (j *journal) add(e journalEntry) {
	j.mu.Lock()
	j.buf[j.next] = e
	j.next = (j.next + 1) % len(j.buf)
	j.full = j.full || j.next == 0
	j.mu.Unlock()
}

// last returns up to n entries, newest first.
func (j *journal) last(n int) []surface.JournalEntry {
	j.mu.Lock()
	defer j.mu.Unlock()
	size := j.next
	if j.full {
		size = len(j.buf)
	}
	out := make([]surface.JournalEntry, 0, min(n, size))
	for i := 1; i <= size && len(out) < n; i++ {
		e := j.buf[(j.next-i+len(j.buf))%len(j.buf)]
		e.At = simulator.FormatTime(e.at)
		out = append(out, e.JournalEntry)
	}
	return out
}

func (j *journal) reset() {
	j.mu.Lock()
	j.next, j.full = 0, false
	j.mu.Unlock()
}

// methodName returns the usual request method named m as a constant, and whether m is one:
// the journal and the metrics keep these rather than copies of the request's strings.
func methodName(m string) (string, bool) {
	switch m {
	case http.MethodGet:
		return http.MethodGet, true
	case http.MethodPost:
		return http.MethodPost, true
	case http.MethodPut:
		return http.MethodPut, true
	case http.MethodPatch:
		return http.MethodPatch, true
	case http.MethodDelete:
		return http.MethodDelete, true
	case http.MethodHead:
		return http.MethodHead, true
	case http.MethodOptions:
		return http.MethodOptions, true
	}
	return "", false
}

// record journals every partner-API request with its final status and latency.
func record(j *journal, clock *simulator.Clock) echo.MiddlewareFunc {
	return func(next echo.HandlerFunc) echo.HandlerFunc {
		return func(c echo.Context) error {
			rc := reqContextOf(c)
			var start time.Time
			if rc != nil {
				start = rc.start // the metrics', when they stamped one: one clock reading for both
			}
			if start.IsZero() {
				start = time.Now()
			}
			err := next(c)
			if err != nil {
				c.Error(err) // write the error now so the journal sees its status
			}
			end := time.Now()
			if rc != nil {
				rc.end = end
			}
			r := c.Request()
			path, cutPath := clip(r.URL.Path)
			query, cutQuery := clip(r.URL.RawQuery)
			method, ok := methodName(r.Method)
			if !ok {
				method, _ = clip(r.Method)
				method = strings.Clone(method)
			}
			e := journalEntry{at: clock.Now(), JournalEntry: surface.JournalEntry{Method: method, Path: path, Query: query,
				Status: c.Response().Status, LatencyMS: float64(end.Sub(start).Microseconds()) / 1000,
				RequestID: requestIDOf(c), Truncated: cutPath || cutQuery}}
			if k := apiKeyOf(c); k != "" {
				e.KeyPrefix = simulator.KeyPrefix(k)
			}
			copied(&e.Path, &e.Query, &e.RequestID, &e.KeyPrefix)
			j.add(e)
			return nil
		}
	}
}

// requestIDOf is the X-Request-Id c's response carries: the one requestID gave it, kept on the
// request's context.
func requestIDOf(c echo.Context) string {
	if rc := reqContextOf(c); rc != nil && rc.head != nil {
		return rc.head.id[0]
	}
	return headerValue(c.Response().Header(), headerRequestID)
}

// faults holds the fault rules and the rate limit, both off by default.
type faults struct {
	mu       sync.RWMutex
	rules    []surface.FaultRule
	rps      float64
	burst    int
	limiters map[string]*rate.Limiter
	// ruled and limited say, without the lock, whether any rule is set and whether rate
	// limiting is on: every request asks, and while both are off none takes the lock.
	ruled, limited atomic.Bool
}

func (f *faults) set(rules []surface.FaultRule) {
	f.mu.Lock()
	f.rules = rules
	f.ruled.Store(len(rules) > 0)
	f.mu.Unlock()
}

func (f *faults) get() []surface.FaultRule {
	f.mu.RLock()
	defer f.mu.RUnlock()
	return append([]surface.FaultRule{}, f.rules...)
}

func (f *faults) setRate(rps float64, burst int) {
	f.mu.Lock()
	f.rps, f.burst, f.limiters = rps, burst, map[string]*rate.Limiter{}
	f.limited.Store(rps > 0)
	f.mu.Unlock()
}

// rate returns the rate limit in force and its burst.
func (f *faults) rate() (rps float64, burst int) {
	f.mu.RLock()
	defer f.mu.RUnlock()
	return f.rps, max(f.burst, 1)
}

// limiter returns the token bucket of the key named by key(), or nil when rate limiting is off
// (then without hashing the key or taking the write lock: every request asks).
func (f *faults) limiter(key func() string) *rate.Limiter {
	if !f.limited.Load() {
		return nil
	}
	k := key()
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.rps <= 0 {
		return nil
	}
	l := f.limiters[k]
	if l == nil {
		l = rate.NewLimiter(rate.Limit(f.rps), max(f.burst, 1))
		f.limiters[k] = l
	}
	return l
}

// inject applies the rate limit, then the first matching fault rule, to a partner-API request.
func inject(f *faults) echo.MiddlewareFunc {
	return func(next echo.HandlerFunc) echo.HandlerFunc {
		return func(c echo.Context) error {
			r := c.Request()
			if l := f.limiter(func() string { return simulator.HashKey(headerValue(r.Header, headerAPIKey)) }); l != nil {
				res := l.Reserve()
				if d := res.Delay(); d > 0 {
					res.Cancel()
					c.Response().Header().Set("Retry-After", strconv.Itoa(int(math.Ceil(d.Seconds()))))
					return simulator.Errorf(simulator.ERATELIMIT, "Rate limit exceeded: retry after the Retry-After seconds")
				}
			}
			if !f.ruled.Load() {
				return next(c)
			}
			for _, rule := range f.get() {
				if rule.Method != "" && !strings.EqualFold(rule.Method, r.Method) || rule.Path != c.Path() && rule.Path != r.URL.Path {
					continue
				}
				if rand.Float64() >= rule.Probability {
					break
				}
				if rule.LatencyMS > 0 {
					select {
					case <-time.After(time.Duration(rule.LatencyMS) * time.Millisecond):
					case <-r.Context().Done():
						return r.Context().Err()
					}
				}
				if rule.Status != 0 {
					return writeJSON(c, rule.Status, detail{"Injected fault: " + http.StatusText(rule.Status)})
				}
				break
			}
			return next(c)
		}
	}
}
