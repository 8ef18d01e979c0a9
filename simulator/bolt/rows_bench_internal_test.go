package bolt

import (
	"bytes"
	"os"
	"testing"

	"go.etcd.io/bbolt"
)

// BenchmarkCoveredRows reads pages of 40 user index values of a built store
// (PARTNERSIM_BENCH_DB, a copy: it is opened for writing) as rows (coveredRows), the values
// of the largest institution's index of all users by created_at, in order: the store's part
// of a user page without its walk.
func BenchmarkCoveredRows(b *testing.B) {
	path := os.Getenv("PARTNERSIM_BENCH_DB")
	if path == "" {
		b.Skip("PARTNERSIM_BENCH_DB names a built store")
	}
	db, err := Open(path, nil, nil)
	if err != nil {
		b.Fatal(err)
	}
	defer db.Close()
	const instID = "ins_gen_full" // the generated set's institution
	var values [][]byte
	var in *pricedInstitution
	if err := db.db.View(func(tx *bbolt.Tx) error {
		if in, err = db.readPriced(tx, instID); err != nil {
			return err
		}
		prefix := cat(inst(instID), []byte{kindAll, sortCreated})
		c := tx.Bucket(bUserIndex).Cursor()
		for k, v := c.Seek(prefix); k != nil && bytes.HasPrefix(k, prefix) && len(values) < 4000; k, v = c.Next() {
			values = append(values, bytes.Clone(v))
		}
		return nil
	}); err != nil {
		b.Fatal(err)
	}
	if len(values) < 400 {
		b.Fatalf("%d values", len(values))
	}
	b.ResetTimer()
	at := 0
	for b.Loop() {
		if at+40 > len(values) {
			at = 0
		}
		r := coveredRows(values[at:at+40], in)
		if r == nil {
			b.Fatal("not read as rows")
		}
		r.Release()
		at += 40
	}
}
