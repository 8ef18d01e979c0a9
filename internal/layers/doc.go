// Package layers holds the test that keeps the repository's architecture true: every package
// has a doc.go saying what it owns and what it must never import, and the import rules those
// doc.go files state are checked against `go list` (domain first, one package per dependency,
// arrows pointing one way; ARCHITECTURE.md draws them), and ARCHITECTURE.md's package list is
// checked against the same `go list`: every package listed, none that does not exist. It has no
// code of its own and must never import anything of this module: it reads the module from the
// outside.
package layers
