package sandbox_test

import (
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"github.com/tidwall/gjson"

	"github.com/partnersim/partnersim/internal/sandboxtest"
	"github.com/partnersim/partnersim/simulator/sandbox"
)

// get answers a GET through the gate's listener (headers are "Name: value"): status,
// Retry-After and body. The listener must answer, never hang or refuse.
func get(t *testing.T, url string, header ...string) (int, string, string) {
	t.Helper()
	r := sandboxtest.Do(t, http.DefaultClient, http.MethodGet, url, "", "", header...)
	return r.Status, r.Header.Get("Retry-After"), r.Body
}

// While a set builds, the listener is up and answers: /livez 200, /readyz and every API and
// control-plane path 503 "sandbox is loading" with Retry-After and the build's progress; once
// built, the sandbox itself answers and /readyz is 200; draining, /readyz is 503 again. The
// build is held in its write phase (its progress callback blocks) while the answers are read.
func TestGateAnswersLoadingWhileTheSetBuilds(t *testing.T) {
	gate := sandbox.NewGate()
	srv := httptest.NewServer(gate)
	defer srv.Close()

	inWrite, release := make(chan struct{}), make(chan struct{})
	var once sync.Once
	progress := func(phase string, done, total int) {
		gate.Progress(phase, done, total)
		if phase == "write" && done > 0 {
			once.Do(func() { close(inWrite); <-release })
		}
	}
	opened := make(chan error, 1)
	var sb *sandbox.Sandbox
	go func() {
		var err error
		sb, err = openSandbox(t, sandbox.Config{LoadProgress: progress})
		opened <- err
	}()
	<-inWrite

	code, _, _ := get(t, srv.URL+"/livez")
	assert.Equal(t, http.StatusOK, code, "/livez while loading")
	for _, path := range []string{"/readyz", "/v1/users/", "/_sandbox/institutions", "/health", "/_sandbox/ui/"} {
		code, retry, body := get(t, srv.URL+path, "x-api-key: whatever", "x-sandbox-token: whatever")
		assert.Equal(t, http.StatusServiceUnavailable, code, "%s while loading: got %d %s", path, code, body)
		assert.Equal(t, "5", retry, "%s: Retry-After", path)
		assert.Equal(t, "sandbox is loading", gjson.Get(body, "detail").String(), path)
		assert.Equal(t, "write", gjson.Get(body, "progress.phase").String(), "%s: progress %s", path, body)
		assert.Positive(t, gjson.Get(body, "progress.total").Int(), "%s: progress %s", path, body)
	}

	close(release)
	require.NoError(t, <-opened)
	gate.Ready(sb.Server, sb.Ready)
	code, _, body := get(t, srv.URL+"/readyz")
	assert.Equal(t, http.StatusOK, code, "/readyz once built: %s", body)
	code, _, _ = get(t, srv.URL+"/health")
	assert.Equal(t, http.StatusOK, code, "/health once built")
	code, _, body = get(t, srv.URL+"/v1/users/")
	assert.Equal(t, http.StatusUnauthorized, code, "the sandbox answers the API once built: %s", body)

	gate.Drain()
	code, retry, body := get(t, srv.URL+"/readyz")
	assert.Equal(t, http.StatusServiceUnavailable, code, "/readyz while draining: %s", body)
	assert.Equal(t, "5", retry)
	code, _, _ = get(t, srv.URL+"/livez")
	assert.Equal(t, http.StatusOK, code, "/livez while draining")
	require.NoError(t, sb.Close())
	gate = sandbox.NewGate()
	gate.Ready(sb.Server, sb.Ready)
	srv2 := httptest.NewServer(gate)
	defer srv2.Close()
	code, _, body = get(t, srv2.URL+"/readyz")
	assert.Equal(t, http.StatusServiceUnavailable, code, "/readyz once the store is closed: %s", body)
}
