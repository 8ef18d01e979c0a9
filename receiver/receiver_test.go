package receiver_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/partnersim/partnersim/receiver"
	"github.com/partnersim/partnersim/simulator/webhook/signature"
)

func TestKYCEventAcknowledgedThenRefetchedAndProcessed(t *testing.T) {
	api := newFakeAPI(t)
	log := &processLog{}
	var arrivals []receiver.Arrival
	var mu sync.Mutex
	cfg := baseConfig(api, log)
	cfg.OnEvent = func(a receiver.Arrival) { mu.Lock(); arrivals = append(arrivals, a); mu.Unlock() }
	h := newHarness(t, cfg)

	body := kycEvent("evt_kyc_1")
	got := h.deliver(t, nil, delivery{body: body})
	assert.Equal(t, http.StatusOK, got.status)
	assert.Equal(t, receiver.VerdictAccepted, got.reply.Verdict)

	rec := h.waitState(t, "evt_kyc_1", receiver.StateProcessed)
	assert.Equal(t, 1, rec.Attempts)
	assert.JSONEq(t, `{"self":"/v1/users/usr_1/?user_account_id_type=platform","status":"completed"}`, string(rec.Resource))
	assert.JSONEq(t, string(body), string(rec.Body))
	assert.Equal(t, 1, api.hitsFor("/v1/users/usr_1/?user_account_id_type=platform"))

	require.Equal(t, 1, log.total())
	ev := log.events[0]
	assert.Equal(t, body, ev.Body, "Process gets the body bytes exactly as received")
	assert.Equal(t, "kyc", ev.EventType)
	assert.Equal(t, "/v1/users/usr_1/?user_account_id_type=platform", ev.Links.Self)
	assert.JSONEq(t, string(rec.Resource), string(ev.Resource))

	mu.Lock()
	defer mu.Unlock()
	require.Len(t, arrivals, 1, "OnEvent once per delivery")
	assert.Equal(t, "evt_kyc_1", arrivals[0].EventID)
	assert.Equal(t, receiver.VerdictAccepted, arrivals[0].Verdict)
}

func TestDuplicateWithFreshSignatureIsAcknowledgedNotReprocessed(t *testing.T) {
	api := newFakeAPI(t)
	log := &processLog{}
	h := newHarness(t, baseConfig(api, log))
	body := kycEvent("evt_dup")

	first := h.deliver(t, nil, delivery{body: body})
	require.Equal(t, http.StatusOK, first.status)
	h.waitState(t, "evt_dup", receiver.StateProcessed)

	// A retry is signed afresh (a new t), with the same id and body.
	again := h.deliver(t, nil, delivery{body: body, sig: signature.Sign(base.Add(30*time.Second), body, secret)})
	assert.Equal(t, http.StatusOK, again.status)
	assert.Equal(t, receiver.VerdictDuplicate, again.reply.Verdict)
	assert.Equal(t, 1, log.count("evt_dup"))
	assert.Equal(t, 1, api.hitsFor("/v1/users/usr_1/?user_account_id_type=platform"))
}

func TestTransactionEventsFilteredOnStatus(t *testing.T) {
	api := newFakeAPI(t)
	log := &processLog{}
	h := newHarness(t, baseConfig(api, log))

	require.Equal(t, http.StatusOK, h.deliver(t, nil, delivery{body: transactionEvent("evt_pending", "pending")}).status)
	require.Equal(t, http.StatusOK, h.deliver(t, nil, delivery{body: transactionEvent("evt_done", "completed")}).status)

	h.waitState(t, "evt_done", receiver.StateProcessed)
	skipped := h.waitState(t, "evt_pending", receiver.StateSkipped)
	assert.Equal(t, `transaction data.status is "pending", not "completed"`, skipped.Reason)
	assert.Zero(t, log.count("evt_pending"))
	assert.Zero(t, api.hitsFor("/v1/transactions/txn_evt_pending/"), "a filtered event is not refetched")
	assert.Equal(t, 1, api.hitsFor("/v1/transactions/txn_evt_done/"))
}

func TestTestEventsAcknowledgedNeverProcessed(t *testing.T) {
	api := newFakeAPI(t)
	log := &processLog{}
	h := newHarness(t, baseConfig(api, log))

	got := h.deliver(t, nil, delivery{body: testEvent("evt_test_1")})
	assert.Equal(t, http.StatusOK, got.status)
	assert.Equal(t, receiver.VerdictAccepted, got.reply.Verdict)
	assert.Contains(t, got.reply.Reason, "is_test")

	rec, err := h.rcv.Record("evt_test_1")
	require.NoError(t, err)
	assert.Equal(t, receiver.StateSkipped, rec.State)
	assert.True(t, rec.IsTest)

	// A real event after it is processed; by then the worker has long passed the test event.
	require.Equal(t, http.StatusOK, h.deliver(t, nil, delivery{body: kycEvent("evt_after")}).status)
	h.waitState(t, "evt_after", receiver.StateProcessed)
	assert.Zero(t, log.count("evt_test_1"))
	assert.Zero(t, api.hitsFor("/v1/users/usr_test_1/?user_account_id_type=platform"))
}

func TestRefusals(t *testing.T) {
	log := &processLog{}
	h := newHarness(t, baseConfig(nil, log))
	body := kycEvent("evt_r")
	ts := "t=" + strconv.FormatInt(base.Unix(), 10)
	cases := []struct {
		name   string
		d      delivery
		status int
		reason string
	}{
		{"no signature header", delivery{body: body, sig: "-"}, 400, "no signature header"},
		{"no v1", delivery{body: body, sig: ts}, 400, "signature header has no v1 signature"},
		{"malformed", delivery{body: body, sig: "garbage"}, 400, "malformed signature header"},
		{"stale t", delivery{body: body, sig: signature.Sign(base.Add(-6*time.Minute), body, secret)}, 400, "signature timestamp is too old"},
		{"future t", delivery{body: body, sig: signature.Sign(base.Add(6*time.Minute), body, secret)}, 400, "signature timestamp is too far in the future"},
		{"tampered body", delivery{body: bytes.Replace(body, []byte("approved"), []byte("rejected"), 1), sig: signature.Sign(base, body, secret), headerID: "evt_r"}, 400, "no v1 signature matches the body"},
		{"wrong secret", delivery{body: body, sig: signature.Sign(base, body, "whsec_wrong")}, 400, "no v1 signature matches the body"},
		{"header id differs", delivery{body: body, headerID: "evt_other"}, 400, `X-Partner-Webhook-Id "evt_other" differs from the body's event_id "evt_r"`},
		{"header id missing", delivery{body: body, headerID: "-"}, 400, "X-Partner-Webhook-Id header is missing"},
		{"not JSON", delivery{body: []byte("hello"), headerID: "x"}, 400, "body is not a JSON event"},
		{"no event_id", delivery{body: []byte(`{"event_type":"kyc"}`), headerID: "x"}, 400, "body has no event_id"},
		{"too large", delivery{body: bytes.Repeat([]byte(" "), 1<<20+1), headerID: "x"}, 413, "body exceeds 1048576 bytes"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got := h.deliver(t, nil, c.d)
			assert.Equal(t, c.status, got.status)
			assert.Equal(t, receiver.VerdictRefused, got.reply.Verdict)
			assert.Contains(t, got.reply.Reason, c.reason)
		})
	}
	arrivals, err := h.rcv.Arrivals()
	require.NoError(t, err)
	require.Len(t, arrivals, len(cases))
	for i, a := range arrivals {
		assert.Equal(t, receiver.VerdictRefused, a.Verdict, cases[i].name)
		assert.Contains(t, a.Reason, cases[i].reason, cases[i].name)
		assert.Equal(t, uint64(i+1), a.Seq)
	}
	_, err = h.rcv.Record("evt_r")
	assert.ErrorIs(t, err, receiver.ErrNotFound, "a refused event is not stored, so a valid delivery later is still new")
	assert.Equal(t, receiver.VerdictAccepted, h.deliver(t, nil, delivery{body: body}).reply.Verdict)
	h.waitState(t, "evt_r", receiver.StateProcessed)
	assert.Equal(t, 1, log.total())
}

func TestAcceptedHeaderForms(t *testing.T) {
	const newSecret = "whsec_2b7nQvZyOa5cXkqR1s9lHh0pFzUuWtE3"
	cfg := baseConfig(nil, nil)
	cfg.Secrets = []string{newSecret, secret} // mid-rotation
	h := newHarness(t, cfg)
	signWith := func(body []byte, s string) string { return signature.Sign(base, body, s) }
	v1 := func(body []byte, s string) string { return strings.TrimPrefix(signWith(body, s), "t=1700000000,") }
	for name, mk := range map[string]func(body []byte) string{
		"two v1, only the second valid": func(b []byte) string { return signWith(b, "whsec_stale") + "," + v1(b, secret) },
		"unknown tag beside a valid v1": func(b []byte) string { return "t=1700000000,v0=abc,scheme9=1," + v1(b, secret) },
		"signed with the new secret":    func(b []byte) string { return signWith(b, newSecret) },
		"t within tolerance":            func(b []byte) string { return signature.Sign(base.Add(-4*time.Minute), b, secret) },
	} {
		t.Run(name, func(t *testing.T) {
			body := kycEvent("evt_" + strings.ReplaceAll(name, " ", "_"))
			got := h.deliver(t, nil, delivery{body: body, sig: mk(body)})
			assert.Equal(t, http.StatusOK, got.status, got.reply.Reason)
			assert.Equal(t, receiver.VerdictAccepted, got.reply.Verdict)
		})
	}
}

func TestConcurrentDuplicatesProcessedExactlyOnce(t *testing.T) {
	api := newFakeAPI(t)
	log := &processLog{}
	h := newHarness(t, baseConfig(api, log))
	body := kycEvent("evt_storm")
	const n = 1000
	client := &http.Client{Transport: &http.Transport{MaxConnsPerHost: 64, MaxIdleConnsPerHost: 64}}
	defer client.CloseIdleConnections()

	var accepted, duplicates, other atomic.Int32
	var wg sync.WaitGroup
	start := make(chan struct{})
	for i := range n {
		wg.Go(func() {
			<-start
			// Each retry carries its own signature, as a real sender's would.
			sig := signature.Sign(base.Add(-time.Duration(i%120)*time.Second), body, secret)
			got := h.deliver(t, client, delivery{body: body, sig: sig})
			switch {
			case got.status == http.StatusOK && got.reply.Verdict == receiver.VerdictAccepted:
				accepted.Add(1)
			case got.status == http.StatusOK && got.reply.Verdict == receiver.VerdictDuplicate:
				duplicates.Add(1)
			default:
				other.Add(1)
			}
		})
	}
	close(start)
	wg.Wait()

	assert.EqualValues(t, 1, accepted.Load(), "accepted")
	assert.EqualValues(t, n-1, duplicates.Load(), "duplicates")
	assert.Zero(t, other.Load(), "non-2xx answers")
	h.waitState(t, "evt_storm", receiver.StateProcessed)
	assert.Equal(t, 1, log.count("evt_storm"), "Process calls")
	assert.Equal(t, 1, api.hitsFor("/v1/users/usr_1/?user_account_id_type=platform"), "refetches")

	arrivals, err := h.rcv.Arrivals()
	require.NoError(t, err)
	assert.Len(t, arrivals, n)
}

func TestFaultInjection(t *testing.T) {
	log := &processLog{}
	h := newHarness(t, baseConfig(nil, log))
	put := func(body string) (int, receiver.Faults) {
		req, err := http.NewRequest(http.MethodPut, h.srv.URL+"/_receiver/faults", strings.NewReader(body))
		require.NoError(t, err)
		resp, err := h.srv.Client().Do(req)
		require.NoError(t, err)
		defer resp.Body.Close()
		var f receiver.Faults
		_ = json.NewDecoder(resp.Body).Decode(&f)
		return resp.StatusCode, f
	}

	status, f := put(`{"fail_first":2,"fail_status":503}`)
	require.Equal(t, http.StatusOK, status)
	assert.Equal(t, receiver.Faults{FailFirst: 2, FailStatus: 503}, f)
	body := kycEvent("evt_fault")
	for i := range 2 {
		got := h.deliver(t, nil, delivery{body: body})
		assert.Equal(t, 503, got.status, "attempt %d", i+1)
		assert.Equal(t, receiver.VerdictFault, got.reply.Verdict)
	}
	var faults receiver.Faults
	h.getJSON(t, "/_receiver/faults", &faults)
	assert.Zero(t, faults.FailFirst, "counted down")
	_, err := h.rcv.Record("evt_fault")
	assert.ErrorIs(t, err, receiver.ErrNotFound, "a faulted delivery is not stored")
	got := h.deliver(t, nil, delivery{body: body})
	assert.Equal(t, http.StatusOK, got.status, "the third attempt goes through")
	h.waitState(t, "evt_fault", receiver.StateProcessed)

	status, _ = put(`{"status":410}`)
	require.Equal(t, http.StatusOK, status)
	for range 2 {
		assert.Equal(t, 410, h.deliver(t, nil, delivery{body: kycEvent("evt_gone")}).status)
	}

	status, _ = put(`{"delay_ms":150}`)
	require.Equal(t, http.StatusOK, status)
	began := time.Now()
	assert.Equal(t, http.StatusOK, h.deliver(t, nil, delivery{body: kycEvent("evt_slow")}).status)
	assert.GreaterOrEqual(t, time.Since(began), 150*time.Millisecond)

	status, _ = put(`{}`)
	require.Equal(t, http.StatusOK, status)
	assert.Equal(t, receiver.Faults{}, h.rcv.Faults())

	for _, bad := range []string{`{"fail_first":-1}`, `{"status":99}`, `{"fail_status":600}`, `{"delay_ms":-5}`, `{"unknown":1}`, `not json`} {
		status, _ := put(bad)
		assert.Equal(t, http.StatusBadRequest, status, bad)
	}

	var refused struct{ Events []receiver.Arrival }
	h.getJSON(t, "/_receiver/events?verdict=fault", &refused)
	require.Len(t, refused.Events, 4)
	assert.Equal(t, "injected failure: fail_first (1 left)", refused.Events[0].Reason)
	assert.Equal(t, "injected status 410", refused.Events[3].Reason)
}

func TestInjectedDelayEndsOnClose(t *testing.T) {
	cfg := baseConfig(nil, nil)
	cfg.Faults = receiver.Faults{DelayMS: 600000}
	h := newHarness(t, cfg)
	done := make(chan answer, 1)
	go func() { done <- h.deliver(t, nil, delivery{body: kycEvent("evt_wait")}) }()
	select {
	case <-h.entered:
	case <-time.After(5 * time.Second):
		t.Fatal("the delivery never reached the endpoint")
	}
	require.NoError(t, h.rcv.Close())
	select {
	case got := <-done:
		assert.Equal(t, http.StatusServiceUnavailable, got.status)
		assert.Equal(t, receiver.VerdictFault, got.reply.Verdict)
	case <-time.After(5 * time.Second):
		t.Fatal("the delayed delivery was not answered after Close")
	}
}

func TestCrashAfterAckIsProcessedAfterRestart(t *testing.T) {
	api := newFakeAPI(t)
	started := make(chan string, 1)
	cfg := baseConfig(api, nil)
	cfg.Process = func(ctx context.Context, ev receiver.Event) error {
		started <- ev.EventID
		<-ctx.Done() // never finishes: the "crash" comes first
		return ctx.Err()
	}
	h := newHarness(t, cfg)
	require.Equal(t, http.StatusOK, h.deliver(t, nil, delivery{body: kycEvent("evt_crash")}).status)
	select {
	case id := <-started:
		require.Equal(t, "evt_crash", id)
	case <-time.After(5 * time.Second):
		t.Fatal("processing never started")
	}
	h.stop(t)

	// Restart on the same file.
	log := &processLog{}
	h.start(t, baseConfig(api, log))
	rec := h.waitState(t, "evt_crash", receiver.StateProcessed)
	assert.Equal(t, 1, rec.Attempts, "the attempt cut short by the shutdown is not counted")
	assert.Equal(t, 1, log.count("evt_crash"))

	// Still deduplicated across the restart.
	assert.Equal(t, receiver.VerdictDuplicate, h.deliver(t, nil, delivery{body: kycEvent("evt_crash")}).reply.Verdict)
}

func TestRefetchRetriesThenGivesUp(t *testing.T) {
	api := newFakeAPI(t)
	log := &processLog{}
	cfg := baseConfig(api, log)
	cfg.MaxAttempts = 3
	h := newHarness(t, cfg)

	// Two 5xx, then the record: processed on the third attempt.
	api.failFirst("/v1/transactions/txn_evt_flaky/", 502, 503)
	require.Equal(t, http.StatusOK, h.deliver(t, nil, delivery{body: transactionEvent("evt_flaky", "completed")}).status)
	rec := h.waitState(t, "evt_flaky", receiver.StateProcessed)
	assert.Equal(t, 3, rec.Attempts)
	assert.Empty(t, rec.Reason)

	// A 404 is permanent: one attempt, failed, Process never called.
	api.failFirst("/v1/transactions/txn_evt_missing/", 404)
	require.Equal(t, http.StatusOK, h.deliver(t, nil, delivery{body: transactionEvent("evt_missing", "completed")}).status)
	rec = h.waitState(t, "evt_missing", receiver.StateFailed)
	assert.Equal(t, 1, rec.Attempts)
	assert.Contains(t, rec.Reason, "status 404")

	// 5xx forever: gives up after MaxAttempts.
	api.failFirst("/v1/transactions/txn_evt_down/", 500, 500, 500, 500)
	require.Equal(t, http.StatusOK, h.deliver(t, nil, delivery{body: transactionEvent("evt_down", "completed")}).status)
	rec = h.waitState(t, "evt_down", receiver.StateFailed)
	assert.Equal(t, 3, rec.Attempts)
	assert.Equal(t, 3, api.hitsFor("/v1/transactions/txn_evt_down/"))

	assert.Equal(t, 1, log.count("evt_flaky"))
	assert.Zero(t, log.count("evt_missing"))
	assert.Zero(t, log.count("evt_down"))
}

func TestOnDoneSeesEachFinishedEventOnceStored(t *testing.T) {
	api := newFakeAPI(t)
	done := make(chan receiver.Record, 8)
	cfg := baseConfig(api, nil)
	var h *harness
	cfg.OnDone = func(rec receiver.Record) {
		// Called after the outcome is stored: the file already says the same.
		stored, err := h.rcv.Record(rec.EventID)
		if err != nil || stored.State != rec.State {
			rec.Reason = fmt.Sprintf("not stored yet: %v %v", err, stored.State)
		}
		done <- rec
	}
	h = newHarness(t, cfg)
	api.failFirst("/v1/transactions/txn_evt_gone/", 404)
	next := func() receiver.Record {
		t.Helper()
		select {
		case rec := <-done:
			return rec
		case <-time.After(10 * time.Second):
			t.Fatal("OnDone was not called within 10s")
			return receiver.Record{}
		}
	}

	require.Equal(t, http.StatusOK, h.deliver(t, nil, delivery{body: kycEvent("evt_ok")}).status)
	require.Equal(t, http.StatusOK, h.deliver(t, nil, delivery{body: testEvent("evt_test_skip")}).status)
	require.Equal(t, http.StatusOK, h.deliver(t, nil, delivery{body: transactionEvent("evt_gone", "completed")}).status)
	require.Equal(t, http.StatusOK, h.deliver(t, nil, delivery{body: kycEvent("evt_ok")}).status) // duplicate

	ok := next()
	assert.Equal(t, "evt_ok", ok.EventID)
	assert.Equal(t, receiver.StateProcessed, ok.State)
	assert.Empty(t, ok.Reason)
	assert.JSONEq(t, string(kycEvent("evt_ok")), string(ok.Body))
	assert.Contains(t, string(ok.Resource), "/v1/users/usr_1/")

	gone := next()
	assert.Equal(t, "evt_gone", gone.EventID)
	assert.Equal(t, receiver.StateFailed, gone.State)
	assert.Contains(t, gone.Reason, "status 404")

	// A real event after them: once it is done, nothing else (the skipped test event, the
	// duplicate) can have been reported.
	require.Equal(t, http.StatusOK, h.deliver(t, nil, delivery{body: kycEvent("evt_last")}).status)
	assert.Equal(t, "evt_last", next().EventID)
	assert.Empty(t, done)
}

func TestProcessErrors(t *testing.T) {
	var calls atomic.Int32
	cfg := baseConfig(nil, nil)
	cfg.Process = func(_ context.Context, ev receiver.Event) error {
		n := calls.Add(1)
		switch ev.EventID {
		case "evt_retry":
			if n == 1 {
				return errors.New("database busy")
			}
			return nil
		default:
			return receiver.Permanent(errors.New("cannot handle this"))
		}
	}
	h := newHarness(t, cfg)
	require.Equal(t, http.StatusOK, h.deliver(t, nil, delivery{body: kycEvent("evt_retry")}).status)
	rec := h.waitState(t, "evt_retry", receiver.StateProcessed)
	assert.Equal(t, 2, rec.Attempts)

	require.Equal(t, http.StatusOK, h.deliver(t, nil, delivery{body: kycEvent("evt_never")}).status)
	rec = h.waitState(t, "evt_never", receiver.StateFailed)
	assert.Equal(t, 1, rec.Attempts)
	assert.Equal(t, "attempt 1: process: cannot handle this", rec.Reason)
	assert.Nil(t, receiver.Permanent(nil))
}

func TestAPIKeyNeverLeavesTheAPI(t *testing.T) {
	var elsewhere atomic.Int32
	other := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		elsewhere.Add(1)
	}))
	defer other.Close()
	api := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, other.URL+r.URL.Path, http.StatusTemporaryRedirect)
	}))
	defer api.Close()

	cfg := baseConfig(nil, nil)
	cfg.APIBaseURL, cfg.APIKey = api.URL, apiKey
	h := newHarness(t, cfg)

	// A link to another host is refused before any request.
	evil := bytes.Replace(kycEvent("evt_abs"), []byte(`"/v1/users/`), []byte(`"//evil.example/v1/users/`), 1)
	require.Equal(t, http.StatusOK, h.deliver(t, nil, delivery{body: evil}).status)
	rec := h.waitState(t, "evt_abs", receiver.StateFailed)
	assert.Contains(t, rec.Reason, "is not a path on the API")

	// A redirect off the API's origin is not followed.
	require.Equal(t, http.StatusOK, h.deliver(t, nil, delivery{body: kycEvent("evt_redirect")}).status)
	rec = h.waitState(t, "evt_redirect", receiver.StateFailed)
	assert.Contains(t, rec.Reason, "refusing redirect")
	assert.Zero(t, elsewhere.Load(), "requests that reached the other host")
}

func TestInspectionAPI(t *testing.T) {
	api := newFakeAPI(t)
	h := newHarness(t, baseConfig(api, &processLog{}))
	h.deliver(t, nil, delivery{body: kycEvent("evt_a")})
	h.deliver(t, nil, delivery{body: kycEvent("evt_a"), sig: signature.Sign(base, kycEvent("evt_a"), "whsec_wrong")})
	h.deliver(t, nil, delivery{body: kycEvent("evt_a")})
	h.deliver(t, nil, delivery{body: testEvent("evt_t")})
	h.waitState(t, "evt_a", receiver.StateProcessed)

	var events struct {
		Events []map[string]any `json:"events"`
	}
	require.Equal(t, http.StatusOK, h.getJSON(t, "/_receiver/events?event_id=evt_a", &events))
	require.Len(t, events.Events, 3)
	verdicts := []any{events.Events[0]["verdict"], events.Events[1]["verdict"], events.Events[2]["verdict"]}
	assert.Equal(t, []any{"accepted", "refused", "duplicate"}, verdicts)
	assert.Equal(t, "no v1 signature matches the body: 1 v1 entry checked against 1 secret", events.Events[1]["reason"])
	assert.EqualValues(t, 400, events.Events[1]["status_code"])
	assert.Equal(t, "evt_a", events.Events[1]["header_id"], "a refused delivery still shows the id it claimed")

	var processed struct {
		Processed []receiver.Record `json:"processed"`
	}
	require.Equal(t, http.StatusOK, h.getJSON(t, "/_receiver/processed", &processed))
	require.Len(t, processed.Processed, 1)
	assert.Equal(t, "evt_a", processed.Processed[0].EventID)
	assert.NotNil(t, processed.Processed[0].FinishedAt)
	assert.JSONEq(t, string(kycEvent("evt_a")), string(processed.Processed[0].Body))

	require.Equal(t, http.StatusOK, h.getJSON(t, "/_receiver/processed?state=skipped", &processed))
	require.Len(t, processed.Processed, 1)
	assert.Equal(t, "evt_t", processed.Processed[0].EventID)
	require.Equal(t, http.StatusOK, h.getJSON(t, "/_receiver/processed?state=all", &processed))
	assert.Len(t, processed.Processed, 2)
	assert.Equal(t, http.StatusBadRequest, h.getJSON(t, "/_receiver/processed?state=bogus", nil))

	resp, err := h.srv.Client().Get(h.srv.URL + "/webhook")
	require.NoError(t, err)
	resp.Body.Close()
	assert.Equal(t, http.StatusMethodNotAllowed, resp.StatusCode)
	assert.Equal(t, "POST", resp.Header.Get("Allow"))
}

func TestArrivalLogIsBounded(t *testing.T) {
	cfg := baseConfig(nil, nil)
	cfg.MaxArrivals = 3
	h := newHarness(t, cfg)
	for i := range 5 {
		h.deliver(t, nil, delivery{body: testEvent("evt_" + strconv.Itoa(i))})
	}
	arrivals, err := h.rcv.Arrivals()
	require.NoError(t, err)
	require.Len(t, arrivals, 3)
	assert.Equal(t, []string{"evt_2", "evt_3", "evt_4"}, []string{arrivals[0].EventID, arrivals[1].EventID, arrivals[2].EventID})
}

func TestOpenValidatesConfig(t *testing.T) {
	path := filepath.Join(t.TempDir(), "r.db")
	for name, cfg := range map[string]receiver.Config{
		"no secret":              {},
		"only empty secrets":     {Secrets: []string{""}},
		"api without key":        {Secrets: []string{secret}, APIBaseURL: "http://127.0.0.1:8080"},
		"relative api":           {Secrets: []string{secret}, APIBaseURL: "/v1", APIKey: apiKey},
		"invalid initial faults": {Secrets: []string{secret}, Faults: receiver.Faults{FailFirst: -1}},
	} {
		_, err := receiver.Open(path, cfg)
		assert.Error(t, err, name)
	}
}

// What the receiver keeps and prints of a refused delivery is bounded: a
// 100 KB id header and a 100 KB event_id are cut in the arrival log and the reason.
func TestRefusedArrivalsAreBounded(t *testing.T) {
	h := newHarness(t, baseConfig(nil, &processLog{}))
	long := strings.Repeat("x", 100_000)
	body := []byte(`{"event_id":"` + long + `","event_type":"kyc"}`)
	got := h.deliver(t, nil, delivery{body: body, headerID: "evt_" + long})
	assert.Equal(t, 400, got.status)
	assert.LessOrEqual(t, len(got.reply.Reason), receiver.MaxReason)
	arrivals, err := h.rcv.Arrivals()
	require.NoError(t, err)
	require.Len(t, arrivals, 1)
	a := arrivals[0]
	assert.LessOrEqual(t, len(a.HeaderID), receiver.MaxKept)
	assert.LessOrEqual(t, len(a.EventID), receiver.MaxKept)
	assert.LessOrEqual(t, len(a.Reason), receiver.MaxReason)
	assert.LessOrEqual(t, len(a.Body), 4096)
	assert.True(t, strings.HasPrefix(a.HeaderID, "evt_xxx"))
}
