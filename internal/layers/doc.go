// Package layers holds the test that keeps the repository's architecture true: every package
// has a doc.go saying what it owns and what it must never import, and the import rules those
// doc.go files state are checked against `go list` (domain first, one package per dependency,
// arrows pointing one way; ARCHITECTURE.md draws them) — what a package must never import it
// must not reach through another package either —, no package reaches its parent (but for the
// domain and the fixture format), no exported interface is wider than ten methods, and
// ARCHITECTURE.md's package list is checked against the same `go list`: every package listed,
// none that does not exist. The documents' claims are held too: ARCHITECTURE.md's command list
// against root.go, its bbolt sentence against the imports, every relative Markdown link, and no
// comment citing an issue number or a path outside the repository. It has no code of its own
// and must never import anything of this module: it reads the module from the outside.
package layers
