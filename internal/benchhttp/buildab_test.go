package main

import (
	"context"
	"debug/buildinfo"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/partnersim/partnersim/fixtures/generate"
)

func runs(cpus ...float64) []buildRun {
	var rs []buildRun
	for _, c := range cpus {
		cpu := time.Duration(c * float64(time.Second))
		rs = append(rs, buildRun{cpu: cpu, sys: cpu / 20, wall: cpu * 6 / 10})
	}
	return rs
}

// TestBuildABRows checks the rows' figures and verdict: the ratio of the means against down by a
// third, and a row saying why when there is nothing to compare.
func TestBuildABRows(t *testing.T) {
	a := &buildAB{baseline: "9b441d2", current: "4048624", records: 1_100_000,
		base: runs(37.9, 39.1, 39.2), cur: runs(25.5, 28.8, 26.7)}
	rows := a.rows("100k users + 1M orders", "1.00 1.00 1.00")
	require.Len(t, rows, 3, "rows: got %d, want a row a side and the ratio's", len(rows))
	name := "100k users + 1M orders: build CPU against the issue's baseline 9b441d2, same run"
	for _, r := range rows {
		assert.Equal(t, name, r.name)
		assert.Equal(t, "1.00 1.00 1.00", r.load)
	}
	assert.Equal(t, "baseline 9b441d2, 3 builds: CPU 37.9 (1.9) / 39.1 (2.0) / 39.2 (2.0) s, mean 38.7 s = 35.2 s per million records; wall 22.7 / 23.5 / 23.5 s, mean 23.2 s = 21.1 s per million records", rows[0].detail)
	assert.Equal(t, "current 4048624, 3 builds: CPU 25.5 (1.3) / 28.8 (1.4) / 26.7 (1.3) s, mean 27.0 s = 24.5 s per million records; wall 15.3 / 17.3 / 16.0 s, mean 16.2 s = 14.7 s per million records", rows[1].detail)
	assert.Empty(t, rows[0].verdict+rows[1].verdict, "a side's row has no verdict of its own")
	assert.InDelta(t, 0.697, a.ratio(), 0.0005)
	assert.Equal(t, "the current's mean CPU ÷ the baseline's: 27.0 s ÷ 38.7 s = 0.697 ×", rows[2].detail)
	assert.Equal(t, "≤ 0.667 × the baseline's CPU", rows[2].want)
	assert.Equal(t, "**missed**", rows[2].verdict, "0.697 × against down by a third")

	// The ratio judged is the one printed, to the thousandth.
	for _, c := range []struct {
		cur  float64
		want string
	}{
		{25.0, "met"},         // 0.645 ×
		{25.8, "met"},         // 0.6661 ×, printed 0.666
		{25.85, "met"},        // 0.6674 ×, printed 0.667
		{25.86, "**missed**"}, // 0.6676 ×, printed 0.668
	} {
		a.cur = runs(c.cur)
		rows := a.rows("s", "")
		assert.Equal(t, c.want, rows[2].verdict, "%s", rows[2].detail)
	}

	for _, c := range []struct {
		a    buildAB
		want string
	}{
		{buildAB{baseline: "9b441d2", reason: "commit 9b441d2 is not in the history of .: …"}, "not measured: commit 9b441d2 is not in the history of .: …"},
		{buildAB{baseline: "9b441d2", cur: runs(1)}, "not measured: no builds"},
	} {
		rows := c.a.rows("x", "")
		require.Len(t, rows, 1)
		assert.Equal(t, c.want, rows[0].detail)
		assert.Equal(t, "not measured", rows[0].verdict)
		assert.Equal(t, "≤ 0.667 × the baseline's CPU", rows[0].want)
	}
}

// tinyRepo is a git repository of a module whose cmd/partnersim prints word, one commit for each
// word; it returns the repository and the commits' hashes.
func tinyRepo(tb testing.TB, words ...string) (string, []string) {
	tb.Helper()
	repo := tb.TempDir()
	run := func(args ...string) string {
		tb.Helper()
		out, err := git(context.Background(), repo, args...)
		require.NoError(tb, err)
		return out
	}
	run("init", "-q")
	require.NoError(tb, os.WriteFile(filepath.Join(repo, "go.mod"), []byte("module example.com/tiny\n\ngo 1.22\n"), 0o644))
	require.NoError(tb, os.MkdirAll(filepath.Join(repo, "cmd", "partnersim"), 0o755))
	var commits []string
	for _, w := range words {
		src := "package main\n\nimport \"fmt\"\n\nfunc main() { fmt.Print(\"" + w + "\") }\n"
		require.NoError(tb, os.WriteFile(filepath.Join(repo, "cmd", "partnersim", "main.go"), []byte(src), 0o644))
		run("add", "-A")
		run("-c", "user.name=bench", "-c", "user.email=bench@example.com", "commit", "-q", "-m", w)
		commits = append(commits, run("rev-parse", "HEAD"))
	}
	return repo, commits
}

func said(tb testing.TB, bin string) string {
	tb.Helper()
	out, err := exec.Command(bin).Output()
	require.NoError(tb, err, "running %s", bin)
	return string(out)
}

// TestBaselineBinaryIsBuiltOncePerCommit builds a commit's binary from git once, keeps it under
// the commit (and the Go release), leaves no worktree behind, and says why when it cannot.
func TestBaselineBinaryIsBuiltOncePerCommit(t *testing.T) {
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("no git")
	}
	ctx := context.Background()
	repo, commits := tinyRepo(t, "one", "two")
	cache := filepath.Join(t.TempDir(), "baseline")

	bin, built, err := baselineBinary(ctx, repo, cache, commits[0][:7], "")
	require.NoError(t, err)
	assert.True(t, built, "first call: got kept, want built")
	assert.Equal(t, filepath.Join(cache, commits[0], "partnersim"), bin, "the binary is kept under the commit's full hash")
	assert.Equal(t, "one", said(t, bin), "the binary of the first commit")
	fi, err := os.Stat(bin)
	require.NoError(t, err)

	again, built, err := baselineBinary(ctx, repo, cache, commits[0], "")
	require.NoError(t, err)
	assert.False(t, built, "second call: got built again, want the kept binary")
	assert.Equal(t, bin, again)
	fi2, err := os.Stat(again)
	require.NoError(t, err)
	assert.True(t, os.SameFile(fi, fi2) && fi.ModTime().Equal(fi2.ModTime()), "second call rewrote the binary")

	other, built, err := baselineBinary(ctx, repo, cache, commits[1], "")
	require.NoError(t, err)
	assert.True(t, built, "another commit: got kept, want built")
	assert.NotEqual(t, bin, other)
	assert.Equal(t, "two", said(t, other), "the binary of the second commit")

	if v := runtime.Version(); goRelease.MatchString(v) {
		withGo, built, err := baselineBinary(ctx, repo, cache, commits[0], v)
		require.NoError(t, err)
		assert.True(t, built, "the same commit with a Go release named: got kept, want built")
		assert.Equal(t, filepath.Join(cache, commits[0]+"-"+v, "partnersim"), withGo)
	}

	list, err := git(ctx, repo, "worktree", "list", "--porcelain")
	require.NoError(t, err)
	assert.Equal(t, 1, strings.Count(list, "worktree "), "worktrees left: %s", list)
	left, _ := filepath.Glob(filepath.Join(cache, "src-*"))
	assert.Empty(t, left, "build folders left in the cache")

	_, _, err = baselineBinary(ctx, repo, cache, "0123456789abcdef0123456789abcdef01234567", "")
	assert.ErrorContains(t, err, "is not in the history of", "a commit the repository lacks")
	_, _, err = baselineBinary(ctx, t.TempDir(), cache, commits[0], "")
	assert.ErrorContains(t, err, "is not in the history of", "a folder with no git history (an exported tarball)")

	// A commit that does not build: the error carries the compiler's words.
	require.NoError(t, os.WriteFile(filepath.Join(repo, "cmd", "partnersim", "main.go"), []byte("package main\n\nfunc main() { undefined() }\n"), 0o644))
	_, err = git(ctx, repo, "-c", "user.name=bench", "-c", "user.email=bench@example.com", "commit", "-q", "-am", "broken")
	require.NoError(t, err)
	_, _, err = baselineBinary(ctx, repo, cache, "HEAD", "")
	assert.ErrorContains(t, err, "undefined", "a commit that does not build")
	list, _ = git(ctx, repo, "worktree", "list", "--porcelain")
	assert.Equal(t, 1, strings.Count(list, "worktree "), "worktrees left after a failed build: %s", list)
}

// partnersimBinary builds this module's partnersim into a temporary folder.
func partnersimBinary(tb testing.TB) string {
	tb.Helper()
	bin := filepath.Join(tb.TempDir(), "partnersim")
	out, err := exec.Command("go", "build", "-o", bin, "github.com/partnersim/partnersim/cmd/partnersim").CombinedOutput()
	require.NoError(tb, err, "go build: %s", out)
	return bin
}

// TestBuildAgainstBaselineOnASmallSet runs the alternated builds with real binaries on a small
// generated set: the baseline is this commit's own binary, put where the bench keeps a built
// baseline (so nothing is built from git), then a baseline that fails, then none to be had.
func TestBuildAgainstBaselineOnASmallSet(t *testing.T) {
	head, err := git(context.Background(), ".", "rev-parse", "HEAD")
	if err != nil {
		t.Skipf("no git history: %v", err)
	}
	bin := partnersimBinary(t)
	set := filepath.Join(t.TempDir(), "set")
	require.NoError(t, generate.Write(set, generate.Options{Users: 100, Orders: 1000, Seed: 1}))
	work := t.TempDir()
	b := &bench{cfg: config{bin: bin, dir: work, baseline: head[:12], repo: ".", buildPairs: 3}, out: io.Discard, start: time.Now()}

	info, err := buildinfo.ReadFile(bin)
	require.NoError(t, err)
	gover := ""
	if goRelease.MatchString(info.GoVersion) {
		gover = info.GoVersion
	}
	kept := baselinePath(filepath.Join(work, "baseline"), head, gover)
	require.NoError(t, os.MkdirAll(filepath.Dir(kept), 0o755))
	require.NoError(t, os.Link(bin, kept))

	a, err := b.buildAgainstBaseline(context.Background(), set, 1100)
	require.NoError(t, err)
	require.Empty(t, a.reason)
	assert.Len(t, a.base, 3, "baseline builds")
	assert.Len(t, a.cur, 3, "current builds")
	for _, r := range append(a.base, a.cur...) {
		assert.Positive(t, r.cpu, "a build's CPU")
		assert.Positive(t, r.wall, "a build's wall time")
	}
	left, _ := filepath.Glob(filepath.Join(work, "*.db"))
	assert.Empty(t, left, "stores left in the work folder")
	rows := a.rows(setName(100, 1000), "")
	require.Len(t, rows, 3)
	assert.Equal(t, verdict(a.ratio() <= buildMaxRatio), rows[2].verdict)
	t.Logf("rows:\n%s\n%s\n%s", rows[0].detail, rows[1].detail, rows[2].detail)

	// A baseline whose build of the set fails: not measured, with the reason; no error.
	require.NoError(t, os.Remove(kept))
	require.NoError(t, os.WriteFile(kept, []byte("#!/bin/sh\necho no such command >&2\nexit 3\n"), 0o755))
	a, err = b.buildAgainstBaseline(context.Background(), set, 1100)
	require.NoError(t, err)
	assert.Contains(t, a.reason, "the baseline's build of the set failed")
	assert.Contains(t, a.reason, "no such command")
	assert.Equal(t, "not measured", a.rows("s", "")[0].verdict)

	// No history to build it from: not measured, with the reason; no error.
	b.cfg.repo = t.TempDir()
	a, err = b.buildAgainstBaseline(context.Background(), set, 1100)
	require.NoError(t, err)
	assert.Contains(t, a.reason, "is not in the history of")
	assert.Equal(t, "not measured", a.rows("s", "")[0].verdict)
	left, _ = filepath.Glob(filepath.Join(work, "*.db"))
	assert.Empty(t, left, "stores left in the work folder")
}
