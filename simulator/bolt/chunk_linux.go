//go:build linux

package bolt

import "syscall"

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
