package layers

import (
	"os"
	"regexp"
	"slices"
	"strings"
	"testing"
)

// ARCHITECTURE.md's "Packages" section names every package of the module, one "- `path`" line
// each, and no package that does not exist.
func TestArchitectureListsEveryPackage(t *testing.T) {
	b, err := os.ReadFile("../../ARCHITECTURE.md")
	if err != nil {
		t.Fatal(err)
	}
	_, section, ok := strings.Cut(string(b), "\n## Packages\n")
	if !ok {
		t.Fatal(`ARCHITECTURE.md has no "## Packages" section: list every package there, one "- ` + "`path`" + `" line each`)
	}
	section, _, _ = strings.Cut(section, "\n## ")
	entry := regexp.MustCompile("(?m)^- `([^`]+)`")
	listed := map[string]bool{}
	for _, m := range entry.FindAllStringSubmatch(section, -1) {
		if listed[m[1]] {
			t.Errorf("ARCHITECTURE.md lists %s twice", m[1])
		}
		listed[m[1]] = true
	}
	var exist []string
	for path := range packages(t) {
		rel := strings.TrimPrefix(path, "github.com/partnersim/partnersim/")
		exist = append(exist, rel)
		if !listed[rel] {
			t.Errorf("package %s is missing from ARCHITECTURE.md's package list: add a line saying what it holds", rel)
		}
	}
	for rel := range listed {
		if !slices.Contains(exist, rel) {
			t.Errorf("ARCHITECTURE.md lists %s, which is no package of the module (go list): remove it or fix its path", rel)
		}
	}
}
