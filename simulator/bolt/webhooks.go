package bolt

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"time"

	"go.etcd.io/bbolt"

	"github.com/partnersim/partnersim/simulator"
)

// CreateSubscription subscribes url to an event type at an API version. The institution's
// signing secret is issued by its first subscribe and returned only then (issued != "").
// An enabled subscription with the same type and exact URL is ECONFLICT.
func (s *DB) CreateSubscription(ctx context.Context, instID string, t simulator.EventType, url, version string) (sub *simulator.Subscription, issued string, err error) {
	err = s.update(ctx, func(w *writeTx) error {
		issued = "" // a rerun issues afresh (DB.update)
		if _, err := getInstitution(w.Tx, instID); err != nil {
			return err
		}
		subs, err := listSubs(w.Tx, instID)
		if err != nil {
			return err
		}
		for _, o := range subs {
			if o.EventType == t && o.URL == url {
				return simulator.Errorf(simulator.ECONFLICT, "an enabled subscription to %s events for this url already exists: %s", t, o.ID)
			}
		}
		var sec simulator.SigningSecrets
		if raw := w.Bucket(bSecrets).Get([]byte(instID)); raw != nil {
			if err := json.Unmarshal(raw, &sec); err != nil {
				return err
			}
		}
		if sec.Current == "" {
			sec.Current = s.IDs.NewSigningSecret()
			issued = sec.Current
			if err := w.putRecord(bSecrets, []byte(instID), sec); err != nil {
				return err
			}
		}
		now := s.Clock.Now()
		sub = &simulator.Subscription{ID: s.IDs.New("sub"), InstitutionID: instID, EventType: t, URL: url, APIVersion: version, Enabled: true, CreatedAt: now}
		if err := w.Bucket(bSubsByInst).Put(cat(inst(instID), timeKey(now), []byte(sub.ID)), nil); err != nil {
			return err
		}
		return w.putRecord(bSubs, []byte(sub.ID), sub)
	})
	if err != nil {
		return nil, "", err
	}
	return sub, issued, nil
}

// listSubs returns the institution's enabled subscriptions, oldest first.
func listSubs(tx *bbolt.Tx, instID string) ([]*simulator.Subscription, error) {
	var out []*simulator.Subscription
	prefix := inst(instID)
	c := tx.Bucket(bSubsByInst).Cursor()
	for k, _ := c.Seek(prefix); k != nil && bytes.HasPrefix(k, prefix); k, _ = c.Next() {
		var sub simulator.Subscription
		if err := getRecord(tx, bSubs, k[len(prefix)+8:], &sub, "subscription not found"); err != nil {
			return nil, err
		}
		if sub.Enabled {
			out = append(out, &sub)
		}
	}
	return out, nil
}

// Subscriptions lists the institution's enabled subscriptions, oldest first; ENOTFOUND when
// the institution is unknown.
func (s *DB) Subscriptions(ctx context.Context, instID string) ([]*simulator.Subscription, error) {
	var out []*simulator.Subscription
	err := s.view(ctx, func(tx *bbolt.Tx) (err error) {
		if _, err := s.readInstitution(tx, instID); err != nil {
			return err
		}
		out, err = listSubs(tx, instID)
		return err
	})
	return out, err
}

// Subscription returns an enabled subscription of the institution; a deleted one, or another
// institution's, is ENOTFOUND.
func (s *DB) Subscription(ctx context.Context, instID, id string) (*simulator.Subscription, error) {
	var sub simulator.Subscription
	err := s.view(ctx, func(tx *bbolt.Tx) error {
		return getRecord(tx, bSubs, []byte(id), &sub, "no enabled subscription with that id")
	})
	if err != nil {
		return nil, err
	}
	if err := sub.CheckOwner(instID); err != nil {
		return nil, err
	}
	return &sub, nil
}

// DeleteSubscription disables a subscription for good (decisions D8). Its pending deliveries end
// as failed with the error "subscription deleted".
func (s *DB) DeleteSubscription(ctx context.Context, instID, id string) error {
	return s.update(ctx, func(w *writeTx) error {
		var sub simulator.Subscription
		if err := getRecord(w.Tx, bSubs, []byte(id), &sub, "no enabled subscription with that id"); err != nil {
			return err
		}
		if err := sub.Delete(instID, s.Clock.Now()); err != nil {
			return err
		}
		if err := w.putRecord(bSubs, []byte(id), &sub); err != nil {
			return err
		}
		// End the subscription's pending deliveries: each one's log notes the end at its slot.
		c := w.Bucket(bOutbox).Cursor()
		var ended [][]byte
		for k, v := c.First(); k != nil; k, v = c.Next() {
			if string(v) == id {
				ended = append(ended, bytes.Clone(k))
			}
		}
		for _, k := range ended {
			pending := simulator.DeliveryState{Status: simulator.DeliveryPending, NextAttemptAt: timeFromKey(k[:8])}
			step := deliveryStep{DeliveryState: pending.EndSubscriptionDeleted()}
			if err := w.Bucket(bDeliveryLog).Put(k, encodeStep(&step)); err != nil {
				return err
			}
			if err := w.Bucket(bOutbox).Delete(k); err != nil {
				return err
			}
		}
		return nil
	})
}

// SigningSecrets returns the institution's secrets (empty before its first subscribe), through
// the read cache: the dispatcher asks on every attempt.
func (s *DB) SigningSecrets(ctx context.Context, instID string) (simulator.SigningSecrets, error) {
	cache := s.caches[string(bSecrets)]
	if v, ok := cache.peek(instID); ok {
		return *v.(*simulator.SigningSecrets), nil
	}
	var sec simulator.SigningSecrets
	err := s.view(ctx, func(tx *bbolt.Tx) error {
		v, err := cache.get(tx, instID, func() (any, error) {
			var sec simulator.SigningSecrets
			if raw := tx.Bucket(bSecrets).Get([]byte(instID)); raw != nil {
				if err := json.Unmarshal(raw, &sec); err != nil {
					return nil, err
				}
			}
			return &sec, nil
		})
		if err == nil {
			sec = *v.(*simulator.SigningSecrets)
		}
		return err
	})
	return sec, err
}

// RotateSecret issues a new signing secret; the old one keeps signing beside it (second v1
// entry) for overlap.
func (s *DB) RotateSecret(ctx context.Context, instID string, overlap time.Duration) (string, error) {
	var secret string
	err := s.update(ctx, func(w *writeTx) error {
		if _, err := getInstitution(w.Tx, instID); err != nil {
			return err
		}
		var sec simulator.SigningSecrets
		if raw := w.Bucket(bSecrets).Get([]byte(instID)); raw != nil {
			if err := json.Unmarshal(raw, &sec); err != nil {
				return err
			}
		}
		sec.Rotate(s.IDs.NewSigningSecret(), overlap, s.Clock, instID)
		secret = sec.Current
		return w.putRecord(bSecrets, []byte(instID), sec)
	})
	return secret, err
}

// emit writes an event and its fan-out (Event.Deliveries: one pending delivery per enabled
// subscription of its type, due now on its institution's virtual clock) in the caller's
// transaction: the outbox commits with the state change that caused the event.
func (s *DB) emit(w *writeTx, e *simulator.Event) error {
	if err := w.putRecord(bEvents, []byte(e.ID), e); err != nil {
		return err
	}
	subs, err := listSubs(w.Tx, e.InstitutionID)
	if err != nil {
		return err
	}
	for _, d := range e.Deliveries(subs, s.IDs, s.Clock.InstitutionNow(e.InstitutionID), s.Clock.Now()) {
		if err := w.enqueue(d, e); err != nil {
			return err
		}
	}
	return nil
}

// enqueue writes a new pending delivery of e and its outbox entry.
func (w *writeTx) enqueue(d *simulator.Delivery, e *simulator.Event) error {
	if err := w.putDelivery(d, e); err != nil {
		return err
	}
	if err := w.Bucket(bOutbox).Put(logKey(d.NextAttemptAt, d.ID), []byte(d.SubscriptionID)); err != nil {
		return err
	}
	w.enqueued++
	w.deliveries = append(w.deliveries, d.ID)
	return nil
}

// Redeliver makes a new delivery of a stored event (same event_id and body bytes) for each
// enabled subscription of its type, with its own schedule.
func (s *DB) Redeliver(ctx context.Context, eventID string) ([]*simulator.Delivery, error) {
	var ids []string
	err := s.update(ctx, func(w *writeTx) error {
		var e simulator.Event
		if err := getRecord(w.Tx, bEvents, []byte(eventID), &e, "event not found"); err != nil {
			return err
		}
		before := w.enqueued
		if err := s.emit(w, &e); err != nil {
			return err
		}
		if w.enqueued == before {
			return simulator.Errorf(simulator.ENOTFOUND, "no enabled %s subscription to redeliver event %s to", e.Type, e.ID)
		}
		ids = w.deliveries[before:]
		return nil
	})
	if err != nil {
		return nil, err
	}
	var out []*simulator.Delivery
	for _, id := range ids {
		d, err := s.Delivery(ctx, id)
		if err != nil {
			return nil, err
		}
		out = append(out, d)
	}
	return out, nil
}

// RedeliverDelivery makes a new delivery of the event delivery id carried, to that delivery's
// subscription only (same event_id and body bytes), with its own schedule: ENOTFOUND for an
// unknown delivery, or one whose subscription is no longer enabled.
func (s *DB) RedeliverDelivery(ctx context.Context, id string) (*simulator.Delivery, error) {
	var newID string
	err := s.update(ctx, func(w *writeTx) error {
		d, err := getDelivery(w.Tx, []byte(id))
		if err != nil {
			return err
		}
		var e simulator.Event
		if err := getRecord(w.Tx, bEvents, []byte(d.EventID), &e, "event not found"); err != nil {
			return err
		}
		subs, err := listSubs(w.Tx, d.InstitutionID)
		if err != nil {
			return err
		}
		subs = slices.DeleteFunc(subs, func(sub *simulator.Subscription) bool { return sub.ID != d.SubscriptionID })
		ds := e.Deliveries(subs, s.IDs, s.Clock.InstitutionNow(e.InstitutionID), s.Clock.Now())
		if len(ds) == 0 {
			return simulator.Errorf(simulator.ENOTFOUND, "subscription %s of delivery %s is no longer enabled: resend the event to its institution's subscriptions instead", d.SubscriptionID, d.ID)
		}
		newID = ds[0].ID
		return w.enqueue(ds[0], &e)
	})
	if err != nil {
		return nil, err
	}
	return s.Delivery(ctx, newID)
}

// Delivery returns one delivery.
func (s *DB) Delivery(ctx context.Context, id string) (*simulator.Delivery, error) {
	var d *simulator.Delivery
	err := s.view(ctx, func(tx *bbolt.Tx) (err error) {
		d, err = getDelivery(tx, []byte(id))
		if err == nil {
			describeDelivery(tx, d)
		}
		return err
	})
	if err != nil {
		return nil, err
	}
	return d, nil
}

// dueScanMax bounds how many due outbox entries one walk reads, passed-over and held-back ones
// included, so a large backlog held back by its institution's share costs a bounded scan.
const dueScanMax = 4096

// DueDeliveries returns up to limit pending deliveries due at or before now (virtual time),
// soonest first, passing over those skip reports (by delivery and subscription id, read from
// the outbox without reading the delivery).
func (s *DB) DueDeliveries(ctx context.Context, now time.Time, limit int, skip func(id, subID string) bool) ([]*simulator.Delivery, error) {
	out, _, err := s.Due(ctx, now, "", limit, func(id, subID []byte) (take, hold bool) {
		return skip == nil || !skip(string(id), string(subID)), false
	})
	return out, err
}

// Due is the dispatcher's walk of the outbox: up to limit deliveries due at or before now,
// soonest first, starting at the position from ("" for the start) and returning where the next
// walk starts ("" once this one reached the last due entry). check decides each entry from its
// delivery and subscription ids (valid during the call only) before the delivery is read: take
// it, pass over it (in flight), or hold it back (its institution has enough waiting) — the next
// walk then starts at the first entry held back. So a backlog is walked once, not once per
// fetch, and nothing held back is passed.
func (s *DB) Due(ctx context.Context, now time.Time, from string, limit int, check func(id, subID []byte) (take, hold bool)) ([]*simulator.Delivery, string, error) {
	var (
		out  []*simulator.Delivery
		next string
	)
	// Every institution's work is due up to now; an institution ahead on its own clock
	// (decisions D9) has work due up to now plus its offset, so the walk goes that far and
	// passes over what is not yet due for its institution (the dispatcher's next walk from the
	// start finds it when it is).
	ahead := s.Clock.Ahead()
	err := s.view(ctx, func(tx *bbolt.Tx) error {
		end, common := timeKey(now.Add(ahead)), timeKey(now)
		c := tx.Bucket(bOutbox).Cursor()
		k, v := c.First()
		if from != "" {
			k, v = c.Seek([]byte(from))
		}
		var held []byte
		for walked := 0; k != nil && bytes.Compare(k[:8], end) <= 0; k, v = c.Next() {
			if len(out) == limit || walked == dueScanMax {
				break
			}
			walked++
			if ahead > 0 && bytes.Compare(k[:8], common) > 0 {
				due, err := s.dueFor(tx, v, timeFromKey(k[:8]), now)
				if err != nil {
					return err
				}
				if !due {
					continue
				}
			}
			switch take, hold := check(k[8:], v); {
			case take:
				d, err := getDelivery(tx, k[8:])
				if err != nil {
					return err
				}
				out = append(out, d)
			case hold && held == nil:
				held = k
			}
		}
		switch {
		case held != nil:
			next = string(held)
		case k != nil && bytes.Compare(k[:8], end) <= 0:
			next = string(k) // stopped by a bound: the next walk goes on from here
		}
		return nil
	})
	return out, next, err
}

// dueFor reports whether an outbox entry of subscription subID at slot is due by now on its
// institution's virtual clock.
func (s *DB) dueFor(tx *bbolt.Tx, subID []byte, slot, now time.Time) (bool, error) {
	var sub simulator.Subscription
	if err := getRecord(tx, bSubs, subID, &sub, "subscription not found"); simulator.IsNotFound(err) {
		return true, nil // no institution to be ahead: due on the process-wide clock, as it is
	} else if err != nil {
		return false, err
	}
	return !slot.After(now.Add(s.Clock.Offset(sub.InstitutionID))), nil
}

// NextDue returns the earliest next-attempt time of a pending delivery later than after.
func (s *DB) NextDue(ctx context.Context, after time.Time) (time.Time, bool, error) {
	var (
		t  time.Time
		ok bool
	)
	err := s.view(ctx, func(tx *bbolt.Tx) error {
		if k, _ := tx.Bucket(bOutbox).Cursor().Seek(timeKey(after.Add(time.Nanosecond))); k != nil {
			t, ok = timeFromKey(k[:8]), true
		}
		return nil
	})
	return t, ok, err
}

// RecordAttempts logs attempts on their deliveries and moves each on, all in one durable
// transaction (the dispatcher's group commit). A record for a delivery that is no longer
// pending at that slot changes nothing, so a replay is harmless; an attempt in flight when its
// subscription was deleted is still logged on the failed delivery.
func (s *DB) RecordAttempts(ctx context.Context, recs []simulator.AttemptRecord) error {
	return s.updateNow(ctx, func(w *writeTx) error {
		for i := range recs {
			if err := recordAttempt(w, &recs[i]); err != nil {
				return err
			}
		}
		return nil
	})
}

// A delivery's record is written once, as it is created; what happens to it afterwards is
// appended to its log, one entry per slot, keyed like its outbox entry (slot + delivery id):
// the attempt made for that slot and where the delivery stands after it. Recording an attempt
// so never reads or rewrites the delivery (its body, its earlier attempts), and the entries of
// one commit, made for neighbouring slots, land on neighbouring pages. A delivery's slots only
// increase (Outcome), so its entries form a chain from the record's next attempt: each names
// the next slot, until the delivery is no longer pending. A store written before the log keeps
// its deliveries' attempts in their records; new attempts extend them through the log alike.

// logKey is the key of a delivery's outbox entry and log entry for one slot.
func logKey(slot time.Time, id string) []byte { return cat(timeKey(slot), []byte(id)) }

// recordAttempt applies one record: the delivery stands pending at the record's slot when its
// outbox entry is there, or as the log entry at that slot says (ended by a deleted
// subscription, or already recorded); otherwise the record is for a slot the delivery has left.
func recordAttempt(w *writeTx, r *simulator.AttemptRecord) error {
	key := logKey(r.At, r.DeliveryID)
	outbox, log := w.Bucket(bOutbox), w.Bucket(bDeliveryLog)
	var (
		at     simulator.DeliveryState
		logged bool
	)
	subID := bytes.Clone(outbox.Get(key))
	if subID != nil {
		at = simulator.DeliveryState{Status: simulator.DeliveryPending, NextAttemptAt: r.At}
	} else if raw := log.Get(key); raw != nil {
		var st deliveryStep
		if err := decodeStep(raw, &st); err != nil {
			return fmt.Errorf("decode delivery log %s: %w", r.DeliveryID, err)
		}
		at, logged = st.DeliveryState, st.Attempt != nil
	} else {
		return nil
	}
	after, ok := at.Record(*r, logged)
	if !ok {
		return nil
	}
	if err := log.Put(key, encodeStep(&deliveryStep{Attempt: &r.Attempt, DeliveryState: after})); err != nil {
		return err
	}
	if subID == nil {
		return nil
	}
	// The outbox holds pending deliveries by due time: move this one on.
	if err := outbox.Delete(key); err != nil {
		return err
	}
	if after.Status == simulator.DeliveryPending {
		return outbox.Put(logKey(after.NextAttemptAt, r.DeliveryID), subID)
	}
	return nil
}

// getDelivery reads a delivery: its record, then its log.
func getDelivery(tx *bbolt.Tx, id []byte) (*simulator.Delivery, error) {
	var d simulator.Delivery
	if err := getRecord(tx, bDeliveries, id, &d, "delivery not found"); err != nil {
		return nil, err
	}
	if err := followLog(tx, &d); err != nil {
		return nil, err
	}
	return &d, nil
}

// followLog brings a delivery read from its record up to date: from the slot it was pending
// at, each log entry adds its attempt and moves it on.
func followLog(tx *bbolt.Tx, d *simulator.Delivery) error {
	log := tx.Bucket(bDeliveryLog)
	for d.Status == simulator.DeliveryPending {
		raw := log.Get(logKey(d.NextAttemptAt, d.ID))
		if raw == nil {
			return nil
		}
		var st deliveryStep
		if err := decodeStep(raw, &st); err != nil {
			return fmt.Errorf("decode delivery log %s: %w", d.ID, err)
		}
		if st.Status == simulator.DeliveryPending && !st.NextAttemptAt.After(d.NextAttemptAt) {
			return fmt.Errorf("delivery log %s: slot %s follows %s", d.ID, st.NextAttemptAt, d.NextAttemptAt)
		}
		if st.Attempt != nil {
			a := *st.Attempt
			a.DueAt = d.NextAttemptAt // the log is keyed by the slot the attempt was due at
			d.Attempts = append(d.Attempts, a)
		}
		d.SetState(st.DeliveryState)
	}
	return nil
}

// RecordTestDelivery stores the one-attempt delivery of a test event, so the delivery log
// shows test sends too.
func (s *DB) RecordTestDelivery(ctx context.Context, e *simulator.Event, d *simulator.Delivery) error {
	return s.update(ctx, func(w *writeTx) error {
		if err := w.putRecord(bEvents, []byte(e.ID), e); err != nil {
			return err
		}
		return w.putDelivery(d, e)
	})
}

// putDelivery writes a new delivery of e and its entries in the event's delivery index and in
// the delivery log's index.
func (w *writeTx) putDelivery(d *simulator.Delivery, e *simulator.Event) error {
	if err := w.put(bDeliveryEvent, cat([]byte(d.EventID), []byte{0}, []byte(d.ID)), nil); err != nil {
		return err
	}
	if err := w.put(bDeliveryTime, deliveryTimeKey(d), indexEntryOf(d, e).encode()); err != nil {
		return err
	}
	return w.putRecord(bDeliveries, []byte(d.ID), d)
}
