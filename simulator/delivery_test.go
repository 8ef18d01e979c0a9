package simulator_test

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"

	"github.com/partnersim/partnersim/simulator"
)

// The delivery lifecycle (decisions D8), table-tested like the KYC transitions: what an attempt
// means for a pending delivery, given the retry schedule.
func TestDeliveryLifecycle(t *testing.T) {
	t0 := time.Date(2026, 11, 24, 12, 0, 0, 0, time.UTC)
	schedule := []time.Duration{5 * time.Second, 5 * time.Minute}
	pending := func(attempts int) *simulator.Delivery {
		d := &simulator.Delivery{ID: "dlv_1", Status: simulator.DeliveryPending, NextAttemptAt: t0}
		for range attempts {
			d.Attempts = append(d.Attempts, simulator.Attempt{StatusCode: 500})
		}
		return d
	}
	answered := func(code int) simulator.Attempt { return simulator.Attempt{At: t0, StatusCode: code} }
	for _, c := range []struct {
		name     string
		d        *simulator.Delivery
		a        simulator.Attempt
		status   string
		next     time.Time
		attempts int
	}{
		{"200 delivers", pending(0), answered(200), simulator.DeliveryDelivered, time.Time{}, 1},
		{"204 delivers", pending(1), answered(204), simulator.DeliveryDelivered, time.Time{}, 2},
		{"299 delivers", pending(0), answered(299), simulator.DeliveryDelivered, time.Time{}, 1},
		{"300 is a failure: redirects are never followed", pending(0), answered(301), simulator.DeliveryPending, t0.Add(5 * time.Second), 1},
		{"500 on the first attempt retries after 5s", pending(0), answered(500), simulator.DeliveryPending, t0.Add(5 * time.Second), 1},
		{"no answer retries", pending(0), simulator.Attempt{At: t0, Error: "timeout after 10s"}, simulator.DeliveryPending, t0.Add(5 * time.Second), 1},
		{"the second failure retries after the second delay", pending(1), answered(404), simulator.DeliveryPending, t0.Add(5 * time.Minute), 2},
		{"a failure past the schedule fails the delivery", pending(2), answered(500), simulator.DeliveryFailed, time.Time{}, 3},
	} {
		t.Run(c.name, func(t *testing.T) {
			r := c.d.Outcome(c.a, schedule, t0)
			assert.True(t, c.d.Apply(r))
			assert.Equal(t, c.status, c.d.Status)
			assert.Equal(t, c.next, c.d.NextAttemptAt)
			assert.Len(t, c.d.Attempts, c.attempts)
			assert.False(t, c.d.Apply(r), "recording the same attempt twice changes nothing")
		})
	}

	// A subscription deleted while an attempt was in flight: the delivery ended, and the
	// attempt is still logged, once.
	d := pending(0)
	r := d.Outcome(answered(200), schedule, t0)
	d.SetState(d.State().EndSubscriptionDeleted())
	assert.Equal(t, simulator.DeliveryFailed, d.Status)
	assert.Equal(t, simulator.ErrSubscriptionDeleted, d.Error)
	assert.True(t, d.Apply(r))
	assert.False(t, d.Apply(r))
	assert.Equal(t, simulator.DeliveryFailed, d.Status, "ended stays ended")
	assert.Len(t, d.Attempts, 1)

	// An attempt made for an earlier slot (already recorded, then rescheduled) changes nothing.
	d = pending(0)
	assert.True(t, d.Apply(d.Outcome(answered(500), schedule, t0)))
	assert.False(t, d.Apply(simulator.AttemptRecord{DeliveryID: d.ID, At: t0, Attempt: answered(200), OK: true}))
	assert.Equal(t, simulator.DeliveryPending, d.Status)

	// A retry is due after the slot it follows even when the attempt started before it (the
	// wall clock stepped back): a delivery's slots only increase.
	d = pending(0)
	r = d.Outcome(answered(500), []time.Duration{time.Millisecond}, t0.Add(-time.Second))
	assert.Equal(t, t0.Add(time.Nanosecond), *r.Next)

	// A test send: one attempt, delivered or failed, never retried.
	assert.Equal(t, simulator.DeliveryDelivered, simulator.TestDelivery("dlv_t", &simulator.Event{ID: "evt_t"}, &simulator.Subscription{ID: "sub"}, "inst", []byte("{}"), answered(200)).Status)
	assert.Equal(t, simulator.DeliveryFailed, simulator.TestDelivery("dlv_t", &simulator.Event{ID: "evt_t"}, &simulator.Subscription{ID: "sub"}, "inst", []byte("{}"), answered(503)).Status)
}

// An event fans out to one pending delivery per enabled subscription of its type, each with
// the body at its subscription's API version.
func TestEventDeliveriesFanOut(t *testing.T) {
	due, now := time.Date(2026, 11, 24, 12, 0, 0, 0, time.UTC), time.Date(2026, 11, 24, 11, 0, 0, 0, time.UTC)
	e := &simulator.Event{ID: "evt_1", InstitutionID: "ins_1", Type: simulator.EventKYC, CreatedAt: now,
		Data: simulator.EventData{UserAccountID: "u1", PlatformID: "usr_1", Product: simulator.ProductCrypto, KYCStatus: simulator.KYCApproved}}
	subs := []*simulator.Subscription{
		{ID: "sub_v1", EventType: simulator.EventKYC, URL: "https://a.example/h", APIVersion: "v1", Enabled: true},
		{ID: "sub_txn", EventType: simulator.EventTransaction, URL: "https://b.example/h", APIVersion: "v1", Enabled: true},
		{ID: "sub_gone", EventType: simulator.EventKYC, URL: "https://c.example/h", APIVersion: "v1"},
		{ID: "sub_v2", EventType: simulator.EventKYC, URL: "https://d.example/h", APIVersion: "v2", Enabled: true},
	}
	ds := e.Deliveries(subs, simulator.NewIDs(nil), due, now)
	if assert.Len(t, ds, 2, "the enabled kyc subscriptions only") {
		for i, sub := range []*simulator.Subscription{subs[0], subs[3]} {
			d := ds[i]
			assert.Equal(t, sub.ID, d.SubscriptionID)
			assert.Equal(t, sub.URL, d.URL)
			assert.Equal(t, string(e.Body(sub.APIVersion)), string(d.Body), "the body at the subscription's version")
			assert.Equal(t, simulator.DeliveryPending, d.Status)
			assert.Equal(t, due, d.NextAttemptAt)
			assert.Equal(t, now, d.CreatedAt)
			assert.Equal(t, "ins_1", d.InstitutionID)
			assert.Empty(t, d.Attempts)
			assert.NotNil(t, d.Attempts, "an empty list, not null")
		}
		assert.NotEqual(t, ds[0].ID, ds[1].ID)
	}
}

// A subscription is deleted once, by its own institution; another institution's, or a deleted
// one, does not exist for the caller.
func TestSubscriptionDelete(t *testing.T) {
	now := time.Date(2026, 11, 24, 12, 0, 0, 0, time.UTC)
	sub := &simulator.Subscription{ID: "sub_1", InstitutionID: "ins_1", Enabled: true}
	assert.True(t, simulator.IsNotFound(sub.Delete("ins_2", now)), "another institution's")
	assert.True(t, sub.Enabled, "left as it was")
	assert.NoError(t, sub.Delete("ins_1", now))
	assert.False(t, sub.Enabled)
	if assert.NotNil(t, sub.DeletedAt) {
		assert.Equal(t, now, *sub.DeletedAt)
	}
	assert.True(t, simulator.IsNotFound(sub.Delete("ins_1", now)), "deleted already")
	assert.True(t, simulator.IsNotFound(sub.CheckOwner("ins_1")))
}
