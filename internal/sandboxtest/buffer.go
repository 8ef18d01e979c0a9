package sandboxtest

import (
	"bytes"
	"sync"
)

// Buffer is a bytes.Buffer that a server's or a command's goroutines write to while the test
// reads it (logs, a command's output).
type Buffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

// Write appends p.
func (b *Buffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

// String returns what was written so far.
func (b *Buffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}
