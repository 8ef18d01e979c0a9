//go:build !linux

package bolt

import "testing"

// residentPages cannot tell here which pages the page cache holds (see resident_linux_internal_test.go).
func residentPages(t *testing.T, path string, pageSize int) (resident []bool, ok bool) {
	return nil, false
}

// directIOSkipsTheCache: no direct I/O here (directIO).
func directIOSkipsTheCache(t *testing.T, dir string) bool { return false }
