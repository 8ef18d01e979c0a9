package proxy_test

import (
	"bytes"
	"sync"
)

// syncBuffer is a buffer the proxy's worker writes while a test reads it at the end.
type syncBuffer struct {
	mu sync.Mutex
	bytes.Buffer
}

func (b *syncBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.Buffer.Write(p)
}
