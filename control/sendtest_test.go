package control_test

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"github.com/tidwall/gjson"

	"github.com/partnersim/partnersim/simulator"
	"github.com/partnersim/partnersim/simulator/webhook/signature"
)

// callback is a partner's receiver on loopback: it records what it is sent and answers status.
type callback struct {
	*httptest.Server
	mu  sync.Mutex
	got []received
}

type received struct {
	header http.Header
	body   []byte
}

func newCallback(tb testing.TB, status int) *callback {
	tb.Helper()
	c := &callback{}
	c.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		b, _ := io.ReadAll(req.Body)
		c.mu.Lock()
		c.got = append(c.got, received{header: req.Header.Clone(), body: b})
		c.mu.Unlock()
		w.WriteHeader(status)
		_, _ = w.Write([]byte(`{"ok":true}`))
	}))
	tb.Cleanup(c.Close)
	return c
}

func (c *callback) received() []received {
	c.mu.Lock()
	defer c.mu.Unlock()
	return append([]received(nil), c.got...)
}

// Send Test makes one signed attempt of a test event to the subscription's URL and records it
// in the delivery log: the body the callback got is the one recorded, signed with the
// institution's secret, marked is_test, of the subscription's event type.
func TestSendTestSendsOnceSignedAndRecordsIt(t *testing.T) {
	ctx := context.Background()
	r := newRig(t)
	cb := newCallback(t, http.StatusOK)
	sub, secret, err := r.db.CreateSubscription(ctx, "ins_harbor", simulator.EventTransaction, cb.URL, "v1")
	require.NoError(t, err)

	d, err := r.svc.SendTest(ctx, "ins_harbor", sub.ID)
	require.NoError(t, err)

	got := cb.received()
	require.Len(t, got, 1, "one attempt")
	assert.Equal(t, []byte(d.Body), got[0].body, "the bytes sent are the bytes recorded")
	assert.NoError(t, signature.Verify(got[0].header.Get(signature.HeaderSignature), got[0].body, []string{secret}, 0, r.clock.Now()))
	assert.Equal(t, d.EventID, got[0].header.Get(signature.HeaderID))
	body := gjson.ParseBytes(got[0].body)
	assert.True(t, body.Get("is_test").Bool())
	assert.Equal(t, "transaction", body.Get("event_type").String())
	assert.Equal(t, d.EventID, body.Get("event_id").String())

	assert.Equal(t, simulator.DeliveryDelivered, d.Status)
	require.Len(t, d.Attempts, 1)
	assert.Equal(t, http.StatusOK, d.Attempts[0].StatusCode)
	assert.Equal(t, sub.ID, d.SubscriptionID)
	logged := r.deliveries(t, "ins_harbor")
	require.Len(t, logged, 1)
	assert.Equal(t, d.ID, logged[0].ID)
	assert.Equal(t, simulator.DeliveryDelivered, logged[0].Status)
}

// A refusing callback gets one attempt and no retry: the delivery is failed at once, never
// pending.
func TestSendTestNeverRetries(t *testing.T) {
	ctx := context.Background()
	r := newRig(t)
	cb := newCallback(t, http.StatusInternalServerError)
	subID := r.subscribe(t, "ins_harbor", simulator.EventKYC, cb.URL)

	d, err := r.svc.SendTest(ctx, "ins_harbor", subID)
	require.NoError(t, err)

	assert.Len(t, cb.received(), 1)
	assert.Equal(t, simulator.DeliveryFailed, d.Status)
	require.Len(t, d.Attempts, 1)
	assert.Equal(t, http.StatusInternalServerError, d.Attempts[0].StatusCode)
	pending, err := r.svc.PendingDeliveries(ctx, 10)
	require.NoError(t, err)
	assert.Empty(t, pending)
	_, err = r.svc.AdvanceClock(ctx, "", 24*time.Hour)
	require.NoError(t, err)
	pending, err = r.svc.PendingDeliveries(ctx, 10)
	require.NoError(t, err)
	assert.Empty(t, pending, "nothing falls due later either")
}

// During a rotation's overlap Send Test signs with both secrets, so a receiver holding either
// verifies it.
func TestSendTestSignsWithEveryActiveSecret(t *testing.T) {
	ctx := context.Background()
	r := newRig(t)
	cb := newCallback(t, http.StatusOK)
	sub, old, err := r.db.CreateSubscription(ctx, "ins_harbor", simulator.EventKYC, cb.URL, "v1")
	require.NoError(t, err)
	current, err := r.svc.RotateSecret(ctx, "ins_harbor", time.Hour)
	require.NoError(t, err)

	_, err = r.svc.SendTest(ctx, "ins_harbor", sub.ID)
	require.NoError(t, err)

	got := cb.received()
	require.Len(t, got, 1)
	for _, secret := range []string{old, current} {
		assert.NoError(t, signature.Verify(got[0].header.Get(signature.HeaderSignature), got[0].body, []string{secret}, 0, r.clock.Now()))
	}
}

// An unknown subscription, another institution's, or a deleted one is ENOTFOUND: nothing is
// sent and nothing recorded.
func TestSendTestOfNoSubscriptionOfTheInstitution(t *testing.T) {
	ctx := context.Background()
	r := newRig(t)
	cb := newCallback(t, http.StatusOK)
	harbors := r.subscribe(t, "ins_harbor", simulator.EventKYC, cb.URL)
	deleted := r.subscribe(t, "ins_prairie", simulator.EventKYC, cb.URL)
	require.NoError(t, r.db.DeleteSubscription(ctx, "ins_prairie", deleted))

	for name, subID := range map[string]string{"unknown": "sub_nobody", "another institution's": harbors, "deleted": deleted} {
		t.Run(name, func(t *testing.T) {
			d, err := r.svc.SendTest(ctx, "ins_prairie", subID)
			assert.Nil(t, d)
			assert.Equal(t, simulator.ENOTFOUND, code(err), "%v", err)
		})
	}
	assert.Empty(t, cb.received())
	assert.Empty(t, r.deliveries(t, "ins_prairie"))
	assert.Empty(t, r.deliveries(t, "ins_harbor"))
}

// A URL accepted at create that no longer resolves to an address the guard allows (its host's
// DNS override now points inside a private network) is EINVALID at test time: nothing is sent,
// nothing recorded.
func TestSendTestChecksTheURLAgain(t *testing.T) {
	ctx := context.Background()
	r := newRig(t)
	cb := newCallback(t, http.StatusOK)
	u, err := url.Parse(cb.URL)
	require.NoError(t, err)
	_, err = r.svc.SetDNS(ctx, map[string][]string{"hooks.partner.example": {"127.0.0.1"}})
	require.NoError(t, err)
	hook := "http://hooks.partner.example:" + u.Port() + "/hook"
	require.NoError(t, r.guard.CheckURL(ctx, hook), "accepted while it resolves to loopback")
	subID := r.subscribe(t, "ins_harbor", simulator.EventKYC, hook)
	_, err = r.svc.SendTest(ctx, "ins_harbor", subID)
	require.NoError(t, err)
	require.Len(t, cb.received(), 1, "sent while it resolves to loopback")

	_, err = r.svc.SetDNS(ctx, map[string][]string{"hooks.partner.example": {"10.0.0.7"}})
	require.NoError(t, err)
	d, err := r.svc.SendTest(ctx, "ins_harbor", subID)

	assert.Nil(t, d)
	assert.Equal(t, simulator.EINVALID, code(err), "%v", err)
	assert.Equal(t, "callback URL no longer resolves to a public address", simulator.ErrorMessage(err))
	assert.Len(t, cb.received(), 1, "nothing more was sent")
	assert.Len(t, r.deliveries(t, "ins_harbor"), 1, "nothing more was recorded")
}
