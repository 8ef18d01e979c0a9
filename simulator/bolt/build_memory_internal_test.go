package bolt

import (
	"context"
	"os"
	"path/filepath"
	"runtime"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/partnersim/partnersim/fixtures/generate"
	"github.com/partnersim/partnersim/simulator"
)

// A build past its budget holds its budget and a few bytes a record, not what the set spools:
// the live heap as each round ends (its spools written and dropped) grows by less than
// bytesPerRecord for each record more. The index counters (one per user and day) were kept in
// a map to the end of the build, and the fixture check kept a set of every id: 5 GiB of heap
// at a million users.
func TestBuildHeapStaysNearItsBudget(t *testing.T) {
	heap := func(users, orders int) uint64 {
		gen := t.TempDir()
		require.NoError(t, generate.Write(gen, generate.Options{Users: users, Orders: orders, Seed: 5}))
		db, err := Open(filepath.Join(t.TempDir(), "built.db"), simulator.NewClock(nil), nil)
		require.NoError(t, err)
		defer db.Close()
		var live uint64 // the most as a round ends
		rounds := 0
		_, err = db.build(context.Background(), os.DirFS(gen), nil, func(b *Builder) {
			b.Budget = 1 << 20
			b.Progress = func(done, total int) {
				if done < total {
					return
				}
				rounds++
				runtime.GC()
				var ms runtime.MemStats
				runtime.ReadMemStats(&ms)
				live = max(live, ms.HeapAlloc)
			}
		})
		require.NoError(t, err)
		require.Greater(t, rounds, 5)
		return live
	}
	const users, orders = 1500, 15000
	small, large := heap(users, orders), heap(3*users, 3*orders)
	perRecord := (float64(large) - float64(small)) / float64(2*(users+orders))
	t.Logf("live heap as a round ends: %.1f MiB, %.1f MiB at three times the records: %.1f bytes a record more",
		float64(small)/(1<<20), float64(large)/(1<<20), perRecord)
	const bytesPerRecord = 60
	assert.Less(t, perRecord, float64(bytesPerRecord))
}
