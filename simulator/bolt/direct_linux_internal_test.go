//go:build linux

package bolt

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// readAhead reads every page of the runs it is given into the page cache, however long a run
// (the kernel reads at most its readahead window, 128 KiB to a few MiB, for one request), and
// none other.
func TestReadAheadReadsEveryPageOfItsRuns(t *testing.T) {
	dir := t.TempDir()
	if !directIOSkipsTheCache(t, dir) {
		t.Skip("direct I/O does not skip the page cache here: every page is in it")
	}
	const pageSize = directAlign
	f, err := os.Create(filepath.Join(dir, "f"))
	require.NoError(t, err)
	defer f.Close()
	require.NoError(t, directIO(f, true))
	pages := 5000 // 20 MiB
	b := alignedBuffer(pages * pageSize)[:pages*pageSize]
	_, err = f.Write(b)
	require.NoError(t, err)
	require.NoError(t, directIO(f, false))
	runs := []pageSpan{{1, 1}, {3, 2}, {10, 4000}, {4500, 1}}
	readAhead(f, pageSize, runs)

	var want []uint64
	for _, r := range runs {
		for id := r.id; id < r.id+r.n; id++ {
			want = append(want, id)
		}
	}
	resident := awaitResident(t, f.Name(), pageSize, want)
	assert.Equal(t, len(want), residentOf(resident, want), "every page of the runs is read")
	assert.Equal(t, len(want), residentOf(resident, allPages(pages)), "and no other")
}

func allPages(n int) []uint64 {
	ids := make([]uint64, n)
	for i := range ids {
		ids[i] = uint64(i)
	}
	return ids
}
