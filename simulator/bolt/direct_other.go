//go:build !linux

package bolt

import (
	"errors"
	"os"
)

// directIO has no direct I/O to turn on here (see direct_linux.go): run files go through the
// page cache.
func directIO(f *os.File, on bool) error {
	if on {
		return errors.ErrUnsupported
	}
	return nil
}

// readAhead has nothing to do here: without direct I/O the file went through the page cache.
func readAhead(f *os.File, pageSize int, runs []pageSpan) {}
