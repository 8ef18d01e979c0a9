package main

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/partnersim/partnersim/internal/loadtest"
)

func TestLoadSelfHostedReportsRatiosToTheCeiling(t *testing.T) {
	js := filepath.Join(t.TempDir(), "load.json")
	out, errOut, err := runCLI("load", "--scenario", "detail,mix", "--connections", "1,2", "--duration", "200ms", "--warmup", "50ms",
		"--db", filepath.Join(t.TempDir(), "load.db"), "--json", js)
	require.NoError(t, err, errOut)
	assert.Contains(t, errOut, "8 runs of 200ms")
	assert.Contains(t, out, "ceiling")
	assert.Contains(t, out, "Get User Detail p50 at 1 connection")
	assert.Contains(t, out, "command  partnersim load --scenario detail,mix")
	var rep loadtest.Report
	b, err := os.ReadFile(js)
	require.NoError(t, err)
	require.NoError(t, json.Unmarshal(b, &rep))
	require.Len(t, rep.Runs, 4)
	for _, r := range rep.Runs {
		assert.Zero(t, r.Target.Errors, "%s %d", r.Scenario, r.Connections)
		require.NotNil(t, r.Ratio)
		assert.Positive(t, r.Ratio.RPS)
	}
	assert.Positive(t, rep.Machine.CPUs)
	assert.NotEmpty(t, rep.Machine.GoVersion)
}

func TestLoadGeneratesASet(t *testing.T) {
	out, errOut, err := runCLI("load", "--users", "60", "--orders", "300", "--scenario", "mix", "--connections", "2",
		"--duration", "150ms", "--warmup", "0s", "--no-ceiling")
	require.NoError(t, err, errOut)
	assert.Contains(t, errOut, "generating 60 users and 300 orders")
	assert.Contains(t, out, "generated set of 60 users and 300 orders")
	assert.NotContains(t, out, "  ceiling")
}

func TestLoadAgainstARunningTarget(t *testing.T) {
	// The ceiling of a --target runs as `partnersim ceiling`, this test binary (TestMain).
	t.Setenv("PARTNERSIM_TEST_AS_CLI", "1")
	h, err := loadtest.SelfHost(context.Background(), loadtest.HostConfig{DBPath: filepath.Join(t.TempDir(), "t.db")})
	require.NoError(t, err)
	defer h.Close()
	out, errOut, err := runCLI("load", "--target", h.URL+"/v1", "--api-key", "sbx_harborAllScopes0000000000000000000000001",
		"--scenario", "detail", "--connections", "1", "--duration", "150ms", "--warmup", "0s")
	require.NoError(t, err, errOut)
	assert.Contains(t, out, "(serving the embedded default set)")
	assert.Contains(t, out, "ceiling")

	_, _, err = runCLI("load", "--target", h.URL, "--api-key", "sbx_notInTheSet", "--duration", "1s")
	assert.ErrorContains(t, err, "not one of the fixture set's keys")
}

func TestLoadGoesOnlyToLoopback(t *testing.T) {
	for _, target := range []string{"http://93.184.216.34:8080", "https://example.com", "http://10.0.0.1", "http://[2001:db8::1]:80", "http://127.0.0.1.nip.io"} {
		_, _, err := runCLI("load", "--target", target, "--duration", "1s")
		assert.ErrorContains(t, err, "is not loopback", target)
	}
	for _, target := range []string{"http://127.0.0.1:8080", "http://localhost:8080/v1", "http://[::1]:9", "http://127.9.9.9"} {
		_, err := checkTarget(target, false)
		assert.NoError(t, err, target)
	}
	_, err := checkTarget("http://93.184.216.34:8080", true)
	assert.NoError(t, err, "--allow-remote")
	base, err := checkTarget("http://127.0.0.1:8080/v1/", false)
	require.NoError(t, err)
	assert.Equal(t, "http://127.0.0.1:8080", base, "the scenarios' paths carry the version")
}

func TestLoadRefusesBadFlags(t *testing.T) {
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"--duration", "0s"}, "--duration must be positive"},
		{[]string{"--connections", "0"}, "--connections"},
		{[]string{"--connections", "a,b"}, "--connections"},
		{[]string{"--scenario", "everything"}, "unknown scenario"},
		{[]string{"--target", "http://127.0.0.1:1", "--users", "5"}, "do not go with --target"},
		{[]string{"--fixtures", "x", "--users", "5"}, "not both"},
		{[]string{"--target", "127.0.0.1:8080"}, "want a base URL"},
		{[]string{"extra"}, "takes no arguments"},
	} {
		_, _, err := runCLI("load", c.args...)
		assert.ErrorContains(t, err, c.want, "%v", c.args)
	}
}
