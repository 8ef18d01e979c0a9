package main

import (
	"os"
	"strings"
	"testing"
)

// Every explained mutant still names a line of the source: an entry whose line was rewritten
// must be re-judged, not silently kept.
func TestExplanationsMatchTheSource(t *testing.T) {
	b, err := os.ReadFile("../mutants-equivalent.tsv")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := readEquivalents("../mutants-equivalent.tsv"); err != nil {
		t.Fatal(err)
	}
	for i, line := range strings.Split(strings.TrimRight(string(b), "\n"), "\n")[1:] {
		f := strings.Split(line, "\t")
		src, err := os.ReadFile("../../" + f[0])
		if err != nil {
			t.Errorf("line %d: %v", i+2, err)
			continue
		}
		found := false
		for _, l := range strings.Split(string(src), "\n") {
			found = found || strings.TrimSpace(l) == f[3]
		}
		if !found {
			t.Errorf("line %d: %s no longer has the line %q: judge the mutants of its new form again", i+2, f[0], f[3])
		}
		if _, ok := tokenMutations[f[1]]; !ok {
			t.Errorf("line %d: unknown mutator %q", i+2, f[1])
		}
	}
}

// mutate swaps exactly the operator at the position, as gremlins does.
func TestMutate(t *testing.T) {
	src := []byte("package p\n\nfunc f(a, b int) bool { return a < b && -a != b }\n")
	cases := []struct {
		col  int
		typ  string
		want string
	}{
		{34, "CONDITIONALS_BOUNDARY", "a <= b && -a != b"},
		{34, "CONDITIONALS_NEGATION", "a >= b && -a != b"},
		{38, "INVERT_LOGICAL", "a < b || -a != b"},
		{41, "INVERT_NEGATIVES", "a < b && +a != b"},
		{44, "CONDITIONALS_NEGATION", "a < b && -a == b"},
	}
	for _, c := range cases {
		got, err := mutate(src, 3, c.col, c.typ)
		if err != nil {
			t.Fatalf("%s at %d: %v", c.typ, c.col, err)
		}
		if !strings.Contains(string(got), "return "+c.want+" }") {
			t.Errorf("%s at %d: got %s", c.typ, c.col, got)
		}
	}
	if _, err := mutate(src, 3, 36, "INVERT_LOGICAL"); err == nil {
		t.Error("expected no operator at a non-operator position")
	}
}
