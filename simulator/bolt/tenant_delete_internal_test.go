package bolt

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/shopspring/decimal"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.etcd.io/bbolt"

	"github.com/partnersim/partnersim/simulator"
)

// dump is every bucket's every entry, "bucket/key" → value.
func dump(t *testing.T, db *DB) map[string]string {
	t.Helper()
	out := map[string]string{}
	require.NoError(t, db.view(context.Background(), func(tx *bbolt.Tx) error {
		for _, b := range allBuckets {
			if err := tx.Bucket(b).ForEach(func(k, v []byte) error {
				out[string(b)+"/"+string(k)] = string(v)
				return nil
			}); err != nil {
				return err
			}
		}
		return nil
	}))
	return out
}

// populate gives an institution one of everything: keys, a member, users, KYC moves with their
// kyc events, subscriptions and deliveries (pending, attempted and ended), orders, a filled
// transaction with its transaction event, a rotated secret.
func populate(t *testing.T, db *DB, name string, users int) string {
	t.Helper()
	ctx := context.Background()
	core, dbp := "symitar", "q2"
	in, err := db.CreateInstitution(ctx, name, simulator.Vendors{Core: &core, DBP: &dbp})
	require.NoError(t, err)
	_, err = db.SetPrices(ctx, in.ID, map[string]decimal.Decimal{"AAPL": decimal.RequireFromString("190.00")})
	require.NoError(t, err)
	for _, scopes := range [][]simulator.Scope{simulator.Scopes, {simulator.ScopeReadUser}} {
		_, _, err := db.IssueKey(ctx, in.ID, scopes, "")
		require.NoError(t, err)
	}
	kyc, _, err := db.CreateSubscription(ctx, in.ID, simulator.EventKYC, "https://hooks.example/"+name+"/kyc", "v1")
	require.NoError(t, err)
	txnSub, _, err := db.CreateSubscription(ctx, in.ID, simulator.EventTransaction, "https://hooks.example/"+name+"/txn", "v1")
	require.NoError(t, err)
	var pids []string
	for i := range users {
		u := simulator.NewUser(in.ID, simulator.UserRequest{UserAccountID: fmt.Sprintf("%s-%d", name, i),
			Accounts: []simulator.AccountRequest{{Product: simulator.ProductCrypto, Cash: decimal.NewFromInt(1000)}}}, db.Clock.Now())
		require.NoError(t, db.CreateUser(ctx, u))
		pids = append(pids, u.PlatformID)
		move, err := db.TransitionKYC(ctx, u.PlatformID, simulator.ProductCrypto, simulator.KYCApproved)
		require.NoError(t, err)
		require.NotNil(t, move.Event)
	}
	dbpID := name + "-dbp"
	require.NoError(t, db.CreateMember(ctx, &simulator.Member{InstitutionID: in.ID, CoreID: name + "-core", DBPID: &dbpID, UserIDs: pids}))
	n := decimal.NewFromInt(100)
	for _, pid := range pids[:2] {
		txn, _, err := db.PlaceOrder(ctx, simulator.OrderRequest{PlatformID: pid, Product: simulator.ProductCrypto, Side: simulator.SideBuy, Symbol: "AAPL", Notional: &n})
		require.NoError(t, err)
		if pid == pids[0] {
			_, _, _, err = db.FillTransaction(ctx, txn.ID, nil)
			require.NoError(t, err)
		}
	}
	// One delivery attempted and due again, one ended by its subscription's deletion.
	due, err := db.DueDeliveries(ctx, db.Clock.SchedulerNow(), 1, func(_, subID string) bool { return subID != txnSub.ID })
	require.NoError(t, err)
	require.Len(t, due, 1)
	r := due[0].Outcome(simulator.Attempt{At: db.Clock.Now(), StatusCode: 500}, []time.Duration{time.Minute}, db.Clock.SchedulerNow())
	require.NoError(t, db.RecordAttempts(ctx, []simulator.AttemptRecord{r}))
	require.NoError(t, db.DeleteSubscription(ctx, in.ID, kyc.ID))
	_, err = db.RotateSecret(ctx, in.ID, time.Hour)
	require.NoError(t, err)
	return in.ID
}

// twoTenants opens a store on a temp file holding institution kept (3 users), then gone (12
// users), each populated; before is the store as it was before gone was created.
func twoTenants(t *testing.T) (db *DB, before map[string]string, kept, gone string) {
	t.Helper()
	db = tempStore(t, nil)
	kept = populate(t, db, "kept", 3)
	before = dump(t, db)
	return db, before, kept, populate(t, db, "gone", 12)
}

// Deleting an institution removes everything it had and nothing else: the store is as it was
// before the institution was created, entry for entry, whether the work takes one transaction
// or many.
func TestDeleteInstitutionLeavesTheStoreAsBefore(t *testing.T) {
	for _, batch := range []int{deleteBatch, 7} {
		t.Run(fmt.Sprintf("batch %d", batch), func(t *testing.T) {
			db, before, kept, gone := twoTenants(t)
			require.NoError(t, db.deleteInstitution(context.Background(), gone, batch))
			assertDeleted(t, db, before, kept, gone)
		})
	}
}

// A retry in flight while its institution is deleted (a refusing receiver, decisions D9) is
// recorded after the delete removed the institution's keys and outbox entries, or after the
// whole delete: either way the record changes nothing and nothing of the institution is left.
// Every write may run twice (bbolt's Batch reruns a group one of whose calls failed, DB.update):
// the delete's transactions must then remove the same things as when run once.
func TestDeleteInstitutionWithARetryInFlight(t *testing.T) {
	for _, batch := range []int{deleteBatch, 7} {
		for _, rerun := range []bool{false, true} {
			for _, when := range []string{"between its transactions", "after it"} {
				t.Run(fmt.Sprintf("batch %d, writes rerun %t, recorded %s", batch, rerun, when), func(t *testing.T) {
					db, before, kept, gone := twoTenants(t)
					ctx := context.Background()

					// The dispatcher takes the institution's due deliveries and its receiver
					// answers 500: each is to be retried a minute later.
					due, err := db.DueDeliveries(ctx, db.Clock.SchedulerNow().Add(time.Hour), 100, nil)
					require.NoError(t, err)
					var recs []simulator.AttemptRecord
					for _, d := range due {
						if d.InstitutionID == gone {
							recs = append(recs, d.Outcome(simulator.Attempt{At: db.Clock.Now(), StatusCode: 500}, []time.Duration{time.Minute, time.Hour}, db.Clock.SchedulerNow()))
						}
					}
					require.NotEmpty(t, recs, "the institution has pending deliveries")

					db.rehearse = rerun
					if when == "between its transactions" {
						require.NoError(t, db.update(ctx, func(w *writeTx) error { return w.deleteAccess(gone) }))
						require.NoError(t, db.RecordAttempts(ctx, recs))
						require.NoError(t, db.deleteInstitution(ctx, gone, batch))
					} else {
						require.NoError(t, db.deleteInstitution(ctx, gone, batch))
						require.NoError(t, db.RecordAttempts(ctx, recs))
					}
					assertDeleted(t, db, before, kept, gone)
					page, err := db.Deliveries(ctx, simulator.DeliveryFilter{InstitutionID: gone})
					require.NoError(t, err)
					assert.Empty(t, page.Deliveries, "the delivery log lists none of the institution's deliveries")
				})
			}
		}
	}
}

// assertDeleted checks that the store holds exactly what it held before (a dump) the
// institution gone was created, kept's included.
func assertDeleted(t *testing.T, db *DB, before map[string]string, kept, gone string) {
	t.Helper()
	ctx := context.Background()
	after := dump(t, db)
	for k, v := range after {
		if strings.Contains(k, gone) || strings.Contains(v, gone) {
			t.Errorf("left behind: %q", k)
		}
	}
	for k := range before {
		if _, ok := after[k]; !ok {
			t.Errorf("deleted what was not the institution's: %q", k)
		}
	}
	for k, v := range after {
		if w, ok := before[k]; !ok || w != v {
			t.Errorf("changed or added: %q", k)
		}
	}
	assert.Equal(t, len(before), len(after), "entries before the institution and after its deletion")

	_, err := db.Institution(ctx, gone)
	assert.True(t, simulator.IsNotFound(err), "the institution is gone: %v", err)
	assert.True(t, simulator.IsNotFound(db.DeleteInstitution(ctx, gone)), "deleting it again is not found")
	list, counts, err := db.Institutions(ctx)
	require.NoError(t, err)
	require.Len(t, list, 1)
	assert.Equal(t, kept, list[0].ID)
	assert.Equal(t, 3, counts[0])
}

// A control-plane write on an institution being deleted — a KYC move of one of its users (a
// kyc event), a key issued, a subscription made — lands between the delete's transactions,
// after the delete listed the institution's events and removed its keys and subscriptions.
// The delete still leaves nothing of the institution: its last transaction finds what such
// writes added.
func TestDeleteInstitutionWithAControlWriteBetweenItsTransactions(t *testing.T) {
	for _, c := range []struct{ batch, after int }{{deleteBatch, 0}, {7, 0}, {7, 1}, {7, 4}} {
		batch, after := c.batch, c.after
		t.Run(fmt.Sprintf("batch %d, after %d of its batched transactions", batch, after), func(t *testing.T) {
			db, before, kept, gone := twoTenants(t)
			ctx := context.Background()
			users, err := db.ListUsers(ctx, gone, simulator.UserFilter{Limit: 100})
			require.NoError(t, err)
			require.Len(t, users.Users, 12)
			pid := users.Users[len(users.Users)-1].PlatformID

			db.rehearse = true // every write runs twice, as bbolt's Batch may run it

			d, err := db.startDelete(ctx, gone)
			require.NoError(t, err)
			for range after {
				done, err := d.step(ctx, batch)
				require.NoError(t, err)
				require.False(t, done, "the delete is still under way")
			}
			_, _, err = db.IssueKey(ctx, gone, simulator.Scopes, "")
			require.NoError(t, err)
			_, _, err = db.CreateSubscription(ctx, gone, simulator.EventKYC, "https://hooks.example/gone/again", "v1")
			require.NoError(t, err)
			move, err := db.TransitionKYC(ctx, pid, simulator.ProductCrypto, simulator.KYCAccountTakeover)
			require.NoError(t, err, "the user is not yet deleted")
			require.NotNil(t, move.Event)
			due, err := db.DueDeliveries(ctx, db.Clock.SchedulerNow().Add(time.Hour), 100, nil)
			require.NoError(t, err)
			require.True(t, slices.ContainsFunc(due, func(d *simulator.Delivery) bool { return d.EventID == move.Event.ID }),
				"the event is to be delivered to the new subscription")
			for {
				done, err := d.step(ctx, batch)
				require.NoError(t, err)
				if done {
					break
				}
			}
			assertDeleted(t, db, before, kept, gone)
		})
	}
}
