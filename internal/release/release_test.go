package main

import (
	"archive/tar"
	"archive/zip"
	"bytes"
	"compress/gzip"
	"context"
	"crypto/sha256"
	"debug/buildinfo"
	"encoding/hex"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// verify checks the checksums file in dir against the archives it names, and that it names
// exactly the archives there; it returns the names.
func verify(t *testing.T, dir string) []string {
	t.Helper()
	raw, err := os.ReadFile(filepath.Join(dir, checksumsFile))
	require.NoError(t, err)
	var names []string
	for _, line := range strings.Split(strings.TrimRight(string(raw), "\n"), "\n") {
		sum, name, ok := strings.Cut(line, "  ")
		require.True(t, ok, "a sha256sum line: %q", line)
		b, err := os.ReadFile(filepath.Join(dir, name))
		require.NoError(t, err)
		got := sha256.Sum256(b)
		assert.Equal(t, hex.EncodeToString(got[:]), sum, name)
		names = append(names, name)
	}
	onDisk, _ := filepath.Glob(filepath.Join(dir, "partnersim_*"))
	for i := range onDisk {
		onDisk[i] = filepath.Base(onDisk[i])
	}
	assert.ElementsMatch(t, onDisk, names, "the checksums file names exactly the archives")
	return names
}

// untar returns the members of a tar.gz, by name.
func untar(t *testing.T, path string) map[string]*tar.Header {
	t.Helper()
	f, err := os.Open(path)
	require.NoError(t, err)
	defer f.Close()
	gz, err := gzip.NewReader(f)
	require.NoError(t, err)
	tr := tar.NewReader(gz)
	out := map[string]*tar.Header{}
	for {
		h, err := tr.Next()
		if err == io.EOF {
			return out
		}
		require.NoError(t, err)
		out[h.Name] = h
		if strings.HasSuffix(h.Name, "/partnersim") {
			dst := filepath.Join(t.TempDir(), "partnersim")
			b, err := io.ReadAll(tr)
			require.NoError(t, err)
			require.NoError(t, os.WriteFile(dst, b, 0o755))
			h.Linkname = dst // where the test put it
		}
	}
}

// The recipe of `make dist`, for this machine's platform only (the full matrix is `make dist`):
// one archive named for the version and the platform, holding the binary and the README, a
// checksums file that verifies it, a static binary built with CGO off that reports its module
// and commit.
func TestReleaseRecipe(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the binary; skipped with -short")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	out := t.TempDir()
	target := runtime.GOOS + "/" + runtime.GOARCH
	var stdout bytes.Buffer
	require.NoError(t, run(ctx, []string{"-out", out, "-version", "v1.2.3", "-targets", target, "-module", "../.."}, &stdout))

	want := "partnersim_1.2.3_" + runtime.GOOS + "_" + runtime.GOARCH + ".tar.gz"
	if runtime.GOOS == "windows" {
		t.Skip("the test reads a tar.gz; windows archives are zips")
	}
	assert.Equal(t, []string{want}, verify(t, out))
	assert.Equal(t, filepath.Join(out, want)+"\n"+filepath.Join(out, checksumsFile)+"\n", stdout.String())

	members := untar(t, filepath.Join(out, want))
	dir := strings.TrimSuffix(want, ".tar.gz")
	assert.ElementsMatch(t, []string{dir + "/partnersim", dir + "/README.md"}, keys(members))
	bin := members[dir+"/partnersim"]
	assert.Equal(t, int64(0o755), bin.Mode)
	info, err := buildinfo.ReadFile(bin.Linkname)
	require.NoError(t, err)
	settings := map[string]string{}
	for _, s := range info.Settings {
		settings[s.Key] = s.Value
	}
	assert.Equal(t, "0", settings["CGO_ENABLED"], "a static binary")
	assert.Equal(t, runtime.GOARCH, settings["GOARCH"])
	assert.Equal(t, "true", settings["-trimpath"])
	assert.Equal(t, "github.com/partnersim/partnersim", info.Main.Path)

	version, err := exec.CommandContext(ctx, bin.Linkname, "version").Output()
	require.NoError(t, err)
	assert.True(t, strings.HasPrefix(string(version), "partnersim "), "the version line: %s", version)
	if _, err := exec.LookPath("git"); err == nil && settings["vcs.revision"] != "" {
		assert.Contains(t, string(version), "commit "+settings["vcs.revision"], "the commit the binary was built from")
	}
}

func keys[V any](m map[string]V) []string {
	var out []string
	for k := range m {
		out = append(out, k)
	}
	slices.Sort(out)
	return out
}

// A windows archive is a zip holding partnersim.exe (executable for unzip on unix) and the
// README, with the member times fixed.
func TestZipArchive(t *testing.T) {
	stamp := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	b, err := zipped([]file{{"partnersim.exe", []byte("MZ…"), 0o755}, {"README.md", []byte("# partnersim"), 0o644}}, stamp)
	require.NoError(t, err)
	zr, err := zip.NewReader(bytes.NewReader(b), int64(len(b)))
	require.NoError(t, err)
	require.Len(t, zr.File, 2)
	assert.Equal(t, "partnersim.exe", zr.File[0].Name)
	assert.Equal(t, os.FileMode(0o755), zr.File[0].Mode().Perm())
	assert.True(t, zr.File[1].Modified.Equal(stamp))
	again, err := zipped([]file{{"partnersim.exe", []byte("MZ…"), 0o755}, {"README.md", []byte("# partnersim"), 0o644}}, stamp)
	require.NoError(t, err)
	assert.Equal(t, b, again, "the same input gives the same bytes")
}
