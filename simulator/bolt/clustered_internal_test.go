package bolt

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"
	"time"

	"github.com/shopspring/decimal"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.etcd.io/bbolt"

	"github.com/partnersim/partnersim/simulator"
)

// clusteredStore loads two institutions' users and orders, created and placed in an order
// unrelated to their ids and several at the same instant, into a new store.
func clusteredStore(t *testing.T) *DB {
	t.Helper()
	ctx := context.Background()
	db := tempStore(t, nil)
	l, err := db.NewLoader(ctx, true)
	require.NoError(t, err)
	g := recordGen{rand.New(rand.NewPCG(3, 3))}
	at := time.Date(2025, 3, 1, 0, 0, 0, 0, time.UTC)
	for _, in := range []string{"ins_a", "ins_b"} {
		require.NoError(t, l.Institution(simulator.Institution{ID: in, Prices: map[string]decimal.Decimal{"AAPL": decimal.New(19012, -2)}}))
		for i := range 30 {
			u := *g.user()
			u.PlatformID, u.InstitutionID, u.UserAccountID = fmt.Sprintf("usr_%s_%02d", in, i), in, fmt.Sprintf("u%02d", (i*11)%30)
			u.CreatedAt = at.Add(time.Duration((i*5)%7) * time.Hour)
			require.NoError(t, l.User(u))
		}
		for i := range 40 {
			o := *g.order()
			o.ID, o.InstitutionID, o.UserAccountID = fmt.Sprintf("ord_%s_%02d", in, i), in, fmt.Sprintf("u%d", i%3)
			o.Product, o.Side, o.Status = simulator.ProductSecurities, simulator.SideBuy, simulator.OrderCompleted
			o.PlacedAt = at.Add(time.Duration((i*7)%13) * time.Hour) // ids and placed_at disagree; ties
			require.NoError(t, l.Transaction(simulator.Transaction{ID: fmt.Sprintf("txn_%s_%02d", in, i), InstitutionID: in, OrderIDs: []string{o.ID}}, []simulator.Order{o}))
		}
	}
	require.NoError(t, l.Finish("tok"))
	return db
}

// clusteredRead is every user and order list page, user and transaction the tests compare, as
// JSON.
func clusteredRead(t *testing.T, db *DB) string {
	t.Helper()
	ctx := context.Background()
	var got []any
	for _, in := range []string{"ins_a", "ins_b"} {
		for _, desc := range []bool{false, true} {
			for _, off := range []int{0, 7, 33} {
				p, err := db.ListOrders(ctx, in, simulator.OrderFilter{Desc: desc, Offset: off, Limit: 9})
				require.NoError(t, err)
				got = append(got, p)
			}
		}
		for _, sk := range []simulator.UserSortKey{simulator.SortCreatedAt, simulator.SortUserAccountID} {
			for _, desc := range []bool{false, true} {
				p, err := db.ListUsers(ctx, in, simulator.UserFilter{SortKey: sk, Desc: desc, Offset: 4, Limit: 20})
				require.NoError(t, err)
				got = append(got, p)
			}
		}
		u := "u1"
		p, err := db.ListOrders(ctx, in, simulator.OrderFilter{UserAccountID: &u, Limit: 100})
		require.NoError(t, err)
		tx, orders, err := db.Transaction(ctx, in, "txn_"+in+"_05")
		require.NoError(t, err)
		v, err := db.UserDetail(ctx, in, "usr_"+in+"_07", simulator.IDPlatform)
		require.NoError(t, err)
		got = append(got, p, tx, orders, v.User)
	}
	b, err := json.Marshal(got)
	require.NoError(t, err)
	return string(b)
}

// User and order records are keyed by institution, created_at or placed_at, and id, so a
// page's records are neighbours in the file, and user_keys and order_keys find each
// by id.
func TestRecordsAreClusteredByInstitutionAndTime(t *testing.T) {
	db := clusteredStore(t)
	var keys [][]byte
	require.NoError(t, db.db.View(func(tx *bbolt.Tx) error {
		n := 0
		require.NoError(t, tx.Bucket(bUsers).ForEach(func(k, v []byte) error {
			var u simulator.User
			require.NoError(t, decodeRecord(v, &u))
			assert.Equal(t, string(cat(inst(u.InstitutionID), timeKey(u.CreatedAt), []byte(u.PlatformID))), string(k))
			assert.Equal(t, string(k[:len(k)-len(u.PlatformID)]), string(tx.Bucket(bUserKeys).Get([]byte(u.PlatformID))))
			n++
			return nil
		}))
		assert.Equal(t, 60, n)
		return tx.Bucket(bOrders).ForEach(func(k, v []byte) error {
			var o simulator.Order
			require.NoError(t, decodeRecord(v, &o))
			assert.Equal(t, string(cat(inst(o.InstitutionID), timeKey(o.PlacedAt), []byte(o.ID))), string(k))
			assert.Equal(t, string(k[:len(k)-len(o.ID)]), string(tx.Bucket(bOrderKeys).Get([]byte(o.ID))))
			keys = append(keys, bytes.Clone(k))
			return nil
		})
	}))
	assert.Len(t, keys, 80)
	// The unfiltered list of each institution is the records' own order.
	for _, in := range []string{"ins_a", "ins_b"} {
		p, err := db.ListOrders(context.Background(), in, simulator.OrderFilter{Limit: 100})
		require.NoError(t, err)
		var want []string
		for _, k := range keys {
			if bytes.HasPrefix(k, inst(in)) {
				want = append(want, string(k[len(inst(in))+8:]))
			}
		}
		var got []string
		for _, o := range p.Orders {
			got = append(got, o.ID)
		}
		assert.Equal(t, want, got, in)
	}
}

// toLegacyRecords rewrites a store's user and order records in the layout before clustering:
// buckets "users" and "orders", keyed by id.
func toLegacyRecords(t *testing.T, db *DB) {
	t.Helper()
	require.NoError(t, db.db.Update(func(tx *bbolt.Tx) error {
		for _, c := range []clustered{userRecords, orderRecords} {
			legacy, err := tx.CreateBucket(c.legacy)
			require.NoError(t, err)
			require.NoError(t, tx.Bucket(c.keys).ForEach(func(id, prefix []byte) error {
				return legacy.Put(bytes.Clone(id), bytes.Clone(tx.Bucket(c.records).Get(cat(prefix, id))))
			}))
			require.NoError(t, tx.DeleteBucket(c.records))
			require.NoError(t, tx.DeleteBucket(c.keys))
		}
		return nil
	}))
}

// A store written before user and order records were clustered opens with them moved to the
// new layout, their bytes unchanged, and reads as it did; so does a snapshot of such a store.
func TestRecordsOfTheEarlierLayoutMoveAtOpenAndRestore(t *testing.T) {
	db := clusteredStore(t)
	want := clusteredRead(t, db)
	toLegacyRecords(t, db)
	snapshot := db.Path() + "-snapshot"
	require.NoError(t, db.db.View(func(tx *bbolt.Tx) error { return tx.CopyFile(snapshot, 0o600) }))
	db = reopen(t, db, nil)
	assert.Equal(t, want, clusteredRead(t, db))
	require.NoError(t, db.db.View(func(tx *bbolt.Tx) error {
		assert.Nil(t, tx.Bucket(bLegacyOrders), "the earlier buckets are gone")
		assert.Nil(t, tx.Bucket(bLegacyUsers))
		assert.Equal(t, 80, tx.Bucket(bOrderKeys).Stats().KeyN)
		assert.Equal(t, 60, tx.Bucket(bUserKeys).Stats().KeyN)
		return nil
	}))

	// Restoring the earlier store's file as a snapshot moves its orders the same way.
	require.NoError(t, db.RestoreSnapshot(context.Background(), snapshot))
	assert.Equal(t, want, clusteredRead(t, db))
	require.NoError(t, db.db.View(func(tx *bbolt.Tx) error {
		assert.Equal(t, 80, tx.Bucket(bOrders).Stats().KeyN)
		assert.Equal(t, 60, tx.Bucket(bUsers).Stats().KeyN)
		return nil
	}))
}

// stepTo reaches every key of a sorted sequence, up or down, near or far, and lands where a
// seek would on a missing key.
func TestStepToReachesWhatSeekReaches(t *testing.T) {
	db := tempStore(t, nil)
	var all []int
	require.NoError(t, db.db.Update(func(tx *bbolt.Tx) error {
		b, err := tx.CreateBucket([]byte("steps"))
		require.NoError(t, err)
		for i := range 3000 {
			if i%11 != 5 { // holes
				all = append(all, i)
				require.NoError(t, b.Put(fmt.Appendf(nil, "k%05d", i), fmt.Appendf(nil, "v%d", i)))
			}
		}
		return nil
	}))
	r := rand.New(rand.NewPCG(9, 9))
	sequences := [][]int{all[:200], {3, 4, 6, 7, 9, 12, 30, 2999, 0, 1}, {5, 16, 27, 28}} // holes included
	down := slices.Clone(all[:300])
	slices.Reverse(down)
	sequences = append(sequences, down)
	for range 20 {
		seq := make([]int, 50)
		for i := range seq {
			seq[i] = r.IntN(3100)
		}
		slices.Sort(seq)
		sequences = append(sequences, seq)
	}
	require.NoError(t, db.db.View(func(tx *bbolt.Tx) error {
		b := tx.Bucket([]byte("steps"))
		for _, seq := range sequences {
			c := b.Cursor()
			var at []byte
			for _, n := range seq {
				key := fmt.Appendf(nil, "k%05d", n)
				k, v := stepTo(c, at, key)
				wk, wv := b.Cursor().Seek(key)
				require.Equal(t, string(wk), string(k), "key %s after %s", key, at)
				require.Equal(t, string(wv), string(v))
				if k == nil {
					c = b.Cursor()
					at = nil
					continue
				}
				at = k
			}
		}
		return nil
	}))
}

// storedRecord returns the stored bytes of record id.
func storedRecord(tx *bbolt.Tx, c clustered, id string) []byte {
	return tx.Bucket(c.records).Get(cat(tx.Bucket(c.keys).Get([]byte(id)), []byte(id)))
}

// Moving a large store of the earlier layout takes time linear in its records: put at random
// places of the new bucket, as the first version of the move did, 100,000 orders were 100,000
// inserts into the middle of one bbolt node (split only at commit) and took minutes; in key
// order they take a few seconds even under the race detector.
func TestEarlierLayoutMovesInLinearTime(t *testing.T) {
	if testing.Short() {
		t.Skip("writes 100,000 orders")
	}
	db := tempStore(t, nil)
	r := rand.New(rand.NewPCG(5, 5))
	at := time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC)
	const n = 100_000
	require.NoError(t, db.db.Update(func(tx *bbolt.Tx) error {
		legacy, err := tx.CreateBucket(bLegacyOrders)
		require.NoError(t, err)
		for i := range n {
			o := simulator.Order{ID: fmt.Sprintf("ord_%08d", i), InstitutionID: "ins_a", Quantity: decimal.New(1, 0),
				PlacedAt: at.Add(time.Duration(r.IntN(365*24*3600)) * time.Second)} // placed in no order of their ids
			raw, err := encodeRecord(&o)
			require.NoError(t, err)
			require.NoError(t, legacy.Put([]byte(o.ID), raw))
		}
		return nil
	}))
	start := time.Now()
	db = reopen(t, db, nil)
	took := time.Since(start)
	t.Logf("moved %d orders in %s", n, took)
	assert.Less(t, took, 30*time.Second)
	require.NoError(t, db.db.View(func(tx *bbolt.Tx) error {
		assert.Equal(t, n, tx.Bucket(bOrders).Stats().KeyN)
		return nil
	}))
}
