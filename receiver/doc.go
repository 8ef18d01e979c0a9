// Package receiver is the reference webhook receiver of decisions D11: the rules a partner's own
// endpoint should follow, as a library the `partnersim receive` command and the suites run.
//
// A delivery is verified before its body is parsed (package signature: t within a tolerance on
// both sides, any v1 entry matching, constant-time compare, unknown tags ignored) and refused
// with 400 and a reason otherwise. The signature does not cover the X-Partner-Webhook-Id
// header, so the receiver deduplicates on the body's event_id and refuses a delivery whose
// header id differs from it. A new event is acknowledged with 200 before it is processed;
// is_test events are acknowledged and never processed; transaction events are processed only
// when data.status is "completed"; processing refetches links.self from the API with an API
// key and then calls Config.Process. An inspection handler lists what arrived (with the verdict
// and the reason), what was processed, and sets injected failures.
//
// Durability. The receiver keeps its own bbolt file. The 200 is written only after the
// transaction that stores the event — its dedupe key, its exact body bytes and an entry in the
// queue bucket — has committed to disk, in the same transaction that checks the dedupe key
// (so of any number of concurrent deliveries of one event exactly one is accepted). A single
// worker goroutine takes the queue in order and, once an event is processed, deletes its queue
// entry in the same transaction that records the outcome. Open starts the worker on whatever
// the queue holds, so an event acknowledged before a crash is processed after the restart.
// Duplicates never reach Process; but a crash while Process is running for an event means
// Process runs again for it after the restart, so Process should itself be idempotent on
// event_id (the usual caveat of an outbox: at-least-once into the side effect, exactly-once
// over deliveries).
//
// It imports partnersim/simulator/webhook/signature and bbolt, and must never import any other
// package of this module (nor echo): a partner copying it needs only the signing rules.
package receiver
