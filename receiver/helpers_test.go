package receiver_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/partnersim/partnersim/receiver"
	"github.com/partnersim/partnersim/simulator/webhook/signature"
)

const (
	secret = "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw"
	apiKey = "sbx_0123456789abcdefghijABCDEFGHIJ0123456789"
)

// base is the fixed "now" of every test clock.
var base = time.Unix(1700000000, 0)

// fakeAPI is the partner API's authoritative records, answering refetches.
type fakeAPI struct {
	*httptest.Server
	mu      sync.Mutex
	hits    map[string]int
	script  map[string][]int // path → statuses to answer before the record
	badKeys int
}

func newFakeAPI(t testing.TB) *fakeAPI {
	t.Helper()
	api := &fakeAPI{hits: map[string]int{}, script: map[string][]int{}}
	api.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		api.mu.Lock()
		defer api.mu.Unlock()
		if req.Header.Get("x-api-key") != apiKey {
			api.badKeys++
			w.WriteHeader(http.StatusUnauthorized)
			fmt.Fprint(w, `{"detail":"Invalid API key"}`)
			return
		}
		path := req.URL.RequestURI()
		api.hits[path]++
		if s := api.script[path]; len(s) > 0 {
			api.script[path] = s[1:]
			w.WriteHeader(s[0])
			fmt.Fprintf(w, `{"detail":"scripted %d"}`, s[0])
			return
		}
		w.Header().Set("Content-Type", "application/json")
		fmt.Fprintf(w, `{"self":%q,"status":"completed"}`, path)
	}))
	t.Cleanup(api.Close)
	return api
}

func (api *fakeAPI) hitsFor(path string) int {
	api.mu.Lock()
	defer api.mu.Unlock()
	return api.hits[path]
}

func (api *fakeAPI) failFirst(path string, statuses ...int) {
	api.mu.Lock()
	defer api.mu.Unlock()
	api.script[path] = statuses
}

// processLog records every Process call.
type processLog struct {
	mu     sync.Mutex
	events []receiver.Event
}

func (p *processLog) process(_ context.Context, ev receiver.Event) error {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.events = append(p.events, ev)
	return nil
}

func (p *processLog) count(id string) int {
	p.mu.Lock()
	defer p.mu.Unlock()
	n := 0
	for _, ev := range p.events {
		if ev.EventID == id {
			n++
		}
	}
	return n
}

func (p *processLog) total() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return len(p.events)
}

// harness is a receiver behind a real server, with the endpoint at /webhook and the
// inspection API beside it.
type harness struct {
	rcv  *receiver.Receiver
	srv  *httptest.Server
	path string
	// entered receives a value as each delivery enters the endpoint (dropped when full).
	entered chan struct{}
}

func baseConfig(api *fakeAPI, log *processLog) receiver.Config {
	cfg := receiver.Config{
		Secrets:      []string{secret},
		Now:          func() time.Time { return base },
		RetryBackoff: time.Millisecond,
	}
	if api != nil {
		cfg.APIBaseURL, cfg.APIKey = api.URL, apiKey
	}
	if log != nil {
		cfg.Process = log.process
	}
	return cfg
}

func newHarness(t testing.TB, cfg receiver.Config) *harness {
	t.Helper()
	h := &harness{path: filepath.Join(t.TempDir(), "receiver.db"), entered: make(chan struct{}, 1)}
	h.start(t, cfg)
	return h
}

// start opens the receiver on h.path and serves it.
func (h *harness) start(t testing.TB, cfg receiver.Config) {
	t.Helper()
	rcv, err := receiver.Open(h.path, cfg)
	require.NoError(t, err)
	mux := http.NewServeMux()
	mux.Handle("/_receiver/", rcv.Inspector())
	mux.Handle("/webhook", http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		select {
		case h.entered <- struct{}{}:
		default:
		}
		rcv.ServeHTTP(w, req)
	}))
	h.rcv, h.srv = rcv, httptest.NewServer(mux)
	t.Cleanup(func() { h.stop(t) })
}

// stop closes the server and the receiver (idempotent).
func (h *harness) stop(t testing.TB) {
	t.Helper()
	h.srv.Close()
	require.NoError(t, h.rcv.Close())
}

type delivery struct {
	body     []byte
	headerID string // "-" sends no id header; "" sends the body's event_id
	sig      string // "-" sends no signature; "" signs body at base with secret
}

type answer struct {
	status int
	reply  struct {
		Verdict receiver.Verdict `json:"verdict"`
		Reason  string           `json:"reason"`
	}
}

func (h *harness) deliver(t testing.TB, client *http.Client, d delivery) answer {
	t.Helper()
	req, err := http.NewRequest(http.MethodPost, h.srv.URL+"/webhook", bytes.NewReader(d.body))
	require.NoError(t, err)
	req.Header.Set("Content-Type", "application/json")
	switch d.headerID {
	case "-":
	case "":
		var env struct {
			EventID string `json:"event_id"`
		}
		_ = json.Unmarshal(d.body, &env)
		req.Header.Set(signature.HeaderID, env.EventID)
	default:
		req.Header.Set(signature.HeaderID, d.headerID)
	}
	switch d.sig {
	case "-":
	case "":
		req.Header.Set(signature.HeaderSignature, signature.Sign(base, d.body, secret))
	default:
		req.Header.Set(signature.HeaderSignature, d.sig)
	}
	if client == nil {
		client = h.srv.Client()
	}
	resp, err := client.Do(req)
	require.NoError(t, err)
	defer resp.Body.Close()
	var a answer
	a.status = resp.StatusCode
	data, err := io.ReadAll(resp.Body)
	require.NoError(t, err)
	require.NoError(t, json.Unmarshal(data, &a.reply), "reply body %s", data)
	return a
}

// getJSON GETs an inspection path and decodes it.
func (h *harness) getJSON(t testing.TB, path string, v any) int {
	t.Helper()
	resp, err := h.srv.Client().Get(h.srv.URL + path)
	require.NoError(t, err)
	defer resp.Body.Close()
	if v != nil {
		require.NoError(t, json.NewDecoder(resp.Body).Decode(v))
	}
	return resp.StatusCode
}

// waitState polls until the event's record reaches state (or the deadline passes).
func (h *harness) waitState(t testing.TB, id string, state receiver.State) receiver.Record {
	t.Helper()
	var rec receiver.Record
	require.Eventually(t, func() bool {
		var err error
		rec, err = h.rcv.Record(id)
		return err == nil && rec.State == state
	}, 10*time.Second, 2*time.Millisecond, "event %s never reached state %s (last: %+v)", id, state, rec)
	return rec
}

func kycEvent(id string) []byte {
	return fmt.Appendf(nil, `{"event_id":%q,"event_type":"kyc","api_version":"v1","created_at":"2023-11-14T22:13:20Z","is_test":false,`+
		`"data":{"user_account_id":"partner-42","product":"crypto","kyc_status":"approved"},`+
		`"links":{"self":"/v1/users/usr_1/?user_account_id_type=platform"}}`, id)
}

func transactionEvent(id, status string) []byte {
	return fmt.Appendf(nil, `{"event_id":%q,"event_type":"transaction","api_version":"v1","created_at":"2023-11-14T22:13:20Z","is_test":false,`+
		`"data":{"transaction_id":"txn_%s","status":%q,"user_account_id":"partner-42","product":"robo"},`+
		`"links":{"self":"/v1/transactions/txn_%s/"}}`, id, id, status, id)
}

func testEvent(id string) []byte {
	return fmt.Appendf(nil, `{"event_id":%q,"event_type":"kyc","api_version":"v1","created_at":"2023-11-14T22:13:20Z","is_test":true,`+
		`"data":{"user_account_id":"test_user","product":"crypto","kyc_status":"approved"},`+
		`"links":{"self":"/v1/users/usr_test_1/?user_account_id_type=platform"}}`, id)
}
