package control_test

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/partnersim/partnersim/simulator"
)

// Institutions lists every institution with its count of users (the default set: Harbor's 30,
// Prairie's 12).
func TestInstitutionsCountTheirUsers(t *testing.T) {
	r := newRig(t)
	all, users, err := r.db.Institutions(context.Background())
	require.NoError(t, err)
	counts := map[string]int{}
	for i, in := range all {
		counts[in.ID] = users[i]
	}
	assert.Equal(t, map[string]int{"ins_harbor": 30, "ins_prairie": 12}, counts)
}

// Every read of an institution's records is ENOTFOUND for an unknown institution — also when
// the filter's window is empty and the store need not be asked for the page.
func TestInstitutionReadsOfAnUnknownInstitution(t *testing.T) {
	ctx := context.Background()
	r := newRig(t)
	at := start
	empty := func() (*time.Time, *time.Time) { return &at, &at }
	us, ue := empty()
	ps, pe := empty()
	for name, read := range map[string]func(inst string) error{
		"Institution": func(inst string) error { return errOf(r.db.Institution(ctx, inst)) },
		"ListUsers":   func(inst string) error { return errOf(r.db.ListUsers(ctx, inst, simulator.UserFilter{Limit: 10})) },
		"ListUsers, empty window": func(inst string) error {
			return errOf(r.db.ListUsers(ctx, inst, simulator.UserFilter{CreatedStart: us, CreatedEnd: ue, Limit: 10}))
		},
		"ListOrders": func(inst string) error { return errOf(r.db.ListOrders(ctx, inst, simulator.OrderFilter{Limit: 10})) },
		"ListOrders, empty window": func(inst string) error {
			return errOf(r.db.ListOrders(ctx, inst, simulator.OrderFilter{PlacedStart: ps, PlacedEnd: pe, Limit: 10}))
		},
		"Keys":          func(inst string) error { return errOf(r.db.Keys(ctx, inst)) },
		"Subscriptions": func(inst string) error { return errOf(r.db.Subscriptions(ctx, inst)) },
	} {
		t.Run(name, func(t *testing.T) {
			assert.NoError(t, read("ins_prairie"))
			assert.Equal(t, simulator.ENOTFOUND, code(read("ins_nobody")))
		})
	}
}

// The lists of an institution: its users and orders by filter (an empty window is an empty
// page), its keys and its live subscriptions.
func TestInstitutionLists(t *testing.T) {
	ctx := context.Background()
	r := newRig(t)

	users, err := r.db.ListUsers(ctx, "ins_prairie", simulator.UserFilter{Limit: 5})
	require.NoError(t, err)
	assert.Equal(t, 12, users.Total)
	assert.Len(t, users.Users, 5)
	for _, u := range users.Users {
		assert.Equal(t, "ins_prairie", u.InstitutionID)
	}
	at := start
	none, err := r.db.ListUsers(ctx, "ins_prairie", simulator.UserFilter{CreatedStart: &at, CreatedEnd: &at, Limit: 5})
	require.NoError(t, err)
	assert.Empty(t, none.Users)
	assert.Zero(t, none.Total)

	orders, err := r.db.ListOrders(ctx, "ins_prairie", simulator.OrderFilter{Limit: 5})
	require.NoError(t, err)
	assert.NotZero(t, orders.Total)
	for _, o := range orders.Orders {
		assert.Equal(t, "ins_prairie", o.InstitutionID)
	}
	noOrders, err := r.db.ListOrders(ctx, "ins_prairie", simulator.OrderFilter{PlacedStart: &at, PlacedEnd: &at, Limit: 5})
	require.NoError(t, err)
	assert.Empty(t, noOrders.Orders)

	keys, err := r.db.Keys(ctx, "ins_prairie")
	require.NoError(t, err)
	assert.Len(t, keys, 4, "the default set's four Prairie keys")

	live := r.subscribe(t, "ins_prairie", simulator.EventKYC, "https://hooks.partner.example/a")
	gone := r.subscribe(t, "ins_prairie", simulator.EventKYC, "https://hooks.partner.example/b")
	require.NoError(t, r.db.DeleteSubscription(ctx, "ins_prairie", gone))
	subs, err := r.db.Subscriptions(ctx, "ins_prairie")
	require.NoError(t, err)
	require.Len(t, subs, 1, "a deleted subscription is not live")
	assert.Equal(t, live, subs[0].ID)
}

// User reads a user of any institution by platform id.
func TestUser(t *testing.T) {
	ctx := context.Background()
	r := newRig(t)
	u, err := r.db.User(ctx, "usr_pcb_0003")
	require.NoError(t, err)
	assert.Equal(t, "ins_prairie", u.InstitutionID)
	_, err = r.db.User(ctx, "usr_nobody")
	assert.Equal(t, simulator.ENOTFOUND, code(err), "%v", err)
}
