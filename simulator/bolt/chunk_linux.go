//go:build linux

package bolt

import (
	"syscall"
	"unsafe"
)

// newChunk returns an empty spool chunk of capacity size. On Linux a chunk of hugeChunk bytes
// or more is mapped outside Go's heap with transparent huge pages asked for (madvise): a
// 100k-user build spools ~2 GB, and faulting that in 4 KiB at a time was a twentieth of the
// build's CPU. The chunk goes back to the system at once when freed (freeChunk), not when
// the collector next runs. mapped says which kind it is.
func newChunk(size int) (b []byte, mapped bool) {
	if size < hugeChunk {
		return make([]byte, 0, size), false
	}
	b, err := syscall.Mmap(-1, 0, size, syscall.PROT_READ|syscall.PROT_WRITE, syscall.MAP_PRIVATE|syscall.MAP_ANON)
	if err != nil {
		return make([]byte, 0, size), false
	}
	_ = syscall.Madvise(b, syscall.MADV_HUGEPAGE) // a hint: without it, 4 KiB pages
	return b[:0], true
}

// freeChunk unmaps a chunk newChunk mapped.
func freeChunk(b []byte) { _ = syscall.Munmap(b[:cap(b)]) }

// mremapMayMove is mremap's MREMAP_MAYMOVE: the kernel may move the mapping to grow it.
const mremapMayMove = 1

// growChunk grows a chunk newChunk mapped (or growChunk grew) to size bytes in place of it,
// its bytes kept: the kernel moves the pages it holds, copying and zeroing none of them again
// (mremap), and maps the rest as new, faulted in only once written. ok is false if the kernel
// refused: b is then still mapped and whole. Once it succeeded, b is no longer mapped and must
// not be read: the grown chunk (of length size) replaces it everywhere.
func growChunk(b []byte, size int) (grown []byte, ok bool) {
	b = b[:cap(b)]
	addr, _, errno := syscall.Syscall6(syscall.SYS_MREMAP, uintptr(unsafe.Pointer(unsafe.SliceData(b))), uintptr(len(b)),
		uintptr(size), mremapMayMove, 0, 0)
	if errno != 0 {
		return nil, false
	}
	// The mapping is outside Go's heap: the collector neither moves nor frees it.
	return unsafe.Slice((*byte)(*(*unsafe.Pointer)(unsafe.Pointer(&addr))), size), true
}
