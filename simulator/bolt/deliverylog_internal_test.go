package bolt

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.etcd.io/bbolt"

	"github.com/partnersim/partnersim/simulator"
)

// logEnv is a store on a frozen clock with one institution subscribed to kyc events.
type logEnv struct {
	db    *DB
	clock *simulator.Clock
	inst  string
	sub   *simulator.Subscription
}

func newLogEnv(t *testing.T) *logEnv {
	t.Helper()
	clock := simulator.NewFrozenClock(time.Date(2026, 11, 25, 0, 0, 0, 0, time.UTC))
	db := tempStore(t, clock)
	ctx := context.Background()
	in, err := db.CreateInstitution(ctx, "Log CU", simulator.Vendors{})
	require.NoError(t, err)
	sub, _, err := db.CreateSubscription(ctx, in.ID, simulator.EventKYC, "https://hooks.example/x", "v1")
	require.NoError(t, err)
	return &logEnv{db: db, clock: clock, inst: in.ID, sub: sub}
}

// event emits one kyc event and returns its one pending delivery.
func (e *logEnv) event(t *testing.T, id string) *simulator.Delivery {
	t.Helper()
	ev := &simulator.Event{ID: id, InstitutionID: e.inst, Type: simulator.EventKYC, CreatedAt: e.clock.Now(),
		Data: simulator.EventData{UserAccountID: "u", PlatformID: "usr_x", Product: simulator.ProductCrypto, KYCStatus: simulator.KYCApproved}}
	require.NoError(t, e.db.EmitAll(context.Background(), []*simulator.Event{ev}))
	ds, err := deliveryList(context.Background(), e.db, simulator.DeliveryFilter{EventID: id})
	require.NoError(t, err)
	require.Len(t, ds, 1)
	return ds[0]
}

// attempt makes the dispatcher's record of one attempt of d, answered with code.
func attempt(d *simulator.Delivery, code int, at time.Time, schedule []time.Duration) simulator.AttemptRecord {
	return d.Outcome(simulator.Attempt{At: at, StatusCode: code, LatencyMS: 1.25, ResponseBody: "r", Signature: "t=1,v1=x"}, schedule, at)
}

func (e *logEnv) raw(t *testing.T, bucket []byte, key []byte) []byte {
	t.Helper()
	var v []byte
	require.NoError(t, e.db.db.View(func(tx *bbolt.Tx) error {
		v = bytes.Clone(tx.Bucket(bucket).Get(key))
		return nil
	}))
	return v
}

func (e *logEnv) count(t *testing.T, bucket []byte) int {
	t.Helper()
	n := 0
	require.NoError(t, e.db.db.View(func(tx *bbolt.Tx) error {
		n = tx.Bucket(bucket).Stats().KeyN
		return nil
	}))
	return n
}

// An attempt is appended to the delivery's log under its own key; the
// delivery's record, written once at creation, is never read or rewritten by an attempt. Every
// read of the delivery shows what applying the same records to the whole delivery shows.
func TestAttemptsAreLoggedNotRewritten(t *testing.T) {
	e := newLogEnv(t)
	ctx := context.Background()
	schedule := []time.Duration{5 * time.Second, time.Minute}
	d := e.event(t, "evt_log1")
	record := e.raw(t, bDeliveries, []byte(d.ID))
	want := *d // the same lifecycle applied to the whole delivery in memory

	step := func(code int) {
		t.Helper()
		due, err := e.db.DueDeliveries(ctx, e.clock.SchedulerNow(), 10, nil)
		require.NoError(t, err)
		require.Len(t, due, 1, "the delivery is due")
		r := attempt(due[0], code, e.clock.Now(), schedule)
		require.NoError(t, e.db.RecordAttempts(ctx, []simulator.AttemptRecord{r}))
		require.NoError(t, e.db.RecordAttempts(ctx, []simulator.AttemptRecord{r}), "a replay is harmless")
		require.True(t, want.Apply(r))
		got, err := e.db.Delivery(ctx, d.ID)
		require.NoError(t, err)
		assert.Equal(t, &want, got)
		list, err := deliveryList(ctx, e.db, simulator.DeliveryFilter{InstitutionID: e.inst})
		require.NoError(t, err)
		assert.Equal(t, []*simulator.Delivery{&want}, list)
		assert.Equal(t, record, e.raw(t, bDeliveries, []byte(d.ID)), "the delivery's record is never rewritten")
	}
	step(500)
	assert.Equal(t, 1, e.count(t, bDeliveryLog))
	due, err := e.db.DueDeliveries(ctx, e.clock.SchedulerNow(), 10, nil)
	require.NoError(t, err)
	assert.Empty(t, due, "the retry is not due yet")
	e.clock.Advance(5 * time.Second)
	step(503)
	e.clock.Advance(time.Minute)
	step(200)
	assert.Equal(t, simulator.DeliveryDelivered, want.Status)
	assert.Len(t, want.Attempts, 3)
	assert.Equal(t, 3, e.count(t, bDeliveryLog), "one log entry per attempt")
	assert.Equal(t, 0, e.count(t, bOutbox))

	// The JSON a control-plane read renders is the same as the whole delivery's.
	got, err := e.db.Delivery(ctx, d.ID)
	require.NoError(t, err)
	a, _ := json.Marshal(got)
	b, _ := json.Marshal(&want)
	assert.JSONEq(t, string(b), string(a))
}

// A subscription deleted while an attempt is in flight: the delivery ends at once, and the
// attempt is still logged on it, once.
func TestDeletedSubscriptionLogsTheAttemptInFlight(t *testing.T) {
	e := newLogEnv(t)
	ctx := context.Background()
	d := e.event(t, "evt_del")
	r := attempt(d, 200, e.clock.Now(), nil)
	require.NoError(t, e.db.DeleteSubscription(ctx, e.inst, e.sub.ID))
	got, err := e.db.Delivery(ctx, d.ID)
	require.NoError(t, err)
	assert.Equal(t, simulator.DeliveryFailed, got.Status)
	assert.Equal(t, simulator.ErrSubscriptionDeleted, got.Error)
	assert.Empty(t, got.Attempts)
	assert.Equal(t, 0, e.count(t, bOutbox))

	require.NoError(t, e.db.RecordAttempts(ctx, []simulator.AttemptRecord{r}))
	require.NoError(t, e.db.RecordAttempts(ctx, []simulator.AttemptRecord{r}))
	want := *d
	want.SetState(want.State().EndSubscriptionDeleted())
	require.True(t, want.Apply(r))
	got, err = e.db.Delivery(ctx, d.ID)
	require.NoError(t, err)
	assert.Equal(t, &want, got)
	assert.Len(t, got.Attempts, 1, "logged once")
	assert.Equal(t, simulator.DeliveryFailed, got.Status, "ended stays ended")
}

// A store written before the log keeps each delivery's attempts inline in its record, as JSON
// (the first stores) or in the binary form of version 1 or 2: it reads as before, and a pending
// delivery's next attempts extend it through the log.
func TestDeliveriesWithInlineAttemptsStillRead(t *testing.T) {
	e := newLogEnv(t)
	ctx := context.Background()
	schedule := []time.Duration{5 * time.Second, time.Minute}
	forms := map[string]func(d *simulator.Delivery) []byte{
		"json": func(d *simulator.Delivery) []byte { b, _ := json.Marshal(d); return b },
		"v1": func(d *simulator.Delivery) []byte {
			d.Attempts[0].Signature = ""      // version 1 kept no signature
			d.Attempts[0].DueAt = time.Time{} // nor did any inline form keep the due time (the log's slot gives it)
			return deliveryV1(d)
		},
		"v2": func(d *simulator.Delivery) []byte {
			d.Attempts[0].DueAt = time.Time{}
			var enc encoder
			enc.delivery(d)
			return enc.b
		},
	}
	for name, form := range forms {
		t.Run(name, func(t *testing.T) {
			d := e.event(t, "evt_old_"+name)
			// As the store before the log left it after a first failed attempt.
			r := attempt(d, 500, e.clock.Now(), schedule)
			require.True(t, d.Apply(r))
			old := form(d)
			require.NoError(t, e.db.db.Update(func(tx *bbolt.Tx) error {
				if err := tx.Bucket(bDeliveries).Put([]byte(d.ID), old); err != nil {
					return err
				}
				if err := tx.Bucket(bOutbox).Delete(logKey(r.At, d.ID)); err != nil {
					return err
				}
				return tx.Bucket(bOutbox).Put(logKey(d.NextAttemptAt, d.ID), []byte(d.SubscriptionID))
			}))
			got, err := e.db.Delivery(ctx, d.ID)
			require.NoError(t, err)
			assert.Equal(t, d, got)

			e.clock.Advance(5 * time.Second)
			due, err := e.db.DueDeliveries(ctx, e.clock.SchedulerNow(), 10, nil)
			require.NoError(t, err)
			require.Len(t, due, 1)
			bare := *d
			bare.EventType, bare.PlatformID = "", "" // the dispatcher's read leaves the index alone
			assert.Equal(t, &bare, due[0])
			r2 := attempt(due[0], 200, e.clock.Now(), schedule)
			require.NoError(t, e.db.RecordAttempts(ctx, []simulator.AttemptRecord{r2}))
			require.True(t, d.Apply(r2))
			got, err = e.db.Delivery(ctx, d.ID)
			require.NoError(t, err)
			assert.Equal(t, d, got)
			assert.Len(t, got.Attempts, 2)
			assert.Equal(t, simulator.DeliveryDelivered, got.Status)
			assert.Equal(t, old, e.raw(t, bDeliveries, []byte(d.ID)), "the old record is left as it is")
		})
	}
}

// The log entry's form round-trips, and a truncated entry is refused, never misread.
func TestDeliveryStepCodec(t *testing.T) {
	at := time.Date(2026, 11, 25, 1, 2, 3, 4, time.UTC)
	for _, st := range []deliveryStep{
		{Attempt: &simulator.Attempt{At: at, StatusCode: 503, Error: "", LatencyMS: 2.5, ResponseBody: "no", Signature: "t=1,v1=a"},
			DeliveryState: simulator.DeliveryState{Status: simulator.DeliveryPending, NextAttemptAt: at.Add(time.Second)}},
		{DeliveryState: simulator.DeliveryState{Status: simulator.DeliveryFailed, Error: simulator.ErrSubscriptionDeleted}},
	} {
		raw := encodeStep(&st)
		var back deliveryStep
		require.NoError(t, decodeStep(raw, &back))
		assert.Equal(t, st, back)
		for i := range raw {
			assert.Error(t, decodeStep(raw[:i], &back), "prefix of %d bytes", i)
		}
	}
}

// The dispatcher's walk of the outbox resumes where the last one stopped: after a full batch it
// continues from the next entry, passing nothing; an entry held back is walked again first,
// while entries past it are still taken; the end of what is due starts the next walk over.
func TestDueResumesWhereTheWalkStopped(t *testing.T) {
	e := newLogEnv(t)
	ctx := context.Background()
	other, _, err := e.db.CreateSubscription(ctx, e.inst, simulator.EventKYC, "https://hooks.example/y", "v1")
	require.NoError(t, err)
	var ids []string // in due order: each event has a delivery to each subscription
	for i := range 3 {
		e.clock.Advance(time.Second)
		ev := &simulator.Event{ID: fmt.Sprintf("evt_due%d", i), InstitutionID: e.inst, Type: simulator.EventKYC, CreatedAt: e.clock.Now()}
		require.NoError(t, e.db.EmitAll(ctx, []*simulator.Event{ev}))
		ds, err := deliveryList(ctx, e.db, simulator.DeliveryFilter{EventID: ev.ID})
		require.NoError(t, err)
		require.Len(t, ds, 2)
		slices.SortFunc(ds, func(a, b *simulator.Delivery) int { return strings.Compare(a.ID, b.ID) })
		for _, d := range ds {
			ids = append(ids, d.ID)
		}
	}
	now := e.clock.SchedulerNow()
	ofIDs := func(ds []*simulator.Delivery) []string {
		var out []string
		for _, d := range ds {
			out = append(out, d.ID)
		}
		return out
	}
	take := func(id, subID []byte) (bool, bool) { return true, false }

	got, next, err := e.db.Due(ctx, now, "", 4, take)
	require.NoError(t, err)
	assert.Equal(t, ids[:4], ofIDs(got))
	require.NotEmpty(t, next, "a full batch: the next walk goes on")
	got, next, err = e.db.Due(ctx, now, next, 4, take)
	require.NoError(t, err)
	assert.Equal(t, ids[4:], ofIDs(got))
	assert.Empty(t, next, "the end of what is due: the next walk starts over")

	// The first subscription's deliveries are held back: the other's are taken, and the next
	// walk starts at the first one held.
	subOf := map[string]string{}
	for _, sub := range []string{e.sub.ID, other.ID} {
		ds, err := deliveryList(ctx, e.db, simulator.DeliveryFilter{SubscriptionID: sub})
		require.NoError(t, err)
		for _, d := range ds {
			subOf[d.ID] = sub
		}
	}
	holdFirst := func(id, subID []byte) (bool, bool) { return string(subID) != e.sub.ID, string(subID) == e.sub.ID }
	got, next, err = e.db.Due(ctx, now, "", 10, holdFirst)
	require.NoError(t, err)
	require.Len(t, got, 3)
	for _, d := range got {
		assert.Equal(t, other.ID, d.SubscriptionID)
	}
	firstHeld := ""
	for _, id := range ids {
		if subOf[id] == e.sub.ID {
			firstHeld = id
			break
		}
	}
	assert.True(t, strings.HasSuffix(next, firstHeld), "the next walk starts at the first entry held back")
	got, _, err = e.db.Due(ctx, now, next, 10, take)
	require.NoError(t, err)
	assert.Equal(t, firstHeld, got[0].ID)

	// Nothing after now is due.
	got, next, err = e.db.Due(ctx, now.Add(-3*time.Second), "", 10, take)
	require.NoError(t, err)
	assert.Empty(t, got)
	assert.Empty(t, next)
}

// deliveryList lists one page of the delivery log.
func deliveryList(ctx context.Context, db *DB, f simulator.DeliveryFilter) ([]*simulator.Delivery, error) {
	page, err := db.Deliveries(ctx, f)
	if err != nil {
		return nil, err
	}
	return page.Deliveries, nil
}

// emitMany emits n kyc events about platform id pid in one transaction, a clock tick after the
// last; their ids end in the batch's and the event's number.
func (e *logEnv) emitMany(t *testing.T, batch, n int, pid string) {
	t.Helper()
	e.clock.Advance(time.Millisecond)
	evs := make([]*simulator.Event, n)
	for i := range evs {
		evs[i] = &simulator.Event{ID: fmt.Sprintf("evt_%s_%d_%05d", pid, batch, i), InstitutionID: e.inst, Type: simulator.EventKYC, CreatedAt: e.clock.Now(),
			Data: simulator.EventData{UserAccountID: "u", PlatformID: pid, Product: simulator.ProductCrypto, KYCStatus: simulator.KYCApproved}}
	}
	require.NoError(t, e.db.EmitAll(context.Background(), evs))
}

// A page walks at most deliveryScanMax index entries: a filter that matches nothing among
// them answers an empty page with a cursor, and the next page finds what lies beyond.
func TestDeliveryLogWalksABoundedSpan(t *testing.T) {
	e := newLogEnv(t)
	ctx := context.Background()
	for i := range 3 {
		e.emitMany(t, i, 1, "usr_old")
	}
	e.emitMany(t, 0, deliveryScanMax+5, "usr_new")

	page, err := e.db.Deliveries(ctx, simulator.DeliveryFilter{PlatformID: "usr_old"})
	require.NoError(t, err)
	assert.Empty(t, page.Deliveries, "the first span holds only usr_new's")
	require.NotEmpty(t, page.NextCursor, "a cursor to go on from")
	page, err = e.db.Deliveries(ctx, simulator.DeliveryFilter{PlatformID: "usr_old", Cursor: page.NextCursor})
	require.NoError(t, err)
	require.Len(t, page.Deliveries, 3)
	assert.Equal(t, "evt_usr_old_2_00000", page.Deliveries[0].EventID, "newest first")
	assert.Empty(t, page.NextCursor, "the end")

	page, err = e.db.Deliveries(ctx, simulator.DeliveryFilter{Limit: 1000})
	require.NoError(t, err)
	assert.Len(t, page.Deliveries, 1000)
	assert.NotEmpty(t, page.NextCursor)

	_, err = e.db.Deliveries(ctx, simulator.DeliveryFilter{Cursor: "not-a-cursor"})
	assert.Equal(t, simulator.EINVALID, simulator.ErrorCode(err))
}

// A store written before the delivery log's index gets it when opened: every delivery is
// listed and filtered as in a new store.
func TestDeliveryIndexBuiltForAnOlderStore(t *testing.T) {
	e := newLogEnv(t)
	for i := range 4 {
		e.emitMany(t, i, 1, "usr_a")
	}
	e.emitMany(t, 0, 2, "usr_b")
	// As a store before the index left it.
	require.NoError(t, e.db.db.Update(func(tx *bbolt.Tx) error { return tx.DeleteBucket(bDeliveryTime) }))
	db := reopen(t, e.db, e.clock)
	ctx := context.Background()
	page, err := db.Deliveries(ctx, simulator.DeliveryFilter{PlatformID: "usr_a"})
	require.NoError(t, err)
	require.Len(t, page.Deliveries, 4)
	assert.Equal(t, simulator.EventKYC, page.Deliveries[0].EventType)
	assert.Equal(t, "evt_usr_a_3_00000", page.Deliveries[0].EventID)
	page, err = db.Deliveries(ctx, simulator.DeliveryFilter{InstitutionID: e.inst})
	require.NoError(t, err)
	assert.Len(t, page.Deliveries, 6)
}
