package loadtest

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"time"

	"github.com/partnersim/partnersim/fixtures"
	"github.com/partnersim/partnersim/simulator/sandbox"
)

// HostConfig says how SelfHost starts its sandbox.
type HostConfig struct {
	// Fixtures is the set to load (nil: the embedded default set).
	Fixtures fs.FS
	// DBPath is the bbolt file; an existing, loaded file is reused as is (so a large set is
	// loaded once). Empty means a file in a new temporary folder, removed by Close.
	DBPath string
}

// Hosted is a sandbox serving on 127.0.0.1:0 in this process.
type Hosted struct {
	URL     string
	Sandbox *sandbox.Sandbox
	// Set is the fixture set (to know its users and keys).
	Set *fixtures.Set
	// LoadTime is how long opening the store (and loading the set into it) took.
	LoadTime time.Duration

	srv    *http.Server
	tmpDir string
}

// SelfHost opens a sandbox and serves it on a loopback port, as `partnersim serve` does.
func SelfHost(ctx context.Context, cfg HostConfig) (*Hosted, error) {
	h := &Hosted{}
	if cfg.DBPath == "" {
		dir, err := os.MkdirTemp("", "partnersim-load-")
		if err != nil {
			return nil, err
		}
		h.tmpDir = dir
		cfg.DBPath = filepath.Join(dir, "load.db")
	}
	start := time.Now()
	sb, err := sandbox.Open(ctx, sandbox.Config{DBPath: cfg.DBPath, Fixtures: cfg.Fixtures, RetrySchedule: []time.Duration{}})
	if err != nil {
		h.removeTmp()
		return nil, fmt.Errorf("loadtest: open the sandbox: %w", err)
	}
	h.LoadTime = time.Since(start)
	h.Sandbox = sb
	{
		// The sandbox keeps the set's settings only (a build's, as a restart's); the load
		// needs the users and orders it will ask for, so read the whole set.
		fsys := cfg.Fixtures
		if fsys == nil {
			fsys = fixtures.Default()
		}
		if h.Set, err = fixtures.Open(fsys); err != nil {
			sb.Close()
			h.removeTmp()
			return nil, fmt.Errorf("loadtest: read the fixture set: %w", err)
		}
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		sb.Close()
		h.removeTmp()
		return nil, err
	}
	h.srv = newHTTPServer(sb.Server)
	go func() { _ = h.srv.Serve(ln) }()
	h.URL = "http://" + ln.Addr().String()
	return h, nil
}

// Close stops serving, closes the sandbox and removes a temporary store.
func (h *Hosted) Close() error {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	err := h.srv.Shutdown(ctx)
	err = errors.Join(err, h.Sandbox.Close())
	h.removeTmp()
	return err
}

func (h *Hosted) removeTmp() {
	if h.tmpDir != "" {
		_ = os.RemoveAll(h.tmpDir)
	}
}
