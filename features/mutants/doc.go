// Command mutants is `make mutants`: mutation testing of the simulator with the contract suite
// (go test ./features) as the killing test.
//
// gremlins (github.com/go-gremlins/gremlins) lists the mutants: its dry run finds every mutable
// operator of the packages in scope. gremlins itself can only kill a mutant with the tests of
// the mutant's own package (or, with --integration, every test of the module, which takes
// minutes per mutant), and the point here is to judge the black-box suite, so this driver
// applies each listed mutant itself, exactly as gremlins would (one operator token swapped by
// gremlins' own mapping), through `go test -overlay`, which compiles the mutated copy in place
// of the file without touching the tree, and runs `go test -run TestContract ./features` on it:
// a failing suite kills the mutant.
//
// Mutants on lines that the suite never executes (from a coverage run of the suite) are reported
// as not covered without a run; mutants written down in features/mutants-equivalent.tsv (same
// file, mutator and source line) as equivalent, with the reason given there. The rest run,
// -workers at a time. The report lists every survivor with its position and source line.
//
// It imports only the standard library, and must never import the simulator it mutates (it
// edits no source: the mutated copy is handed to go test through -overlay) nor the suite.
package main
