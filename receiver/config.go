package receiver

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"time"

	"github.com/partnersim/partnersim/simulator/webhook/signature"
)

// Config is what a Receiver is opened with. Secrets is required; everything else has a
// default.
type Config struct {
	// Secrets are the signing secrets accepted ("whsec_…"), several during a rotation.
	Secrets []string
	// Tolerance bounds |now - t| of the signature header (default 5 minutes).
	Tolerance time.Duration

	// APIBaseURL is the origin links.self is relative to, e.g. "http://127.0.0.1:8080"
	// (links already start with "/v1/…"). Empty skips the refetch.
	APIBaseURL string
	// APIKey is sent as x-api-key on the refetch; required with APIBaseURL.
	APIKey string
	// HTTPClient makes the refetch (default: a client with a 10 s timeout). Redirects are
	// followed only within APIBaseURL's origin, so the key never leaves it.
	HTTPClient *http.Client

	// Process handles one event after it was acknowledged and refetched; an error is retried
	// (see MaxAttempts) unless wrapped with Permanent. It runs on one worker goroutine, must
	// honour ctx (cancelled by Close) and should be idempotent on event_id (see the package
	// doc). Nil only refetches.
	Process func(ctx context.Context, ev Event) error
	// OnEvent is called once for every delivery that reached the endpoint, with its verdict,
	// after the answer was decided and before it is written (for printing). It must be quick.
	OnEvent func(Arrival)
	// OnDone is called on the worker once an accepted event's processing has ended — State
	// processed or failed, with the refetched Resource and the Body — after that outcome is
	// stored (for printing). Events skipped at acceptance (is_test, a transaction not
	// "completed") never reach it: their Arrival says so. It must be quick.
	OnDone func(Record)

	// Now is the clock for verification and timestamps (default time.Now).
	Now func() time.Time
	// Faults are the injected failures in force at start (default none).
	Faults Faults

	// MaxBodyBytes bounds a delivery's body (default 1 MiB; larger is refused with 413).
	MaxBodyBytes int64
	// MaxArrivals bounds the arrival log kept in the file (default 10000, oldest dropped).
	MaxArrivals int
	// MaxAttempts bounds processing attempts per event (default 5).
	MaxAttempts int
	// RetryBackoff is the wait after the first failed attempt, doubling up to a minute
	// (default 1 s).
	RetryBackoff time.Duration
	// Logger receives processing failures (default: discarded).
	Logger *slog.Logger
}

func (c Config) withDefaults() (Config, error) {
	secrets := make([]string, 0, len(c.Secrets))
	for _, s := range c.Secrets {
		if s != "" {
			secrets = append(secrets, s)
		}
	}
	if len(secrets) == 0 {
		return c, fmt.Errorf("receiver: at least one signing secret is required")
	}
	c.Secrets = secrets
	if c.Tolerance <= 0 {
		c.Tolerance = signature.DefaultTolerance
	}
	if c.APIBaseURL != "" {
		u, err := url.Parse(c.APIBaseURL)
		if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
			return c, fmt.Errorf("receiver: APIBaseURL %q is not an absolute http(s) URL", c.APIBaseURL)
		}
		if c.APIKey == "" {
			return c, fmt.Errorf("receiver: APIKey is required with APIBaseURL")
		}
		c.APIBaseURL = strings.TrimSuffix(c.APIBaseURL, "/")
	}
	client := &http.Client{Timeout: 10 * time.Second}
	if c.HTTPClient != nil {
		copied := *c.HTTPClient
		client = &copied
	}
	client.CheckRedirect = sameOrigin(c.APIBaseURL, client.CheckRedirect)
	c.HTTPClient = client
	if c.Now == nil {
		c.Now = time.Now
	}
	if err := c.Faults.Validate(); err != nil {
		return c, err
	}
	if c.MaxBodyBytes <= 0 {
		c.MaxBodyBytes = 1 << 20
	}
	if c.MaxArrivals <= 0 {
		c.MaxArrivals = 10000
	}
	if c.MaxAttempts <= 0 {
		c.MaxAttempts = 5
	}
	if c.RetryBackoff <= 0 {
		c.RetryBackoff = time.Second
	}
	if c.Logger == nil {
		c.Logger = slog.New(slog.NewTextHandler(io.Discard, nil))
	}
	return c, nil
}

// sameOrigin refuses a redirect that leaves base's scheme and host, then defers to next (or
// to net/http's default limit of 10 redirects).
func sameOrigin(base string, next func(*http.Request, []*http.Request) error) func(*http.Request, []*http.Request) error {
	return func(req *http.Request, via []*http.Request) error {
		if b, err := url.Parse(base); err != nil || req.URL.Scheme != b.Scheme || req.URL.Host != b.Host {
			return fmt.Errorf("refusing redirect to %s outside %s", req.URL.Redacted(), base)
		}
		if next != nil {
			return next(req, via)
		}
		if len(via) >= 10 {
			return fmt.Errorf("stopped after 10 redirects")
		}
		return nil
	}
}

// Faults are injected failures, for rehearsing a sender's retries. They are checked before
// anything else, so a faulted delivery is neither verified nor stored.
type Faults struct {
	// FailFirst answers the next N deliveries with FailStatus; it counts down.
	FailFirst int `json:"fail_first"`
	// FailStatus is FailFirst's status (default 500).
	FailStatus int `json:"fail_status,omitempty"`
	// Status, when set, answers every delivery (after the FailFirst ones) with this status.
	Status int `json:"status,omitempty"`
	// DelayMS delays every answer by this many milliseconds (at most 10 minutes).
	DelayMS int64 `json:"delay_ms,omitempty"`
}

// Validate reports a fault setting that cannot be applied.
func (f Faults) Validate() error {
	switch {
	case f.FailFirst < 0:
		return fmt.Errorf("receiver: fail_first must be at least 0, got %d", f.FailFirst)
	case f.FailStatus != 0 && (f.FailStatus < 200 || f.FailStatus > 599):
		return fmt.Errorf("receiver: fail_status must be an HTTP status 200..599, got %d", f.FailStatus)
	case f.Status != 0 && (f.Status < 200 || f.Status > 599):
		return fmt.Errorf("receiver: status must be an HTTP status 200..599, got %d", f.Status)
	case f.DelayMS < 0 || f.DelayMS > (10*time.Minute).Milliseconds():
		return fmt.Errorf("receiver: delay_ms must be 0..600000, got %d", f.DelayMS)
	}
	return nil
}

// faults guards the Faults in force.
type faults struct {
	mu sync.Mutex
	f  Faults
}

func (fs *faults) get() Faults {
	fs.mu.Lock()
	defer fs.mu.Unlock()
	return fs.f
}

func (fs *faults) set(f Faults) {
	fs.mu.Lock()
	defer fs.mu.Unlock()
	fs.f = f
}

// take decides whether this delivery is answered by a fault, counting FailFirst down.
func (fs *faults) take() (status int, reason string, ok bool) {
	fs.mu.Lock()
	defer fs.mu.Unlock()
	switch {
	case fs.f.FailFirst > 0:
		fs.f.FailFirst--
		status = fs.f.FailStatus
		if status == 0 {
			status = http.StatusInternalServerError
		}
		return status, fmt.Sprintf("injected failure: fail_first (%d left)", fs.f.FailFirst), true
	case fs.f.Status != 0:
		return fs.f.Status, fmt.Sprintf("injected status %d", fs.f.Status), true
	}
	return 0, "", false
}
