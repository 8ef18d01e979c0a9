// Package control is the control plane's service for the operations that orchestrate several
// parts (decisions D9): the virtual clock's moves and who waits on them, the DNS overrides,
// snapshots and reset with the hooks run after it, and the partner API's one composite use
// case, Send Test (the store, the address guard and the sender). The operations that are one
// transaction of the store — a KYC move, an order, a fill, a tenant's key, a read — are served
// by the store itself (simulator/bolt), which the sandbox hands to their consumers directly.
//
// What each operation returns on error is said once, on the interface the front ends call
// (simulator/httpapi/surface): the consumer's contract outlives whichever value serves it, and
// docs/decisions.md ("How the code is arranged") says why the store serves the operations that
// are one transaction while this package keeps what orchestrates several parts. Each method
// here points there; TestEveryErrorIsNamedInItsOneComment provokes every named code.
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
