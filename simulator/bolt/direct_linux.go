//go:build linux

package bolt

import (
	"os"
	"syscall"
)

// directIO turns direct I/O (O_DIRECT: reads and writes between the disk and the caller's
// buffers, past the page cache) on or off for f. It fails where the file system has none.
func directIO(f *os.File, on bool) error {
	rc, err := f.SyscallConn()
	if err != nil {
		return err
	}
	var ferr error
	if err := rc.Control(func(fd uintptr) {
		flags, _, e := syscall.Syscall(syscall.SYS_FCNTL, fd, syscall.F_GETFL, 0)
		if e != 0 {
			ferr = e
			return
		}
		if on {
			flags |= syscall.O_DIRECT
		} else {
			flags &^= syscall.O_DIRECT
		}
		if _, _, e := syscall.Syscall(syscall.SYS_FCNTL, fd, syscall.F_SETFL, flags); e != 0 {
			ferr = e
		}
	}); err != nil {
		return err
	}
	return ferr
}

// readAhead asks the kernel to read the runs of pages of f (pageSize bytes each) into the page
// cache in the background: madvise WILLNEED over a read-only mapping of the file, which
// returns once the reads are queued, in requests of readAheadChunk (the kernel reads no more
// than its readahead window of one: a run of 28 MiB asked at once came back as its first
// 8 MiB). It is a hint: where it fails (a file larger than the address space), the pages are
// read when first used.
func readAhead(f *os.File, pageSize int, runs []pageSpan) {
	if len(runs) == 0 {
		return
	}
	last := runs[len(runs)-1]
	size := int((last.id + last.n) * uint64(pageSize))
	rc, err := f.SyscallConn()
	if err != nil {
		return
	}
	_ = rc.Control(func(fd uintptr) {
		m, err := syscall.Mmap(int(fd), 0, size, syscall.PROT_READ, syscall.MAP_SHARED)
		if err != nil {
			return
		}
		defer syscall.Munmap(m)
		for _, r := range runs {
			for at, end := int(r.id)*pageSize, int(r.id+r.n)*pageSize; at < end; at += readAheadChunk {
				if syscall.Madvise(m[at:min(at+readAheadChunk, end)], syscall.MADV_WILLNEED) != nil {
					return
				}
			}
		}
	})
}

// readAheadChunk is the most readAhead asks for at once: Linux's default readahead window
// (128 KiB; a disk may set a larger one, this box's 8 MiB).
const readAheadChunk = 128 << 10
