package certify

import (
	"crypto/rand"
	"encoding/json"
	"fmt"
	"time"
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

// The envelopes of decisions D8, fields in their published order.
type (
	envelope struct {
		EventID    string `json:"event_id"`
		EventType  string `json:"event_type"`
		APIVersion string `json:"api_version"`
		CreatedAt  string `json:"created_at"`
		IsTest     bool   `json:"is_test"`
		Data       any    `json:"data"`
		Links      links  `json:"links"`
	}
	kycData struct {
		UserAccountID string `json:"user_account_id"`
		Product       string `json:"product"`
		KYCStatus     string `json:"kyc_status"`
	}
	transactionData struct {
		TransactionID string `json:"transaction_id"`
		Status        string `json:"status"`
		UserAccountID string `json:"user_account_id"`
		Product       string `json:"product"`
	}
	links struct {
		Self string `json:"self"`
	}
)

// Sample returns the delivery body of a sample event of kind, shaped exactly like the
// simulator's (compact JSON, D8's field order), with the given event_id and created_at. The
// user and transaction ids it names are fresh and exist nowhere.
func Sample(kind Kind, eventID string, createdAt time.Time) ([]byte, error) {
	env := envelope{EventID: eventID, APIVersion: "v1", CreatedAt: formatTime(createdAt)}
	switch kind {
	case KindKYC:
		env.EventType = "kyc"
		env.Data = kycData{UserAccountID: "partner-" + randomBase62(8), Product: "crypto", KYCStatus: "approved"}
		env.Links.Self = "/v1/users/" + NewID("usr") + "/?user_account_id_type=platform"
	case KindTransaction:
		txn := NewID("txn")
		env.EventType = "transaction"
		env.Data = transactionData{TransactionID: txn, Status: "completed", UserAccountID: "partner-" + randomBase62(8), Product: "robo"}
		env.Links.Self = "/v1/transactions/" + txn + "/"
	case KindTest:
		env.EventType, env.IsTest = "kyc", true
		env.Data = kycData{UserAccountID: "test_user", Product: "crypto", KYCStatus: "approved"}
		env.Links.Self = "/v1/users/" + NewID("usr_test") + "/?user_account_id_type=platform"
	default:
		return nil, fmt.Errorf("certify: unknown sample kind %q (use kyc, transaction or test)", kind)
	}
	return json.Marshal(env)
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

// formatTime writes t as the simulator writes an event's created_at (simulator.FormatTime,
// which this package may not import; a test in cmd/partnersim holds the two equal): pydantic
// v2's datetime — Z, microseconds as six digits only when not zero.
func formatTime(t time.Time) string {
	t = t.UTC().Truncate(time.Microsecond)
	if t.Nanosecond() == 0 {
		return t.Format(time.RFC3339)
	}
	return t.Format("2006-01-02T15:04:05.000000Z07:00")
}
