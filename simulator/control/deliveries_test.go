package control_test

import (
	"context"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/partnersim/partnersim/simulator"
)

// moveKYC moves one of the default set's pending crypto accounts to approved and returns the
// kyc event's id.
func (r *rig) moveKYC(tb testing.TB, platformID string) string {
	tb.Helper()
	move, err := r.db.TransitionKYC(context.Background(), platformID, simulator.ProductCrypto, simulator.KYCApproved)
	require.NoError(tb, err)
	return move.Event.ID
}

// Redeliver queues a stored event again: one new pending delivery per enabled subscription of
// its type, with the same event id and body bytes. An unknown event, or one with no enabled
// subscription left to go to, is ENOTFOUND.
func TestRedeliver(t *testing.T) {
	ctx := context.Background()
	r := newRig(t)
	a := r.subscribe(t, "ins_harbor", simulator.EventKYC, "https://hooks.partner.example/a")
	b := r.subscribe(t, "ins_harbor", simulator.EventKYC, "https://hooks.partner.example/b")
	evt := r.moveKYC(t, "usr_hfcu_0002")
	first := r.deliveries(t, "ins_harbor")
	require.Len(t, first, 2)

	again, err := r.db.Redeliver(ctx, evt)
	require.NoError(t, err)

	require.Len(t, again, 2)
	subs := []string{}
	for _, d := range again {
		subs = append(subs, d.SubscriptionID)
		assert.Equal(t, evt, d.EventID)
		assert.Equal(t, simulator.DeliveryPending, d.Status)
		assert.Equal(t, first[0].Body, d.Body, "the same body bytes")
		assert.NotEqual(t, first[0].ID, d.ID)
		assert.NotEqual(t, first[1].ID, d.ID)
	}
	assert.ElementsMatch(t, []string{a, b}, subs)
	assert.Len(t, r.deliveries(t, "ins_harbor"), 4)

	_, err = r.db.Redeliver(ctx, "evt_nobody")
	assert.Equal(t, simulator.ENOTFOUND, code(err), "an unknown event: %v", err)
	require.NoError(t, r.db.DeleteSubscription(ctx, "ins_harbor", a))
	require.NoError(t, r.db.DeleteSubscription(ctx, "ins_harbor", b))
	_, err = r.db.Redeliver(ctx, evt)
	assert.Equal(t, simulator.ENOTFOUND, code(err), "no enabled subscription left: %v", err)
	assert.Len(t, r.deliveries(t, "ins_harbor"), 4, "nothing queued")
}

// The delivery log is read filtered, and in pages that follow each other by
// cursor; PendingDeliveries lists at most limit deliveries.
func TestDeliveriesPagesAndPending(t *testing.T) {
	ctx := context.Background()
	r := newRig(t)
	sub := r.subscribe(t, "ins_harbor", simulator.EventKYC, "https://hooks.partner.example/a")
	var events []string
	for _, u := range []string{"usr_hfcu_0002", "usr_hfcu_0016", "usr_hfcu_0023"} {
		events = append(events, r.moveKYC(t, u))
	}

	page, err := r.db.Deliveries(ctx, simulator.DeliveryFilter{InstitutionID: "ins_harbor", Limit: 2})
	require.NoError(t, err)
	require.Len(t, page.Deliveries, 2)
	require.NotEmpty(t, page.NextCursor)
	rest, err := r.db.Deliveries(ctx, simulator.DeliveryFilter{InstitutionID: "ins_harbor", Limit: 2, Cursor: page.NextCursor})
	require.NoError(t, err)
	require.Len(t, rest.Deliveries, 1)
	var order []string
	for _, d := range append(page.Deliveries, rest.Deliveries...) {
		order = append(order, d.EventID)
		assert.Equal(t, sub, d.SubscriptionID)
	}
	assert.ElementsMatch(t, events, order, "every delivery once across the pages")

	one, err := r.db.Deliveries(ctx, simulator.DeliveryFilter{EventID: events[1]})
	require.NoError(t, err)
	require.Len(t, one.Deliveries, 1)
	assert.Equal(t, events[1], one.Deliveries[0].EventID)
	assert.Equal(t, "usr_hfcu_0016", one.Deliveries[0].PlatformID)

	_, err = r.db.Deliveries(ctx, simulator.DeliveryFilter{Cursor: "not-a-cursor"})
	assert.Equal(t, simulator.EINVALID, code(err), "%v", err)

	pending, err := r.db.PendingDeliveries(ctx, 2)
	require.NoError(t, err)
	assert.Len(t, pending, 2)
	pending, err = r.db.PendingDeliveries(ctx, 10)
	require.NoError(t, err)
	assert.Len(t, pending, 3)
}
