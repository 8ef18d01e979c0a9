package simulator

import "time"

// The delivery lifecycle (decisions D8) in one place: which deliveries an event makes (one per
// enabled subscription of its type), what an attempt means for a delivery — delivered, retry at
// T, or failed — and how a deleted subscription ends it. The store fans an event out with
// Event.Deliveries, the dispatcher decides with Outcome, the store applies with
// DeliveryState.Record, a deleted subscription's pending deliveries end with
// EndSubscriptionDeleted, and Send Test builds its one-attempt delivery with TestDelivery.

// ErrSubscriptionDeleted is the error of a delivery ended because its subscription was deleted.
const ErrSubscriptionDeleted = "subscription deleted"

// errNoSubscription is what a subscription another institution owns, or one deleted, is to an
// institution.
const errNoSubscription = "no enabled subscription with that id"

// Deliveries is e's fan-out: one pending delivery per enabled subscription of e's type among
// subs, each carrying e's body at its subscription's API version, due at due (the institution's
// now on the virtual clock) and created at now.
func (e *Event) Deliveries(subs []*Subscription, ids *IDs, due, now time.Time) []*Delivery {
	var out []*Delivery
	for _, sub := range subs {
		if !sub.Enabled || sub.EventType != e.Type {
			continue
		}
		out = append(out, &Delivery{ID: ids.New("dlv"), EventID: e.ID, SubscriptionID: sub.ID, InstitutionID: e.InstitutionID,
			URL: sub.URL, Body: e.Body(sub.APIVersion), Status: DeliveryPending, NextAttemptAt: due,
			Attempts: []Attempt{}, CreatedAt: now})
	}
	return out
}

// CheckOwner returns nil when sub is an enabled subscription of institution instID, and
// ENOTFOUND otherwise: another institution's subscription, or a deleted one, does not exist
// for it.
func (sub *Subscription) CheckOwner(instID string) error {
	if sub.InstitutionID != instID || !sub.Enabled {
		return &Error{Code: ENOTFOUND, Message: errNoSubscription}
	}
	return nil
}

// Delete disables sub for good at now, for institution instID (decisions D8): CheckOwner's
// ENOTFOUND otherwise. Its pending deliveries then end (DeliveryState.EndSubscriptionDeleted).
func (sub *Subscription) Delete(instID string, now time.Time) error {
	if err := sub.CheckOwner(instID); err != nil {
		return err
	}
	sub.Enabled, sub.DeletedAt = false, &now
	return nil
}

// Acknowledged reports whether an attempt acknowledged its delivery: any 2xx. A 3xx is a failure
// (redirects are never followed), and so are 4xx, 5xx and no answer at all.
func Acknowledged(a Attempt) bool { return a.StatusCode >= 200 && a.StatusCode < 300 }

// Outcome decides what follows an attempt of d for its current slot, started at the virtual
// time started: delivered when acknowledged, else a retry the schedule's next delay after the
// start (not the answer: the clock may move while an attempt waits), else (the schedule spent)
// failed. A retry is always due after the slot it follows, even if the wall clock stepped back
// while the attempt ran: a delivery's slots only increase, so each names one step of its life.
func (d *Delivery) Outcome(a Attempt, schedule []time.Duration, started time.Time) AttemptRecord {
	r := AttemptRecord{DeliveryID: d.ID, At: d.NextAttemptAt, Attempt: a, OK: Acknowledged(a)}
	if n := len(d.Attempts) + 1; !r.OK && n <= len(schedule) {
		next := started.Add(schedule[n-1])
		if !next.After(d.NextAttemptAt) {
			next = d.NextAttemptAt.Add(time.Nanosecond)
		}
		r.Next = &next
	}
	return r
}

// DeliveryState is where a delivery stands: pending until NextAttemptAt, delivered, or failed
// (with Error when it was ended rather than spent). What an attempt's record does depends on
// it alone.
type DeliveryState struct {
	Status        string
	NextAttemptAt time.Time
	Error         string
}

// Record decides what the record r does to a delivery standing at s: whether r's attempt is
// logged, and where the delivery stands after it. logged says whether an attempt for r's slot
// is already logged. A record for a slot the delivery has left (already recorded) changes
// nothing; an attempt that was in flight when the subscription was deleted is logged once on
// the ended delivery, which stays failed.
func (s DeliveryState) Record(r AttemptRecord, logged bool) (DeliveryState, bool) {
	if s.Status == DeliveryFailed && s.Error == ErrSubscriptionDeleted {
		return s, !logged
	}
	if s.Status != DeliveryPending || !s.NextAttemptAt.Equal(r.At) {
		return s, false
	}
	switch {
	case r.OK:
		s.Status, s.NextAttemptAt = DeliveryDelivered, time.Time{}
	case r.Next != nil:
		s.NextAttemptAt = *r.Next
	default:
		s.Status, s.NextAttemptAt = DeliveryFailed, time.Time{}
	}
	return s, true
}

// EndSubscriptionDeleted is where a pending delivery stands once its subscription is deleted.
func (s DeliveryState) EndSubscriptionDeleted() DeliveryState {
	return DeliveryState{Status: DeliveryFailed, Error: ErrSubscriptionDeleted}
}

// State returns where d stands.
func (d *Delivery) State() DeliveryState {
	return DeliveryState{Status: d.Status, NextAttemptAt: d.NextAttemptAt, Error: d.Error}
}

// SetState moves d to s.
func (d *Delivery) SetState(s DeliveryState) {
	d.Status, d.NextAttemptAt, d.Error = s.Status, s.NextAttemptAt, s.Error
}

// Apply records r on d (DeliveryState.Record, the last attempt telling whether r's is logged
// already) and reports whether d changed.
func (d *Delivery) Apply(r AttemptRecord) bool {
	n := len(d.Attempts)
	s, ok := d.State().Record(r, n > 0 && d.Attempts[n-1].At.Equal(r.Attempt.At))
	if !ok {
		return false
	}
	a := r.Attempt
	a.DueAt = r.At // the slot the record is for: when the attempt was due
	d.Attempts = append(d.Attempts, a)
	d.SetState(s)
	return true
}

// TestDelivery is the delivery of a test event (Send Test): its one attempt, delivered or
// failed, never retried — a delivery whose retry schedule is empty.
func TestDelivery(id string, e *Event, sub *Subscription, instID string, body []byte, a Attempt) *Delivery {
	d := &Delivery{ID: id, EventID: e.ID, SubscriptionID: sub.ID, InstitutionID: instID, URL: sub.URL,
		Body: body, Status: DeliveryPending, NextAttemptAt: a.At, Attempts: []Attempt{}, CreatedAt: a.At}
	d.Apply(d.Outcome(a, nil, a.At))
	return d
}
