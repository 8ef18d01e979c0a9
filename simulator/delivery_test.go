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
	d.EndSubscriptionDeleted()
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
