package bolt_test

import (
	"bytes"
	"context"
	"io/fs"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.etcd.io/bbolt"

	"github.com/partnersim/partnersim/fixtures"
	"github.com/partnersim/partnersim/fixtures/generate"
	"github.com/partnersim/partnersim/simulator"
	"github.com/partnersim/partnersim/simulator/bolt"
)

// dump checks a store file with bbolt's own Tx.Check and reads every bucket: bucket → key →
// value.
func dump(t *testing.T, path string) map[string]map[string]string {
	t.Helper()
	db, err := bbolt.Open(path, 0o600, &bbolt.Options{ReadOnly: true, Timeout: time.Second})
	require.NoError(t, err)
	defer db.Close()
	require.NoError(t, db.View(func(tx *bbolt.Tx) error {
		for err := range tx.Check() { // bbolt's own page-by-page check (drained whole)
			assert.NoError(t, err, "bbolt's check of %s", path)
		}
		return nil
	}))
	out := map[string]map[string]string{}
	require.NoError(t, db.View(func(tx *bbolt.Tx) error {
		return tx.ForEach(func(name []byte, b *bbolt.Bucket) error {
			m := map[string]string{}
			out[string(name)] = m
			return b.ForEach(func(k, v []byte) error {
				m[string(k)] = string(bytes.Clone(v))
				return nil
			})
		})
	}))
	return out
}

// The offline builder writes exactly the store the transactional loader writes:
// every bucket, key and value, index counters included — for the default set and a generated
// one.
func TestBuiltStoreEqualsLoadedStore(t *testing.T) {
	gen := t.TempDir()
	require.NoError(t, generate.Write(gen, generate.Options{Users: 400, Orders: 4000, Seed: 3}))
	for name, fsys := range map[string]fs.FS{"default": fixtures.Default(), "generated": os.DirFS(gen)} {
		t.Run(name, func(t *testing.T) {
			ctx := context.Background()
			dir := t.TempDir()
			loaded := filepath.Join(dir, "loaded.db")
			db, err := bolt.Open(loaded, simulator.NewClock(nil), nil)
			require.NoError(t, err)
			set, err := fixtures.Open(fsys)
			require.NoError(t, err)
			require.NoError(t, db.Seed(ctx, set, true))
			require.NoError(t, db.Close())

			built := filepath.Join(dir, "built.db")
			var phases []string
			bset, _, err := bolt.BuildFile(ctx, fsys, built, func(phase string, done, total int) {
				if len(phases) == 0 || phases[len(phases)-1] != phase {
					phases = append(phases, phase)
				}
				if phase == "write" {
					assert.LessOrEqual(t, done, total)
				}
			})
			require.NoError(t, err)
			assert.Equal(t, set.NumOrders, bset.NumOrders)
			assert.Contains(t, phases, "write")

			want, got := dump(t, loaded), dump(t, built)
			require.Equal(t, len(want), len(got))
			for bucket, kv := range want {
				assert.Equal(t, len(kv), len(got[bucket]), "entries in %s", bucket)
				for k, v := range kv {
					if g, ok := got[bucket][k]; !ok || g != v {
						t.Fatalf("bucket %s key %q: built %q, loaded %q", bucket, k, g, v)
					}
				}
			}
			_, err = os.Stat(built + ".building")
			assert.ErrorIs(t, err, fs.ErrNotExist, "no temporary file left behind")
		})
	}
}

// A set with problems builds nothing: the command reports them and no store file appears.
func TestBuildRefusesBrokenSet(t *testing.T) {
	dir := t.TempDir()
	require.NoError(t, generate.Write(dir, generate.Options{Users: 20, Orders: 50, Seed: 1}))
	users, err := os.ReadFile(filepath.Join(dir, fixtures.FileUsers))
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(filepath.Join(dir, fixtures.FileUsers), bytes.Replace(users, []byte(`"usr_`), []byte(`"xyz_`), 1), 0o600))
	path := filepath.Join(t.TempDir(), "b.db")
	_, _, err = bolt.BuildFile(context.Background(), os.DirFS(dir), path, nil)
	require.Error(t, err)
	assert.NotEmpty(t, fixtures.Problems(err), "the set's problems, as fixtures check lists them: %v", err)
	_, err = os.Stat(path)
	assert.ErrorIs(t, err, fs.ErrNotExist)
}
