package main

import (
	"bytes"
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/partnersim/partnersim/internal/sandboxtest"
)

func noEnv(string) string { return "" }

// cli is the command line `partnersim command args…` as run takes it.
func cli(command string, args ...string) []string {
	return append([]string{"partnersim", command}, args...)
}

// runCLI runs `partnersim command args…` and returns its stdout, stderr and error.
func runCLI(command string, args ...string) (stdout, stderr string, err error) {
	var out, errOut bytes.Buffer
	err = run(context.Background(), cli(command, args...), noEnv, &out, &errOut)
	return out.String(), errOut.String(), err
}

// healthServer answers GET /v1/health with the given status and everything else 404.
func healthServer(t *testing.T, status int) *httptest.Server {
	t.Helper()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/v1/health" {
			w.Header().Set("Content-Type", "application/json")
			w.WriteHeader(status)
			_, _ = w.Write([]byte(`{"status":"ok"}`))
			return
		}
		http.NotFound(w, r)
	}))
	t.Cleanup(srv.Close)
	return srv
}

func TestContractPassesAgainstAConformingDeployment(t *testing.T) {
	srv := healthServer(t, http.StatusOK)
	var out, errOut bytes.Buffer
	cucumber := filepath.Join(t.TempDir(), "contract.json")
	err := run(context.Background(), cli("contract", "--base-url", srv.URL+"/v1", "--api-key", "sbx_x",
		"--name", "^Health answers without an API key$", "--format", "junit", "--cucumber", cucumber), noEnv, &out, &errOut)
	if err != nil {
		t.Fatalf("expected the run to pass, got %v\n%s", err, errOut.String())
	}
	if b, err := os.ReadFile(cucumber); err != nil || !strings.Contains(string(b), `"name": "Health answers without an API key"`) {
		t.Errorf("expected --cucumber to write the cucumber JSON report, got %v %s", err, b)
	}
	if !strings.Contains(out.String(), "<testsuites") {
		t.Errorf("expected a JUnit report on stdout, got %q", out.String())
	}
	if !strings.Contains(errOut.String(), "1 passed, 0 failed") {
		t.Errorf("expected the summary on stderr, got %q", errOut.String())
	}
}

func TestContractFailsWhenAScenarioFails(t *testing.T) {
	srv := healthServer(t, http.StatusInternalServerError)
	var out, errOut bytes.Buffer
	env := func(k string) string {
		return map[string]string{"PARTNERSIM_BASE_URL": srv.URL + "/v1", "PARTNERSIM_API_KEY": "sbx_x"}[k]
	}
	err := run(context.Background(), cli("contract", "--name", "^Health answers without an API key$"), env, &out, &errOut)
	if !errors.Is(err, errReported) {
		t.Fatalf("expected a reported failure, got %v", err)
	}
	if !strings.Contains(errOut.String(), "FAILED") || !strings.Contains(errOut.String(), "expected status 200, got GET") {
		t.Errorf("expected the failed scenario and its reason on stderr, got %q", errOut.String())
	}
}

func TestContractRefusesBadFlags(t *testing.T) {
	for _, args := range [][]string{
		{},                            // no base URL
		{"--base-url", "http://x/v1"}, // no key and no control plane
		{"--base-url", "http://x/v1", "--api-key", "k", "--format", "xml"},
		{"--base-url", "http://x/v1", "--api-key", "k", "--key-without", "read:user"},
		{"--base-url", "http://x/v1", "--api-key", "k", "stray"},
	} {
		var out, errOut bytes.Buffer
		if err := run(context.Background(), cli("contract", args...), noEnv, &out, &errOut); err == nil || errors.Is(err, errReported) {
			t.Errorf("%q: expected an option error, got %v", args, err)
		}
	}
}

// contract follows the environment serve prints, as trigger, scenario, deliveries and receive
// do: PARTNERSIM_SANDBOX_URL names the control plane, PARTNERSIM_SANDBOX_TOKEN its token, and
// on loopback the default fixtures' token is the fallback.
func TestContractFollowsTheSandboxEnvironment(t *testing.T) {
	defaultSrv := sandboxtest.MustServe(t)
	env := func(k string) string {
		return map[string]string{"PARTNERSIM_SANDBOX_URL": defaultSrv.URL}[k]
	}
	var out, errOut bytes.Buffer
	err := run(context.Background(), cli("contract", "--base-url", defaultSrv.URL+"/v1", "--name", "^Health answers without an API key$", "--format", "junit"), env, &out, &errOut)
	require.NoError(t, err, "with PARTNERSIM_SANDBOX_URL on loopback and no token, the default token is the fallback:\n%s", errOut.String())

	s := newCLISandbox(t)
	out.Reset()
	errOut.Reset()
	err = run(context.Background(), cli("contract", "--base-url", s.URL+"/v1", "--name", "^Health answers without an API key$", "--format", "junit"), s.env, &out, &errOut)
	require.NoError(t, err, "PARTNERSIM_SANDBOX_TOKEN is the token:\n%s", errOut.String())
}

// A refusal says the one thing to do: a wrong token names the token's flag and variable, and
// says nothing of --api-key (which was not given and is not the problem).
func TestContractRefusalsSayTheOneThingToDo(t *testing.T) {
	s := newCLISandbox(t)
	env := func(k string) string { return map[string]string{"PARTNERSIM_SANDBOX_URL": s.URL}[k] }
	var out, errOut bytes.Buffer
	err := run(context.Background(), cli("contract", "--base-url", s.URL+"/v1"), env, &out, &errOut)
	require.Error(t, err)
	assert.Contains(t, err.Error(), "PARTNERSIM_SANDBOX_TOKEN")
	assert.NotContains(t, err.Error(), "--api-key", "the key hint is unrelated to a token refusal")

	err = run(context.Background(), cli("contract", "--base-url", "https://staging.example/v1"), noEnv, &out, &errOut)
	require.Error(t, err)
	assert.Contains(t, err.Error(), "PARTNERSIM_SANDBOX_URL", "a missing control plane names the variable serve prints")
	assert.Contains(t, err.Error(), "--api-key")
}

// The summary is printed once: a human report on stdout already ends with it.
func TestContractPrintsItsSummaryOnce(t *testing.T) {
	srv := healthServer(t, http.StatusOK)
	var both bytes.Buffer
	err := run(context.Background(), cli("contract", "--base-url", srv.URL+"/v1", "--api-key", "sbx_x",
		"--name", "^Health answers without an API key$", "--format", "progress"), noEnv, &both, &both)
	require.NoError(t, err, both.String())
	assert.Equal(t, 1, strings.Count(both.String(), "1 scenarios: 1 passed"), "the summary once, got:\n%s", both.String())
}
