package bolt

import (
	"bytes"
	"context"
	"fmt"
	"maps"
	"path/filepath"
	"runtime"
	"slices"
	"testing"
	"time"

	"github.com/shopspring/decimal"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.etcd.io/bbolt"

	"github.com/partnersim/partnersim/simulator"
)

// A build past its memory budget spills several sorted rounds to run files and merges them as
// it writes the file, and still writes exactly what the transactional loader writes; no run
// file is left behind.
func TestBuildInRoundsEqualsLoad(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	loaded, err := Open(filepath.Join(dir, "loaded.db"), simulator.NewClock(nil), nil)
	require.NoError(t, err)
	defer loaded.Close()
	built, err := Open(filepath.Join(dir, "built.db"), simulator.NewClock(nil), nil)
	require.NoError(t, err)
	defer built.Close()

	l, err := loaded.NewLoader(ctx, true)
	require.NoError(t, err)
	b, err := built.NewBuilder(ctx)
	require.NoError(t, err)
	b.Budget = 4 << 10 // a round every few dozen records
	rounds, runsLeft := 0, -1
	b.Progress = func(done, total int) {
		if done == total {
			rounds++
		}
		runs, err := filepath.Glob(filepath.Join(dir, ".built.db.run-*"))
		require.NoError(t, err)
		runsLeft = len(runs)
	}
	at := time.Date(2025, 3, 1, 0, 0, 0, 0, time.UTC)
	prices := map[string]decimal.Decimal{"AAPL": decimal.New(19012, -2)}
	require.NoError(t, l.Institution(simulator.Institution{ID: "ins_a", Prices: prices}))
	require.NoError(t, b.Institution(simulator.Institution{ID: "ins_a", Prices: prices}))
	for i := range 300 {
		u := simulator.User{PlatformID: fmt.Sprintf("usr_%03d", (i*37)%300), InstitutionID: "ins_a", UserAccountID: fmt.Sprintf("u%03d", (i*11)%300),
			CreatedAt: at.Add(time.Duration(i*13%97) * 5 * time.Hour),
			Accounts: []simulator.Account{{Product: simulator.ProductSecurities, KYCStatus: simulator.KYCStatuses[i%6], Cash: decimal.New(int64(i), 0),
				Holdings: []simulator.Holding{{Symbol: "AAPL", Quantity: decimal.New(int64(i), -1)}}}}}
		require.NoError(t, l.User(u))
		require.NoError(t, b.User(u))
		o := simulator.Order{ID: fmt.Sprintf("ord_%04d", (i*53)%300), InstitutionID: "ins_a", UserAccountID: u.UserAccountID, Product: simulator.ProductSecurities,
			Side: simulator.SideBuy, Status: simulator.OrderStatuses[i%4], Symbol: "AAPL", Quantity: decimal.New(1, 0), PlacedAt: at.Add(time.Duration(i*29%101) * 3 * time.Hour)}
		txn := simulator.Transaction{ID: fmt.Sprintf("txn_%04d", i), InstitutionID: "ins_a", OrderIDs: []string{o.ID}}
		require.NoError(t, l.Transaction(txn, []simulator.Order{o}))
		require.NoError(t, b.Transaction(txn, []simulator.Order{o}))
	}
	require.NoError(t, l.Finish("tok"))
	require.NoError(t, b.Finish(ctx, "tok"))
	assert.Greater(t, rounds, 10, "the budget made several rounds")
	assert.Zero(t, runsLeft, "each bucket's runs are removed once it is written")
	runs, err := filepath.Glob(filepath.Join(dir, ".built.db.run-*"))
	require.NoError(t, err)
	assert.Empty(t, runs, "the run files are removed")

	dump := func(db *DB) map[string]string {
		out := map[string]string{}
		require.NoError(t, db.db.View(func(tx *bbolt.Tx) error {
			return tx.ForEach(func(name []byte, bk *bbolt.Bucket) error {
				return bk.ForEach(func(k, v []byte) error {
					out[string(name)+"|"+string(k)] = string(bytes.Clone(v))
					return nil
				})
			})
		}))
		return out
	}
	assert.Equal(t, dump(loaded), dump(built))
	checkFile(t, built)
	assert.Equal(t, map[uint64]int{0: 300 * 6}, valueVersions(t, built), "every user's values kept at its institution's prices")
}

// checkFile runs bbolt's own page-by-page check over a store.
func checkFile(t *testing.T, db *DB) {
	t.Helper()
	require.NoError(t, db.db.View(func(tx *bbolt.Tx) error {
		for err := range tx.Check() {
			assert.NoError(t, err)
		}
		return nil
	}))
}

// The file the builder writes bottom-up passes bbolt's check and reads back entry for entry:
// trees of several levels, values larger than a page (overflow pages), empty buckets, and a
// key spooled twice refused. The store then takes ordinary writes.
func TestBuiltFilePassesBboltCheck(t *testing.T) {
	ctx := context.Background()
	db := tempStore(t, nil)
	b, err := db.NewBuilder(ctx)
	require.NoError(t, err)
	want := map[string]string{}
	for i := range 70000 { // past 1<<16: the sort runs on two goroutines
		k := fmt.Appendf(nil, "k%07d", (i*7919)%70000)
		v := bytes.Repeat([]byte{byte(i)}, i%50)
		if i%5000 == 0 {
			v = bytes.Repeat([]byte{'v'}, 3*4096+i%4096) // overflow pages
		}
		require.NoError(t, b.w.sink.put(bOrders, k, 0, v))
		want[string(k)] = string(v)
	}
	require.NoError(t, b.w.sink.put(bUsers, []byte("u1"), 0, []byte("one")))
	// Index keys sort by prefix rank, then by the 8 bytes after the prefix, then by their
	// bytes — and by their bytes alone when a prefix is a prefix of another (bOrderIndex's
	// "p" and "pq").
	prefixes := map[string][]string{string(bUserIndex): {"ins_a\x00A", "ins_a\x00Uabc\x00", "ins_b\x00A", "ins_a\x00Uab\x00"},
		string(bOrderIndex): {"p", "pq", "q"}}
	index := map[string]map[string]bool{}
	for bucket, ps := range prefixes {
		index[bucket] = map[string]bool{}
		for i := range 5000 {
			p := ps[(i*31)%len(ps)]
			rest := fmt.Appendf(nil, "%03d%09d", (i*7919)%977, i)[:4+i%9] // short rests, equal heads
			k := append([]byte(p), rest...)
			if index[bucket][string(k)] {
				continue
			}
			index[bucket][string(k)] = true
			require.NoError(t, b.w.sink.put([]byte(bucket), k, len(p), nil))
		}
	}
	require.NoError(t, b.Finish(ctx, "tok"))
	assertAllResident(t, db, "a build that fitted writes its file through the page cache, which then holds it")
	checkFile(t, db)
	got := map[string]string{}
	require.NoError(t, db.db.View(func(tx *bbolt.Tx) error {
		assert.Equal(t, []byte("one"), tx.Bucket(bUsers).Get([]byte("u1")))
		assert.Equal(t, 0, tx.Bucket(bEvents).Stats().KeyN, "an empty bucket")
		assert.Equal(t, []byte("1"), tx.Bucket(bMeta).Get(metaDays), "what the emptied store held")
		assert.Greater(t, tx.Bucket(bOrders).Stats().Depth, 2, "a tree of several levels")
		for bucket, keys := range index {
			var got []string
			require.NoError(t, tx.Bucket([]byte(bucket)).ForEach(func(k, _ []byte) error {
				got = append(got, string(k))
				return nil
			}))
			want := slices.Sorted(maps.Keys(keys))
			assert.Equal(t, want, got, "bucket %s in key order", bucket)
		}
		return tx.Bucket(bOrders).ForEach(func(k, v []byte) error {
			got[string(k)] = string(v)
			return nil
		})
	}))
	assert.Equal(t, want, got)
	ok, token, err := db.Loaded(ctx)
	require.NoError(t, err)
	assert.True(t, ok)
	assert.Equal(t, "tok", token)
	require.NoError(t, db.db.Update(func(tx *bbolt.Tx) error {
		for i := range 3000 {
			if err := tx.Bucket(bOrders).Put(fmt.Appendf(nil, "k%07d", i*20+3), []byte("new")); err != nil {
				return err
			}
			if err := tx.Bucket(bOrders).Delete(fmt.Appendf(nil, "k%07d", i*20)); err != nil {
				return err
			}
		}
		return nil
	}))
	checkFile(t, db)

	b, err = db.NewBuilder(ctx)
	require.NoError(t, err)
	require.NoError(t, b.w.sink.put(bOrders, []byte("twice"), 0, nil))
	require.NoError(t, b.w.sink.put(bOrders, []byte("twice"), 0, nil))
	assert.ErrorContains(t, b.Finish(ctx, "tok"), "spooled twice")

	// Twice in two shards' runs, among other keys: found where the runs merge.
	b, err = db.NewBuilder(ctx)
	require.NoError(t, err)
	for i, sh := range []*BuildShard{b.Shard(), b.Shard()} {
		for j := range 100 {
			require.NoError(t, sh.w.sink.put(bUserIndex, fmt.Appendf(nil, "p%03d", 2*j+i), 1, nil))
		}
		require.NoError(t, sh.w.sink.put(bUserIndex, []byte("p050x"), 1, nil))
	}
	assert.ErrorContains(t, b.Finish(ctx, "tok"), `"p050x" spooled twice`)
}

// The radix sort of a build's spool orders entries as their keys' bytes do: many prefixes,
// heads equal in most bytes or in all (ties decided by the rest of the key), keys alike in
// many bytes past the head, rests shorter than a head, runs above and below the size where
// it hands over to a comparison sort.
func TestSpoolSortOrdersByKeyBytes(t *testing.T) {
	for _, n := range []int{0, 1, 5, radixSmall + 1, 3000, 70000} {
		t.Run(fmt.Sprint(n), func(t *testing.T) {
			sp := &spool{name: "order_index"}
			var prefixes []string
			for p := range 300 {
				prefixes = append(prefixes, fmt.Sprintf("ins_%d\x00U%05d\x00c", p%3, (p*7919)%1000))
			}
			seen := map[string]bool{}
			for i := range n {
				p := prefixes[(i*31)%len(prefixes)]
				var rest []byte
				switch i % 5 {
				case 4: // alike far past the head (a count's key): one prefix
					p = prefixes[0]
					rest = fmt.Appendf(nil, "order_index\x00ins_gen_full\x00UGEN-%08x\x00c%d", (i*2654435761)%997, i%3)
				case 0: // a time, equal within groups of three, then an id
					rest = fmt.Appendf(u64(uint64(1_700_000_000+(i*7919)%(n/3+1))*1e9), "ord_%06d", i)
				case 1: // heads equal in their first bytes
					rest = fmt.Appendf(nil, "GEN-%04x%06d", (i*131)%97, i)
				case 2: // short rests
					rest = fmt.Appendf(nil, "%d", i%1000)[:1+i%3]
				default: // bytes above 0x7f
					rest = []byte{0xff, byte(i), byte(i >> 8), 0x80, byte(i >> 16), 1, 2, 3, byte(i % 7)}
				}
				k := append([]byte(p), rest...)
				if seen[string(k)] {
					continue
				}
				seen[string(k)] = true
				require.NoError(t, sp.add(k, len(p), []byte{byte(i)}))
			}
			br := &bucketRuns{name: sp.name, runs: []*spool{sp}}
			br.rank()
			require.True(t, br.ranked)
			sp.sort(true)
			var got []string
			for _, e := range sp.ents {
				got = append(got, string(sp.keyOf(e)))
				require.Equal(t, headAt(sp.restOf(e), 0), e.head, "the head the merge compares")
			}
			assert.Equal(t, slices.Sorted(maps.Keys(seen)), got)
		})
	}
}

// A spool past a huge page keeps its later chunks outside Go's heap on Linux (newChunk): the
// entries read back whole, and release gives the chunks back.
func TestSpoolChunksMappedAndReleased(t *testing.T) {
	sp := &spool{name: "order_records"}
	v := bytes.Repeat([]byte{'v'}, 1000)
	for i := range 8000 { // ~8 MB: chunks of 64 KiB doubling past 2 MiB
		v[0] = byte(i)
		require.NoError(t, sp.add(fmt.Appendf(nil, "k%06d", i), 0, v))
	}
	if runtime.GOOS == "linux" {
		require.NotNil(t, sp.mapped)
		assert.NotEmpty(t, sp.mapped.list)
	}
	for i, e := range sp.ents {
		require.Equal(t, fmt.Sprintf("k%06d", i), string(sp.keyOf(e)))
		require.Equal(t, byte(i), sp.valueOf(e)[0])
		require.Len(t, sp.valueOf(e), 1000)
	}
	sp.release()
	assert.Nil(t, sp.chunks)
	if sp.mapped != nil {
		assert.Empty(t, sp.mapped.list)
	}
}

// A spool of more entries than a huge page's worth of references keeps them outside Go's heap
// on Linux (growEnts): they sort and read back whole as they grow, and release gives them back.
func TestSpoolEntriesMappedAndReleased(t *testing.T) {
	sp := &spool{name: "order_keys"}
	const n = 200_000 // 6.4 MB of references: mapped past 2 MiB, then grown twice
	for i := range n {
		require.NoError(t, sp.add(fmt.Appendf(nil, "k%07d", (i*7919)%n), 0, []byte{byte(i)}))
	}
	if runtime.GOOS == "linux" {
		require.NotNil(t, sp.mapped)
		assert.Len(t, sp.mapped.ents, cap(sp.ents)*spoolEntSize)
	}
	sp.sort(true)
	require.Len(t, sp.ents, n)
	for i, e := range sp.ents {
		require.Equal(t, fmt.Sprintf("k%07d", i), string(sp.keyOf(e)))
	}
	sp.release()
	assert.Nil(t, sp.ents)
	if sp.mapped != nil {
		assert.Nil(t, sp.mapped.ents)
	}
}

// A set expected to spool less than buildInMemory is built without a spill (the 100,000-user,
// 1,000,000-order set, 528 MB of files: spilling its one round cost ~8 s of its ~11 s build);
// a larger one in rounds of buildBudget; one whose size is unknown too.
func TestBudgetBySetSize(t *testing.T) {
	assert.Equal(t, buildInMemory, budgetFor(552_602_074), "the 100k users + 1M orders set fits in memory")
	assert.Equal(t, buildBudget, budgetFor(5_526_020_740), "the 1M users + 10M orders set spills rounds")
	assert.Equal(t, buildBudget, budgetFor(0), "an unknown size spills rounds")
	assert.Greater(t, buildInMemory, buildBudget)
}
