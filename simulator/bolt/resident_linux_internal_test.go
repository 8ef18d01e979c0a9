//go:build linux

package bolt

import (
	"os"
	"syscall"
	"testing"
	"unsafe"

	"github.com/stretchr/testify/require"
)

// residentPages says, page by page of pageSize, which of the file at path the page cache holds
// (mincore over a mapping of it, which reads nothing). ok is false where it cannot tell.
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
	m, err := syscall.Mmap(int(f.Fd()), 0, size, syscall.PROT_READ, syscall.MAP_SHARED)
	require.NoError(t, err)
	defer syscall.Munmap(m)
	sys := syscall.Getpagesize()
	vec := make([]byte, (size+sys-1)/sys)
	if _, _, e := syscall.Syscall(syscall.SYS_MINCORE, uintptr(unsafe.Pointer(unsafe.SliceData(m))), uintptr(size), uintptr(unsafe.Pointer(unsafe.SliceData(vec)))); e != 0 {
		return nil, false
	}
	resident = make([]bool, size/pageSize)
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
