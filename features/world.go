package features

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"regexp"
	"slices"
	"strings"
	"time"

	"github.com/cucumber/godog"
	"github.com/tidwall/gjson"
)

// world is one scenario's state. The scenario initializer allocates it, Before resets it from
// the run, After cleans up what the scenario created outside the implementation (receivers)
// and, without a control plane, the subscriptions it made.
type world struct {
	run *run
	rec *recorder
	ctx context.Context

	pickle   string // godog's id of the scenario, by which the recorder knows it
	name     string
	feature  string
	tags     []string
	skip     string // why the scenario was skipped, if it was: the option, capability or input missing
	filtered bool   // left out by the name filter
	// caps are the state adapter's capabilities the scenario's control-plane requests needed.
	caps   []string
	locked int // 1: holds run.serial shared, 2: exclusively (a @serial scenario)

	started   time.Time
	stepStart time.Time
	stepTimes map[string]time.Duration // by godog's step id, for the report

	vars map[string]string

	insts  map[string]*institution // "" is the scenario's own institution
	active string                  // institution the control-plane steps act on
	keys   map[string]string       // named keys (plaintext)
	keyIDs map[string]string
	key    string // the key requests use; "" means the active institution's full key

	resp       *response
	remembered map[string]*response // responses kept by name ("I remember the response as")
	pages      []gjson.Result
	lawItems   []gjson.Result // the last law walk's records, descending

	receivers map[string]*receiver
	event     *delivery // the delivery the "event" steps look at
	subs      []string  // subscriptions created (deleted in After without a control plane)
	dnsHosts  []string  // DNS overrides to remove in After
}

// institution is a tenant the scenario created through the control plane (or, without one,
// the deployment's institution of APIKey).
type institution struct {
	ID    string
	Key   string
	KeyID string
	// Secret is the signing secret once a subscribe issued it; OldSecret the one before the
	// last rotation.
	Secret, OldSecret string
}

// response is the last API answer.
type response struct {
	Sent        time.Time // when the request was sent
	Method, URL string
	Status      int
	Header      http.Header
	Body        []byte
}

func (r *response) json() gjson.Result { return gjson.ParseBytes(r.Body) }

func (r *response) String() string {
	return fmt.Sprintf("%s %s → %d %s", r.Method, r.URL, r.Status, truncate(string(r.Body), 400))
}

func newWorld(rn *run, rec *recorder) *world { return &world{run: rn, rec: rec} }

// register hooks the world's steps into the scenario.
func (w *world) register(sc *godog.ScenarioContext) {
	sc.Before(w.before)
	sc.After(w.after)
	sc.StepContext().Before(func(ctx context.Context, _ *godog.Step) (context.Context, error) {
		w.stepStart = time.Now()
		return ctx, nil
	})
	sc.StepContext().After(func(ctx context.Context, st *godog.Step, _ godog.StepResultStatus, _ error) (context.Context, error) {
		if w.stepTimes != nil && !w.stepStart.IsZero() {
			w.stepTimes[st.Id] = time.Since(w.stepStart)
		}
		return ctx, nil
	})
	w.httpSteps(sc)
	w.sandboxSteps(sc)
	w.inputSteps(sc)
	w.webhookSteps(sc)
	w.lawSteps(sc)
	w.exposureSteps(sc)
	w.valueSteps(sc)
}

func (w *world) before(ctx context.Context, sc *godog.Scenario) (context.Context, error) {
	w.ctx = ctx
	w.pickle, w.name, w.feature = sc.Id, sc.Name, sc.Uri
	w.skip, w.filtered, w.caps = "", false, nil
	w.started, w.stepTimes = time.Now(), map[string]time.Duration{}
	w.tags = nil
	for _, t := range sc.Tags {
		w.tags = append(w.tags, strings.TrimPrefix(t.Name, "@"))
	}
	w.vars = map[string]string{}
	for k, v := range w.run.opts.Vars {
		w.vars[k] = v
	}
	w.insts = map[string]*institution{}
	w.remembered = nil
	w.keys, w.keyIDs = map[string]string{}, map[string]string{}
	w.receivers = map[string]*receiver{}
	u, _ := url.Parse(w.run.opts.BaseURL)
	w.vars["base_path"] = u.Path
	w.vars["origin"] = u.Scheme + "://" + u.Host // the deployment's root, outside any version
	w.vars["scenario_token"] = randomToken(6)    // for values that must not collide with another scenario's
	switch {
	case w.run.name != nil && !w.run.name.MatchString(sc.Name):
		w.skip, w.filtered = "name filter", true
	case hasTag(w.tags, "sandbox") && !w.run.sandbox():
		w.skip = "@sandbox: no control plane (--sandbox-url)"
	case hasTag(w.tags, "webhook") && !w.run.webhook:
		w.skip = "@webhook: the implementation cannot reach the receiver (--receiver-url)"
	}
	if w.skip != "" {
		return ctx, godog.ErrSkip
	}
	if hasTag(w.tags, "serial") {
		w.run.serial.Lock()
		w.locked = 2
	} else {
		w.run.serial.RLock()
		w.locked = 1
	}
	return ctx, nil
}

func (w *world) after(ctx context.Context, sc *godog.Scenario, err error) (context.Context, error) {
	for _, r := range w.receivers {
		r.release()
		w.run.hub.remove(r)
	}
	if !w.run.sandbox() {
		for _, id := range w.subs {
			_, _ = w.do(http.MethodDelete, "/webhooks/subscriptions/"+url.PathEscape(id), nil, "", authKey)
		}
	}
	for _, h := range w.dnsHosts {
		_, _ = w.control(http.MethodPut, "/_sandbox/dns", map[string]any{h: []string{}}, 0)
	}
	switch w.locked {
	case 1:
		w.run.serial.RUnlock()
	case 2:
		w.run.serial.Unlock()
	}
	w.locked = 0
	// The steps godog skips after a failure end after this hook: their times (none) are not
	// wanted, so the recorder gets this map and the world a fresh one.
	times := w.stepTimes
	w.stepTimes = nil
	slices.Sort(w.caps)
	w.rec.scenarioEnded(w.pickle, scenarioEnd{skipReason: w.skip, filtered: w.filtered, start: w.started,
		duration: time.Since(w.started), stepTimes: times, capabilities: w.caps})
	return ctx, nil
}

var varRe = regexp.MustCompile(`\{([A-Za-z_][A-Za-z0-9_.\-]*)\}`)

// expand replaces {name} with the scenario's variables; an unknown name is an error.
func (w *world) expand(s string) (string, error) {
	var missing []string
	out := varRe.ReplaceAllStringFunc(s, func(m string) string {
		name := m[1 : len(m)-1]
		if v, ok := w.vars[name]; ok {
			return v
		}
		missing = append(missing, name)
		return m
	})
	if len(missing) > 0 {
		return "", fmt.Errorf("unknown variable(s) %v in %q", missing, s)
	}
	return out, nil
}

func unq(s string) string { return strings.ReplaceAll(s, `\"`, `"`) }

// auth modes of a request.
const (
	authKey     = "key"     // the scenario's current key
	authNone    = "none"    // no x-api-key header
	authLiteral = "literal" // the given value, even empty
)

// apiURL resolves a path against the base URL: "/users/" → {base}/users/. Absolute URLs pass.
func (w *world) apiURL(p string) string {
	if strings.HasPrefix(p, "http://") || strings.HasPrefix(p, "https://") {
		return p
	}
	return w.run.opts.BaseURL + p
}

// linkURL resolves an event's links.self. Links are built at a version ("/v1/users/…"); the
// base URL ends with its version segment, so the link replaces that segment and what follows.
func (w *world) linkURL(link string) (string, error) {
	if strings.HasPrefix(link, "http://") || strings.HasPrefix(link, "https://") {
		return link, nil
	}
	if !strings.HasPrefix(link, "/") {
		return "", fmt.Errorf("expected links.self to be an absolute URL or path, got %q", link)
	}
	base, err := url.Parse(w.run.opts.BaseURL)
	if err != nil {
		return "", err
	}
	prefix := base.Path
	if i := strings.LastIndex(prefix, "/"); i >= 0 {
		prefix = prefix[:i]
	}
	base.Path, base.RawQuery = "", ""
	return base.String() + prefix + link, nil
}

// currentKey is the key requests use: the one chosen by a step, else the active
// institution's full key (created on first use when there is a control plane).
func (w *world) currentKey() (string, error) {
	if w.key != "" {
		return w.key, nil
	}
	in, err := w.institution()
	if err != nil {
		return "", err
	}
	return in.Key, nil
}

// do sends an API request and records the response as the scenario's current one.
func (w *world) do(method, path string, body []byte, contentType string, auth string, literal ...string) (*response, error) {
	return w.doHeaders(method, path, body, contentType, nil, auth, literal...)
}

func (w *world) doHeaders(method, path string, body []byte, contentType string, hdr http.Header, auth string, literal ...string) (*response, error) {
	p, err := w.expand(path)
	if err != nil {
		return nil, err
	}
	u := w.apiURL(p)
	var rd io.Reader
	if body != nil {
		rd = bytes.NewReader(body)
	}
	req, err := http.NewRequestWithContext(w.ctx, method, u, rd)
	if err != nil {
		return nil, err
	}
	if contentType != "" {
		req.Header.Set("Content-Type", contentType)
	}
	for k, vs := range hdr {
		for _, v := range vs {
			req.Header.Add(k, v)
		}
	}
	// Go sends req.Host, not a Host entry of the header map.
	if h := req.Header.Get("Host"); h != "" {
		req.Host = h
		req.Header.Del("Host")
	}
	switch auth {
	case authKey:
		k, err := w.currentKey()
		if err != nil {
			return nil, err
		}
		req.Header.Set("x-api-key", k)
	case authLiteral:
		req.Header["X-Api-Key"] = []string{literal[0]}
	}
	sent := time.Now()
	res, err := w.run.client.Do(req)
	if err != nil {
		return nil, fmt.Errorf("%s %s: %w", method, u, err)
	}
	defer res.Body.Close()
	b, err := io.ReadAll(io.LimitReader(res.Body, 8<<20))
	if err != nil {
		return nil, fmt.Errorf("%s %s: reading the body: %w", method, u, err)
	}
	r := &response{Sent: sent, Method: method, URL: u, Status: res.StatusCode, Header: res.Header, Body: b}
	// Every JSON body must parse strictly: gjson reads malformed JSON leniently, so without this
	// a body like [,{…}{…}] would pass the steps that read it (spec §2, §7).
	if mt, _, _ := strings.Cut(res.Header.Get("Content-Type"), ";"); strings.TrimSpace(mt) == "application/json" && len(b) > 0 && !json.Valid(b) {
		return nil, fmt.Errorf("%s %s → %d: the body is sent as application/json but is not valid JSON: %s", method, u, res.StatusCode, truncate(string(b), 400))
	}
	w.resp = r
	return r, nil
}

// control calls the control plane; want 0 accepts any 2xx. It never touches the scenario's
// current response.
func (w *world) control(method, path string, body any, want int) (gjson.Result, error) {
	if !w.run.sandbox() {
		return gjson.Result{}, errors.New("this step needs the control plane (--sandbox-url)")
	}
	if err := w.needCapability(method, path); err != nil {
		return gjson.Result{}, err
	}
	var rd io.Reader
	if body != nil {
		b, err := json.Marshal(body)
		if err != nil {
			return gjson.Result{}, err
		}
		rd = bytes.NewReader(b)
	}
	ctx := w.ctx
	if ctx == nil {
		ctx = context.Background()
	}
	u := w.run.opts.SandboxURL + path
	req, err := http.NewRequestWithContext(ctx, method, u, rd)
	if err != nil {
		return gjson.Result{}, err
	}
	req.Header.Set("x-sandbox-token", w.run.opts.SandboxToken)
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	res, err := w.run.client.Do(req)
	if err != nil {
		return gjson.Result{}, fmt.Errorf("control plane %s %s: %w", method, path, err)
	}
	defer res.Body.Close()
	b, _ := io.ReadAll(io.LimitReader(res.Body, 8<<20))
	ok := res.StatusCode >= 200 && res.StatusCode < 300
	if want != 0 {
		ok = res.StatusCode == want
	}
	if !ok {
		return gjson.Result{}, fmt.Errorf("control plane %s %s: expected %s, got %d %s", method, path, wantWord(want), res.StatusCode, truncate(string(b), 400))
	}
	return gjson.ParseBytes(b), nil
}

// answered checks that a control-plane answer carries each of fields as a non-empty value.
func answered(r gjson.Result, fields ...string) error {
	for _, f := range fields {
		if r.Get(f).String() == "" {
			return fmt.Errorf("control plane: expected %s in %s", strings.Join(fields, " and "), r.Raw)
		}
	}
	return nil
}

// issueKey issues a key with these scopes to an institution.
func (w *world) issueKey(instID string, scopes []string) (key, keyID string, err error) {
	r, err := w.control(http.MethodPost, "/_sandbox/institutions/"+url.PathEscape(instID)+"/keys", map[string]any{"scopes": scopes}, http.StatusCreated)
	if err != nil {
		return "", "", err
	}
	if err := answered(r, "key"); err != nil {
		return "", "", err
	}
	return r.Get("key").String(), r.Get("key_id").String(), nil
}

func wantWord(want int) string {
	if want == 0 {
		return "2xx"
	}
	return fmt.Sprint(want)
}

// institution returns the active institution, creating the scenario's own one (with both
// vendors and a full key) on first use when there is a control plane; without one it is the
// deployment's institution of APIKey.
func (w *world) institution() (*institution, error) {
	if in := w.insts[w.active]; in != nil {
		return in, nil
	}
	if w.active != "" {
		return nil, fmt.Errorf("unknown institution %q", w.active)
	}
	if !w.run.sandbox() {
		in := &institution{Key: w.run.opts.APIKey}
		w.insts[""] = in
		return in, nil
	}
	return w.createInstitution("", map[string]any{"core": "symitar", "dbp": "q2"})
}

func (w *world) createInstitution(name string, vendors map[string]any) (*institution, error) {
	label := name
	if label == "" {
		label = "mine"
	}
	r, err := w.control(http.MethodPost, "/_sandbox/institutions", map[string]any{
		"name": "contract " + label + " " + randomToken(4), "vendors": vendors}, http.StatusCreated)
	if err != nil {
		return nil, err
	}
	if err := answered(r, "institution_id"); err != nil {
		return nil, err
	}
	id := r.Get("institution_id").String()
	w.run.track(id)
	in := &institution{ID: id}
	if in.Key, in.KeyID, err = w.issueKey(id, AllScopes); err != nil {
		return nil, err
	}
	w.insts[name] = in
	if name == "" {
		w.vars["institution_id"] = id
	} else {
		w.vars[name+".institution_id"] = id
	}
	return in, nil
}

// needCapability skips the scenario when the state adapter lacks the capability a control-plane
// request needs, and notes the capability it needed.
func (w *world) needCapability(method, path string) error {
	c := capabilityOf(method, path)
	if c != "" && !w.run.can(c) {
		w.skip = CapabilitySkipReason(c)
		return godog.ErrSkip
	}
	w.noteCapability(c)
	return nil
}

// noteCapability notes a capability of the state adapter the scenario relies on ("" is none).
func (w *world) noteCapability(c string) {
	if c != "" && !slices.Contains(w.caps, c) {
		w.caps = append(w.caps, c)
	}
}
