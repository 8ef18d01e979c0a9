package simulator

import "time"

// The delivery lifecycle (decisions D8) in one place: what an attempt means for a delivery —
// delivered, retry at T, or failed — and how a deleted subscription ends it. The dispatcher
// decides with Outcome, the store applies with Apply, and Send Test builds its one-attempt
// delivery with TestDelivery.

// ErrSubscriptionDeleted is the error of a delivery ended because its subscription was deleted.
const ErrSubscriptionDeleted = "subscription deleted"

// Acknowledged reports whether an attempt acknowledged its delivery: any 2xx. A 3xx is a failure
// (redirects are never followed), and so are 4xx, 5xx and no answer at all.
func Acknowledged(a Attempt) bool { return a.StatusCode >= 200 && a.StatusCode < 300 }

// Outcome decides what follows an attempt of d for its current slot, started at the virtual
// time started: delivered when acknowledged, else a retry the schedule's next delay after the
// start (not the answer: the clock may move while an attempt waits), else (the schedule spent)
// failed.
func (d *Delivery) Outcome(a Attempt, schedule []time.Duration, started time.Time) AttemptRecord {
	r := AttemptRecord{DeliveryID: d.ID, At: d.NextAttemptAt, Attempt: a, OK: Acknowledged(a)}
	if n := len(d.Attempts) + 1; !r.OK && n <= len(schedule) {
		next := started.Add(schedule[n-1])
		r.Next = &next
	}
	return r
}

// Apply records r on d and reports whether d changed. A record for a slot d has left (already
// recorded) changes nothing; an attempt that was in flight when the subscription was deleted is
// logged once on the ended delivery, which stays failed.
func (d *Delivery) Apply(r AttemptRecord) bool {
	if d.Status == DeliveryFailed && d.Error == ErrSubscriptionDeleted {
		if n := len(d.Attempts); n > 0 && d.Attempts[n-1].At.Equal(r.Attempt.At) {
			return false
		}
		d.Attempts = append(d.Attempts, r.Attempt)
		return true
	}
	if d.Status != DeliveryPending || !d.NextAttemptAt.Equal(r.At) {
		return false
	}
	d.Attempts = append(d.Attempts, r.Attempt)
	switch {
	case r.OK:
		d.Status, d.NextAttemptAt = DeliveryDelivered, time.Time{}
	case r.Next != nil:
		d.NextAttemptAt = *r.Next
	default:
		d.Status, d.NextAttemptAt = DeliveryFailed, time.Time{}
	}
	return true
}

// EndSubscriptionDeleted ends a pending delivery whose subscription was deleted.
func (d *Delivery) EndSubscriptionDeleted() {
	d.Status, d.Error, d.NextAttemptAt = DeliveryFailed, ErrSubscriptionDeleted, time.Time{}
}

// TestDelivery is the delivery of a test event (Send Test): its one attempt, delivered or
// failed, never retried.
func TestDelivery(id string, e *Event, sub *Subscription, instID string, body []byte, a Attempt) *Delivery {
	d := &Delivery{ID: id, EventID: e.ID, SubscriptionID: sub.ID, InstitutionID: instID, URL: sub.URL,
		Body: body, Status: DeliveryFailed, Attempts: []Attempt{a}, CreatedAt: a.At}
	if Acknowledged(a) {
		d.Status = DeliveryDelivered
	}
	return d
}
