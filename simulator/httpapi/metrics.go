package httpapi

import (
	"maps"
	"net/http"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/labstack/echo/v4"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"
)

// MaxInstitutionLabels bounds the institution label of every series: the first institutions
// seen are named, any later one is counted as "other", so a sandbox whose partners create
// institutions freely never grows its series without bound.
const MaxInstitutionLabels = 100

// Metrics are the sandbox's Prometheus collectors, on a registry of their own: requests by
// route, method, status and institution with their latency, webhook attempts by institution
// and outcome, the delivery queue per institution, the store's size and the build's progress.
// Every label takes values from a bounded set: routes are route patterns ("unmatched" for
// none), methods the usual ones, institutions at most MaxInstitutionLabels.
type Metrics struct {
	registry     *prometheus.Registry
	requests     *prometheus.CounterVec
	latency      *prometheus.HistogramVec
	attempts     *prometheus.CounterVec
	buildDone    *prometheus.GaugeVec
	buildTotal   prometheus.Gauge
	institutions *labelSet
	// routes keeps each route's latency observer and request counters once looked up
	// (routeSeries): WithLabelValues checks and hashes every label value and takes the vector's
	// lock, twice a request (and a sync.Map keyed by the labels hashed them through their
	// interface, field by field). It is read without a lock and replaced whole, under mu, when
	// a route is added; its keys are the labels', as bounded.
	routes atomic.Pointer[map[string]*routeSeries]
	mu     sync.Mutex
}

// routeSeries are a route's latency observer and its series of partnersim_http_requests_total
// by method, status and institution, read without a lock and replaced whole, under the
// Metrics' mu, when one is added.
type routeSeries struct {
	observer prometheus.Observer
	counters atomic.Pointer[map[seriesLabels]prometheus.Counter]
}

// seriesLabels are the labels of a request counter besides its route.
type seriesLabels struct {
	method string
	status int
	inst   string
}

// MetricsSources are what Metrics read when scraped: the delivery queue per institution and
// the store file's size (either may be nil until the sandbox is open).
type MetricsSources struct {
	Queued    func() map[string]int
	StoreSize func() int64
}

// NewMetrics returns the collectors, registered with the Go runtime's and the process's.
// Sources are read at each scrape, through src, which may be filled later (SetSources).
func NewMetrics() *Metrics {
	m := &Metrics{registry: prometheus.NewRegistry(), institutions: newLabelSet(MaxInstitutionLabels)}
	m.routes.Store(&map[string]*routeSeries{})
	m.requests = prometheus.NewCounterVec(prometheus.CounterOpts{Name: "partnersim_http_requests_total",
		Help: "HTTP requests answered, by route pattern, method, status and the key's institution (\"-\" without a key)."},
		[]string{"route", "method", "status", "institution"})
	m.latency = prometheus.NewHistogramVec(prometheus.HistogramOpts{Name: "partnersim_http_request_duration_seconds",
		Help:    "Time to answer an HTTP request, by route pattern.",
		Buckets: []float64{.0005, .001, .0025, .005, .01, .025, .05, .1, .25, .5, 1, 2.5}}, []string{"route"})
	m.attempts = prometheus.NewCounterVec(prometheus.CounterOpts{Name: "partnersim_webhook_attempts_total",
		Help: "Webhook delivery attempts by institution and outcome: delivered, retrying, failed (no retry left), returned (cut by shutdown, pending again)."},
		[]string{"institution", "outcome"})
	m.buildDone = prometheus.NewGaugeVec(prometheus.GaugeOpts{Name: "partnersim_build_done",
		Help: "The fixture build's progress: records checked (phase read) or store entries written (phase write)."}, []string{"phase"})
	m.buildTotal = prometheus.NewGauge(prometheus.GaugeOpts{Name: "partnersim_build_total",
		Help: "Store entries the fixture build writes in all (0 until known)."})
	m.registry.MustRegister(m.requests, m.latency, m.attempts, m.buildDone, m.buildTotal,
		collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	return m
}

// Watch registers the scrape-time sources: the delivery queue's depth per institution and the
// store's size. Call it once, when the sandbox is open.
func (m *Metrics) Watch(src MetricsSources) {
	m.registry.MustRegister(&sourceCollector{src: src, institutions: m.institutions,
		queue: prometheus.NewDesc("partnersim_webhook_queue_depth", "Deliveries queued for a worker or being attempted, by institution.", []string{"institution"}, nil),
		store: prometheus.NewDesc("partnersim_store_bytes", "Size of the store file.", nil, nil)})
}

// Handler serves the metrics in Prometheus' text format.
func (m *Metrics) Handler() http.Handler {
	return promhttp.HandlerFor(m.registry, promhttp.HandlerOpts{})
}

// Registry is the registry the collectors are on.
func (m *Metrics) Registry() *prometheus.Registry { return m.registry }

// Attempt counts one webhook attempt's outcome (the dispatcher's Observe).
func (m *Metrics) Attempt(institution, outcome string) {
	m.attempts.WithLabelValues(m.institutions.label(institution), outcome).Inc()
}

// Build records the fixture build's progress (a bolt.Progress).
func (m *Metrics) Build(phase string, done, total int) {
	m.buildDone.WithLabelValues(phase).Set(float64(done))
	if total > 0 {
		m.buildTotal.Set(float64(total))
	}
}

// observe counts every request the server answers, after its error (if any) is written so the
// final status is seen.
func (m *Metrics) observe(next echo.HandlerFunc) echo.HandlerFunc {
	return func(c echo.Context) error {
		start, rc := time.Now(), reqContextOf(c)
		if rc != nil {
			rc.start = start // for the journal, so that the two read the clock once each way
		}
		if err := next(c); err != nil {
			c.Error(err)
		}
		route := c.Path()
		if route == "" {
			route = "unmatched"
		}
		method, ok := methodName(c.Request().Method)
		if !ok {
			method = "other"
		}
		inst := "-"
		if k := keyOf(c); k != nil {
			inst = m.institutions.label(k.InstitutionID)
		}
		rs := m.route(route)
		m.counter(rs, route, seriesLabels{method, c.Response().Status, inst}).Inc()
		var end time.Time
		if rc != nil {
			end = rc.end // the journal's, when it stamped one: the request was answered then
		}
		if end.IsZero() {
			end = time.Now()
		}
		rs.observer.Observe(end.Sub(start).Seconds())
		return nil
	}
}

// route is the series of the route pattern route.
func (m *Metrics) route(route string) *routeSeries {
	if rs := (*m.routes.Load())[route]; rs != nil {
		return rs
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	routes := *m.routes.Load()
	if rs := routes[route]; rs != nil {
		return rs
	}
	rs := &routeSeries{observer: m.latency.WithLabelValues(route)}
	rs.counters.Store(&map[seriesLabels]prometheus.Counter{})
	next := maps.Clone(routes)
	next[route] = rs
	m.routes.Store(&next)
	return rs
}

// counter is the request counter of the route's series rs with the labels l.
func (m *Metrics) counter(rs *routeSeries, route string, l seriesLabels) prometheus.Counter {
	if c, ok := (*rs.counters.Load())[l]; ok {
		return c
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	counters := *rs.counters.Load()
	if c, ok := counters[l]; ok {
		return c
	}
	c := m.requests.WithLabelValues(route, l.method, strconv.Itoa(l.status), l.inst)
	next := maps.Clone(counters)
	next[l] = c
	rs.counters.Store(&next)
	return c
}

// handleMetrics answers GET /metrics.
func handleMetrics(m *Metrics) echo.HandlerFunc { return echo.WrapHandler(m.Handler()) }

// labelSet names the first n institutions seen and calls every later one "other". Every request
// asks: the names are read without a lock, from a set replaced whole when one is added (at most
// n times).
type labelSet struct {
	mu    sync.Mutex
	n     int
	names atomic.Pointer[map[string]struct{}]
}

func newLabelSet(n int) *labelSet {
	s := &labelSet{n: n}
	s.names.Store(&map[string]struct{}{})
	return s
}

func (s *labelSet) label(inst string) string {
	names := *s.names.Load()
	if _, ok := names[inst]; ok {
		return inst
	}
	if len(names) >= s.n { // the set never shrinks: full, it stays full
		return "other"
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	names = *s.names.Load()
	if _, ok := names[inst]; ok {
		return inst
	}
	if len(names) >= s.n {
		return "other"
	}
	next := maps.Clone(names)
	next[inst] = struct{}{}
	s.names.Store(&next)
	return inst
}

// sourceCollector reads the queue and the store's size at each scrape.
type sourceCollector struct {
	src          MetricsSources
	institutions *labelSet
	queue, store *prometheus.Desc
}

func (s *sourceCollector) Describe(ch chan<- *prometheus.Desc) { ch <- s.queue; ch <- s.store }

func (s *sourceCollector) Collect(ch chan<- prometheus.Metric) {
	if s.src.Queued != nil {
		byLabel := map[string]int{}
		for inst, n := range s.src.Queued() {
			byLabel[s.institutions.label(inst)] += n
		}
		for inst, n := range byLabel {
			ch <- prometheus.MustNewConstMetric(s.queue, prometheus.GaugeValue, float64(n), inst)
		}
	}
	if s.src.StoreSize != nil {
		ch <- prometheus.MustNewConstMetric(s.store, prometheus.GaugeValue, float64(s.src.StoreSize()))
	}
}
