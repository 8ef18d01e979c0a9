package main

import (
	"bytes"
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/partnersim/partnersim/fixtures/generate"
	"github.com/partnersim/partnersim/simulator/sandbox"
)

func TestFixturesCheckClean(t *testing.T) {
	dir := t.TempDir()
	require.NoError(t, generate.Write(dir, generate.Options{Users: 40, Orders: 150, Seed: 2}))
	out, _, err := runCLI("fixtures", "check", dir)
	require.NoError(t, err)
	assert.Regexp(t, `^ok: 2 institutions, 8 keys, \d+ members, 40 users, \d+ transactions, 150 orders, 5 scenarios\n$`, out)
}

func TestFixturesCheckReportsEveryProblem(t *testing.T) {
	dir := t.TempDir()
	require.NoError(t, generate.Write(dir, generate.Options{Users: 10, Orders: 20, Seed: 2}))
	require.NoError(t, os.WriteFile(filepath.Join(dir, "prices.json"), []byte(`{"AAPL":"-1"}`), 0o644))
	require.NoError(t, os.WriteFile(filepath.Join(dir, "notes.txt"), []byte("x"), 0o644))

	out, errOut, err := runCLI("fixtures", "check", dir)
	require.Error(t, err)
	assert.True(t, errors.Is(err, errReported), "main must not print the problems again: %v", err)
	lines := strings.Split(strings.TrimSpace(out), "\n")
	assert.Greater(t, len(lines), 2, "every problem, one a line")
	assert.Contains(t, out, "notes.txt: $: unknown file")
	assert.Contains(t, out, `prices.json: $.AAPL: "-1": a price must be greater than 0`)
	for _, l := range lines {
		assert.Regexp(t, `^[^:]+: \$[^:]*: .+`, l, "file: path: reason")
	}
	assert.Contains(t, errOut, "problems")
}

func TestFixturesCheckBadArguments(t *testing.T) {
	_, _, err := runCLI("fixtures", "check")
	assert.ErrorContains(t, err, "want one set folder")
	_, _, err = runCLI("fixtures", "check", filepath.Join(t.TempDir(), "nope"))
	assert.ErrorContains(t, err, "is not a folder")
	_, _, err = runCLI("fixtures", "frobnicate")
	assert.ErrorContains(t, err, "unknown subcommand")
	_, errOut, err := runCLI("fixtures")
	assert.Error(t, err)
	assert.Contains(t, errOut, "usage:")
	out, _, err := runCLI("fixtures", "help")
	assert.NoError(t, err)
	assert.Contains(t, out, "fixtures generate")
}

func TestFixturesGenerate(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "set")
	// Flags may come after the folder too.
	out, _, err := runCLI("fixtures", "generate", dir, "--users", "60", "--orders", "300", "--seed", "9")
	require.NoError(t, err)
	assert.Contains(t, out, "generate: 100% (360/360 records)", "plain progress lines off a terminal")
	assert.NotContains(t, out, "\r", "no bar off a terminal")
	assert.Contains(t, out, "wrote "+dir+": 60 users, 300 orders (seed 9)")

	out, _, err = runCLI("fixtures", "check", dir)
	require.NoError(t, err)
	assert.Contains(t, out, "60 users")
	assert.Contains(t, out, "300 orders")

	// The command writes exactly what the library writes for the same options.
	lib := t.TempDir()
	require.NoError(t, generate.Write(lib, generate.Options{Users: 60, Orders: 300, Seed: 9}))
	for _, f := range []string{"users.json", "transactions.json", "keys.json", "members.json"} {
		a, err := os.ReadFile(filepath.Join(dir, f))
		require.NoError(t, err)
		b, err := os.ReadFile(filepath.Join(lib, f))
		require.NoError(t, err)
		assert.True(t, bytes.Equal(a, b), "%s: same seed, same bytes", f)
	}

	_, _, err = runCLI("fixtures", "generate", "--users", "5", "--orders", "5", dir)
	assert.ErrorContains(t, err, "--force", "a folder that is not empty is not overwritten by accident")
	_, _, err = runCLI("fixtures", "generate", "--users", "5", "--orders", "5", "--force", dir)
	assert.NoError(t, err)
	_, _, err = runCLI("fixtures", "generate", "--users", "-1", filepath.Join(t.TempDir(), "x"))
	assert.ErrorContains(t, err, "must not be negative")
	_, _, err = runCLI("fixtures", "generate", "--userz", "1", filepath.Join(t.TempDir(), "x"))
	assert.Error(t, err, "unknown flags are refused")
}

func TestFixturesProgressBar(t *testing.T) {
	var buf bytes.Buffer
	p := newProgress(&buf, true, time.Now())
	p(0, 200)
	p(100, 200)
	p(200, 200)
	out := buf.String()
	assert.Contains(t, out, "\r[---------------")
	assert.Contains(t, out, "\r[###############---------------]  50%  100/200 records")
	assert.True(t, strings.HasSuffix(out, "\n"), "the bar ends its line when done")
	assert.False(t, isTerminal(&buf), "a buffer is not a terminal")
}

// `fixtures build SET DB` writes a store that serve opens as loaded (no second load); it
// refuses to overwrite DB without --force, and reports progress as plain lines off a terminal.
func TestFixturesBuild(t *testing.T) {
	set := t.TempDir()
	require.NoError(t, generate.Write(set, generate.Options{Users: 60, Orders: 300, Seed: 4}))
	db := filepath.Join(t.TempDir(), "big.db")
	out, errOut, err := runCLI("fixtures", "build", set, db)
	require.NoError(t, err)
	assert.Regexp(t, `^built .*big.db from .*: 60 users, \d+ transactions, 300 orders in .* \([0-9.]+ MB\)\nserve it with: partnersim serve --db .*big.db --fixtures `, out)
	assert.Regexp(t, `(?m)^build: write .*100%.* entries .*/s  ETA 0s`, errOut, "the write phase's last line")

	sb, err := sandbox.Open(context.Background(), sandbox.Config{DBPath: db, Fixtures: os.DirFS(set)})
	require.NoError(t, err)
	defer sb.Close()
	assert.False(t, sb.Loaded, "the built store is opened as it is, not loaded again")

	_, _, err = runCLI("fixtures", "build", set, db)
	assert.ErrorContains(t, err, "pass --force")
	_, _, err = runCLI("fixtures", "build", "--force", set, db)
	assert.NoError(t, err)
	_, _, err = runCLI("fixtures", "build", set)
	assert.ErrorContains(t, err, "want a set folder and a store file")
}

// Off a terminal, the build's progress is a line every two seconds and at the end of a
// phase; on a terminal, one line redrawn in place with a bar, the rate and the time left.
func TestBuildProgress(t *testing.T) {
	var lines, term bytes.Buffer
	start := time.Now()
	p := newBuildProgress(&lines, false, start)
	p("read", 16384, 0)
	p("write", 50, 100)
	p("write", 100, 100)
	assert.Regexp(t, `^build: read   16384 records checked  \d+/s  .*\nbuild: write  100%  100/100 entries  \d+/s  ETA 0s  .*\n$`, lines.String())
	p = newBuildProgress(&term, true, start)
	p("write", 30, 100)
	assert.Regexp(t, `^\rwrite  \[#########---------------------\]  30%  30/100 entries  \d+/s  ETA \S+  `, term.String())
}
