package main

import (
	"strings"
	"testing"
)

// The explanations file parses and names known mutators. (Whether each line still exists is
// checked by make mutants itself, which fails on stale lines: the simulator's owners must not be
// blocked by it on every commit.)
func TestExplanationsParse(t *testing.T) {
	ex, err := readEquivalents("../mutants-equivalent.tsv")
	if err != nil {
		t.Fatal(err)
	}
	if len(ex) == 0 {
		t.Fatal("no explanations read")
	}
	for k := range ex {
		if typ := strings.Split(k, "\x00")[1]; tokenMutations[typ] == nil {
			t.Errorf("unknown mutator %q", typ)
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

// The sample follows what a mutant is, not where: moved lines and re-indented lines keep their
// rank, a changed line or another seed does not.
func TestRankIgnoresPosition(t *testing.T) {
	m := Mutant{File: "simulator/x.go", Line: 10, Col: 14, Indent: 1, Type: "INVERT_LOGICAL", Source: "if a && b {"}
	moved := m
	moved.Line, moved.Col, moved.Indent = 250, 16, 3
	if m.rank(10) != moved.rank(10) {
		t.Error("a moved or re-indented line changed the mutant's rank")
	}
	edited := m
	edited.Source = "if a && c {"
	if m.rank(10) == edited.rank(10) || m.rank(10) == m.rank(11) {
		t.Error("expected a different rank for another line or another seed")
	}
}
