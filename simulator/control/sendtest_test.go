package control_test

import (
	"context"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"github.com/tidwall/gjson"

	"github.com/partnersim/partnersim/internal/sandboxtest"
	"github.com/partnersim/partnersim/simulator"
	"github.com/partnersim/partnersim/simulator/webhook/signature"
)

// subscribeCallback starts a partner's callback on loopback answering status, subscribes it
// to events of type t of institution instID, and returns it with the subscription's id and the
// secret its first subscribe issued.
func (r *rig) subscribeCallback(tb testing.TB, instID string, t simulator.EventType, status int) (*sandboxtest.Callback, string, string) {
	tb.Helper()
	cb := sandboxtest.NewCallback(tb, sandboxtest.Answering(status))
	sub, secret, err := r.db.CreateSubscription(context.Background(), instID, t, cb.URL, "v1")
	require.NoError(tb, err)
	return cb, sub.ID, secret
}

// sendTestTo subscribes a callback answering status to ins_harbor's events of type t and sends
// it a test event.
func (r *rig) sendTestTo(tb testing.TB, t simulator.EventType, status int) (*sandboxtest.Callback, string, string, *simulator.Delivery) {
	tb.Helper()
	cb, subID, secret := r.subscribeCallback(tb, "ins_harbor", t, status)
	d, err := r.svc.SendTest(context.Background(), "ins_harbor", subID)
	require.NoError(tb, err)
	return cb, subID, secret, d
}

// Send Test makes one signed attempt of a test event to the subscription's URL and records it
// in the delivery log: the body the callback got is the one recorded, signed with the
// institution's secret, marked is_test, of the subscription's event type.
func TestSendTestSendsOnceSignedAndRecordsIt(t *testing.T) {
	r := newRig(t)
	cb, subID, secret, d := r.sendTestTo(t, simulator.EventTransaction, http.StatusOK)

	got := cb.Received()
	require.Len(t, got, 1, "one attempt")
	assert.Equal(t, []byte(d.Body), got[0].Body, "the bytes sent are the bytes recorded")
	assert.NoError(t, signature.Verify(got[0].Header.Get(signature.HeaderSignature), got[0].Body, []string{secret}, 0, r.clock.Now()))
	assert.Equal(t, d.EventID, got[0].Header.Get(signature.HeaderID))
	body := gjson.ParseBytes(got[0].Body)
	assert.True(t, body.Get("is_test").Bool())
	assert.Equal(t, "transaction", body.Get("event_type").String())
	assert.Equal(t, d.EventID, body.Get("event_id").String())

	assert.Equal(t, simulator.DeliveryDelivered, d.Status)
	require.Len(t, d.Attempts, 1)
	assert.Equal(t, http.StatusOK, d.Attempts[0].StatusCode)
	assert.Equal(t, subID, d.SubscriptionID)
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
	cb, _, _, d := r.sendTestTo(t, simulator.EventKYC, http.StatusInternalServerError)

	assert.Len(t, cb.Received(), 1)
	assert.Equal(t, simulator.DeliveryFailed, d.Status)
	require.Len(t, d.Attempts, 1)
	assert.Equal(t, http.StatusInternalServerError, d.Attempts[0].StatusCode)
	pending, err := r.db.PendingDeliveries(ctx, 10)
	require.NoError(t, err)
	assert.Empty(t, pending)
	_, err = r.svc.AdvanceClock(ctx, "", 24*time.Hour)
	require.NoError(t, err)
	pending, err = r.db.PendingDeliveries(ctx, 10)
	require.NoError(t, err)
	assert.Empty(t, pending, "nothing falls due later either")
}

// During a rotation's overlap Send Test signs with both secrets, so a receiver holding either
// verifies it.
func TestSendTestSignsWithEveryActiveSecret(t *testing.T) {
	ctx := context.Background()
	r := newRig(t)
	cb, subID, old := r.subscribeCallback(t, "ins_harbor", simulator.EventKYC, http.StatusOK)
	current, err := r.db.RotateSecret(ctx, "ins_harbor", time.Hour)
	require.NoError(t, err)

	_, err = r.svc.SendTest(ctx, "ins_harbor", subID)
	require.NoError(t, err)

	got := cb.Received()
	require.Len(t, got, 1)
	for _, secret := range []string{old, current} {
		assert.NoError(t, signature.Verify(got[0].Header.Get(signature.HeaderSignature), got[0].Body, []string{secret}, 0, r.clock.Now()))
	}
}

// An unknown subscription, another institution's, or a deleted one is ENOTFOUND: nothing is
// sent and nothing recorded.
func TestSendTestOfNoSubscriptionOfTheInstitution(t *testing.T) {
	ctx := context.Background()
	r := newRig(t)
	cb, harbors, _ := r.subscribeCallback(t, "ins_harbor", simulator.EventKYC, http.StatusOK)
	deleted := r.subscribe(t, "ins_prairie", simulator.EventKYC, cb.URL)
	require.NoError(t, r.db.DeleteSubscription(ctx, "ins_prairie", deleted))

	for name, subID := range map[string]string{"unknown": "sub_nobody", "another institution's": harbors, "deleted": deleted} {
		t.Run(name, func(t *testing.T) {
			d, err := r.svc.SendTest(ctx, "ins_prairie", subID)
			assert.Nil(t, d)
			assert.Equal(t, simulator.ENOTFOUND, code(err), "%v", err)
		})
	}
	assert.Empty(t, cb.Received())
	assert.Empty(t, r.deliveries(t, "ins_prairie"))
	assert.Empty(t, r.deliveries(t, "ins_harbor"))
}

// A URL accepted at create that no longer resolves to an address the guard allows (its host's
// DNS override now points inside a private network) is EINVALID at test time: nothing is sent,
// nothing recorded.
func TestSendTestChecksTheURLAgain(t *testing.T) {
	ctx := context.Background()
	r := newRig(t)
	cb := sandboxtest.NewCallback(t, sandboxtest.Answering(http.StatusOK))
	u, err := url.Parse(cb.URL)
	require.NoError(t, err)
	_, err = r.svc.SetDNS(ctx, map[string][]string{"hooks.partner.example": {"127.0.0.1"}})
	require.NoError(t, err)
	hook := "http://hooks.partner.example:" + u.Port() + "/hook"
	require.NoError(t, r.guard.CheckURL(ctx, hook), "accepted while it resolves to loopback")
	subID := r.subscribe(t, "ins_harbor", simulator.EventKYC, hook)
	_, err = r.svc.SendTest(ctx, "ins_harbor", subID)
	require.NoError(t, err)
	require.Len(t, cb.Received(), 1, "sent while it resolves to loopback")

	_, err = r.svc.SetDNS(ctx, map[string][]string{"hooks.partner.example": {"10.0.0.7"}})
	require.NoError(t, err)
	d, err := r.svc.SendTest(ctx, "ins_harbor", subID)

	assert.Nil(t, d)
	assert.Equal(t, simulator.EINVALID, code(err), "%v", err)
	assert.Equal(t, "callback URL no longer resolves to a public address", simulator.ErrorMessage(err))
	assert.Len(t, cb.Received(), 1, "nothing more was sent")
	assert.Len(t, r.deliveries(t, "ins_harbor"), 1, "nothing more was recorded")
}

// A refusal at test time says what it refused: a host that has stopped resolving is not said
// to resolve to a private address.
func TestSendTestNamesAHostThatStoppedResolving(t *testing.T) {
	ctx := context.Background()
	r := newRig(t)
	_, err := r.svc.SetDNS(ctx, map[string][]string{"hooks.partner.invalid": {"93.184.216.34"}})
	require.NoError(t, err)
	hook := "https://hooks.partner.invalid/hook"
	require.NoError(t, r.guard.CheckURL(ctx, hook), "accepted while it resolves")
	subID := r.subscribe(t, "ins_harbor", simulator.EventKYC, hook)
	_, err = r.svc.SetDNS(ctx, map[string][]string{"hooks.partner.invalid": {}}) // an empty list removes it
	require.NoError(t, err)

	d, err := r.svc.SendTest(ctx, "ins_harbor", subID)
	assert.Nil(t, d)
	assert.Equal(t, simulator.EINVALID, code(err), "%v", err)
	assert.Equal(t, "callback URL host no longer resolves", simulator.ErrorMessage(err))
}

// A control character in the stored URL's userinfo (pydantic percent-encodes it and accepts
// the URL) is sent as the URL standard encodes it.
func TestSendTestSendsAURLWithAControlCharacter(t *testing.T) {
	ctx := context.Background()
	r := newRig(t)
	cb := sandboxtest.NewCallback(t, sandboxtest.Answering(http.StatusOK))
	hook := strings.Replace(cb.URL, "http://", "http://a\x03b@", 1)
	subID := r.subscribe(t, "ins_harbor", simulator.EventKYC, hook)
	d, err := r.svc.SendTest(ctx, "ins_harbor", subID)
	require.NoError(t, err)
	assert.Equal(t, http.StatusOK, d.Attempts[0].StatusCode, "%+v", d.Attempts[0])
	assert.Len(t, cb.Received(), 1)
}
