package main

import (
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
)

func main() {
	if err := run(os.Args[1:], os.Stderr); err != nil {
		fmt.Fprintln(os.Stderr, "kubeschema:", err)
		os.Exit(1)
	}
}

func run(args []string, stderr io.Writer) error {
	fs := flag.NewFlagSet("kubeschema", flag.ContinueOnError)
	fs.SetOutput(stderr)
	version := fs.String("kubernetes", "", "the Kubernetes release whose schemas to write, e.g. 1.37.2")
	swagger := fs.String("swagger", "", "read this swagger.json instead of the release's (the version still names the folder)")
	out := fs.String("out", "", "the folder kubeconform's -schema-location names; the schemas go in vVERSION-standalone-strict/")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if *version == "" || *out == "" {
		return errors.New("both -kubernetes VERSION and -out DIR are needed, e.g. -kubernetes 1.37.2 -out /tmp/schemas")
	}
	release := strings.TrimPrefix(*version, "v")
	src := *swagger
	if src == "" {
		dir, err := moduleDir("k8s.io/kubernetes@v" + release)
		if err != nil {
			return err
		}
		src = filepath.Join(dir, "api", "openapi-spec", "swagger.json")
	}
	doc, err := os.ReadFile(src)
	if err != nil {
		return err
	}
	schemas, err := Convert(doc)
	if err != nil {
		return fmt.Errorf("%s: %w", src, err)
	}
	dir := filepath.Join(*out, "v"+release+"-standalone-strict")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	for name, body := range schemas {
		if err := os.WriteFile(filepath.Join(dir, name), body, 0o644); err != nil {
			return err
		}
	}
	fmt.Fprintf(stderr, "kubeschema: %d schemas of Kubernetes %s in %s\n", len(schemas), release, dir)
	return nil
}

// moduleDir downloads a module version through the Go module proxy (or finds it in the module
// cache) and answers its folder.
func moduleDir(modVersion string) (string, error) {
	cmd := exec.Command("go", "mod", "download", "-json", modVersion)
	cmd.Stderr = os.Stderr
	out, err := cmd.Output()
	if err != nil {
		return "", fmt.Errorf("go mod download %s: %w", modVersion, err)
	}
	var m struct{ Dir, Error string }
	if err := json.Unmarshal(out, &m); err != nil {
		return "", fmt.Errorf("go mod download %s: %w", modVersion, err)
	}
	if m.Error != "" {
		return "", fmt.Errorf("go mod download %s: %s", modVersion, m.Error)
	}
	return m.Dir, nil
}
