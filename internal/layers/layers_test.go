// Package layers holds the test that keeps the repository's architecture true: the import rules
// each package's doc.go states (domain first, one package per dependency, arrows pointing one
// way; ARCHITECTURE.md draws them). It has no code of its own.
package layers

import (
	"bytes"
	"encoding/json"
	"io"
	"os/exec"
	"strings"
	"testing"
)

type pkg struct {
	ImportPath string
	Imports    []string
}

// packages lists every package of the module with its non-test imports.
func packages(t *testing.T) map[string][]string {
	t.Helper()
	cmd := exec.Command("go", "list", "-json", "partnersim/...")
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("go list: %v", err)
	}
	got := map[string][]string{}
	dec := json.NewDecoder(bytes.NewReader(out))
	for {
		var p pkg
		if err := dec.Decode(&p); err == io.EOF {
			break
		} else if err != nil {
			t.Fatal(err)
		}
		got[p.ImportPath] = p.Imports
	}
	if len(got) < 10 {
		t.Fatalf("go list found only %d packages", len(got))
	}
	return got
}

// harness is the test harness: a package only tests import (checked below), so it may use
// net/http/httptest.
const harness = "partnersim/internal/sandboxtest"

// console is the QA console (decisions D15), mounted by the sandbox on the control plane.
const console = "partnersim/simulator/httpapi/console"

func stdlib(path string) bool { return !strings.Contains(strings.SplitN(path, "/", 2)[0], ".") }

func TestImportRules(t *testing.T) {
	pkgs := packages(t)
	ours := func(path string) bool { return path == "partnersim" || strings.HasPrefix(path, "partnersim/") }
	for path, imports := range pkgs {
		for _, imp := range imports {
			switch {
			case path == "partnersim/simulator" && !stdlib(imp) && imp != "github.com/shopspring/decimal":
				t.Errorf("%s imports %s: the domain imports only the standard library and decimal", path, imp)
			case (path == "partnersim/simulator/netguard" || path == "partnersim/simulator/webhook/signature") && !stdlib(imp):
				t.Errorf("%s imports %s: a leaf package imports only the standard library", path, imp)
			case imp == "go.etcd.io/bbolt" && strings.HasPrefix(path, "partnersim/simulator") && path != "partnersim/simulator/bolt":
				t.Errorf("%s imports bbolt: only simulator/bolt does", path)
			case path == "partnersim/simulator/bolt" && ours(imp) && imp != "partnersim/simulator":
				t.Errorf("%s imports %s: the store imports only the domain of this module", path, imp)
			case path == "partnersim/features" && strings.HasPrefix(imp, "partnersim/simulator"):
				t.Errorf("%s imports %s: the suites are black-box (HTTP and gjson only)", path, imp)
			case path == console && (imp == "go.etcd.io/bbolt" || imp == "partnersim/simulator/bolt" || imp == "partnersim/sandbox" || imp == "partnersim/simulator/webhook"):
				t.Errorf("%s imports %s: the console reaches storage and delivery only through httpapi's interfaces", path, imp)
			case path != console && path != "partnersim/sandbox" && imp == console:
				t.Errorf("%s imports %s: only the sandbox mounts the console (httpapi must never import it)", path, imp)
			case path == "partnersim/receiver/certify" && imp == "partnersim/receiver":
				t.Errorf("%s imports %s: certification must not share the code it checks", path, imp)
			case imp == "net/http/httptest" && path != harness:
				t.Errorf("%s imports net/http/httptest outside its tests: it belongs in tests", path)
			case imp == harness:
				t.Errorf("%s imports the test harness %s outside its tests", path, harness)
			}
		}
	}
}
