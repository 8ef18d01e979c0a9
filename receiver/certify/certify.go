package certify

import (
	"bytes"
	"context"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/partnersim/partnersim/simulator/webhook/signature"
)

// Margin is how far beyond the tolerance the stale and future cases put their t, so that a
// modest clock difference between this machine and the receiver cannot flip the verdict.
const Margin = time.Minute

// Config is what Run needs. URL and Secret are required.
type Config struct {
	// URL is the receiver's webhook endpoint, as a subscription would name it.
	URL string
	// Secret is the signing secret the receiver verifies with ("whsec_…").
	Secret string
	// Tolerance is the receiver's signature tolerance (default 5 minutes, D11's): the stale
	// and future cases sign with a t that far plus Margin from now.
	Tolerance time.Duration
	// Client sends the deliveries (default: a 10 s timeout, D8's attempt timeout). Redirects
	// are never followed, whatever the client says: a 3xx is an answer, and not a 2xx.
	Client *http.Client
	// Now is the clock the signatures' t is taken from (default time.Now).
	Now func() time.Time
}

// Expect is what a case requires of the receiver's status code.
type Expect string

// The expectations.
const (
	// Expect2xx: the delivery must be acknowledged (any 200..299).
	Expect2xx Expect = "2xx"
	// ExpectNon2xx: the delivery must be refused with an HTTP status outside 200..299 (no
	// answer at all does not count: a sender would retry it as if the receiver were down).
	ExpectNon2xx Expect = "non-2xx"
)

// Case is one case of the battery.
type Case struct {
	// Name is stable across releases: CI may key on it.
	Name string `json:"name"`
	// Proves says in one line what a pass shows about the receiver.
	Proves string `json:"proves"`
	// Sends says what is delivered.
	Sends  string `json:"sends"`
	Expect Expect `json:"expect"`
}

// Result is one case's outcome.
type Result struct {
	Case
	// EventID is the body's event_id; HeaderID and Signature are the headers sent ("" when
	// the case sends none).
	EventID   string `json:"event_id"`
	HeaderID  string `json:"header_id,omitempty"`
	Signature string `json:"signature,omitempty"`
	// Status is the receiver's status code, 0 when it did not answer (Error says why).
	Status int    `json:"status,omitempty"`
	Error  string `json:"error,omitempty"`
	// Answer is the start of the response body (at most 512 bytes).
	Answer string `json:"answer,omitempty"`
	Passed bool   `json:"passed"`
	// Reason says why the case failed ("" when it passed).
	Reason   string        `json:"reason,omitempty"`
	Duration time.Duration `json:"duration"`
}

// Got renders what came back: the status code, or "no answer".
func (r Result) Got() string {
	if r.Status == 0 {
		return "no answer"
	}
	return fmt.Sprint(r.Status)
}

// delivery is one request a case makes; an empty HeaderID or Signature is not sent.
type delivery struct {
	eventID   string
	body      []byte
	headerID  string
	signature string
	note      string // added to the failure reason
}

// battery is one run's state: the clock, the secret and the valid kyc event the duplicate
// and header-id cases refer back to.
type battery struct {
	cfg       Config
	kycID     string
	kycBody   []byte
	kycT      time.Time
	kycStatus int
}

// caseDef is a case and how its delivery is built.
type caseDef struct {
	Case
	build func(b *battery) (delivery, error)
}

// table is the battery, in the order it is sent; the duplicate case must follow valid-kyc and
// header-id-mismatch refers to valid-kyc's event too.
func table() []caseDef {
	return []caseDef{
		{Case{"valid-kyc", "acknowledges a correctly signed kyc event",
			"a kyc event signed now", Expect2xx}, (*battery).validKYC},
		{Case{"valid-transaction", "acknowledges a correctly signed transaction event",
			"a transaction event (status completed) signed now", Expect2xx}, (*battery).validTransaction},
		{Case{"duplicate-redelivery", "acknowledges a redelivery of an event it already has: a duplicate is never an error",
			"valid-kyc's event again: same id and body, a new t and signature", Expect2xx}, (*battery).duplicate},
		{Case{"stale-timestamp", "refuses a t older than the tolerance (replay protection)",
			"a new event signed with t = now - (tolerance + 1m)", ExpectNon2xx}, (*battery).stale},
		{Case{"future-timestamp", "checks the tolerance on both sides: a future t is refused",
			"a new event signed with t = now + tolerance + 1m", ExpectNon2xx}, (*battery).future},
		{Case{"two-v1-one-valid", "accepts when any v1 entry matches, not only the first (rotation)",
			"t, a v1 under another secret, then the valid v1", Expect2xx}, (*battery).twoV1},
		{Case{"unknown-tag-ignored", "ignores unknown tags beside v1, so a new scheme can be added",
			"t, v2=(random hex), then the valid v1", Expect2xx}, (*battery).unknownTag},
		{Case{"tampered-body", "verifies the raw body as received: a changed field is refused",
			"a kyc event signed with kyc_status rejected, sent with approved", ExpectNon2xx}, (*battery).tampered},
		{Case{"wrong-secret", "refuses a signature made with another secret",
			"a new event signed with a freshly generated secret", ExpectNon2xx}, (*battery).wrongSecret},
		{Case{"no-signature-header", "refuses an unsigned delivery",
			"a new event with no X-Partner-Webhook-Signature header", ExpectNon2xx}, (*battery).noSignature},
		{Case{"no-v1-entry", "matches on the v1 tag: the right digest under another tag is refused",
			"t and v2=(the correct digest), no v1", ExpectNon2xx}, (*battery).noV1},
		{Case{"header-id-mismatch", "dedupes on the signed body: an id header that differs from event_id is refused",
			"a new, validly signed event whose id header is valid-kyc's event id", ExpectNon2xx}, (*battery).headerIDMismatch},
		{Case{"test-event", "acknowledges an is_test event although its user does not exist",
			"a validly signed kyc event with is_test true and a synthetic user", Expect2xx}, (*battery).testEvent},
	}
}

// Cases lists the battery in the order Run sends it.
func Cases() []Case {
	defs := table()
	out := make([]Case, len(defs))
	for i, c := range defs {
		out[i] = c.Case
	}
	return out
}

// Validate reports a Config Run cannot use.
func (c Config) Validate() error {
	u, err := url.Parse(c.URL)
	switch {
	case c.URL == "":
		return errors.New("certify: the receiver's URL is required")
	case err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "":
		return fmt.Errorf("certify: URL %q is not an absolute http(s) URL", c.URL)
	case c.Secret == "":
		return errors.New("certify: the signing secret is required")
	case c.Tolerance < 0:
		return fmt.Errorf("certify: tolerance must not be negative, got %s", c.Tolerance)
	}
	return nil
}

func (c Config) withDefaults() Config {
	if c.Tolerance == 0 {
		c.Tolerance = signature.DefaultTolerance
	}
	client := &http.Client{Timeout: 10 * time.Second}
	if c.Client != nil {
		copied := *c.Client
		client = &copied
	}
	client.CheckRedirect = func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }
	c.Client = client
	if c.Now == nil {
		c.Now = time.Now
	}
	return c
}

// Run sends the battery to cfg.URL, one case after another, and reports every case. A Config
// that does not validate, or a ctx that ends, fails the cases it prevents, with the reason.
func Run(ctx context.Context, cfg Config) Report {
	invalid := cfg.Validate()
	cfg = cfg.withDefaults()
	rep := Report{URL: cfg.URL, Tolerance: cfg.Tolerance, Started: cfg.Now()}
	began := time.Now()
	b := &battery{cfg: cfg}
	for _, c := range table() {
		res := Result{Case: c.Case}
		start := time.Now()
		switch {
		case invalid != nil:
			res.Reason = "not run: " + invalid.Error()
		case ctx.Err() != nil:
			res.Reason = "not run: " + ctx.Err().Error()
		default:
			d, err := c.build(b)
			if err != nil {
				res.Reason = "could not build the delivery: " + err.Error()
				break
			}
			res.EventID, res.HeaderID, res.Signature = d.eventID, d.headerID, d.signature
			b.send(ctx, d, &res)
			judge(&res, d.note)
			if c.Name == "valid-kyc" {
				b.kycStatus = res.Status
			}
		}
		res.Duration = time.Since(start)
		rep.Results = append(rep.Results, res)
	}
	rep.Duration = time.Since(began)
	return rep
}

// send POSTs d and records what came back in res.
func (b *battery) send(ctx context.Context, d delivery, res *Result) {
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, b.cfg.URL, bytes.NewReader(d.body))
	if err != nil {
		res.Error = err.Error()
		return
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("User-Agent", "partnersim-certify/1")
	if d.headerID != "" {
		req.Header.Set(signature.HeaderID, d.headerID)
	}
	if d.signature != "" {
		req.Header.Set(signature.HeaderSignature, d.signature)
	}
	resp, err := b.cfg.Client.Do(req)
	if err != nil {
		res.Error = err.Error()
		return
	}
	defer resp.Body.Close()
	answer, _ := io.ReadAll(io.LimitReader(resp.Body, 512))
	_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, 1<<20)) // let the connection be reused
	res.Status = resp.StatusCode
	res.Answer = strings.ToValidUTF8(strings.TrimSpace(string(answer)), "\uFFFD")
}

// judge decides res.Passed and, for a failure, res.Reason.
func judge(res *Result, note string) {
	ok2xx := res.Status >= 200 && res.Status < 300
	switch {
	case res.Status == 0:
		res.Reason = fmt.Sprintf("expected %s, got no answer: %s", res.Expect, res.Error)
	case res.Expect == Expect2xx && !ok2xx:
		res.Reason = fmt.Sprintf("expected 2xx, got %d", res.Status)
	case res.Expect == ExpectNon2xx && ok2xx:
		res.Reason = fmt.Sprintf("expected non-2xx, got %d: the receiver acknowledged it", res.Status)
	default:
		res.Passed = true
		return
	}
	if res.Answer != "" {
		res.Reason += " (answer: " + oneLine(res.Answer, 200) + ")"
	}
	if note != "" {
		res.Reason += "; " + note
	}
}

func oneLine(s string, n int) string {
	s = strings.Join(strings.Fields(s), " ")
	if r := []rune(s); len(r) > n {
		return string(r[:n]) + "…"
	}
	return s
}

// event builds a fresh event of kind, created now.
func (b *battery) event(kind Kind) (id string, body []byte, err error) {
	id = NewID("evt")
	body, err = Sample(kind, id, b.cfg.Now())
	return id, body, err
}

// signed is a delivery of a fresh event of kind, signed at t with the secret.
func (b *battery) signed(kind Kind, t time.Time) (delivery, error) {
	id, body, err := b.event(kind)
	if err != nil {
		return delivery{}, err
	}
	return delivery{eventID: id, body: body, headerID: id, signature: signature.Sign(t, body, b.cfg.Secret)}, nil
}

// v1 is the hex digest Sign puts in a v1 entry for body at t under secret.
func v1(t time.Time, body []byte, secret string) string {
	h, _ := signature.Parse(signature.Sign(t, body, secret)) // Sign's own output always parses
	return h.Signatures[0]
}

func (b *battery) validKYC() (delivery, error) {
	t := b.cfg.Now()
	d, err := b.signed(KindKYC, t)
	b.kycID, b.kycBody, b.kycT = d.eventID, d.body, t
	return d, err
}

func (b *battery) validTransaction() (delivery, error) { return b.signed(KindTransaction, b.cfg.Now()) }

func (b *battery) duplicate() (delivery, error) {
	if b.kycBody == nil {
		return delivery{}, errors.New("valid-kyc did not run")
	}
	// A retry is signed afresh, with a later t than the first attempt's.
	t := b.cfg.Now()
	if t.Unix() <= b.kycT.Unix() {
		t = b.kycT.Add(time.Second)
	}
	d := delivery{eventID: b.kycID, body: b.kycBody, headerID: b.kycID, signature: signature.Sign(t, b.kycBody, b.cfg.Secret)}
	if b.kycStatus < 200 || b.kycStatus > 299 {
		d.note = fmt.Sprintf("the first delivery (valid-kyc) was not acknowledged either (%s)", statusText(b.kycStatus))
	}
	return d, nil
}

func statusText(status int) string {
	if status == 0 {
		return "no answer"
	}
	return fmt.Sprint(status)
}

func (b *battery) stale() (delivery, error) {
	return b.signed(KindKYC, b.cfg.Now().Add(-(b.cfg.Tolerance + Margin)))
}

func (b *battery) future() (delivery, error) {
	return b.signed(KindKYC, b.cfg.Now().Add(b.cfg.Tolerance+Margin))
}

// signedAndOtherSecret is a delivery signed now with the receiver's secret, and a fresh secret
// the receiver does not know.
func (b *battery) signedAndOtherSecret() (delivery, string, error) {
	d, err := b.signed(KindKYC, b.cfg.Now())
	if err != nil {
		return d, "", err
	}
	other, err := signature.NewSecret(nil)
	return d, other, err
}

func (b *battery) twoV1() (delivery, error) {
	d, other, err := b.signedAndOtherSecret()
	if err != nil {
		return d, err
	}
	h, err := signature.Parse(d.signature)
	if err != nil {
		return d, err
	}
	h.Signatures = []string{v1(h.Timestamp, d.body, other), h.Signatures[0]}
	d.signature = h.String()
	return d, nil
}

func (b *battery) unknownTag() (delivery, error) {
	d, err := b.signed(KindKYC, b.cfg.Now())
	if err != nil {
		return d, err
	}
	t, sig, _ := strings.Cut(d.signature, ",")
	d.signature = t + ",v2=" + hex.EncodeToString([]byte(randomBase62(32))) + "," + sig
	return d, nil
}

func (b *battery) tampered() (delivery, error) {
	d, err := b.signed(KindKYC, b.cfg.Now())
	if err != nil {
		return d, err
	}
	signedBody := bytes.Replace(d.body, []byte(`"kyc_status":"approved"`), []byte(`"kyc_status":"rejected"`), 1)
	if bytes.Equal(signedBody, d.body) {
		return d, errors.New("the sample has no kyc_status to tamper with")
	}
	d.signature = signature.Sign(b.cfg.Now(), signedBody, b.cfg.Secret)
	return d, nil
}

func (b *battery) wrongSecret() (delivery, error) {
	d, other, err := b.signedAndOtherSecret()
	if err != nil {
		return d, err
	}
	d.signature = signature.Sign(b.cfg.Now(), d.body, other)
	return d, nil
}

func (b *battery) noSignature() (delivery, error) {
	d, err := b.signed(KindKYC, b.cfg.Now())
	d.signature = ""
	return d, err
}

func (b *battery) noV1() (delivery, error) {
	t := b.cfg.Now()
	d, err := b.signed(KindKYC, t)
	if err != nil {
		return d, err
	}
	d.signature = fmt.Sprintf("t=%d,v2=%s", t.Unix(), v1(t, d.body, b.cfg.Secret))
	return d, nil
}

func (b *battery) headerIDMismatch() (delivery, error) {
	d, err := b.signed(KindKYC, b.cfg.Now())
	if err != nil {
		return d, err
	}
	// The id of an event the receiver already has: a receiver that dedupes on the header
	// would answer "duplicate" and silently drop this new event.
	d.headerID = b.kycID
	if d.headerID == "" {
		d.headerID = NewID("evt")
	}
	return d, nil
}

func (b *battery) testEvent() (delivery, error) { return b.signed(KindTest, b.cfg.Now()) }
