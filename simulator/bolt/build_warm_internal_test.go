package bolt

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.etcd.io/bbolt"
)

// A build that spilled writes its store file past the page cache, but the pages a first serve
// reads before the ones it looks for are read back into the cache once the file is written:
// the upper levels of every tree, user_keys whole (Get User Detail's one descent) and the
// small buckets whole. The bulk (here order_records' leaves) stays out of the cache.
func TestSpilledBuildKeepsTheHotPagesInThePageCache(t *testing.T) {
	ctx := t.Context()
	db := tempStore(t, nil)
	b, err := db.NewBuilder(ctx)
	require.NoError(t, err)
	orders, users := 40000, 15000
	for round := range 2 { // two rounds: the first spilled, the second merged with it
		for i := round; i < orders; i += 2 {
			k := fmt.Appendf(nil, "ins_a\x00%08d-order-%07d", (i*7919)%orders, i)
			require.NoError(t, b.w.sink.put(bOrders, k, 0, bytes.Repeat([]byte{'o'}, 60)))
		}
		for i := round; i < users; i += 2 {
			require.NoError(t, b.w.sink.put(bUserKeys, fmt.Appendf(nil, "usr_%07d", (i*7919)%users), 0, bytes.Repeat([]byte{'u'}, 80)))
		}
		if round == 0 {
			require.NoError(t, b.write(ctx, false))
			require.NotEmpty(t, b.spills, "the first round spilled")
		}
	}
	require.NoError(t, b.w.sink.put(bUsers, []byte("ins_a\x00u1"), 0, []byte("one")))
	require.NoError(t, b.Finish(ctx, "tok"))
	if !directIOSkipsTheCache(t, filepath.Dir(db.Path())) {
		assertAllResident(t, db, "without direct I/O past the page cache, the file is written through it")
		return
	}

	pageSize := db.db.Info().PageSize
	trees := storeTrees(t, db)
	require.Greater(t, len(trees[string(bOrders)].pages), warmBucketBytes/pageSize, "order_records is larger than a small bucket")
	require.Greater(t, len(trees[string(bUserKeys)].pages), warmBucketBytes/pageSize, "user_keys is larger than a small bucket")
	require.NotEmpty(t, trees[string(bOrders)].branches, "order_records has upper levels")
	var warm, cold []uint64
	for name, tr := range trees {
		switch name {
		case string(bOrders):
			warm = append(warm, tr.branches...)
			cold = append(cold, tr.leaves...)
		default:
			warm = append(warm, tr.pages...)
		}
	}
	resident := awaitResident(t, db.Path(), pageSize, warm)
	assert.Zero(t, len(warm)-residentOf(resident, warm), "of the %d pages of upper levels, user_keys and small buckets, none is missing from the page cache", len(warm))
	assert.Zero(t, residentOf(resident, cold), "of order_records' %d leaves, none is in the page cache (written past it)", len(cold))
}

// awaitResident asks the page cache which pages of the file at path it holds until it holds
// every page of ids (read back in the background), or for 10 s, and returns its last answer.
func awaitResident(t *testing.T, path string, pageSize int, ids []uint64) []bool {
	t.Helper()
	for deadline := time.Now().Add(10 * time.Second); ; {
		resident, ok := residentPages(t, path, pageSize)
		require.True(t, ok)
		if residentOf(resident, ids) == len(ids) || time.Now().After(deadline) {
			return resident
		}
		time.Sleep(time.Millisecond)
	}
}

// residentOf counts the pages of ids the page cache holds.
func residentOf(resident []bool, ids []uint64) int {
	n := 0
	for _, id := range ids {
		if resident[id] {
			n++
		}
	}
	return n
}

// storeTree is the pages of one bucket's tree.
type storeTree struct {
	pages, branches, leaves []uint64 // leaves' overflow pages in pages only
}

// storeTrees returns every bucket's tree by name, reading the store's file with direct I/O:
// the page cache is left as it was.
func storeTrees(t *testing.T, db *DB) map[string]*storeTree {
	t.Helper()
	f, err := os.Open(db.Path())
	require.NoError(t, err)
	defer f.Close()
	require.NoError(t, directIO(f, true))
	info, err := f.Stat()
	require.NoError(t, err)
	raw := alignedBuffer(int(info.Size()))[:info.Size()]
	_, err = io.ReadFull(f, raw)
	require.NoError(t, err)
	pageSize := db.db.Info().PageSize
	page := func(id uint64) []byte { return raw[int(id)*pageSize:] }
	trees := map[string]*storeTree{}
	var walk func(tr *storeTree, id uint64)
	walk = func(tr *storeTree, id uint64) {
		p := page(id)
		flags, count, overflow := binary.LittleEndian.Uint16(p[8:]), int(binary.LittleEndian.Uint16(p[10:])), binary.LittleEndian.Uint32(p[12:])
		for i := range uint64(overflow) + 1 {
			tr.pages = append(tr.pages, id+i)
		}
		if flags&leafPageFlag != 0 {
			tr.leaves = append(tr.leaves, id)
			return
		}
		tr.branches = append(tr.branches, id)
		for i := range count {
			walk(tr, binary.LittleEndian.Uint64(p[pageHeaderSize+i*branchElemSize+8:]))
		}
	}
	require.NoError(t, db.db.View(func(tx *bbolt.Tx) error {
		return tx.ForEach(func(name []byte, bk *bbolt.Bucket) error {
			if root := uint64(bk.Root()); root != 0 { // 0: inline in the root bucket
				tr := &storeTree{}
				walk(tr, root)
				trees[string(name)] = tr
			}
			return nil
		})
	}))
	return trees
}

// assertAllResident asserts that the page cache holds every page of the store's file up to its
// high-water mark (where the system can tell).
func assertAllResident(t *testing.T, db *DB, msg string) {
	t.Helper()
	var pages int
	require.NoError(t, db.db.View(func(tx *bbolt.Tx) error {
		pages = int(tx.Size()) / db.db.Info().PageSize
		return nil
	}))
	resident, ok := residentPages(t, db.Path(), db.db.Info().PageSize)
	if !ok {
		return
	}
	require.GreaterOrEqual(t, len(resident), pages)
	n := 0
	for _, r := range resident[:pages] {
		if !r {
			n++
		}
	}
	assert.Zero(t, n, "pages of %d not in the page cache: %s", pages, msg)
}
