// Package webhook delivers events: a dispatcher that drains the durable outbox kept by the
// store, signs each attempt (package signature), POSTs it through the address guard (package
// netguard) and records every attempt, retrying on the configured schedule.
//
// It depends on the domain, signature and netguard; storage comes in through the Store
// interface declared here. It must never import bbolt or echo.
package webhook
