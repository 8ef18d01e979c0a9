package sandbox_test

import (
	"context"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/partnersim/partnersim/sandbox"
)

func TestIsLoopback(t *testing.T) {
	for addr, want := range map[string]bool{
		"127.0.0.1:8080": true, "127.3.2.1:0": true, "localhost:8080": true, "[::1]:8080": true,
		"0.0.0.0:8080": false, ":8080": false, "[::]:8080": false, "10.0.0.5:80": false, "sandbox.example:8080": false,
	} {
		assert.Equal(t, want, sandbox.IsLoopback(addr), addr)
	}
}

// Issue 11 item 6 (D17): on an address that is not loopback the sandbox refuses the fixtures'
// published token, and switches loopback callbacks off unless explicitly allowed.
func TestExposedSandbox(t *testing.T) {
	open := func(cfg sandbox.Config) (*sandbox.Sandbox, error) {
		cfg.DBPath = filepath.Join(t.TempDir(), "s.db")
		sb, err := sandbox.Open(context.Background(), cfg)
		if err == nil {
			t.Cleanup(func() { sb.Close() })
		}
		return sb, err
	}
	_, err := open(sandbox.Config{Exposed: true})
	require.Error(t, err)
	assert.Contains(t, err.Error(), "published")
	assert.Contains(t, err.Error(), "--sandbox-token")
	_, err = open(sandbox.Config{Exposed: true, SandboxToken: "psim_sandbox_default_token_2026"})
	require.Error(t, err, "the published token passed explicitly is still the published token")

	loopbackURL := "http://127.0.0.1:9/hooks"
	sb, err := open(sandbox.Config{Exposed: true, NoControl: true})
	require.NoError(t, err, "without a control plane there is no token to protect")
	assert.Error(t, sb.Guard.CheckURL(context.Background(), loopbackURL), "loopback callbacks are off when exposed")

	sb, err = open(sandbox.Config{Exposed: true, SandboxToken: "a-secret-of-our-own"})
	require.NoError(t, err)
	assert.Error(t, sb.Guard.CheckURL(context.Background(), loopbackURL))

	on := true
	sb, err = open(sandbox.Config{Exposed: true, SandboxToken: "a-secret-of-our-own", AllowLoopbackCallbacks: &on})
	require.NoError(t, err)
	assert.NoError(t, sb.Guard.CheckURL(context.Background(), loopbackURL), "explicitly allowed")

	sb, err = open(sandbox.Config{})
	require.NoError(t, err)
	assert.NoError(t, sb.Guard.CheckURL(context.Background(), loopbackURL), "on loopback, allowed by default")
	off := false
	sb, err = open(sandbox.Config{AllowLoopbackCallbacks: &off})
	require.NoError(t, err)
	assert.Error(t, sb.Guard.CheckURL(context.Background(), loopbackURL))
}
