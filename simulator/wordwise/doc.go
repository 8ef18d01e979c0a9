// Package wordwise tests the bytes of a string eight at a time: the bytes of a word (eight
// bytes loaded at once) in a class — equal to a byte (Equal), below or above an ASCII byte
// (Below, Above, Outside) — are flagged all at once by the usual bit tricks, in a Mask that says
// whether any byte is flagged (Any) and which is the first (First). It is the one home of those
// tricks: the scanners of the body writer (simulator.PlainJSON), the query reader
// (simulator/validate), the set's decoder (fixtures) and the store's codec (simulator/bolt) each
// state their byte class with it, and keep a byte at a time only for what is shorter than a
// word. Each function is a few operations that inline; with constant arguments, as every
// caller's are, the compiler folds their constants, so a class costs what its own tricks did.
//
// It imports only the standard library and must never import another package of this module:
// the domain, the validator, the fixture format and the store depend on it, never the reverse.
package wordwise
