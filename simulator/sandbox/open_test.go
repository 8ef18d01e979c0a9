package sandbox_test

import (
	"context"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.etcd.io/bbolt"

	"github.com/partnersim/partnersim/fixtures"
	"github.com/partnersim/partnersim/simulator"
	"github.com/partnersim/partnersim/simulator/sandbox"
)

// openSandbox opens a sandbox with cfg, on a store in the test's temp folder unless cfg names
// one, and closes it when the test ends (a test may close it before: Close is idempotent).
func openSandbox(tb testing.TB, cfg sandbox.Config) (*sandbox.Sandbox, error) {
	tb.Helper()
	if cfg.DBPath == "" {
		cfg.DBPath = filepath.Join(tb.TempDir(), "s.db")
	}
	sb, err := sandbox.Open(context.Background(), cfg)
	if err == nil {
		tb.Cleanup(func() { sb.Close() })
	}
	return sb, err
}

// newStore writes a loaded default store and returns its path and size.
func newStore(t *testing.T) (string, int64) {
	t.Helper()
	path := filepath.Join(t.TempDir(), "s.db")
	sb, err := openSandbox(t, sandbox.Config{DBPath: path})
	require.NoError(t, err)
	require.NoError(t, sb.Close())
	st, err := os.Stat(path)
	require.NoError(t, err)
	return path, st.Size()
}

// A damaged store file (decisions D17) is refused at open with a message naming the
// file and the remedies — never a SIGSEGV or a panic while serving.
func TestDamagedStoreRefusedAtOpen(t *testing.T) {
	for name, damage := range map[string]func(path string, size int64) error{
		"truncated to half":     func(p string, n int64) error { return os.Truncate(p, n/2) },
		"truncated to one page": func(p string, n int64) error { return os.Truncate(p, 4096) },
		"zeroed":                func(p string, n int64) error { return os.WriteFile(p, make([]byte, n), 0o600) },
		"a page of the tree zeroed": func(p string, n int64) error {
			f, err := os.OpenFile(p, os.O_WRONLY, 0)
			if err != nil {
				return err
			}
			defer f.Close()
			_, err = f.WriteAt(make([]byte, 4096), 4*4096)
			return err
		},
	} {
		t.Run(name, func(t *testing.T) {
			path, size := newStore(t)
			require.NoError(t, damage(path, size))
			_, err := openSandbox(t, sandbox.Config{DBPath: path})
			require.Error(t, err, "a damaged store was opened")
			msg := err.Error()
			assert.Contains(t, msg, path)
			assert.Contains(t, msg, "damaged")
			assert.Contains(t, msg, "snapshot restore")
			assert.Contains(t, msg, "delete it")
			assert.NotContains(t, msg, "another partnersim")
		})
	}
}

// Store-open errors say what happened: a store locked by another process says so (and only
// then suggests another process).
func TestLockedStoreSaysSo(t *testing.T) {
	path, _ := newStore(t)
	other, err := bbolt.Open(path, 0o600, &bbolt.Options{Timeout: time.Second})
	require.NoError(t, err)
	defer other.Close()
	_, err = openSandbox(t, sandbox.Config{DBPath: path})
	require.Error(t, err)
	assert.Contains(t, err.Error(), "in use by another process")
	assert.NotContains(t, err.Error(), "damaged")
}

// After building its fixtures into an empty store, the sandbox keeps the set's settings only,
// exactly as a restart on that store does: the checked set's index of every user belonged to
// the build.
func TestBuiltSandboxKeepsSettingsOnly(t *testing.T) {
	sb, err := openSandbox(t, sandbox.Config{Fixtures: fixtures.Default()})
	require.NoError(t, err)
	require.True(t, sb.Loaded)
	require.Error(t, sb.Fixtures.EachUser(func(simulator.User) error { return nil }), "the users were the build's")
	require.NotEmpty(t, sb.Fixtures.Keys)
	require.NotEmpty(t, sb.Fixtures.Institutions)
	require.NotEmpty(t, sb.Fixtures.Scenarios)
}
