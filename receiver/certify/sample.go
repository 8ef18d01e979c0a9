package certify

import (
	"crypto/rand"
	"fmt"
	"time"

	"github.com/partnersim/partnersim/simulator"
)

// Kind names a sample event body.
type Kind string

// The sample kinds.
const (
	// KindKYC is a kyc event: a user's crypto account moved to approved.
	KindKYC Kind = "kyc"
	// KindTransaction is a transaction event: a robo transaction completed.
	KindTransaction Kind = "transaction"
	// KindTest is the is_test kyc event Send Test Webhook delivers: a synthetic user.
	KindTest Kind = "test"
)

// Kinds lists the sample kinds.
func Kinds() []Kind { return []Kind{KindKYC, KindTransaction, KindTest} }

// Sample returns the delivery body of a sample event of kind, written by the simulator's own
// event body (simulator.Event.Body: compact JSON, D8's field order, the one time format), with
// the given event_id and created_at. The user and transaction ids it names are fresh and exist
// nowhere.
func Sample(kind Kind, eventID string, createdAt time.Time) ([]byte, error) {
	e := simulator.Event{ID: eventID, CreatedAt: createdAt}
	switch kind {
	case KindKYC:
		e.Type = simulator.EventKYC
		e.Data = simulator.EventData{UserAccountID: "partner-" + randomBase62(8), Product: simulator.ProductCrypto,
			KYCStatus: simulator.KYCApproved, PlatformID: NewID("usr")}
	case KindTransaction:
		e.Type = simulator.EventTransaction
		e.Data = simulator.EventData{TransactionID: NewID("txn"), Status: simulator.OrderCompleted,
			UserAccountID: "partner-" + randomBase62(8), Product: simulator.ProductRobo}
	case KindTest:
		e.Type, e.IsTest = simulator.EventKYC, true
		e.Data = simulator.EventData{UserAccountID: "test_user", Product: simulator.ProductCrypto,
			KYCStatus: simulator.KYCApproved, PlatformID: NewID("usr_test")}
	default:
		return nil, fmt.Errorf("certify: unknown sample kind %q (use kyc, transaction or test)", kind)
	}
	return e.Body("v1"), nil
}

const base62 = "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"

// NewID returns prefix + "_" + 24 random base62 characters, the simulator's id shape (so
// NewID("evt") is a fresh event id).
func NewID(prefix string) string { return prefix + "_" + randomBase62(24) }

func randomBase62(n int) string {
	out := make([]byte, 0, n)
	var buf [32]byte
	for len(out) < n {
		_, _ = rand.Read(buf[:]) // crypto/rand.Read never fails (it crashes the program instead)
		for _, b := range buf {
			if b < 248 && len(out) < n { // 248 = 4*62: reject the rest to stay uniform
				out = append(out, base62[int(b)%62])
			}
		}
	}
	return string(out)
}
