package bolt

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.etcd.io/bbolt"

	"github.com/partnersim/partnersim/simulator"
)

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
