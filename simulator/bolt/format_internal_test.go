package bolt

import (
	"context"
	"path/filepath"
	"strconv"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.etcd.io/bbolt"

	"github.com/partnersim/partnersim/simulator"
)

// setFormat writes a store file's format as a later partnersim would (the file closed).
func setFormat(t *testing.T, path, format string) {
	t.Helper()
	raw, err := bbolt.Open(path, 0o600, nil)
	require.NoError(t, err)
	require.NoError(t, raw.Update(func(tx *bbolt.Tx) error { return tx.Bucket(bMeta).Put(metaFormat, []byte(format)) }))
	require.NoError(t, raw.Close())
}

// formatOf reads a store file's format (the file closed).
func formatOf(t *testing.T, path string) string {
	t.Helper()
	raw, err := bbolt.Open(path, 0o600, &bbolt.Options{ReadOnly: true})
	require.NoError(t, err)
	defer raw.Close()
	var v string
	require.NoError(t, raw.View(func(tx *bbolt.Tx) error { v = string(tx.Bucket(bMeta).Get(metaFormat)); return nil }))
	return v
}

// A store keeps the format it was created with, one more with each mark of what it keeps; a
// store a later partnersim wrote is refused at open, untouched, with what to do.
func TestAStoreOfALaterFormatIsRefused(t *testing.T) {
	for i, m := range newMarks[1:] {
		assert.Contains(t, []int{newMarks[i].since, newMarks[i].since + 1}, m.since, "marks come in the order of their formats, one format at a time: %s", m.key)
	}
	assert.Equal(t, newMarks[len(newMarks)-1].since, storeFormat, "a new mark comes with a new format, or with the one this code introduces")
	path := filepath.Join(t.TempDir(), "s.db")
	db, err := Open(path, simulator.NewClock(nil), nil)
	require.NoError(t, err)
	require.NoError(t, db.Close())
	assert.Equal(t, strconv.Itoa(storeFormat), formatOf(t, path))

	setFormat(t, path, strconv.Itoa(storeFormat)) // this format, and one from before formats were kept
	db, err = Open(path, simulator.NewClock(nil), nil)
	require.NoError(t, err)
	require.NoError(t, db.Close())

	for _, later := range []string{strconv.Itoa(storeFormat + 1), "x"} {
		setFormat(t, path, later)
		_, err = Open(path, simulator.NewClock(nil), nil)
		require.Error(t, err, later)
		assert.ErrorContains(t, err, "store "+path+" was written by a newer partnersim")
		assert.ErrorContains(t, err, "start from a new store")
		assert.Equal(t, later, formatOf(t, path), "the refused store is left as it was")
	}
}

// A snapshot a later partnersim saved is not restored: the store stays as it was.
func TestASnapshotOfALaterFormatIsNotRestored(t *testing.T) {
	dir := t.TempDir()
	db, err := Open(filepath.Join(dir, "s.db"), simulator.NewClock(nil), nil)
	require.NoError(t, err)
	defer db.Close()
	ctx := context.Background()
	snap := filepath.Join(dir, "later.db")
	require.NoError(t, db.SaveSnapshot(ctx, snap))
	setFormat(t, snap, strconv.Itoa(storeFormat+1))
	require.NoError(t, db.db.Update(func(tx *bbolt.Tx) error { return tx.Bucket(bMeta).Put([]byte("canary"), []byte("1")) }))

	err = db.RestoreSnapshot(ctx, snap)
	require.Error(t, err)
	assert.Equal(t, simulator.ECONFLICT, simulator.ErrorCode(err))
	assert.ErrorContains(t, err, "snapshot later.db was written by a newer partnersim")
	require.NoError(t, db.db.View(func(tx *bbolt.Tx) error {
		assert.NotNil(t, tx.Bucket(bMeta).Get([]byte("canary")), "the store was not emptied")
		return nil
	}))
}
