//go:build linux

package bolt

import (
	"os"
	"testing"
	"unsafe"

	"github.com/stretchr/testify/require"
	"golang.org/x/sys/unix"
)

// residentPages says, page by page of pageSize (a multiple of the system's page; the file's
// last page may be partial), which of the file at path the page cache holds (mincore over a
// mapping of it, which reads nothing). ok is false where it cannot tell.
func residentPages(t *testing.T, path string, pageSize int) (resident []bool, ok bool) {
	t.Helper()
	f, err := os.Open(path)
	require.NoError(t, err)
	defer f.Close()
	info, err := f.Stat()
	require.NoError(t, err)
	size := int(info.Size())
	if size == 0 {
		return nil, true
	}
	m, err := unix.Mmap(int(f.Fd()), 0, size, unix.PROT_READ, unix.MAP_SHARED)
	require.NoError(t, err)
	defer unix.Munmap(m)
	sys := unix.Getpagesize()
	vec := make([]byte, (size+sys-1)/sys)
	if _, _, e := unix.Syscall(unix.SYS_MINCORE, uintptr(unsafe.Pointer(unsafe.SliceData(m))), uintptr(size), uintptr(unsafe.Pointer(unsafe.SliceData(vec)))); e != 0 {
		return nil, false
	}
	resident = make([]bool, (size+pageSize-1)/pageSize)
	for i := range resident {
		resident[i] = vec[i*pageSize/sys]&1 != 0
	}
	return resident, true
}

// directIOSkipsTheCache says whether a direct write in dir leaves nothing in the page cache (a
// file system that takes direct I/O but keeps files in memory, tmpfs, does not).
func directIOSkipsTheCache(t *testing.T, dir string) bool {
	t.Helper()
	return directProbe(t, dir, func(path string) bool {
		resident, ok := residentPages(t, path, directAlign)
		return ok && len(resident) == 1 && !resident[0]
	})
}
