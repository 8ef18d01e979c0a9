// Package interop proves that real deliveries from the simulator verify with Stripe's official
// verifier (stripe-go's webhook.ValidatePayloadWithTolerance): the signature scheme of the spec
// is Stripe's. It is its own module so that the main module does not depend on stripe-go.
package interop
