package main

import (
	"bytes"
	"context"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// Issue 11 item 10: -h and --help print the command's help and succeed (exit 0) everywhere.
func TestHelpSucceedsEverywhere(t *testing.T) {
	for _, args := range [][]string{
		{"serve"}, {"receive"}, {"send"}, {"certify"}, {"contract"}, {"load"},
		{"trigger", "kyc"}, {"trigger", "clock"}, {"scenario", "run"}, {"scenario", "list"},
		{"snapshot", "save"}, {"snapshot", "restore"}, {"snapshot"}, {"scenario"}, {"trigger"},
		{"fixtures", "check"}, {"fixtures", "generate"},
	} {
		for _, h := range []string{"-h", "--help"} {
			var out, errOut bytes.Buffer
			full := append(append([]string{"partnersim"}, args...), h)
			err := run(context.Background(), full, noEnv, &out, &errOut)
			assert.NoError(t, err, strings.Join(full, " "))
			assert.NotEmpty(t, out.String()+errOut.String(), "%s prints its help", strings.Join(full, " "))
		}
	}
}

// Issue 11 item 10: flags after positional arguments are flags: `snapshot save -h` must not
// save a snapshot named "-h", and `snapshot save NAME --sandbox-url …` reaches that URL.
func TestFlagsAfterPositionalArguments(t *testing.T) {
	var mu sync.Mutex
	var paths []string
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		paths = append(paths, r.URL.Path)
		mu.Unlock()
		w.Header().Set("Content-Type", "application/json")
		w.Write([]byte(`{"snapshot":"nightly","action":"saved"}`))
	}))
	defer srv.Close()
	var out bytes.Buffer
	require.NoError(t, run(context.Background(), []string{"partnersim", "snapshot", "save", "-h", "--sandbox-url", srv.URL}, noEnv, &out, &out))
	require.NoError(t, run(context.Background(), []string{"partnersim", "snapshot", "save", "nightly", "--sandbox-url", srv.URL, "--sandbox-token", "t"}, noEnv, &out, &out))
	require.NoError(t, run(context.Background(), []string{"partnersim", "scenario", "run", "onboarding", "--sandbox-url", srv.URL, "--sandbox-token", "t"}, noEnv, &out, &out))
	mu.Lock()
	defer mu.Unlock()
	assert.Equal(t, []string{"/_sandbox/snapshots/nightly", "/_sandbox/scenarios/onboarding/run"}, paths[:min(2, len(paths))])
	err := run(context.Background(), []string{"partnersim", "snapshot", "save", "a", "b", "--sandbox-url", srv.URL}, noEnv, &out, &out)
	assert.ErrorContains(t, err, "one NAME")
}

// Issue 11 item 10: serve on a busy port fails before touching the store.
func TestServeOnBusyPortLeavesTheStoreAlone(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	defer ln.Close()
	db := filepath.Join(t.TempDir(), "untouched.db")
	var out bytes.Buffer
	err = run(context.Background(), []string{"partnersim", "serve", "--addr", ln.Addr().String(), "--db", db}, noEnv, &out, &out)
	require.Error(t, err)
	assert.Contains(t, err.Error(), ln.Addr().String())
	_, statErr := os.Stat(db)
	assert.True(t, os.IsNotExist(statErr), "the store file was created: %v", statErr)
}

// Issue 11 item 6: serve refuses a non-loopback address with the published token, saying why.
func TestServeExposedRefusesThePublishedToken(t *testing.T) {
	var out bytes.Buffer
	err := run(context.Background(), []string{"partnersim", "serve", "--addr", "0.0.0.0:0", "--db", filepath.Join(t.TempDir(), "s.db")}, noEnv, &out, &out)
	require.Error(t, err)
	assert.Contains(t, err.Error(), "published")
}
