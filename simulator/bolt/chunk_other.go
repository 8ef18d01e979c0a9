//go:build !linux

package bolt

// newChunk returns an empty spool chunk of capacity size, on Go's heap (see chunk_linux.go).
func newChunk(size int) (b []byte, mapped bool) { return make([]byte, 0, size), false }

// freeChunk is never called: no chunk is mapped here.
func freeChunk([]byte) {}

// growChunk is never called: no chunk is mapped here.
func growChunk([]byte, int) ([]byte, bool) { return nil, false }
