// Package certify is the receiver certification battery of decisions D13: it fires a fixed series
// of deliveries — correctly signed, replayed, stale, future-dated, tampered, unsigned, with
// rotated and unknown signature entries, with a header id that lies, a test event — at any
// webhook endpoint and judges each by the HTTP status alone, since that is all a sender sees.
// A Report prints as a table for people and as JUnit XML for CI.
//
// Every run uses fresh event ids, so running it again against a receiver that deduplicates
// (as a correct one does) behaves the same. The events name users and transactions that do not
// exist: a correct receiver acknowledges before it processes, so that cannot change its answer.
//
// It speaks only HTTP, signs with partnersim/simulator/webhook/signature, writes its sample
// bodies with the domain's own event body (partnersim/simulator, so that a sample is the
// simulator's bytes, not a copy of its format), writes JUnit XML with partnersim/internal/junit
// (the contract suite's writer too) and imports nothing else of this module: it must
// never import the reference receiver, whose rules it checks, nor the store, HTTP layer or
// dispatcher.
package certify
