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

func TestIsLoopback(t *testing.T) {
	for addr, want := range map[string]bool{
		"127.0.0.1:8080": true, "127.3.2.1:0": true, "localhost:8080": true, "[::1]:8080": true,
		"0.0.0.0:8080": false, ":8080": false, "[::]:8080": false, "10.0.0.5:80": false, "sandbox.example:8080": false,
	} {
		assert.Equal(t, want, sandbox.IsLoopback(addr), addr)
	}
}

// On an address that is not loopback (decisions D17) the sandbox refuses the fixtures'
// published token, and switches loopback callbacks off unless explicitly allowed.
func TestExposedSandbox(t *testing.T) {
	_, err := openSandbox(t, sandbox.Config{Exposed: true})
	require.Error(t, err)
	assert.Contains(t, err.Error(), "published")
	assert.Contains(t, err.Error(), "--sandbox-token")
	_, err = openSandbox(t, sandbox.Config{Exposed: true, SandboxToken: "psim_sandbox_default_token_2026"})
	require.Error(t, err, "the published token passed explicitly is still the published token")

	loopbackURL := "http://127.0.0.1:9/hooks"
	sb, err := openSandbox(t, sandbox.Config{Exposed: true, NoControl: true})
	require.NoError(t, err, "without a control plane there is no token to protect")
	assert.Error(t, sb.Guard.CheckURL(context.Background(), loopbackURL), "loopback callbacks are off when exposed")

	sb, err = openSandbox(t, sandbox.Config{Exposed: true, SandboxToken: "a-secret-of-our-own-24-chars"})
	require.NoError(t, err)
	assert.Error(t, sb.Guard.CheckURL(context.Background(), loopbackURL))

	on := true
	sb, err = openSandbox(t, sandbox.Config{Exposed: true, SandboxToken: "a-secret-of-our-own-24-chars", AllowLoopbackCallbacks: &on})
	require.NoError(t, err)
	assert.NoError(t, sb.Guard.CheckURL(context.Background(), loopbackURL), "explicitly allowed")

	sb, err = openSandbox(t, sandbox.Config{})
	require.NoError(t, err)
	assert.NoError(t, sb.Guard.CheckURL(context.Background(), loopbackURL), "on loopback, allowed by default")
	off := false
	sb, err = openSandbox(t, sandbox.Config{AllowLoopbackCallbacks: &off})
	require.NoError(t, err)
	assert.Error(t, sb.Guard.CheckURL(context.Background(), loopbackURL))
}

// copyDefaultSet writes the default fixture set to a directory with its own sandbox token.
func copyDefaultSet(t *testing.T, token string) string {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "set")
	require.NoError(t, os.CopyFS(dir, fixtures.Default()))
	require.NoError(t, os.Chmod(filepath.Join(dir, "sandbox.json"), 0o644))
	require.NoError(t, os.WriteFile(filepath.Join(dir, "sandbox.json"), []byte(`{"sandbox_token":"`+token+`"}`), 0o644))
	return dir
}

// Beyond loopback the token judged is the effective one — the one the store holds — not the
// fixture set's given at this start (decisions D18): a store first loaded from the default
// fixtures keeps their published token whatever set is named later.
func TestExposedSandboxJudgesTheEffectiveToken(t *testing.T) {
	db := filepath.Join(t.TempDir(), "s.db")
	sb, err := openSandbox(t, sandbox.Config{DBPath: db})
	require.NoError(t, err)
	require.NoError(t, sb.Close())

	other := copyDefaultSet(t, "another-set-token-0123456789abcdef")
	sb, err = openSandbox(t, sandbox.Config{DBPath: db, Exposed: true, Fixtures: os.DirFS(other)})
	if err == nil {
		t.Fatalf("started exposed with the store's token %q, the default fixtures' published one", sb.Token)
	}
	assert.Contains(t, err.Error(), "published")
	assert.Contains(t, err.Error(), "--sandbox-token")

	// A fixture set's token is published with the set, whichever set it is.
	_, err = openSandbox(t, sandbox.Config{Exposed: true, Fixtures: os.DirFS(other)})
	require.Error(t, err)
	_, err = openSandbox(t, sandbox.Config{DBPath: db, Exposed: true, Fixtures: os.DirFS(other),
		SandboxToken: "psim_sandbox_default_token_2026"})
	require.Error(t, err, "the default set's token named explicitly")

	sb, err = openSandbox(t, sandbox.Config{DBPath: db, Exposed: true, Fixtures: os.DirFS(other),
		SandboxToken: "an-operator-secret-of-24+chars"})
	require.NoError(t, err)
	require.NoError(t, sb.Close())
}

// Beyond loopback a token must be at least 24 characters (decisions D18); on loopback any is.
func TestExposedSandboxRefusesShortTokens(t *testing.T) {
	for _, tok := range []string{"a", "short-secret", "23-characters-long-oops"} {
		_, err := openSandbox(t, sandbox.Config{Exposed: true, SandboxToken: tok})
		require.Error(t, err, "token %q", tok)
		assert.Contains(t, err.Error(), "at least 24 characters", "token %q", tok)
		assert.Contains(t, err.Error(), "--sandbox-token", "token %q", tok)
	}
	_, err := openSandbox(t, sandbox.Config{SandboxToken: "a"})
	require.NoError(t, err, "on loopback a short token is the operator's business")
	sb, err := openSandbox(t, sandbox.Config{Exposed: true, Fixtures: os.DirFS(copyDefaultSetWithoutToken(t))})
	require.NoError(t, err, "a generated token is the operator's own")
	assert.GreaterOrEqual(t, len(sb.Token), 24)
}

func copyDefaultSetWithoutToken(t *testing.T) string {
	t.Helper()
	dir := copyDefaultSet(t, "")
	require.NoError(t, os.Remove(filepath.Join(dir, "sandbox.json")))
	return dir
}

// A token that --seed reproduces is no secret (decisions D18): beyond loopback a generated
// token comes from the system's random source even in deterministic mode, so two stores with
// the same seed and clock get different tokens; on loopback the seed still decides it.
func TestExposedGeneratedTokenIgnoresTheSeed(t *testing.T) {
	set := os.DirFS(copyDefaultSetWithoutToken(t))
	seed, frozen := uint64(42), time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	token := func(exposed bool) string {
		sb, err := openSandbox(t, sandbox.Config{Fixtures: set, Seed: &seed, FrozenClock: &frozen, Exposed: exposed})
		require.NoError(t, err)
		return sb.Token
	}
	a, b := token(true), token(true)
	assert.NotEqual(t, a, b, "two exposed stores with --seed 42 printed the same token")
	assert.GreaterOrEqual(t, len(a), 24)
	assert.Equal(t, token(false), token(false), "on loopback deterministic mode keeps its token")
}
