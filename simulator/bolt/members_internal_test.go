package bolt

import (
	"context"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.etcd.io/bbolt"

	"github.com/partnersim/partnersim/simulator"
)

// A member's entries in member_user keep what Get User Detail shows of it (its core id type
// and dbp id), so that a detail reads no member record; a store written before they did
// (empty values) shows the same detail from the member records.
func TestDetailReadsMembersFromTheirIndex(t *testing.T) {
	ctx := context.Background()
	wantCore := []simulator.IdentityRef{{ID: "core-1", Type: "member_number"}, {ID: "core-2", Type: "cif"}}
	wantDBP := []simulator.IdentityRef{{ID: "dbp-1", Type: "q2"}}
	// store returns a store with two users, the first in two members, the second in one, and
	// the first user's detail read after change (a write straight to the file) and a restart.
	store := func(change func(tx *bbolt.Tx) error) *simulator.UserView {
		db := tempStore(t, nil)
		core, dbpVendor := "symitar", "q2"
		in, err := db.CreateInstitution(ctx, "inst", simulator.Vendors{Core: &core, DBP: &dbpVendor})
		require.NoError(t, err)
		var pids []string
		for _, uaid := range []string{"a", "b"} {
			u := simulator.NewUser(in.ID, simulator.UserRequest{UserAccountID: uaid}, db.Clock.Now())
			require.NoError(t, db.CreateUser(ctx, u))
			pids = append(pids, u.PlatformID)
		}
		dbp := "dbp-1"
		require.NoError(t, db.CreateMember(ctx, &simulator.Member{InstitutionID: in.ID, CoreID: "core-1", CoreIDType: "member_number", DBPID: &dbp, UserIDs: pids}))
		require.NoError(t, db.CreateMember(ctx, &simulator.Member{InstitutionID: in.ID, CoreID: "core-2", CoreIDType: "cif", UserIDs: pids[:1]}))
		require.NoError(t, db.db.Update(change))
		db = reopen(t, db, nil)
		v, err := db.UserDetail(ctx, in.ID, pids[0], simulator.IDPlatform)
		require.NoError(t, err)
		return v
	}

	v := store(func(tx *bbolt.Tx) error {
		n := 0
		err := tx.Bucket(bMemberUser).ForEach(func(k, ref []byte) error {
			n++
			var m simulator.Member
			assert.True(t, decodeMemberRef(ref, &m), "member_user %q holds its member's identities: %q", k, ref)
			return nil
		})
		assert.Equal(t, 3, n, "member_user entries")
		if err != nil {
			return err
		}
		return tx.DeleteBucket(bMembers) // read no more
	})
	assert.Equal(t, wantCore, v.CoreIDs, "from member_user alone")
	assert.Equal(t, wantDBP, v.DBPIDs, "from member_user alone")

	v = store(func(tx *bbolt.Tx) error {
		b := tx.Bucket(bMemberUser)
		var keys [][]byte
		err := b.ForEach(func(k, _ []byte) error { keys = append(keys, k); return nil })
		for _, k := range keys {
			if err := b.Put(k, nil); err != nil { // as written before
				return err
			}
		}
		return err
	})
	assert.Equal(t, wantCore, v.CoreIDs, "from the member records")
	assert.Equal(t, wantDBP, v.DBPIDs, "from the member records")
}
