package layers

import (
	"bytes"
	"encoding/json"
	"go/ast"
	"go/parser"
	"go/token"
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
	ImportPath   string
	Dir          string
	GoFiles      []string
	TestGoFiles  []string
	XTestGoFiles []string
	Imports      []string
	Deps         []string // every package it reaches, directly or not
}

// packages lists every package of the module with its non-test imports, direct and transitive.
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
	// idna is UTS #46 with the Unicode tables it needs (golang.org/x/text).
	idna = "golang.org/x/net/idna"
	text = "golang.org/x/text/..."
	// unix maps, grows (mremap) and unmaps the build's spool chunks: the standard library's
	// syscall.Munmap refuses a mapping its own Mmap did not make.
	unix = "golang.org/x/sys/unix"
	// wordwise is the leaf of the word-at-a-time byte tests, standard library only, that the
	// domain, the validator, the fixture format and the store share.
	wordwise = "github.com/partnersim/partnersim/simulator/wordwise"
)

// rule is what a package's doc.go says about its imports.
type rule struct {
	ours    []string // the only packages of this module it may import (nil: any not in never)
	outside []string // the only modules outside the standard library it may import (nil: any not in never)
	never   []string // what it must never reach, directly or through another package
	direct  []string // what it must not import itself (it reaches it only through another)
}

// rules are the import rules the packages' doc.go files state, one entry per package. A
// pattern ending in "/..." is that package and everything below it. never holds for every
// package a package reaches, directly or not (the console reaches no fixtures even through the
// runner); direct only for its own imports, where the package reaches those parts through the
// one that wires them (cmd and the load tools through the sandbox).
var rules = map[string]rule{
	"github.com/partnersim/partnersim/simulator":                   {ours: []string{wordwise}, outside: []string{decimal}},
	"github.com/partnersim/partnersim/simulator/wordwise":          {ours: []string{}, outside: []string{}},
	"github.com/partnersim/partnersim/simulator/validate":          {ours: []string{wordwise}, outside: []string{decimal, idna, text}},
	"github.com/partnersim/partnersim/simulator/netguard":          {ours: []string{}, outside: []string{}},
	"github.com/partnersim/partnersim/simulator/hostcheck":         {ours: []string{}, outside: []string{}},
	"github.com/partnersim/partnersim/simulator/webhook/signature": {ours: []string{}, outside: []string{}},
	"github.com/partnersim/partnersim/simulator/bolt":              {ours: []string{"github.com/partnersim/partnersim/simulator", "github.com/partnersim/partnersim/fixtures", wordwise}, outside: []string{decimal, bbolt, unix}},
	"github.com/partnersim/partnersim/simulator/httpapi":           {never: []string{bbolt, "github.com/partnersim/partnersim/simulator/bolt", "github.com/partnersim/partnersim/simulator/webhook", "github.com/partnersim/partnersim/simulator/sandbox", "github.com/partnersim/partnersim/simulator/httpapi/console", "github.com/partnersim/partnersim/simulator/control"}},
	"github.com/partnersim/partnersim/simulator/httpapi/surface":   {ours: []string{"github.com/partnersim/partnersim/simulator", "github.com/partnersim/partnersim/simulator/validate"}, outside: []string{decimal}},
	"github.com/partnersim/partnersim/simulator/httpapi/console":   {never: []string{"github.com/partnersim/partnersim/simulator/httpapi", bbolt, "github.com/partnersim/partnersim/simulator/bolt", "github.com/partnersim/partnersim/simulator/webhook", "github.com/partnersim/partnersim/simulator/sandbox", "github.com/partnersim/partnersim/fixtures", "github.com/partnersim/partnersim/simulator/control"}},
	"github.com/partnersim/partnersim/simulator/control":           {ours: []string{"github.com/partnersim/partnersim/simulator", "github.com/partnersim/partnersim/simulator/bolt", "github.com/partnersim/partnersim/simulator/netguard"}, outside: []string{decimal}},
	"github.com/partnersim/partnersim/simulator/scenario":          {ours: []string{"github.com/partnersim/partnersim/simulator", "github.com/partnersim/partnersim/fixtures"}, outside: []string{decimal}},
	"github.com/partnersim/partnersim/simulator/webhook":           {never: []string{bbolt, echo, "github.com/partnersim/partnersim/simulator/bolt", "github.com/partnersim/partnersim/simulator/httpapi/...", "github.com/partnersim/partnersim/simulator/sandbox"}},
	"github.com/partnersim/partnersim/receiver":                    {ours: []string{"github.com/partnersim/partnersim/simulator/webhook/signature"}, outside: []string{bbolt}},
	"github.com/partnersim/partnersim/receiver/certify":            {ours: []string{"github.com/partnersim/partnersim/simulator/webhook/signature", "github.com/partnersim/partnersim/simulator", "github.com/partnersim/partnersim/internal/junit"}, outside: []string{}},
	"github.com/partnersim/partnersim/fixtures":                    {ours: []string{"github.com/partnersim/partnersim/simulator", wordwise}, outside: []string{decimal}},
	"github.com/partnersim/partnersim/fixtures/generate":           {ours: []string{"github.com/partnersim/partnersim/simulator", "github.com/partnersim/partnersim/fixtures"}, outside: []string{decimal}},
	"github.com/partnersim/partnersim/features":                    {ours: []string{"github.com/partnersim/partnersim/simulator/openapi", "github.com/partnersim/partnersim/internal/junit", "github.com/partnersim/partnersim/features/laws"}},
	"github.com/partnersim/partnersim/features/laws":               {ours: []string{}, outside: []string{"github.com/tidwall/gjson"}},
	"github.com/partnersim/partnersim/features/proxy":              {ours: []string{"github.com/partnersim/partnersim/features/laws", "github.com/partnersim/partnersim/simulator/openapi", "github.com/partnersim/partnersim/simulator/openapi/check", "github.com/partnersim/partnersim/simulator/hostcheck", "github.com/partnersim/partnersim/internal/junit"}, outside: []string{"github.com/tidwall/gjson"}},
	"github.com/partnersim/partnersim/internal/loadtest":           {direct: []string{"github.com/partnersim/partnersim/simulator/bolt", "github.com/partnersim/partnersim/simulator/httpapi/...", "github.com/partnersim/partnersim/simulator/webhook/..."}},
	"github.com/partnersim/partnersim/internal/benchhttp":          {direct: []string{"github.com/partnersim/partnersim/simulator/bolt", "github.com/partnersim/partnersim/simulator/httpapi/...", "github.com/partnersim/partnersim/simulator/webhook/...", "github.com/partnersim/partnersim/simulator/sandbox"}},
	"github.com/partnersim/partnersim/simulator/sandbox":           {never: []string{"github.com/partnersim/partnersim/cmd/...", "github.com/partnersim/partnersim/features", "github.com/partnersim/partnersim/receiver/...", "github.com/partnersim/partnersim/internal/loadtest", "github.com/partnersim/partnersim/internal/..."}},
	"github.com/partnersim/partnersim/internal/sandboxtest":        {never: []string{"github.com/partnersim/partnersim/cmd/...", "github.com/partnersim/partnersim/features"}},
	"github.com/partnersim/partnersim/internal/layers":             {ours: []string{}, outside: []string{}},
	"github.com/partnersim/partnersim/internal/release":            {ours: []string{}, outside: []string{}},
	"github.com/partnersim/partnersim/internal/kubeschema":         {ours: []string{}, outside: []string{}},
	"github.com/partnersim/partnersim/internal/junit":              {ours: []string{}, outside: []string{}},
	"github.com/partnersim/partnersim/internal/nginx":              {ours: []string{}, outside: []string{}},
	"github.com/partnersim/partnersim/examples/pipelines":          {ours: []string{}, outside: []string{}},
	"github.com/partnersim/partnersim/features/mutants":            {ours: []string{}, outside: []string{}},
	"github.com/partnersim/partnersim/cmd/partnersim":              {direct: []string{"github.com/partnersim/partnersim/simulator/bolt", "github.com/partnersim/partnersim/simulator/httpapi/...", harness}},
	"github.com/partnersim/partnersim/simulator/openapi":           {ours: []string{}, outside: []string{"go.yaml.in/yaml/v3"}},
	"github.com/partnersim/partnersim/simulator/openapi/check":     {ours: []string{}, outside: []string{"github.com/getkin/kin-openapi/...", "github.com/tidwall/gjson"}},
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

const module = "github.com/partnersim/partnersim"

func ours(path string) bool {
	return path == "github.com/partnersim/partnersim" || strings.HasPrefix(path, "github.com/partnersim/partnersim/")
}

func TestImportRules(t *testing.T) {
	pkgs := packages(t)
	for path, p := range pkgs {
		r, stated := rules[path]
		for _, dep := range p.Deps {
			if stated && matchesAny(r.never, dep) {
				t.Errorf("%s reaches %s (%s): its doc.go says it must never, even indirectly", path, dep, chain(pkgs, path, dep))
			}
		}
		for _, imp := range p.Imports {
			switch {
			case stdlib(imp) && !ours(imp) && imp != "net/http/httptest":
			case stated && matchesAny(r.direct, imp):
				t.Errorf("%s imports %s: its doc.go says it reaches it only through another package", path, imp)
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

// chain is one import path from a package to a package it reaches, for the message.
func chain(pkgs map[string]pkg, from, to string) string {
	prev := map[string]string{from: ""}
	queue := []string{from}
	for len(queue) > 0 {
		cur := queue[0]
		queue = queue[1:]
		if cur == to {
			path := []string{}
			for p := to; p != ""; p = prev[p] {
				path = append([]string{strings.TrimPrefix(p, module+"/")}, path...)
			}
			return strings.Join(path, " → ")
		}
		for _, imp := range pkgs[cur].Imports {
			if _, seen := prev[imp]; !seen {
				prev[imp] = cur
				queue = append(queue, imp)
			}
		}
	}
	return "through a package outside the module"
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

// parentsServed are the parents a package may import: the domain, which every package under
// simulator/ adapts or serves (Standard Package Layout: the domain at the root, a subpackage per
// dependency), and the fixture sets' format, in which fixtures/generate writes its large sets.
// Any other parent is a layer above its child (httpapi mounts the console): what both need
// belongs in a leaf they both import.
var parentsServed = []string{module + "/simulator", module + "/fixtures"}

// No package reaches a package it lives inside, directly or not, but for the domain and the
// sets' format.
func TestNoPackageImportsItsParent(t *testing.T) {
	pkgs := packages(t)
	for path, p := range pkgs {
		for _, dep := range p.Deps {
			if strings.HasPrefix(path, dep+"/") && !slices.Contains(parentsServed, dep) {
				t.Errorf("%s reaches its parent %s (%s): move what both need into a leaf package both import", path, dep, chain(pkgs, path, dep))
			}
		}
	}
}

// maxInterface bounds an exported interface: a consumer asks for the few methods it calls, by
// concern, rather than for a mirror of a whole service.
const maxInterface = 10

// No exported interface of the module — the interfaces between its layers — has more than
// maxInterface methods, counting those of the interfaces it embeds. Generated code (the
// partner API's client, oapi-codegen's) is not ours to shape and is left out.
func TestNoInterfaceWiderThanTen(t *testing.T) {
	type iface struct {
		it      *ast.InterfaceType
		imports map[string]string // the file's imports: local name → path
	}
	generated := regexp.MustCompile(`(?m)^// Code generated .* DO NOT EDIT\.$`)
	decls := map[string]map[string]iface{} // package → interface name → interface
	for path, p := range packages(t) {
		decls[path] = map[string]iface{}
		for _, name := range p.GoFiles {
			src, err := os.ReadFile(filepath.Join(p.Dir, name))
			if err != nil {
				t.Fatal(err)
			}
			f, err := parser.ParseFile(token.NewFileSet(), name, src, parser.ParseComments|parser.SkipObjectResolution)
			if err != nil {
				t.Fatal(err)
			}
			if generated.Match(src) {
				continue
			}
			imports := map[string]string{}
			for _, s := range f.Imports {
				ip := strings.Trim(s.Path.Value, `"`)
				local := ip[strings.LastIndex(ip, "/")+1:]
				if s.Name != nil {
					local = s.Name.Name
				}
				imports[local] = ip
			}
			ast.Inspect(f, func(n ast.Node) bool {
				if ts, ok := n.(*ast.TypeSpec); ok {
					if it, ok := ts.Type.(*ast.InterfaceType); ok {
						decls[path][ts.Name.Name] = iface{it, imports}
					}
				}
				return true
			})
		}
	}
	// methods counts an interface's methods, its embedded ones of this module included; an
	// embedded interface from outside the module counts as one.
	var methods func(pkg string, i iface) int
	methods = func(pkg string, i iface) int {
		n := 0
		for _, m := range i.it.Methods.List {
			switch e := m.Type.(type) {
			case *ast.FuncType:
				n += len(m.Names)
			case *ast.Ident:
				if inner, ok := decls[pkg][e.Name]; ok {
					n += methods(pkg, inner)
				} else {
					n++
				}
			case *ast.SelectorExpr:
				x, _ := e.X.(*ast.Ident)
				if x == nil {
					n++
				} else if inner, ok := decls[i.imports[x.Name]][e.Sel.Name]; ok {
					n += methods(i.imports[x.Name], inner)
				} else {
					n++
				}
			default:
				n++ // a type constraint's term
			}
		}
		return n
	}
	checked := 0
	for path, ifaces := range decls {
		for name, i := range ifaces {
			if !ast.IsExported(name) {
				continue
			}
			checked++
			if n := methods(path, i); n > maxInterface {
				t.Errorf("%s.%s has %d methods: a consumer asks for the few it calls (at most %d), by concern", strings.TrimPrefix(path, module+"/"), name, n, maxInterface)
			}
		}
	}
	if checked < 20 {
		t.Fatalf("found only %d exported interfaces: the walk is broken", checked)
	}
}
