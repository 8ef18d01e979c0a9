// Package signature signs and verifies webhook deliveries (decisions D8, spec §6.1): the header
// `t=<unix_seconds>,v1=<hex>` whose digest is HMAC-SHA256 over `<t>.<raw body>`, keyed by the
// signing secret's bytes exactly as issued ("whsec_…"). It is the one place both sides of a
// delivery agree on: the simulator's dispatcher signs with it, the reference receiver and the
// certification battery verify with it (STYLE convention 13). The scheme is Stripe's, so
// stripe-go's webhook verifier accepts what Sign produces.
//
// It is a leaf: it imports only the standard library and must never import another package
// of this module (nor anything that does I/O beyond the io.Reader NewSecret is given).
package signature
