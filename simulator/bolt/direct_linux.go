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
