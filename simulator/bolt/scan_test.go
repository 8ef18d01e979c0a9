package bolt_test

import (
	"context"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/partnersim/partnersim/simulator"
)

// goneAfter is a request context whose client goes away while the store is working: Err is nil
// for the first calls, then context.Canceled.
type goneAfter struct {
	context.Context
	calls, after atomic.Int32
}

func (c *goneAfter) Err() error {
	if c.calls.Add(1) > c.after.Load() {
		return context.Canceled
	}
	return nil
}

// Decisions D17: work for a request stops when its client disconnects — a long index walk
// looks at the request's context as it goes, not only before it starts.
func TestLongWalkStopsWhenTheClientGoes(t *testing.T) {
	db := MustOpen(t)
	seedWorld(t, db, 12000, 0, 3)
	// Sorted by user_account_id with a created_at bound, no index answers the count: it walks
	// every user of the institution (about 6,000).
	f := simulator.UserFilter{Limit: 10, SortKey: simulator.SortUserAccountID, CreatedStart: &base}

	// The walk itself works. (Its count is then remembered for this store state and the same
	// list would stop at its page: the walks below use another bound, not counted yet.)
	_, err := db.ListUsers(context.Background(), "ins_a", f)
	require.NoError(t, err, "the walk itself works")
	later := base.Add(time.Nanosecond)
	f.CreatedStart = &later

	for after := int32(0); after < 2; after++ { // one check as the transaction starts, then every 4,096 entries
		ctx := &goneAfter{Context: context.Background()}
		ctx.after.Store(after)
		_, err = db.ListUsers(ctx, "ins_a", f)
		require.ErrorIs(t, err, context.Canceled, "the client went away after %d checks", after)
	}
}

// A page the counters place inside its range (pageRun: the first page of a whole index) looks
// at the request's context as it walks too: a page of 5,000 users stops once the client goes.
func TestLongCountedWalkStopsWhenTheClientGoes(t *testing.T) {
	db := MustOpen(t)
	seedWorld(t, db, 12000, 0, 3)
	f := simulator.UserFilter{Limit: 5000}
	page, err := db.ListUsers(context.Background(), "ins_a", f)
	require.NoError(t, err, "the walk itself works")
	require.Len(t, page.Users, 5000, "precondition: a page longer than the walk's checks apart")

	for _, desc := range []bool{false, true} {
		f.Desc = desc
		ctx := &goneAfter{Context: context.Background()}
		ctx.after.Store(1) // the transaction's check, then the walk's first
		_, err = db.ListUsers(ctx, "ins_a", f)
		require.ErrorIs(t, err, context.Canceled, "desc %v: the client went away during the walk", desc)
	}
}
