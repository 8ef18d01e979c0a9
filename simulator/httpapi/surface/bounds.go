package surface

import (
	"time"

	"github.com/partnersim/partnersim/simulator"
)

// The control plane's bounds (decisions D17), one home for httpapi's handlers and the QA
// console.
const (
	// MaxAdvanceSeconds bounds one advance of the virtual clock (the domain's MaxAdvance).
	MaxAdvanceSeconds = int(simulator.MaxAdvance / time.Second)
	// MaxOverlapSeconds bounds a signing-secret rotation's overlap (thirty days).
	MaxOverlapSeconds = 30 * 24 * 3600
	// MaxSessions bounds a created user's live sessions.
	MaxSessions = 1000
	// MaxFaultLatencyMS bounds an injected latency (one minute).
	MaxFaultLatencyMS = 60000
	// MaxRateLimit bounds the rate limit's requests a second and its burst.
	MaxRateLimit = 1000000
	// MaxPendingListed bounds GET /_sandbox/clock's list of due deliveries.
	MaxPendingListed = 100
	// MaxKeyDescription bounds an issued key's description, in characters.
	MaxKeyDescription = 200
	// MaxDeliveryPage bounds a page of the delivery log (GET /_sandbox/deliveries).
	MaxDeliveryPage = 1000
)

// ValidSnapshotName reports whether a snapshot name is letters, digits, '-' and '_' (at most 64);
// the QA console checks its form with it.
func ValidSnapshotName(n string) bool {
	if n == "" || len(n) > 64 {
		return false
	}
	for _, c := range n {
		if !(c == '-' || c == '_' || c >= '0' && c <= '9' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z') {
			return false
		}
	}
	return true
}
