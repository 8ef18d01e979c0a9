package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/partnersim/partnersim/internal/sandboxtest"
	"github.com/partnersim/partnersim/simulator/openapi"
)

// Against the sandbox, the contract run checks every exchange against the documents it serves
// (the partner API's and the control plane's) by default, and says how many it checked.
func TestContractChecksAgainstTheServedDocuments(t *testing.T) {
	srv := sandboxtest.MustServe(t)
	var out, errOut bytes.Buffer
	err := run(context.Background(), cli("contract", "--base-url", srv.URL+"/v1", "--sandbox-url", srv.URL, "--sandbox-token", srv.SB.Token,
		"--name", "^(An unknown path is 404|A path without its trailing slash redirects|per_page outside 1..100 is refused)", "--format", "progress"),
		noEnv, &out, &errOut)
	require.NoError(t, err, errOut.String())
	m := regexp.MustCompile(`openapi: (\d+) exchanges checked against (\S+) and (\S+), 0 disagreed`).FindStringSubmatch(errOut.String())
	require.NotNil(t, m, errOut.String())
	n, _ := strconv.Atoi(m[1])
	assert.Greater(t, n, 3)
	assert.Equal(t, srv.URL+"/openapi.json", m[2])
	assert.Equal(t, srv.URL+"/_sandbox/openapi.json", m[3])
}

// An implementation whose answers stray from its document fails the scenario that met it,
// naming the operation, the status and the schema path.
func TestContractReportsWhereAResponseDisagrees(t *testing.T) {
	doc, err := openapi.Partner([]string{"v1"})
	require.NoError(t, err)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("X-Request-Id", "req_1")
		w.Header().Set("Content-Type", "application/json")
		switch r.URL.Path {
		case "/openapi.json":
			_, _ = w.Write(doc)
		case "/v1/health":
			_, _ = w.Write([]byte(`{"status":"ok","uptime":12}`))
		default:
			w.WriteHeader(http.StatusNotFound)
			_, _ = w.Write([]byte(`{"detail":"Not Found"}`))
		}
	}))
	t.Cleanup(srv.Close)
	var out, errOut bytes.Buffer
	err = run(context.Background(), cli("contract", "--base-url", srv.URL+"/v1", "--api-key", "sbx_x", "--name", "^Health answers without an API key$"),
		noEnv, &out, &errOut)
	require.True(t, errors.Is(err, errReported), "got %v\n%s", err, errOut.String())
	for _, want := range []string{"getHealth_v1", "answered 200", "#/components/schemas/Health", "'uptime' not allowed", "disagreed"} {
		assert.Contains(t, errOut.String(), want)
	}
}

// --openapi FILE checks against that document when the target serves none; off checks nothing.
func TestContractOpenAPIFileAndOff(t *testing.T) {
	srv := healthServer(t, http.StatusOK)
	doc, err := openapi.Partner([]string{"v1"})
	require.NoError(t, err)
	file := filepath.Join(t.TempDir(), "openapi.json")
	require.NoError(t, os.WriteFile(file, doc, 0o600))
	args := []string{"--base-url", srv.URL + "/v1", "--api-key", "sbx_x", "--name", "^Health answers without an API key$", "--format", "progress"}

	var out, errOut bytes.Buffer
	require.Error(t, run(context.Background(), cli("contract", append(args, "--openapi", file)...), noEnv, &out, &errOut),
		"the health server sends no X-Request-Id, which the document promises")
	assert.Contains(t, errOut.String(), "checked against "+file)
	assert.Contains(t, errOut.String(), `response header "X-Request-Id" missing`)

	out.Reset()
	errOut.Reset()
	require.NoError(t, run(context.Background(), cli("contract", append(args, "--openapi", "off")...), noEnv, &out, &errOut))
	assert.Contains(t, errOut.String(), "responses not checked against a document")

	out.Reset()
	errOut.Reset()
	err = run(context.Background(), cli("contract", append(args, "--openapi", filepath.Join(t.TempDir(), "none.json"))...), noEnv, &out, &errOut)
	require.Error(t, err)
	assert.False(t, errors.Is(err, errReported), "a missing document is an option error")
	var js map[string]any
	assert.NoError(t, json.Unmarshal(doc, &js))
	assert.False(t, strings.Contains(errOut.String(), "exchanges checked"))
}

// A run given no --sandbox-url against a deployment that serves /_sandbox/ (the sandbox itself,
// as a CI job that forgot the flag runs it) does not fail: the scenario that needs the control
// plane skips, saying why, rather than calling an operation no document it checks against has.
func TestContractWithoutTheSandboxURLSkipsTheControlPlane(t *testing.T) {
	srv := sandboxtest.MustServe(t)
	key := srv.MustControl(t, "POST", "/_sandbox/institutions/ins_harbor/keys", `{"scopes":["read:user","read:orders","manage:sessions","manage:webhooks"]}`).JSON("key").String()
	var out, errOut bytes.Buffer
	err := run(context.Background(), cli("contract", "--base-url", srv.URL+"/v1", "--api-key", key,
		"--name", "^The control plane needs its token$", "--format", "pretty"), noEnv, &out, &errOut)
	require.NoError(t, err, "%s\n%s", out.String(), errOut.String())
	assert.Contains(t, out.String()+errOut.String(), "--sandbox-url")
}
