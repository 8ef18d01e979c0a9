// Package netguard keeps webhook callbacks away from private networks (decisions D8, SSRF): it
// decides which IP addresses are public, checks a callback URL when a subscription is created
// or tested, and dials callback hosts through a checked dialer that connects only to the
// address it has just judged, so a DNS answer that changes between the check and the connect
// (rebinding) cannot reach a private address. It also holds the sandbox's DNS overrides, so
// rebinding can be rehearsed.
//
// It imports only the standard library and must never import another package of this module:
// the HTTP layer and the dispatcher depend on it, never the reverse.
package netguard
