package main

import (
	"archive/tar"
	"archive/zip"
	"bytes"
	"compress/gzip"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"flag"
	"fmt"
	"io"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"strconv"
	"strings"
	"time"
)

// Targets are the platforms a release is built for.
var Targets = []string{"linux/amd64", "linux/arm64", "darwin/amd64", "darwin/arm64", "windows/amd64", "windows/arm64"}

// config is what one release build takes.
type config struct {
	Out     string   // the folder the archives and the checksums file are written to
	Version string   // the version in the archives' names
	Targets []string // GOOS/GOARCH pairs
	Module  string   // the module's root folder
	Go      string   // the go command
	Stamp   time.Time
}

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	if err := run(ctx, os.Args[1:], os.Stdout); err != nil {
		fmt.Fprintln(os.Stderr, "release:", err)
		os.Exit(1)
	}
}

func run(ctx context.Context, args []string, stdout io.Writer) error {
	fs := flag.NewFlagSet("release", flag.ContinueOnError)
	c := config{Go: "go"}
	targets := fs.String("targets", strings.Join(Targets, ","), "comma-separated GOOS/GOARCH pairs")
	fs.StringVar(&c.Out, "out", "dist", "folder for the archives and checksums.txt (emptied of earlier archives first)")
	fs.StringVar(&c.Version, "version", "", "version in the archive names (default: git describe --tags --always --dirty, else dev)")
	fs.StringVar(&c.Module, "module", ".", "the module's root folder")
	if err := fs.Parse(args); err != nil {
		return err
	}
	for _, t := range strings.Split(*targets, ",") {
		if t = strings.TrimSpace(t); t != "" {
			c.Targets = append(c.Targets, t)
		}
	}
	if c.Version == "" {
		c.Version = describe(ctx, c.Module)
	}
	c.Stamp = commitTime(ctx, c.Module)
	names, err := build(ctx, c)
	if err != nil {
		return err
	}
	for _, n := range names {
		fmt.Fprintln(stdout, filepath.Join(c.Out, n))
	}
	fmt.Fprintln(stdout, filepath.Join(c.Out, checksumsFile))
	return nil
}

// checksumsFile names the checksums of the archives, one "sha256  name" line each, as
// sha256sum writes them (`sha256sum -c checksums.txt` verifies a download).
const checksumsFile = "checksums.txt"

// build cross-compiles every target, archives each binary with the README, writes the
// checksums file and returns the archives' names in target order.
func build(ctx context.Context, c config) ([]string, error) {
	if err := os.MkdirAll(c.Out, 0o755); err != nil {
		return nil, err
	}
	old, _ := filepath.Glob(filepath.Join(c.Out, "partnersim_*"))
	for _, f := range old {
		if err := os.Remove(f); err != nil {
			return nil, err
		}
	}
	readme, err := os.ReadFile(filepath.Join(c.Module, "README.md"))
	if err != nil {
		return nil, err
	}
	tmp, err := os.MkdirTemp("", "partnersim-release-")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(tmp)
	var names []string
	var sums strings.Builder
	for _, t := range c.Targets {
		goos, goarch, ok := strings.Cut(t, "/")
		if !ok || goos == "" || goarch == "" {
			return nil, fmt.Errorf("target %q: want GOOS/GOARCH, e.g. linux/amd64", t)
		}
		exe := "partnersim"
		if goos == "windows" {
			exe += ".exe"
		}
		bin := filepath.Join(tmp, goos+"_"+goarch, exe)
		abs, err := filepath.Abs(bin)
		if err != nil {
			return nil, err
		}
		// -buildvcs=auto stamps the commit (and the version git tags give) into the binary for
		// `partnersim version`, whatever GOFLAGS says; -trimpath keeps the builder's paths out.
		cmd := exec.CommandContext(ctx, c.Go, "build", "-trimpath", "-buildvcs=auto", "-ldflags=-s -w", "-o", abs, "./cmd/partnersim")
		cmd.Dir = c.Module
		cmd.Env = append(os.Environ(), "CGO_ENABLED=0", "GOOS="+goos, "GOARCH="+goarch)
		if out, err := cmd.CombinedOutput(); err != nil {
			return nil, fmt.Errorf("go build for %s: %v\n%s", t, err, out)
		}
		b, err := os.ReadFile(abs)
		if err != nil {
			return nil, err
		}
		base := fmt.Sprintf("partnersim_%s_%s_%s", strings.TrimPrefix(c.Version, "v"), goos, goarch)
		files := []file{{exe, b, 0o755}, {"README.md", readme, 0o644}}
		var archive []byte
		if goos == "windows" {
			base += ".zip"
			archive, err = zipped(files, c.Stamp)
		} else {
			base += ".tar.gz"
			archive, err = tarred(base[:len(base)-len(".tar.gz")], files, c.Stamp)
		}
		if err != nil {
			return nil, err
		}
		if err := os.WriteFile(filepath.Join(c.Out, base), archive, 0o644); err != nil {
			return nil, err
		}
		sum := sha256.Sum256(archive)
		fmt.Fprintf(&sums, "%s  %s\n", hex.EncodeToString(sum[:]), base)
		names = append(names, base)
	}
	return names, os.WriteFile(filepath.Join(c.Out, checksumsFile), []byte(sums.String()), 0o644)
}

// file is one archive member.
type file struct {
	name string
	data []byte
	mode int64
}

// tarred is a gzipped tar of files under folder dir/, with fixed owners and times so the same
// commit gives the same bytes.
func tarred(dir string, files []file, stamp time.Time) ([]byte, error) {
	var buf bytes.Buffer
	gz, err := gzip.NewWriterLevel(&buf, gzip.BestCompression)
	if err != nil {
		return nil, err
	}
	tw := tar.NewWriter(gz)
	for _, f := range files {
		h := &tar.Header{Name: dir + "/" + f.name, Mode: f.mode, Size: int64(len(f.data)), ModTime: stamp, Typeflag: tar.TypeReg, Format: tar.FormatPAX}
		if err := tw.WriteHeader(h); err != nil {
			return nil, err
		}
		if _, err := tw.Write(f.data); err != nil {
			return nil, err
		}
	}
	if err := tw.Close(); err != nil {
		return nil, err
	}
	if err := gz.Close(); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}

// zipped is a zip of files (the binary keeps its executable bit for unzip on unix).
func zipped(files []file, stamp time.Time) ([]byte, error) {
	var buf bytes.Buffer
	zw := zip.NewWriter(&buf)
	for _, f := range files {
		h := &zip.FileHeader{Name: f.name, Method: zip.Deflate, Modified: stamp}
		h.SetMode(os.FileMode(f.mode))
		w, err := zw.CreateHeader(h)
		if err != nil {
			return nil, err
		}
		if _, err := w.Write(f.data); err != nil {
			return nil, err
		}
	}
	if err := zw.Close(); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}

// describe is the version git gives the checkout, or "dev" outside one.
func describe(ctx context.Context, dir string) string {
	cmd := exec.CommandContext(ctx, "git", "describe", "--tags", "--always", "--dirty")
	cmd.Dir = dir
	out, err := cmd.Output()
	if v := strings.TrimSpace(string(out)); err == nil && v != "" {
		return v
	}
	return "dev"
}

// commitTime is the checkout's commit time (archives' member times), or the Unix epoch.
func commitTime(ctx context.Context, dir string) time.Time {
	cmd := exec.CommandContext(ctx, "git", "log", "-1", "--format=%ct")
	cmd.Dir = dir
	out, err := cmd.Output()
	if err == nil {
		if n, err := strconv.ParseInt(strings.TrimSpace(string(out)), 10, 64); err == nil {
			return time.Unix(n, 0).UTC()
		}
	}
	return time.Unix(0, 0).UTC()
}
