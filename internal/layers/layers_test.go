package layers

import (
	"bytes"
	"encoding/json"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
)

type pkg struct {
	ImportPath string
	Dir        string
	Imports    []string
}

// packages lists every package of the module with its non-test imports.
func packages(t *testing.T) map[string]pkg {
	t.Helper()
	cmd := exec.Command("go", "list", "-json", "github.com/partnersim/partnersim/...")
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("go list: %v", err)
	}
	got := map[string]pkg{}
	dec := json.NewDecoder(bytes.NewReader(out))
	for {
		var p pkg
		if err := dec.Decode(&p); err == io.EOF {
			break
		} else if err != nil {
			t.Fatal(err)
		}
		got[p.ImportPath] = p
	}
	if len(got) < 10 {
		t.Fatalf("go list found only %d packages", len(got))
	}
	return got
}

// harness is the test harness: a package only tests import (checked below), so it may use
// net/http/httptest.
const harness = "github.com/partnersim/partnersim/internal/sandboxtest"

const (
	decimal = "github.com/shopspring/decimal"
	bbolt   = "go.etcd.io/bbolt/..."
	echo    = "github.com/labstack/echo/v4/..."
)

// rule is what a package's doc.go says about its imports.
type rule struct {
	ours    []string // the only packages of this module it may import (nil: any not in never)
	outside []string // the only modules outside the standard library it may import (nil: any not in never)
	never   []string // what it must never import
}

// rules are the import rules the packages' doc.go files state, one entry per package. A
// pattern ending in "/..." is that package and everything below it.
var rules = map[string]rule{
	"github.com/partnersim/partnersim/simulator":                   {ours: []string{}, outside: []string{decimal}},
	"github.com/partnersim/partnersim/simulator/validate":          {ours: []string{}, outside: []string{decimal}},
	"github.com/partnersim/partnersim/simulator/netguard":          {ours: []string{}, outside: []string{}},
	"github.com/partnersim/partnersim/simulator/webhook/signature": {ours: []string{}, outside: []string{}},
	"github.com/partnersim/partnersim/simulator/bolt":              {ours: []string{"github.com/partnersim/partnersim/simulator"}, outside: []string{decimal, bbolt}},
	"github.com/partnersim/partnersim/simulator/httpapi":           {never: []string{bbolt, "github.com/partnersim/partnersim/simulator/bolt", "github.com/partnersim/partnersim/simulator/webhook", "github.com/partnersim/partnersim/simulator/sandbox", "github.com/partnersim/partnersim/simulator/httpapi/console", "github.com/partnersim/partnersim/simulator/control"}},
	"github.com/partnersim/partnersim/simulator/httpapi/surface":   {ours: []string{"github.com/partnersim/partnersim/simulator", "github.com/partnersim/partnersim/simulator/validate"}, outside: []string{decimal}},
	"github.com/partnersim/partnersim/simulator/httpapi/console":   {never: []string{"github.com/partnersim/partnersim/simulator/httpapi", bbolt, "github.com/partnersim/partnersim/simulator/bolt", "github.com/partnersim/partnersim/simulator/webhook", "github.com/partnersim/partnersim/simulator/sandbox", "github.com/partnersim/partnersim/fixtures", "github.com/partnersim/partnersim/simulator/control"}},
	"github.com/partnersim/partnersim/simulator/control":           {ours: []string{"github.com/partnersim/partnersim/simulator", "github.com/partnersim/partnersim/simulator/bolt", "github.com/partnersim/partnersim/simulator/netguard"}, outside: []string{decimal}},
	"github.com/partnersim/partnersim/simulator/scenario":          {ours: []string{"github.com/partnersim/partnersim/simulator", "github.com/partnersim/partnersim/fixtures"}, outside: []string{decimal}},
	"github.com/partnersim/partnersim/simulator/webhook":           {never: []string{bbolt, echo, "github.com/partnersim/partnersim/simulator/bolt", "github.com/partnersim/partnersim/simulator/httpapi/...", "github.com/partnersim/partnersim/simulator/sandbox"}},
	"github.com/partnersim/partnersim/receiver":                    {ours: []string{"github.com/partnersim/partnersim/simulator/webhook/signature"}, outside: []string{bbolt}},
	"github.com/partnersim/partnersim/receiver/certify":            {ours: []string{"github.com/partnersim/partnersim/simulator/webhook/signature", "github.com/partnersim/partnersim/simulator", "github.com/partnersim/partnersim/internal/junit"}, outside: []string{}},
	"github.com/partnersim/partnersim/fixtures":                    {ours: []string{"github.com/partnersim/partnersim/simulator"}, outside: []string{decimal}},
	"github.com/partnersim/partnersim/fixtures/generate":           {ours: []string{"github.com/partnersim/partnersim/simulator", "github.com/partnersim/partnersim/fixtures"}, outside: []string{decimal}},
	"github.com/partnersim/partnersim/features":                    {ours: []string{"github.com/partnersim/partnersim/simulator/openapi", "github.com/partnersim/partnersim/internal/junit", "github.com/partnersim/partnersim/features/laws"}},
	"github.com/partnersim/partnersim/features/laws":               {ours: []string{}, outside: []string{"github.com/tidwall/gjson"}},
	"github.com/partnersim/partnersim/features/proxy":              {ours: []string{"github.com/partnersim/partnersim/features/laws", "github.com/partnersim/partnersim/simulator/openapi", "github.com/partnersim/partnersim/simulator/openapi/check", "github.com/partnersim/partnersim/internal/junit"}, outside: []string{"github.com/tidwall/gjson"}},
	"github.com/partnersim/partnersim/internal/loadtest":           {never: []string{"github.com/partnersim/partnersim/simulator/bolt", "github.com/partnersim/partnersim/simulator/httpapi/...", "github.com/partnersim/partnersim/simulator/webhook/..."}},
	"github.com/partnersim/partnersim/internal/loadtest/benchhttp": {never: []string{"github.com/partnersim/partnersim/simulator/bolt", "github.com/partnersim/partnersim/simulator/httpapi/...", "github.com/partnersim/partnersim/simulator/webhook/...", "github.com/partnersim/partnersim/simulator/sandbox"}},
	"github.com/partnersim/partnersim/simulator/sandbox":           {never: []string{"github.com/partnersim/partnersim/cmd/...", "github.com/partnersim/partnersim/features", "github.com/partnersim/partnersim/receiver/...", "github.com/partnersim/partnersim/internal/loadtest", "github.com/partnersim/partnersim/internal/..."}},
	"github.com/partnersim/partnersim/internal/sandboxtest":        {never: []string{"github.com/partnersim/partnersim/cmd/...", "github.com/partnersim/partnersim/features"}},
	"github.com/partnersim/partnersim/internal/layers":             {ours: []string{}, outside: []string{}},
	"github.com/partnersim/partnersim/internal/release":            {ours: []string{}, outside: []string{}},
	"github.com/partnersim/partnersim/internal/junit":              {ours: []string{}, outside: []string{}},
	"github.com/partnersim/partnersim/examples/pipelines":          {ours: []string{}, outside: []string{}},
	"github.com/partnersim/partnersim/features/mutants":            {ours: []string{}, outside: []string{}},
	"github.com/partnersim/partnersim/cmd/partnersim":              {never: []string{"github.com/partnersim/partnersim/simulator/bolt", "github.com/partnersim/partnersim/simulator/httpapi/...", harness}},
	"github.com/partnersim/partnersim/simulator/openapi":           {ours: []string{}, outside: []string{"go.yaml.in/yaml/v3"}},
	"github.com/partnersim/partnersim/simulator/openapi/check":     {ours: []string{}, outside: []string{"github.com/getkin/kin-openapi/..."}},
	"github.com/partnersim/partnersim/internal/apiclient":          {ours: []string{}, outside: []string{"github.com/oapi-codegen/runtime"}},
	"github.com/partnersim/partnersim/internal/apiclient/gen":      {ours: []string{"github.com/partnersim/partnersim/simulator/openapi"}, outside: []string{}},
}

func matches(pattern, path string) bool {
	if p, ok := strings.CutSuffix(pattern, "/..."); ok {
		return path == p || strings.HasPrefix(path, p+"/")
	}
	return path == pattern
}

func matchesAny(patterns []string, path string) bool {
	return slices.ContainsFunc(patterns, func(p string) bool { return matches(p, path) })
}

func stdlib(path string) bool { return !strings.Contains(strings.SplitN(path, "/", 2)[0], ".") }

func ours(path string) bool {
	return path == "github.com/partnersim/partnersim" || strings.HasPrefix(path, "github.com/partnersim/partnersim/")
}

func TestImportRules(t *testing.T) {
	for path, p := range packages(t) {
		r, stated := rules[path]
		for _, imp := range p.Imports {
			switch {
			case stdlib(imp) && !ours(imp) && imp != "net/http/httptest":
			case stated && matchesAny(r.never, imp):
				t.Errorf("%s imports %s: its doc.go says it must never", path, imp)
			case stated && ours(imp) && r.ours != nil && !matchesAny(r.ours, imp):
				t.Errorf("%s imports %s: its doc.go allows only %q of this module", path, imp, r.ours)
			case stated && !ours(imp) && !stdlib(imp) && r.outside != nil && !matchesAny(r.outside, imp):
				t.Errorf("%s imports %s: its doc.go allows only %q outside the standard library", path, imp, r.outside)
			case matches(bbolt, imp) && path != "github.com/partnersim/partnersim/simulator/bolt" && path != "github.com/partnersim/partnersim/receiver":
				t.Errorf("%s imports bbolt: only the store (simulator/bolt) and the receiver's own file do", path)
			case imp == "net/http/httptest" && path != harness:
				t.Errorf("%s imports net/http/httptest outside its tests: it belongs in tests", path)
			case imp == harness:
				t.Errorf("%s imports the test harness %s outside its tests", path, harness)
			}
		}
	}
}

// Every package says in its doc.go what it holds and what it must never import.
func TestEveryPackageHasADocSayingWhatItMustNeverImport(t *testing.T) {
	never := regexp.MustCompile(`(?i)\bnever\b`)
	for path, p := range packages(t) {
		b, err := os.ReadFile(filepath.Join(p.Dir, "doc.go"))
		if err != nil {
			t.Errorf("%s has no doc.go: write one saying what the package holds and what it must never import", path)
			continue
		}
		if !strings.Contains(string(b), "// Package ") && !strings.Contains(string(b), "// Command ") {
			t.Errorf("%s/doc.go holds no package comment", path)
		}
		if !never.Match(b) {
			t.Errorf("%s/doc.go does not say what the package must never import", path)
		}
	}
}

// The rules table names only packages that exist, so a rename cannot leave a rule unchecked.
func TestRulesNameRealPackages(t *testing.T) {
	pkgs := packages(t)
	for path := range rules {
		if _, ok := pkgs[path]; !ok {
			t.Errorf("rules names %s, which go list does not know", path)
		}
	}
}
