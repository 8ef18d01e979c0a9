// Package control is the control plane's service (decisions D9): every operation behind
// /_sandbox/, the QA console and the scenario runner, plus the partner API's one composite use
// case, Send Test. Each operation runs through the domain in one transaction of the store (a KYC
// move: load the user, move the state machine, save, write the event and its deliveries, read
// the prices it is shown at — one write transaction); the process-wide state it keeps besides
// the store is the virtual clock's moves (and who waits on them), the DNS overrides and the
// hooks run after a reset.
//
// What each operation returns on error is said once, on the interface the front ends call
// (simulator/httpapi/surface): the consumer's contract outlives whichever value serves it, and
// docs/decisions.md ("How the code is arranged") says why the store is to serve the operations
// that are one transaction while this package keeps what orchestrates several parts. Each
// method here points there; TestEveryErrorIsNamedInItsOneComment provokes every named code.
//
// Its consumers never see it: the HTTP handlers (simulator/httpapi), the console
// (simulator/httpapi/console) and the scenario runner (simulator/scenario) declare the small
// interfaces they use, and the sandbox hands them this one Service.
//
// It imports the domain, the store (simulator/bolt) and the address guard (simulator/netguard).
// It must never import echo, the HTTP layer (simulator/httpapi and the console), the
// dispatcher (simulator/webhook: it sends through the Sender it is given), the fixtures, the
// sandbox or the command; internal/layers holds these rules.
package control
