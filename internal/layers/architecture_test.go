package layers

import (
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
)

// ARCHITECTURE.md's "Packages" section names every package of the module, one "- `path`" line
// each, and no package that does not exist.
func TestArchitectureListsEveryPackage(t *testing.T) {
	_, section, ok := strings.Cut(architecture(t), "\n## Packages\n")
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

// architecture returns ARCHITECTURE.md's text.
func architecture(t *testing.T) string {
	t.Helper()
	b, err := os.ReadFile("../../ARCHITECTURE.md")
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// ARCHITECTURE.md's drawing lists the binary's commands ("root.go lists the commands: …") as
// root.go adds them (newServeCmd → serve), and cobra's own completion.
func TestArchitectureListsEveryCommand(t *testing.T) {
	root, err := os.ReadFile("../../cmd/partnersim/root.go")
	if err != nil {
		t.Fatal(err)
	}
	_, added, ok := strings.Cut(string(root), "root.AddCommand(")
	if !ok {
		t.Fatal("cmd/partnersim/root.go adds no commands with root.AddCommand(")
	}
	added, _, _ = strings.Cut(added, "\n\t)")
	want := []string{"completion"}
	for _, m := range regexp.MustCompile(`new(\w+)Cmd\(`).FindAllStringSubmatch(added, -1) {
		want = append(want, strings.ToLower(m[1]))
	}
	if len(want) < 10 {
		t.Fatalf("found only %v in root.go's AddCommand", want)
	}
	m := regexp.MustCompile(`root\.go lists the commands: ([a-z, │\n-]+)`).FindStringSubmatch(architecture(t))
	if m == nil {
		t.Fatal(`ARCHITECTURE.md does not say "root.go lists the commands: …"`)
	}
	listed := strings.FieldsFunc(m[1], func(r rune) bool { return r == ',' || r == '│' || r == ' ' || r == '\n' })
	for i, c := range listed { // shard-map is made by newShardMapCmd
		listed[i] = strings.ReplaceAll(c, "-", "")
	}
	for _, c := range want {
		if !slices.Contains(listed, c) {
			t.Errorf("ARCHITECTURE.md's command list lacks %s, which root.go adds", c)
		}
	}
	for _, c := range listed {
		if !slices.Contains(want, c) {
			t.Errorf("ARCHITECTURE.md's command list names %s, which root.go does not add", c)
		}
	}
}

// ARCHITECTURE.md's "only … import bbolt" names exactly the packages that import it.
func TestArchitectureNamesWhoImportsBbolt(t *testing.T) {
	m := regexp.MustCompile("only\\s+((?:`[^`]+`[^`]*?)+)\\s+import\\s+bbolt").FindStringSubmatch(architecture(t))
	if m == nil {
		t.Fatal(`ARCHITECTURE.md does not say "only ` + "`…`" + ` import bbolt"`)
	}
	var named []string
	for _, p := range regexp.MustCompile("`([^`]+)`").FindAllStringSubmatch(m[1], -1) {
		named = append(named, p[1])
	}
	var importers []string
	for path, p := range packages(t) {
		if slices.ContainsFunc(p.Imports, func(imp string) bool { return matches(bbolt, imp) }) {
			importers = append(importers, strings.TrimPrefix(path, module+"/"))
		}
	}
	slices.Sort(named)
	slices.Sort(importers)
	if !slices.Equal(named, importers) {
		t.Errorf("ARCHITECTURE.md says only %v import bbolt; go list says %v do", named, importers)
	}
}

// No comment cites an issue number (history lives in commits, decisions in docs/decisions.md)
// or a path outside the repository (the design folder beside the checkout, which a clone
// does not have).
func TestCommentsCiteNoIssueNorOutsidePath(t *testing.T) {
	issue := regexp.MustCompile(`(?i)\bissues? #?[0-9]+`)
	outside := regexp.MustCompile(`\.\./shared/`)
	for path, p := range packages(t) {
		for _, name := range slices.Concat(p.GoFiles, p.TestGoFiles, p.XTestGoFiles) {
			b, err := os.ReadFile(filepath.Join(p.Dir, name))
			if err != nil {
				t.Fatal(err)
			}
			for i, line := range strings.Split(string(b), "\n") {
				_, comment, ok := strings.Cut(line, "//")
				if !ok {
					continue
				}
				if issue.MatchString(comment) || outside.MatchString(comment) {
					t.Errorf("%s/%s:%d cites an issue or a path outside the repository: %s", strings.TrimPrefix(path, module+"/"), name, i+1, strings.TrimSpace(line))
				}
			}
		}
	}
}

// Every relative link of the repository's Markdown names a file or folder that exists, so a
// move cannot leave a document pointing at the old place.
func TestMarkdownLinksResolve(t *testing.T) {
	link := regexp.MustCompile(`\]\(([^)\s]+)\)`)
	checked := 0
	eachMarkdown(t, func(path, text string) {
		for _, m := range link.FindAllStringSubmatch(text, -1) {
			target, _, _ := strings.Cut(m[1], "#")
			if target == "" || strings.Contains(target, "://") || strings.HasPrefix(target, "mailto:") {
				continue
			}
			checked++
			if _, err := os.Stat(filepath.Join(filepath.Dir(path), target)); err != nil {
				t.Errorf("%s links to %s, which does not exist", strings.TrimPrefix(path, "../../"), m[1])
			}
		}
	})
	if checked < 10 {
		t.Fatalf("checked only %d links: the walk is broken", checked)
	}
}

// Every repository path the Markdown names in code spans (`simulator/bolt/set.go`, the
// decisions' "Where" lines, ARCHITECTURE.md's walks) names a file or folder that exists, so a
// move cannot leave a document sending a reader to the old place. A path is a span starting
// with one of the tree's top folders; one with a pattern or placeholder (*, {, <, …) is not
// checked, nor BENCHMARKS.md, whose entries record the tree as it was when each was measured.
func TestMarkdownPathsExist(t *testing.T) {
	span := regexp.MustCompile("`((?:simulator|cmd|internal|features|fixtures|receiver|docs|deploy|examples)/[^`\\s]*)`")
	checked := 0
	eachMarkdown(t, func(path, text string) {
		if filepath.Base(path) == "BENCHMARKS.md" {
			return
		}
		for _, m := range span.FindAllStringSubmatch(text, -1) {
			target, _, _ := strings.Cut(m[1], ":") // file:line
			if strings.ContainsAny(target, "*{}<>…$") {
				continue
			}
			checked++
			if _, err := os.Stat(filepath.Join("../..", target)); err != nil {
				t.Errorf("%s names %s, which does not exist", strings.TrimPrefix(path, "../../"), m[1])
			}
		}
	})
	if checked < 50 {
		t.Fatalf("checked only %d paths: the walk is broken", checked)
	}
}

// eachMarkdown calls fn with the path and text of every Markdown file of the repository
// (hidden folders left out).
func eachMarkdown(t *testing.T, fn func(path, text string)) {
	t.Helper()
	err := filepath.WalkDir("../..", func(path string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && path != "../.." && strings.HasPrefix(d.Name(), ".") {
			return filepath.SkipDir
		}
		if d.IsDir() || !strings.HasSuffix(path, ".md") {
			return nil
		}
		b, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		fn(path, string(b))
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}
