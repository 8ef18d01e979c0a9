// Package proxy is `partnersim proxy`: a reverse proxy between a partner's app and any
// deployment of the partner API that forwards every exchange unchanged and checks it on the
// side — against the OpenAPI document (simulator/openapi/check), the error shapes of decisions
// D2–D4, and the laws that span answers (features/laws, the suite's own) — and lints the
// partner's side: the 307s, 422s, walks, retries, scopes and polling its app causes. In front of
// the partner's webhook receiver it verifies each delivery's signature, body and answer. It
// reports a live line per finding and, when stopped, JUnit, JSON and SARIF with one testcase
// per rule. With Config.Record it writes the users and orders it saw as a fixture set.
//
// It is black-box like the suite: it must never import the simulator (simulator/...) beyond
// the published documents (simulator/openapi), their checker (simulator/openapi/check) and the
// Host check of decisions D18 (simulator/hostcheck, so it answers the Hosts the sandbox does),
// nor the fixtures; what it writes with --record is the fixture format as a partner reads it.
package proxy
