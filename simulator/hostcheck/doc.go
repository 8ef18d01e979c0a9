// Package hostcheck decides which Host headers a server answers (decisions D18): the
// DNS-rebinding defence of a loopback-bound server. A page whose name re-resolves to
// 127.0.0.1 reaches a loopback-bound server with its own name in Host; answering only loopback
// names (and the names an operator allows) keeps it out. The sandbox's HTTP layer
// (simulator/httpapi) and the contract proxy (features/proxy) both answer by this one policy,
// so a suite run through the proxy meets the same 421s as one run against the sandbox.
//
// It holds the decision only: it never writes a response (each server answers 421 in its own
// way), never resolves a name and never looks at the connection's address. It imports only the
// standard library and must never import another package of this module: the HTTP layer and
// the proxy depend on it, never the reverse.
package hostcheck
