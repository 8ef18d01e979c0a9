package features

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/cucumber/godog"
	"github.com/partnersim/partnersim/features/laws"
	"github.com/tidwall/gjson"
)

// webhookSteps catch deliveries with the run's receiver hub and check them against spec §6
// with the suite's own HMAC verification.
func (w *world) webhookSteps(sc *godog.ScenarioContext) {
	sc.Step(`^a receiver `+q+`$`, w.givenReceiver)
	sc.Step(`^a receiver `+q+` answering (\d{3})$`, w.givenReceiverAnswering)
	sc.Step(`^a receiver `+q+` answering (\d{3}) to the first (\d+) deliver(?:y|ies)$`, w.givenReceiverScript)
	sc.Step(`^an unreachable receiver `+q+`$`, w.givenUnreachable)
	sc.Step(`^a receiver `+q+` on the IPv6 loopback address$`, w.givenReceiverIPv6)
	sc.Step(`^a receiver `+q+` holding its answer (\d{3}) until released$`, w.givenReceiverHolding)
	sc.Step(`^`+q+` releases its answers$`, w.releaseReceiver)

	sc.Step(`^I subscribe `+q+` to `+q+` events$`, w.subscribe)
	sc.Step(`^I subscribe `+q+` to `+q+` events through `+q+`$`, w.subscribeThrough)
	sc.Step(`^`+q+` is subscribed to `+q+` events$`, w.subscribed)
	sc.Step(`^`+q+` is subscribed to `+q+` events through `+q+`$`, w.subscribedThrough)
	sc.Step(`^I subscribe the URL `+q+` to `+q+` events$`, w.subscribeURL)
	sc.Step(`^I subscribe the URL `+q+` padded to (\d+) characters to `+q+` events$`, w.subscribePaddedURL)
	sc.Step(`^`+q+` is subscribed to `+q+` events at the host `+q+`$`, w.subscribedAtHost)
	sc.Step(`^the response carries the signing secret$`, w.responseHasSecret)

	sc.Step(`^`+q+` receives a delivery$`, w.receivesOne)
	sc.Step(`^`+q+` receives (\d+) deliveries$`, w.receivesN)
	sc.Step(`^`+q+` has received exactly (\d+) deliver(?:y|ies)$`, w.receivedExactly)
	sc.Step(`^`+q+` receives no delivery$`, w.receivesNone)
	sc.Step(`^I note how many deliveries `+q+` has received$`, w.noteCount)
	sc.Step(`^`+q+` receives no further delivery$`, w.noFurther)
	sc.Step(`^the retries of the event to `+q+` come `+q+` after each attempt, then the delivery fails$`, w.retrySchedule)

	sc.Step(`^the delivery is a POST with the content type `+q+`$`, w.deliveryPost)
	sc.Step(`^the delivery header `+q+` equals the event's `+q+`$`, w.deliveryHeaderEqualsEvent)
	sc.Step(`^the delivery is signed with the signing secret$`, w.deliverySigned)
	sc.Step(`^the delivery is signed with the previous signing secret$`, w.deliverySignedPrevious)
	sc.Step(`^the delivery's signature header is well-formed$`, w.signatureWellFormed)
	sc.Step(`^the delivery's signature header has (\d+) v1 entr(?:y|ies)$`, w.signatureV1Count)
	sc.Step(`^test events to `+q+` soon carry (\d+) v1 entr(?:y|ies)$`, w.testEventsSoonCarry)
	sc.Step(`^the delivery's v1 entries carry the new secret's digest first and the previous secret's second$`, w.signatureRotationOrder)
	sc.Step(`^the delivery's signature timestamp is within (\d+) seconds of now$`, w.signatureFresh)
	sc.Step(`^the delivery's `+q+` is within (\d+) seconds of now$`, w.deliveryFieldFresh)
	sc.Step(`^the JSON at `+q+` is within (\d+) seconds of now$`, w.jsonFresh)
	sc.Step(`^every delivery to `+q+` carries the same X-Partner-Webhook-Id and body$`, w.deliveriesSameIDAndBody)
	sc.Step(`^every delivery to `+q+` is signed with the signing secret$`, w.deliveriesSigned)
	sc.Step(`^the event's links\.self is built at version `+q+`$`, w.linkAtVersion)
	sc.Step(`^I follow the event's links\.self$`, w.followLink)
	sc.Step(`^the deployment serves version `+q+`$`, w.servesVersion)
	sc.Step(`^the event carries no balances, positions, quantities or amounts$`, w.eventWithoutAmounts)
	sc.Step(`^the suite's receiver listens on loopback$`, w.receiverOnLoopback)
}

// servesVersion skips the scenario unless the implementation also mounts the API at another
// version (the simulator does with --api-versions v1,v2).
func (w *world) servesVersion(version string) error {
	res, err := w.do(http.MethodGet, w.versionURL(unq(version))+"/health", nil, "", authNone)
	if err != nil {
		return err
	}
	w.resp = nil
	if res.Status != http.StatusOK {
		w.skip = "the deployment does not serve " + unq(version)
		return godog.ErrSkip
	}
	return nil
}

// amountKeys are the names of what a transaction event must not carry (spec §6.3): balances,
// positions, quantities, amounts and the values derived from them.
var amountKeys = []string{"amount", "amounts", "balance", "balances", "cash", "cost_basis", "current_market_value", "fee", "fees",
	"holdings", "market_value", "notional", "position", "positions", "price", "quantity", "total_current_market_value", "value"}

// eventWithoutAmounts checks that no key anywhere in the current delivery's body names a
// balance, a position, a quantity or an amount (spec §6.3: Get User Detail returns those).
func (w *world) eventWithoutAmounts() error {
	d, err := w.current()
	if err != nil {
		return err
	}
	var found []string
	var walk func(path string, v gjson.Result)
	walk = func(path string, v gjson.Result) {
		if !v.IsObject() && !v.IsArray() {
			return
		}
		v.ForEach(func(k, child gjson.Result) bool {
			p := path
			if k.Exists() {
				p = strings.TrimPrefix(path+"."+k.String(), ".")
				if slices.Contains(amountKeys, strings.ToLower(k.String())) {
					found = append(found, p)
				}
			}
			walk(p, child)
			return true
		})
	}
	walk("", gjson.ParseBytes(d.Body))
	if len(found) > 0 {
		return fmt.Errorf("spec §6.3: a transaction event carries no balances, positions, quantities or amounts; got %s in %s", strings.Join(found, ", "), truncate(string(d.Body), 300))
	}
	return nil
}

// receiverOnLoopback skips a scenario whose receiver must be reached on a loopback address
// (a name resolving to loopback): the receiver was given a URL of its own (--receiver-url).
func (w *world) receiverOnLoopback() error {
	if !isLoopbackURL(w.run.hub.base) {
		w.skip = "the suite's receiver is reached at " + w.run.hub.base + ", not on loopback"
		return godog.ErrSkip
	}
	return nil
}

func (w *world) addReceiver(name string) (*receiver, error) {
	n := unq(name)
	if _, ok := w.receivers[n]; ok {
		return nil, fmt.Errorf("receiver %q already exists", n)
	}
	r := w.run.hub.add(n)
	if !w.run.webhook {
		// The implementation cannot reach the hub: subscriptions still need a URL it accepts
		// (the @webhook scenarios, which need deliveries, are skipped).
		r.url = "https://example.com/partnersim-contract/" + r.token + "/" + n
	}
	r.inst = w.active
	w.receivers[n] = r
	w.vars[n+".url"] = r.url
	return r, nil
}

func (w *world) givenReceiver(name string) error {
	_, err := w.addReceiver(name)
	return err
}

// givenReceiverIPv6 is a receiver reached at [::1] only; the scenario is skipped where the
// machine has no IPv6 loopback.
func (w *world) givenReceiverIPv6(name string) error {
	if w.run.hub.base6 == "" {
		w.skip = "the machine has no IPv6 loopback address for the receiver"
		return godog.ErrSkip
	}
	r, err := w.addReceiver(name)
	if err != nil {
		return err
	}
	r.url = w.run.hub.base6 + strings.TrimPrefix(r.url, w.run.hub.base)
	w.vars[r.name+".url"] = r.url
	return nil
}

func (w *world) givenReceiverAnswering(name, status string) error {
	r, err := w.addReceiver(name)
	if err != nil {
		return err
	}
	code, _ := strconv.Atoi(status)
	r.answer(code, 0)
	return nil
}

func (w *world) givenReceiverScript(name, status, first string) error {
	r, err := w.addReceiver(name)
	if err != nil {
		return err
	}
	code, _ := strconv.Atoi(status)
	n, _ := strconv.Atoi(first)
	r.answer(code, n)
	return nil
}

func (w *world) givenReceiverHolding(name, status string) error {
	if err := w.givenReceiverAnswering(name, status); err != nil {
		return err
	}
	w.receivers[unq(name)].holdAnswers()
	return nil
}

func (w *world) releaseReceiver(name string) error {
	r, err := w.receiver(name)
	if err != nil {
		return err
	}
	r.release()
	return nil
}

func (w *world) givenUnreachable(name string) error {
	u, err := unreachableURL()
	if err != nil {
		return err
	}
	n := unq(name)
	r := &receiver{name: n, url: u, inst: w.active, changed: make(chan struct{})}
	w.receivers[n] = r
	w.vars[n+".url"] = u
	return nil
}

func (w *world) receiver(name string) (*receiver, error) {
	r, ok := w.receivers[unq(name)]
	if !ok {
		return nil, fmt.Errorf("no receiver %q in this scenario", unq(name))
	}
	return r, nil
}

// versionURL is the base URL moved to another version segment (…/v1 → …/v2).
func (w *world) versionURL(version string) string {
	base := w.run.opts.BaseURL
	if i := strings.LastIndex(base, "/"); i >= 0 {
		return base[:i+1] + version
	}
	return base
}

// createSubscription posts a subscription and records the response; a 201 remembers the id
// ({receiver.event_type}, {subscription_id}) and any signing secret it carries.
func (w *world) createSubscription(base, callback, eventType string, r *receiver) (*response, error) {
	body, _ := json.Marshal(map[string]string{"event_type": eventType, "url": callback})
	res, err := w.do(http.MethodPost, base+"/webhooks/subscriptions", body, "application/json", authKey)
	if err != nil {
		return nil, err
	}
	if res.Status != http.StatusCreated {
		return res, nil
	}
	j := res.json()
	id := j.Get("subscription_id").String()
	w.vars["subscription_id"] = id
	w.subs = append(w.subs, id)
	if r != nil {
		w.vars[r.name+"."+eventType] = id
		r.subs = append(r.subs, id)
	}
	if s := j.Get("signing_secret").String(); s != "" {
		in, err := w.institution()
		if err != nil {
			return nil, err
		}
		if in.Secret == "" {
			in.Secret = s
		}
		if !w.run.sandbox() {
			w.run.learnSecret(s)
		}
	}
	return res, nil
}

func (w *world) subscribe(name, eventType string) error {
	r, err := w.receiver(name)
	if err != nil {
		return err
	}
	_, err = w.createSubscription(w.run.opts.BaseURL, r.url, unq(eventType), r)
	return err
}

func (w *world) subscribeThrough(name, eventType, version string) error {
	r, err := w.receiver(name)
	if err != nil {
		return err
	}
	_, err = w.createSubscription(w.versionURL(unq(version)), r.url, unq(eventType), r)
	return err
}

func (w *world) subscribed(name, eventType string) error {
	if err := w.subscribe(name, eventType); err != nil {
		return err
	}
	return w.statusIs("201")
}

func (w *world) subscribedThrough(name, eventType, version string) error {
	if err := w.subscribeThrough(name, eventType, version); err != nil {
		return err
	}
	return w.statusIs("201")
}

// subscribedAtHost subscribes a receiver through another host name for the same address (the
// receiver listens on loopback: a name that resolves or is overridden to loopback reaches it).
func (w *world) subscribedAtHost(name, eventType, host string) error {
	r, err := w.receiver(name)
	if err != nil {
		return err
	}
	h, err := w.expand(unq(host))
	if err != nil {
		return err
	}
	u, err := url.Parse(r.url)
	if err != nil {
		return err
	}
	u.Host = h + ":" + u.Port()
	if _, err := w.createSubscription(w.run.opts.BaseURL, u.String(), unq(eventType), r); err != nil {
		return err
	}
	return w.statusIs("201")
}

func (w *world) subscribeURL(raw, eventType string) error {
	u, err := w.expand(unq(raw))
	if err != nil {
		return err
	}
	_, err = w.createSubscription(w.run.opts.BaseURL, u, unq(eventType), nil)
	return err
}

// subscribePaddedURL subscribes the URL with 'a's appended until it is exactly n characters
// long (the URL should end in a path).
func (w *world) subscribePaddedURL(raw, n, eventType string) error {
	u, err := w.padded(unq(raw), n, "a")
	if err != nil {
		return err
	}
	_, err = w.createSubscription(w.run.opts.BaseURL, u, unq(eventType), nil)
	return err
}

func (w *world) responseHasSecret() error {
	r, err := w.last()
	if err != nil {
		return err
	}
	if s := r.json().Get("signing_secret"); s.Type != gjson.String || s.Str == "" {
		return fmt.Errorf("expected the subscribe that issued the secret to return it, got %s", r)
	}
	return nil
}

func (w *world) receivesOne(name string) error {
	r, err := w.receiver(name)
	if err != nil {
		return err
	}
	d, err := r.next(w.ctx, w.run.opts.Wait)
	if err != nil {
		return err
	}
	w.event = d
	return nil
}

func (w *world) receivesN(name, n string) error {
	r, err := w.receiver(name)
	if err != nil {
		return err
	}
	want, _ := strconv.Atoi(n)
	got, err := r.waitCount(w.ctx, want, w.run.opts.Wait)
	if err != nil {
		return err
	}
	w.event = got[want-1]
	return nil
}

// quiet is how long a receiver must stay silent before a run without a control plane concludes
// nothing more is coming; with one, the delivery log says so (checkExactly).
const quiet = 1200 * time.Millisecond

func (w *world) receivedExactly(name, n string) error {
	r, err := w.receiver(name)
	if err != nil {
		return err
	}
	want, _ := strconv.Atoi(n)
	if want > 0 {
		if _, err := r.waitCount(w.ctx, want, w.run.opts.Wait); err != nil {
			return err
		}
	}
	got, err := w.checkExactly(r, want)
	if err != nil {
		return err
	}
	if len(got) > 0 {
		w.event = got[len(got)-1]
	}
	return nil
}

func (w *world) receivesNone(name string) error { return w.receivedExactly(name, "0") }

func (w *world) noteCount(name string) error {
	r, err := w.receiver(name)
	if err != nil {
		return err
	}
	got, _ := r.snapshot()
	w.vars[r.name+".noted"] = strconv.Itoa(len(got))
	return nil
}

func (w *world) noFurther(name string) error {
	r, err := w.receiver(name)
	if err != nil {
		return err
	}
	noted, err := strconv.Atoi(w.vars[r.name+".noted"])
	if err != nil {
		return fmt.Errorf("note how many deliveries %q has received first", r.name)
	}
	if _, err := w.checkExactly(r, noted); err != nil {
		return fmt.Errorf("expected no delivery to %q after %d: %w", r.name, noted, err)
	}
	return nil
}

func describeDeliveries(ds []*delivery) string {
	var parts []string
	for _, d := range ds {
		parts = append(parts, truncate(string(d.Body), 200))
	}
	return "[" + strings.Join(parts, "; ") + "]"
}

func (w *world) current() (*delivery, error) {
	if w.event == nil {
		return nil, errors.New("no delivery was received yet")
	}
	return w.event, nil
}

func (w *world) deliveryPost(ct string) error {
	d, err := w.current()
	if err != nil {
		return err
	}
	if d.Method != http.MethodPost {
		return fmt.Errorf("expected the delivery to be a POST, got %s", d.Method)
	}
	got := d.Header.Get("Content-Type")
	if mt, _, _ := strings.Cut(got, ";"); strings.TrimSpace(mt) != unq(ct) {
		return fmt.Errorf("expected Content-Type %s, got %q", unq(ct), got)
	}
	return nil
}

func (w *world) deliveryHeaderEqualsEvent(header, path string) error {
	d, err := w.current()
	if err != nil {
		return err
	}
	want := gjson.GetBytes(d.Body, unq(path))
	got := d.Header.Get(unq(header))
	if !want.Exists() || got != want.String() {
		return fmt.Errorf("expected header %s to equal the body's %s (%s), got %q", unq(header), unq(path), orAbsent(want), got)
	}
	return nil
}

// receiverSecret is the signing secret of the institution that subscribed the receiver the
// current delivery came to; without a control plane, the deployment's (learnt or given).
func (w *world) secretFor(inst string, previous bool) (string, error) {
	in := w.insts[inst]
	if in == nil {
		return "", fmt.Errorf("no institution %q", inst)
	}
	if previous {
		if in.OldSecret == "" {
			return "", errors.New("no previous signing secret: rotate it first")
		}
		return in.OldSecret, nil
	}
	if in.Secret != "" {
		return in.Secret, nil
	}
	if !w.run.sandbox() {
		if s := w.run.sharedSecret(w.run.opts.Wait); s != "" {
			return s, nil
		}
		w.skip = "the signing secret is unknown (--signing-secret)"
		return "", godog.ErrSkip
	}
	return "", errors.New("expected the first subscribe of the institution to return signing_secret, got none")
}

func (w *world) eventReceiver() (*receiver, error) {
	d, err := w.current()
	if err != nil {
		return nil, err
	}
	for _, r := range w.receivers {
		r.mu.Lock()
		for _, g := range r.got {
			if g == d {
				r.mu.Unlock()
				return r, nil
			}
		}
		r.mu.Unlock()
	}
	return nil, errors.New("the current delivery belongs to no receiver")
}

func (w *world) verifyCurrent(previous bool) error {
	d, err := w.current()
	if err != nil {
		return err
	}
	r, err := w.eventReceiver()
	if err != nil {
		return err
	}
	secret, err := w.secretFor(r.inst, previous)
	if err != nil {
		return err
	}
	return laws.VerifySignature(d.signature(), d.Body, secret)
}

func (w *world) deliverySigned() error         { return w.verifyCurrent(false) }
func (w *world) deliverySignedPrevious() error { return w.verifyCurrent(true) }

var v1Hex = regexp.MustCompile(`^[0-9a-f]{64}$`)

func (w *world) signatureWellFormed() error {
	d, err := w.current()
	if err != nil {
		return err
	}
	h := d.signature()
	if !laws.WellFormed.MatchString(h) {
		return fmt.Errorf("expected X-Partner-Webhook-Signature of the form t=<unix_seconds>,v1=<hex>, got %q", h)
	}
	s, err := laws.ParseSignature(h)
	if err != nil {
		return err
	}
	if s.Order[0] != "t" {
		return fmt.Errorf("expected t first in the signature header, got %q", h)
	}
	if len(s.Entries["v1"]) == 0 {
		return fmt.Errorf("expected a v1 entry in the signature header, got %q", h)
	}
	for _, v := range s.Entries["v1"] {
		if !v1Hex.MatchString(v) {
			return fmt.Errorf("expected each v1 digest to be 64 lower-case hex digits (HMAC-SHA256), got %q", v)
		}
	}
	return nil
}

// currentSignature is the current delivery with its X-Partner-Webhook-Signature header, as
// written and parsed.
func (w *world) currentSignature() (d *delivery, h string, s *laws.SignatureHeader, err error) {
	if d, err = w.current(); err != nil {
		return nil, "", nil, err
	}
	h = d.signature()
	if s, err = laws.ParseSignature(h); err != nil {
		return nil, "", nil, err
	}
	return d, h, s, nil
}

func (w *world) signatureV1Count(n string) error {
	_, h, s, err := w.currentSignature()
	if err != nil {
		return err
	}
	if want, _ := strconv.Atoi(n); len(s.Entries["v1"]) != want {
		return fmt.Errorf("expected %d v1 entries, got %d in %q", want, len(s.Entries["v1"]), h)
	}
	return nil
}

// testEventsSoonCarry sends test events to a receiver's kyc subscription, one after another, until
// one arrives with n v1 entries (bounded by the run's wait): the overlap of a rotation runs on
// the wall clock (decisions D8), so this asks the implementation rather than sleeping through it.
func (w *world) testEventsSoonCarry(name, n string) error {
	r, err := w.receiver(name)
	if err != nil {
		return err
	}
	want, _ := strconv.Atoi(n)
	deadline := time.Now().Add(w.run.opts.Wait)
	for {
		if _, err := w.do(http.MethodPost, "/webhooks/subscriptions/"+url.PathEscape(w.vars[r.name+".kyc"])+"/test", nil, "", authKey); err != nil {
			return err
		}
		d, err := r.next(w.ctx, w.run.opts.Wait)
		if err != nil {
			return err
		}
		w.event = d
		s, err := laws.ParseSignature(d.signature())
		if err != nil {
			return err
		}
		if len(s.Entries["v1"]) == want {
			return nil
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("expected a test event with %d v1 entries within %s, the last carried %q", want, w.run.opts.Wait, d.signature())
		}
		time.Sleep(200 * time.Millisecond) // polling the implementation, not waiting out the overlap blindly
	}
}

func (w *world) signatureRotationOrder() error {
	d, h, s, err := w.currentSignature()
	if err != nil {
		return err
	}
	r, err := w.eventReceiver()
	if err != nil {
		return err
	}
	in := w.insts[r.inst]
	if in == nil || in.Secret == "" || in.OldSecret == "" {
		return errors.New("expected a rotated signing secret")
	}
	v1 := s.Entries["v1"]
	if len(v1) < 2 {
		return fmt.Errorf("expected two v1 entries during the overlap, got %q", h)
	}
	newer := &laws.SignatureHeader{T: s.T, Entries: map[string][]string{"v1": v1[:1]}}
	older := &laws.SignatureHeader{T: s.T, Entries: map[string][]string{"v1": v1[1:2]}}
	if newer.MatchV1(in.Secret, d.Body) != 0 || older.MatchV1(in.OldSecret, d.Body) != 0 {
		return fmt.Errorf("expected the first v1 entry to verify with the new secret and the second with the previous one, got %q", h)
	}
	return nil
}

func (w *world) signatureFresh(secs string) error {
	_, _, s, err := w.currentSignature()
	if err != nil {
		return err
	}
	n, _ := strconv.Atoi(secs)
	return laws.WallClockAt("the signature's t", "t="+s.T, s.Time(), time.Now(), time.Duration(n)*time.Second)
}

// deliveryFieldFresh checks a timestamp of the current delivery's body against the wall clock.
func (w *world) deliveryFieldFresh(path, secs string) error {
	d, err := w.current()
	if err != nil {
		return err
	}
	n, _ := strconv.Atoi(secs)
	return laws.WallClock("the delivery's "+unq(path), gjson.GetBytes(d.Body, unq(path)), time.Now(), time.Duration(n)*time.Second)
}

// jsonFresh checks a timestamp of the last response against the wall clock.
func (w *world) jsonFresh(path, secs string) error {
	r, err := w.last()
	if err != nil {
		return err
	}
	n, _ := strconv.Atoi(secs)
	return laws.WallClock(unq(path), gjson.GetBytes(r.Body, unq(path)), time.Now(), time.Duration(n)*time.Second)
}

func (w *world) deliveriesSameIDAndBody(name string) error {
	r, err := w.receiver(name)
	if err != nil {
		return err
	}
	got, _ := r.snapshot()
	if len(got) < 2 {
		return fmt.Errorf("expected at least two deliveries to %q, got %d", r.name, len(got))
	}
	id0 := got[0].Header.Get("X-Partner-Webhook-Id")
	if id0 == "" {
		return errors.New("expected an X-Partner-Webhook-Id header on the first delivery, got none")
	}
	for i, d := range got[1:] {
		if id := d.Header.Get("X-Partner-Webhook-Id"); id != id0 {
			return fmt.Errorf("expected the retry (attempt %d) to reuse X-Partner-Webhook-Id %q, got %q", i+2, id0, id)
		}
		if !bytes.Equal(d.Body, got[0].Body) {
			return fmt.Errorf("expected attempt %d to send the same body bytes, got %s, first was %s", i+2, truncate(string(d.Body), 200), truncate(string(got[0].Body), 200))
		}
	}
	return nil
}

func (w *world) deliveriesSigned(name string) error {
	r, err := w.receiver(name)
	if err != nil {
		return err
	}
	secret, err := w.secretFor(r.inst, false)
	if err != nil {
		return err
	}
	got, _ := r.snapshot()
	for i, d := range got {
		if err := laws.VerifySignature(d.signature(), d.Body, secret); err != nil {
			return fmt.Errorf("delivery %d: %w", i+1, err)
		}
	}
	return nil
}

func (w *world) linkAtVersion(version string) error {
	d, err := w.current()
	if err != nil {
		return err
	}
	link := gjson.GetBytes(d.Body, "links.self")
	if link.Type != gjson.String {
		return fmt.Errorf("expected links.self to be a string, got %s", orAbsent(link))
	}
	p := link.Str
	if u, err := url.Parse(p); err == nil {
		p = u.Path
	}
	if !strings.Contains(p+"/", "/"+unq(version)+"/") {
		return fmt.Errorf("expected links.self to be built at version %s (…/%s/…), got %q", unq(version), unq(version), link.Str)
	}
	return nil
}

func (w *world) followLink() error {
	d, err := w.current()
	if err != nil {
		return err
	}
	link := gjson.GetBytes(d.Body, "links.self")
	if link.Type != gjson.String || link.Str == "" {
		return fmt.Errorf("expected links.self in the event, got %s", orAbsent(link))
	}
	u, err := w.linkURL(link.Str)
	if err != nil {
		return err
	}
	_, err = w.do(http.MethodGet, u, nil, "", authKey)
	return err
}
