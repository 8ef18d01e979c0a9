//go:build linux

package bolt

import "golang.org/x/sys/unix"

// newChunk returns an empty spool chunk of capacity size. On Linux a chunk of hugeChunk bytes
// or more is mapped outside Go's heap with transparent huge pages asked for (madvise): a
// 100k-user build spools ~2 GB, and faulting that in 4 KiB at a time was a twentieth of the
// build's CPU. The chunk goes back to the system at once when freed (freeChunk), not when
// the collector next runs. mapped says which kind it is.
func newChunk(size int) (b []byte, mapped bool) {
	if size < hugeChunk {
		return make([]byte, 0, size), false
	}
	b, err := unix.Mmap(-1, 0, size, unix.PROT_READ|unix.PROT_WRITE, unix.MAP_PRIVATE|unix.MAP_ANON)
	if err != nil {
		return make([]byte, 0, size), false
	}
	_ = unix.Madvise(b, unix.MADV_HUGEPAGE) // a hint: without it, 4 KiB pages
	return b[:0], true
}

// freeChunk unmaps a chunk newChunk mapped or growChunk grew. The three go through one
// package (x/sys/unix), whose Munmap unmaps only what its own Mmap or Mremap mapped: a chunk
// grown by a bare mremap syscall was refused (EINVAL) and stayed mapped, holding each round of
// a million-user build resident (TestFreedChunkIsUnmapped).
func freeChunk(b []byte) { _ = unix.Munmap(b[:cap(b)]) }

// growChunk grows a chunk newChunk mapped (or growChunk grew) to size bytes in place of it,
// its bytes kept: the kernel moves the pages it holds, copying and zeroing none of them again
// (mremap, allowed to move the mapping), and maps the rest as new, faulted in only once
// written. ok is false if the kernel refused: b is then still mapped and whole. Once it
// succeeded, b is no longer mapped and must not be read: the grown chunk (of length size)
// replaces it everywhere.
func growChunk(b []byte, size int) (grown []byte, ok bool) {
	grown, err := unix.Mremap(b[:cap(b)], size, unix.MREMAP_MAYMOVE)
	if err != nil {
		return nil, false
	}
	return grown, true
}
