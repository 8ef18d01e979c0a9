package loadtest

import (
	"context"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestSelfHostReusesALoadedStore: a second SelfHost on the same file reuses the loaded store
// (the sandbox reads only the set's settings then) and still knows the set's users to load
// with.
func TestSelfHostReusesALoadedStore(t *testing.T) {
	db := filepath.Join(t.TempDir(), "reuse.db")
	for run := range 2 {
		h, err := SelfHost(context.Background(), HostConfig{DBPath: db})
		require.NoError(t, err)
		require.Equal(t, run == 0, h.Sandbox.Loaded, "loaded on the first run only")
		d, key, err := FromSet(h.Set, "")
		require.NoError(t, err, "run %d", run)
		require.NotEmpty(t, key)
		require.NotNil(t, d)
		require.NoError(t, h.Close())
	}
}
