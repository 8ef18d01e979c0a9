package certify_test

import (
	"bytes"
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"encoding/xml"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/partnersim/partnersim/receiver"
	"github.com/partnersim/partnersim/receiver/certify"
	"github.com/partnersim/partnersim/simulator"
	"github.com/partnersim/partnersim/simulator/webhook/signature"
)

const secret = "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw"

// ourReceiver serves the reference receiver (no API: no refetch) on a temp file.
func ourReceiver(tb testing.TB) (*receiver.Receiver, *httptest.Server) {
	tb.Helper()
	rcv, err := receiver.Open(filepath.Join(tb.TempDir(), "receiver.db"), receiver.Config{Secrets: []string{secret}})
	require.NoError(tb, err)
	srv := httptest.NewServer(rcv)
	tb.Cleanup(func() {
		srv.Close()
		assert.NoError(tb, rcv.Close())
	})
	return rcv, srv
}

func failedNames(rep certify.Report) []string {
	var names []string
	for _, r := range rep.Results {
		if !r.Passed {
			names = append(names, r.Name)
		}
	}
	return names
}

func TestOurReceiverPassesEveryCaseRunAfterRun(t *testing.T) {
	rcv, srv := ourReceiver(t)
	for run := 1; run <= 2; run++ { // fresh ids: a deduping receiver answers the second run alike
		rep := certify.Run(context.Background(), certify.Config{URL: srv.URL, Secret: secret})
		require.Len(t, rep.Results, len(certify.Cases()))
		for _, r := range rep.Results {
			assert.True(t, r.Passed, "run %d, %s: %s", run, r.Name, r.Reason)
			assert.Empty(t, r.Reason, r.Name)
		}
		assert.True(t, rep.Passed(), "run %d failed: %v", run, failedNames(rep))
	}

	// What the receiver saw, per run: five new events, one duplicate (the redelivery), seven
	// refusals; the test event acknowledged but skipped.
	var seen struct {
		Events []receiver.Arrival `json:"events"`
	}
	inspect(t, rcv, "/_receiver/events", &seen)
	arrivals := seen.Events
	require.Len(t, arrivals, 2*len(certify.Cases()))
	count := map[receiver.Verdict]int{}
	for _, a := range arrivals {
		count[a.Verdict]++
	}
	assert.Equal(t, map[receiver.Verdict]int{receiver.VerdictAccepted: 2 * 5, receiver.VerdictDuplicate: 2, receiver.VerdictRefused: 2 * 7}, count)
	var processed struct {
		Processed []receiver.Record `json:"processed"`
	}
	inspect(t, rcv, "/_receiver/processed?state=skipped", &processed)
	skipped := processed.Processed
	require.Len(t, skipped, 2)
	assert.True(t, skipped[0].IsTest)
}

func TestEveryCaseSendsWhatItSays(t *testing.T) {
	type seen struct {
		header http.Header
		body   []byte
	}
	var mu sync.Mutex
	var got []seen
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		mu.Lock()
		got = append(got, seen{r.Header.Clone(), body})
		mu.Unlock()
		w.WriteHeader(http.StatusNoContent)
	}))
	defer srv.Close()
	now := time.Unix(1_800_000_000, 0)
	rep := certify.Run(context.Background(), certify.Config{URL: srv.URL, Secret: secret, Tolerance: 2 * time.Minute,
		Now: func() time.Time { return now }})
	require.Len(t, got, len(certify.Cases()))
	byName := map[string]seen{}
	ids := map[string]bool{}
	for i, r := range rep.Results {
		byName[r.Name] = got[i]
		assert.Equal(t, r.Signature, got[i].header.Get(signature.HeaderSignature), r.Name)
		assert.Equal(t, r.HeaderID, got[i].header.Get(signature.HeaderID), r.Name)
		assert.Equal(t, "application/json", got[i].header.Get("Content-Type"), r.Name)
		var env struct {
			EventID   string `json:"event_id"`
			EventType string `json:"event_type"`
			IsTest    bool   `json:"is_test"`
			CreatedAt string `json:"created_at"`
		}
		require.NoError(t, json.Unmarshal(got[i].body, &env), r.Name)
		assert.Equal(t, r.EventID, env.EventID, r.Name)
		assert.Regexp(t, `^evt_[0-9A-Za-z]{24}$`, env.EventID, r.Name)
		assert.Equal(t, "2027-01-15T08:00:00Z", env.CreatedAt, r.Name)
		if r.Name != "duplicate-redelivery" {
			assert.False(t, ids[env.EventID], "%s reuses an event id", r.Name)
		}
		ids[env.EventID] = true
	}
	verify := func(name string, at time.Time) error {
		s := byName[name]
		return signature.Verify(s.header.Get(signature.HeaderSignature), s.body, []string{secret}, 2*time.Minute, at)
	}
	for _, name := range []string{"valid-kyc", "valid-transaction", "duplicate-redelivery", "two-v1-one-valid", "unknown-tag-ignored", "header-id-mismatch", "test-event"} {
		assert.NoError(t, verify(name, now), "%s must carry a valid signature", name)
	}
	assert.ErrorIs(t, verify("stale-timestamp", now), signature.ErrTimestampTooOld)
	assert.NoError(t, verify("stale-timestamp", now.Add(-3*time.Minute)), "stale: authentic, just old")
	assert.ErrorIs(t, verify("future-timestamp", now), signature.ErrTimestampInFuture)
	assert.NoError(t, verify("future-timestamp", now.Add(3*time.Minute)), "future: authentic, just ahead")
	for _, name := range []string{"tampered-body", "wrong-secret"} {
		assert.ErrorIs(t, verify(name, now), signature.ErrSignatureMismatch, name)
	}
	assert.ErrorIs(t, verify("no-signature-header", now), signature.ErrNoHeader)
	assert.ErrorIs(t, verify("no-v1-entry", now), signature.ErrNoSignature)

	kyc, dup := byName["valid-kyc"], byName["duplicate-redelivery"]
	assert.Equal(t, kyc.body, dup.body, "the redelivery is the same bytes")
	assert.NotEqual(t, kyc.header.Get(signature.HeaderSignature), dup.header.Get(signature.HeaderSignature), "with a fresh signature")
	assert.Equal(t, kyc.header.Get(signature.HeaderID), byName["header-id-mismatch"].header.Get(signature.HeaderID),
		"the lying id header names an event the receiver has")
	assert.Contains(t, string(byName["test-event"].body), `"is_test":true`)
	assert.Contains(t, string(byName["valid-transaction"].body), `"event_type":"transaction"`)
	assert.Contains(t, string(byName["valid-transaction"].body), `"status":"completed"`)
	assert.Contains(t, string(byName["tampered-body"].body), `"kyc_status":"approved"`)
	assert.Len(t, strings.Split(byName["two-v1-one-valid"].header.Get(signature.HeaderSignature), ",v1="), 3)
	assert.Contains(t, byName["no-v1-entry"].header.Get(signature.HeaderSignature), ",v2=")
	var non2xx []string
	for _, c := range certify.Cases() {
		if c.Expect == certify.ExpectNon2xx {
			non2xx = append(non2xx, c.Name)
		}
	}
	assert.Equal(t, non2xx, failedNames(rep), "204 is a 2xx: an endpoint acknowledging everything fails exactly the non-2xx cases")
}

// flaws are the mistakes a partner's receiver can make; the zero value is a correct receiver.
type flaws struct {
	noSignatureCheck    bool // never verifies anything
	noTimestampCheck    bool // verifies the HMAC, never looks at t
	pastOnlyTimestamp   bool // refuses an old t but not a future one
	firstV1Only         bool // compares only the first v1 entry
	strictTags          bool // refuses a header with a tag it does not know
	anyTag              bool // takes a digest from any tag, not only v1
	acceptUnsigned      bool // lets a delivery without a signature header through
	dedupeOnHeaderID    bool // dedupes on X-Partner-Webhook-Id and never compares it to event_id
	noHeaderIDCheck     bool // dedupes on event_id but never compares the header to it
	conflictOnDuplicate bool // answers 409 to an event it already has
	processTestEvents   bool // processes every event before answering, test events included
	rejectTestEvents    bool // refuses is_test events with 422
}

// flawedReceiver is a partner's receiver written by hand, with the given flaws. It processes
// synchronously when processTestEvents is set, refetching from a stand-in API that knows every
// user but the synthetic usr_test_… ones, as a real API would not know them.
type flawedReceiver struct {
	f    flaws
	mu   sync.Mutex
	seen map[string]bool
}

func (fr *flawedReceiver) refuse(w http.ResponseWriter, status int, why string) {
	w.WriteHeader(status)
	fmt.Fprintf(w, `{"error":%q}`, why)
}

func (fr *flawedReceiver) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	body, _ := io.ReadAll(r.Body)
	if err := fr.verify(r.Header.Get(signature.HeaderSignature), body); err != "" {
		fr.refuse(w, http.StatusBadRequest, err)
		return
	}
	var env struct {
		EventID string `json:"event_id"`
		IsTest  bool   `json:"is_test"`
		Links   struct {
			Self string `json:"self"`
		} `json:"links"`
	}
	if json.Unmarshal(body, &env) != nil || env.EventID == "" {
		fr.refuse(w, http.StatusBadRequest, "not an event")
		return
	}
	key, hid := env.EventID, r.Header.Get(signature.HeaderID)
	switch {
	case fr.f.dedupeOnHeaderID:
		key = hid
	case !fr.f.noHeaderIDCheck && hid != env.EventID:
		fr.refuse(w, http.StatusBadRequest, "id header differs from event_id")
		return
	}
	fr.mu.Lock()
	dup := fr.seen[key]
	fr.seen[key] = true
	fr.mu.Unlock()
	switch {
	case dup && fr.f.conflictOnDuplicate:
		fr.refuse(w, http.StatusConflict, "already have it")
	case dup:
		w.WriteHeader(http.StatusOK)
	case env.IsTest && fr.f.rejectTestEvents:
		fr.refuse(w, http.StatusUnprocessableEntity, "test events are not accepted")
	case fr.f.processTestEvents && strings.Contains(env.Links.Self, "/usr_test_"):
		fr.refuse(w, http.StatusInternalServerError, "refetch "+env.Links.Self+": 404 no such user")
	default:
		w.WriteHeader(http.StatusOK)
	}
}

// verify is the receiver's own signature check, flaws and all; "" means it let the delivery in.
func (fr *flawedReceiver) verify(header string, body []byte) string {
	if fr.f.noSignatureCheck {
		return ""
	}
	if header == "" {
		if fr.f.acceptUnsigned {
			return ""
		}
		return "no signature"
	}
	var ts string
	var sigs []string
	for entry := range strings.SplitSeq(header, ",") {
		tag, value, _ := strings.Cut(entry, "=")
		switch {
		case tag == "t":
			ts = value
		case tag == "v1" || fr.f.anyTag:
			sigs = append(sigs, value)
		case fr.f.strictTags:
			return "unknown tag " + tag
		}
	}
	t, err := strconv.ParseInt(ts, 10, 64)
	if err != nil || len(sigs) == 0 {
		return "malformed signature header"
	}
	if fr.f.firstV1Only {
		sigs = sigs[:1]
	}
	mac := hmac.New(sha256.New, []byte(secret))
	fmt.Fprintf(mac, "%d.", t)
	mac.Write(body)
	want := mac.Sum(nil)
	matched := false
	for _, s := range sigs {
		got, err := hex.DecodeString(s)
		matched = matched || err == nil && hmac.Equal(got, want)
	}
	if !matched {
		return "signature mismatch"
	}
	age := time.Since(time.Unix(t, 0))
	switch {
	case fr.f.noTimestampCheck:
	case age > 5*time.Minute:
		return "too old"
	case -age > 5*time.Minute && !fr.f.pastOnlyTimestamp:
		return "in the future"
	}
	return ""
}

func TestEachFlawIsCaughtByItsCase(t *testing.T) {
	for _, c := range []struct {
		name   string
		flaws  flaws
		caught []string
	}{
		{"a correct hand-written receiver", flaws{}, nil},
		{"skips the timestamp check", flaws{noTimestampCheck: true}, []string{"stale-timestamp", "future-timestamp"}},
		{"checks the timestamp on one side only", flaws{pastOnlyTimestamp: true}, []string{"future-timestamp"}},
		{"compares only the first v1", flaws{firstV1Only: true}, []string{"two-v1-one-valid"}},
		{"refuses unknown tags", flaws{strictTags: true}, []string{"unknown-tag-ignored"}},
		{"takes a digest from any tag", flaws{anyTag: true}, []string{"no-v1-entry"}},
		{"accepts unsigned deliveries", flaws{acceptUnsigned: true}, []string{"no-signature-header"}},
		{"dedupes on the header id", flaws{dedupeOnHeaderID: true}, []string{"header-id-mismatch"}},
		{"never compares the header id to event_id", flaws{noHeaderIDCheck: true}, []string{"header-id-mismatch"}},
		{"answers a duplicate with 409", flaws{conflictOnDuplicate: true}, []string{"duplicate-redelivery"}},
		{"processes test events before answering", flaws{processTestEvents: true}, []string{"test-event"}},
		{"refuses test events", flaws{rejectTestEvents: true}, []string{"test-event"}},
		{"verifies nothing", flaws{noSignatureCheck: true},
			[]string{"stale-timestamp", "future-timestamp", "tampered-body", "wrong-secret", "no-signature-header", "no-v1-entry"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			srv := httptest.NewServer(&flawedReceiver{f: c.flaws, seen: map[string]bool{}})
			defer srv.Close()
			rep := certify.Run(context.Background(), certify.Config{URL: srv.URL, Secret: secret})
			assert.Equal(t, c.caught, failedNames(rep))
			assert.Equal(t, c.caught == nil, rep.Passed())
			for _, r := range rep.Results {
				if !r.Passed {
					assert.NotEmpty(t, r.Reason, r.Name)
					assert.NotZero(t, r.Status, "%s: the flawed receiver answered", r.Name)
				}
			}
		})
	}
}

func TestDuplicateFailureSaysTheFirstDeliveryFailedToo(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		http.Error(w, "maintenance", http.StatusServiceUnavailable)
	}))
	defer srv.Close()
	rep := certify.Run(context.Background(), certify.Config{URL: srv.URL, Secret: secret})
	var want []string
	for _, c := range certify.Cases() {
		if c.Expect == certify.Expect2xx {
			want = append(want, c.Name)
		}
	}
	assert.Equal(t, want, failedNames(rep))
	dup := rep.Results[slices.IndexFunc(rep.Results, func(r certify.Result) bool { return r.Name == "duplicate-redelivery" })]
	assert.Equal(t, "expected 2xx, got 503 (answer: maintenance); the first delivery (valid-kyc) was not acknowledged either (503)", dup.Reason)
	var out bytes.Buffer
	require.NoError(t, rep.WriteTable(&out))
	assert.Contains(t, out.String(), "The receiver acknowledged none of the valid deliveries: check --url and --secret.")

	out.Reset()
	good := httptest.NewServer(&flawedReceiver{seen: map[string]bool{}})
	defer good.Close()
	ok := certify.Run(context.Background(), certify.Config{URL: good.URL, Secret: secret})
	require.NoError(t, ok.WriteTable(&out))
	assert.NotContains(t, out.String(), "acknowledged none")
}

func TestRedirectsAreAnswersNotFollowed(t *testing.T) {
	_, ours := ourReceiver(t)
	srv := httptest.NewServer(http.RedirectHandler(ours.URL, http.StatusTemporaryRedirect))
	defer srv.Close()
	rep := certify.Run(context.Background(), certify.Config{URL: srv.URL, Secret: secret, Client: srv.Client()})
	for _, r := range rep.Results {
		assert.Equal(t, http.StatusTemporaryRedirect, r.Status, r.Name)
		assert.Equal(t, r.Expect == certify.ExpectNon2xx, r.Passed, r.Name)
	}
}

func TestNoAnswerFailsEveryCase(t *testing.T) {
	srv := httptest.NewServer(http.NotFoundHandler())
	url := srv.URL
	srv.Close() // nothing listens there any more
	rep := certify.Run(context.Background(), certify.Config{URL: url, Secret: secret, Client: &http.Client{Timeout: 2 * time.Second}})
	require.Len(t, rep.Results, len(certify.Cases()))
	for _, r := range rep.Results {
		assert.False(t, r.Passed, r.Name)
		assert.Zero(t, r.Status, r.Name)
		assert.Equal(t, "no answer", r.Got())
		assert.Contains(t, r.Reason, "expected "+string(r.Expect)+", got no answer: ", r.Name)
	}
}

func TestConfigErrorsAndCancellationFailTheCasesTheyPrevent(t *testing.T) {
	for _, cfg := range []certify.Config{
		{Secret: secret},
		{URL: "127.0.0.1:9090/webhooks", Secret: secret},
		{URL: "ftp://host/x", Secret: secret},
		{URL: "http://127.0.0.1:9/webhooks"},
		{URL: "http://127.0.0.1:9/webhooks", Secret: secret, Tolerance: -time.Second},
	} {
		require.Error(t, cfg.Validate(), "%+v", cfg)
		rep := certify.Run(context.Background(), cfg)
		require.Len(t, rep.Results, len(certify.Cases()))
		for _, r := range rep.Results {
			assert.False(t, r.Passed)
			assert.Contains(t, r.Reason, "not run: certify: ")
		}
	}
	_, srv := ourReceiver(t)
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	rep := certify.Run(ctx, certify.Config{URL: srv.URL, Secret: secret})
	assert.Equal(t, len(certify.Cases()), rep.Failed())
	assert.Equal(t, "not run: context canceled", rep.Results[0].Reason)
}

func TestTableNamesEveryCaseAndExplainsFailures(t *testing.T) {
	srv := httptest.NewServer(&flawedReceiver{f: flaws{noTimestampCheck: true}, seen: map[string]bool{}})
	defer srv.Close()
	rep := certify.Run(context.Background(), certify.Config{URL: srv.URL, Secret: secret})
	var out bytes.Buffer
	require.NoError(t, rep.WriteTable(&out))
	text := out.String()
	assert.Contains(t, text, "certify "+srv.URL+" (tolerance 5m0s)")
	assert.Regexp(t, `CASE\s+EXPECT\s+GOT\s+RESULT\s+WHAT IT PROVES`, text)
	for _, c := range certify.Cases() {
		assert.Regexp(t, `(?m)^  `+c.Name+`\s+`+string(c.Expect)+`\s+\d{3}\s+(pass|FAIL)\s+`+regexp.QuoteMeta(c.Proves)+`$`, text)
	}
	assert.Regexp(t, `(?m)^  stale-timestamp\s+non-2xx\s+200\s+FAIL\s`, text)
	assert.Contains(t, text, "  FAIL stale-timestamp: expected non-2xx, got 200: the receiver acknowledged it\n")
	assert.Contains(t, text, "       sent: a new event signed with t = now - (tolerance + 1m)\n")
	assert.Regexp(t, `\n13 cases: 11 passed, 2 failed \(\d+ms\)\n$`, text)
}

// The JUnit shape CI reporters read, decoded with encoding/xml.
type junit struct {
	XMLName xml.Name `xml:"testsuites"`
	Tests   int      `xml:"tests,attr"`
	Fails   int      `xml:"failures,attr"`
	Suites  []struct {
		Name      string `xml:"name,attr"`
		Tests     int    `xml:"tests,attr"`
		Fails     int    `xml:"failures,attr"`
		Errors    int    `xml:"errors,attr"`
		Time      string `xml:"time,attr"`
		Timestamp string `xml:"timestamp,attr"`
		Props     []struct {
			Name  string `xml:"name,attr"`
			Value string `xml:"value,attr"`
		} `xml:"properties>property"`
		Cases []struct {
			Name      string `xml:"name,attr"`
			Classname string `xml:"classname,attr"`
			Time      string `xml:"time,attr"`
			Failure   *struct {
				Message string `xml:"message,attr"`
				Type    string `xml:"type,attr"`
				Text    string `xml:",chardata"`
			} `xml:"failure"`
			SystemOut string `xml:"system-out"`
		} `xml:"testcase"`
	} `xml:"testsuite"`
}

func TestJUnitParsesWithOneTestcasePerCase(t *testing.T) {
	srv := httptest.NewServer(&flawedReceiver{f: flaws{firstV1Only: true, dedupeOnHeaderID: true}, seen: map[string]bool{}})
	defer srv.Close()
	rep := certify.Run(context.Background(), certify.Config{URL: srv.URL, Secret: secret})
	var out bytes.Buffer
	require.NoError(t, rep.WriteJUnit(&out))
	require.True(t, strings.HasPrefix(out.String(), `<?xml version="1.0" encoding="UTF-8"?>`))

	var doc junit
	require.NoError(t, xml.Unmarshal(out.Bytes(), &doc), out.String())
	assert.Equal(t, 13, doc.Tests)
	assert.Equal(t, 2, doc.Fails)
	require.Len(t, doc.Suites, 1)
	s := doc.Suites[0]
	assert.Equal(t, "partnersim certify", s.Name)
	assert.Equal(t, 13, s.Tests)
	assert.Equal(t, 2, s.Fails)
	assert.Zero(t, s.Errors)
	assert.Regexp(t, `^\d+\.\d{3}$`, s.Time)
	_, err := time.Parse("2006-01-02T15:04:05", s.Timestamp)
	assert.NoError(t, err)
	require.Len(t, s.Props, 2)
	assert.Equal(t, srv.URL, s.Props[0].Value)

	require.Len(t, s.Cases, len(certify.Cases()))
	for i, c := range certify.Cases() {
		tc := s.Cases[i]
		assert.Equal(t, c.Name, tc.Name)
		assert.Equal(t, "certify", tc.Classname)
		assert.Contains(t, tc.SystemOut, "proves: "+c.Proves)
		failing := c.Name == "two-v1-one-valid" || c.Name == "header-id-mismatch"
		if !failing {
			assert.Nil(t, tc.Failure, c.Name)
			continue
		}
		require.NotNil(t, tc.Failure, c.Name)
		assert.Equal(t, rep.Results[i].Reason, tc.Failure.Message)
		assert.Equal(t, "expected "+string(c.Expect), tc.Failure.Type)
		assert.Contains(t, tc.Failure.Text, "proves: "+c.Proves)
	}
}

func TestJUnitEscapesWhatTheReceiverAnswered(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.WriteHeader(http.StatusBadRequest)
		_, _ = w.Write([]byte("<b>&nope\x00\xff]]></b>"))
	}))
	defer srv.Close()
	rep := certify.Run(context.Background(), certify.Config{URL: srv.URL, Secret: secret})
	var out bytes.Buffer
	require.NoError(t, rep.WriteJUnit(&out))
	var doc junit
	require.NoError(t, xml.Unmarshal(out.Bytes(), &doc), out.String())
	assert.Contains(t, doc.Suites[0].Cases[0].Failure.Message, "<b>&nope")
}

func TestSamples(t *testing.T) {
	at := time.Date(2026, 3, 1, 12, 0, 0, 5, time.UTC)
	for _, k := range certify.Kinds() {
		body, err := certify.Sample(k, "evt_x", at)
		require.NoError(t, err)
		var env map[string]any
		require.NoError(t, json.Unmarshal(body, &env))
		assert.Equal(t, "evt_x", env["event_id"])
		assert.Equal(t, "v1", env["api_version"])
		assert.Equal(t, "2026-03-01T12:00:00Z", env["created_at"], "nanoseconds cut, as pydantic has none")
		assert.Equal(t, k == certify.KindTest, env["is_test"])
		assert.True(t, strings.HasPrefix(string(body), `{"event_id":"evt_x","event_type":`), "D8's field order: %s", body)
	}
	tx, _ := certify.Sample(certify.KindTransaction, "evt_t", at)
	assert.Regexp(t, `"data":\{"transaction_id":"(txn_\w{24})","status":"completed","user_account_id":"partner-\w{8}","product":"robo"\},"links":\{"self":"/v1/transactions/txn_\w{24}/"\}\}$`, string(tx))
	test, _ := certify.Sample(certify.KindTest, "evt_s", at)
	assert.Regexp(t, `"data":\{"user_account_id":"test_user","product":"crypto","kyc_status":"approved"\},"links":\{"self":"/v1/users/usr_test_\w{24}/\?user_account_id_type=platform"\}\}$`, string(test))
	_, err := certify.Sample("fill", "evt_x", at)
	assert.ErrorContains(t, err, `unknown sample kind "fill"`)
	// A sample's created_at is the sandbox's own: simulator.FormatTime (pydantic v2's datetime,
	// decisions D5), whatever the instant's fraction.
	for _, ns := range []int{0, 999, 1_000, 123_456_789, 999_999_999} {
		at := time.Date(2026, 3, 1, 12, 0, 0, ns, time.UTC)
		body, err := certify.Sample(certify.KindKYC, "evt_x", at)
		require.NoError(t, err)
		var env struct {
			CreatedAt string `json:"created_at"`
		}
		require.NoError(t, json.Unmarshal(body, &env))
		assert.Equal(t, simulator.FormatTime(at), env.CreatedAt, "ns %d", ns)
	}
	assert.Regexp(t, `^evt_[0-9A-Za-z]{24}$`, certify.NewID("evt"))
	assert.NotEqual(t, certify.NewID("evt"), certify.NewID("evt"))
}

// inspect GETs path from the receiver's Inspector and decodes its JSON answer into v.
func inspect(t *testing.T, rcv *receiver.Receiver, path string, v any) {
	t.Helper()
	rec := httptest.NewRecorder()
	rcv.Inspector().ServeHTTP(rec, httptest.NewRequest(http.MethodGet, path, nil))
	require.Equal(t, http.StatusOK, rec.Code, rec.Body.String())
	require.NoError(t, json.Unmarshal(rec.Body.Bytes(), v))
}
