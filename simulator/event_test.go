package simulator_test

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"

	"github.com/partnersim/partnersim/simulator"
)

// An event body carries the bytes the Python service writes: json.dumps with FastAPI's settings
// (ensure_ascii=False, separators=(",", ":")) — no HTML escaping of <, & and >, non-ASCII and
// U+2028/U+2029 as they are, control characters escaped as Python escapes them (decisions D8,
// D4). The expected bytes were printed by Python 3's json.dumps from the same dict.
func TestEventBodyIsWhatPythonWrites(t *testing.T) {
	e := &simulator.Event{ID: "evt_1", Type: simulator.EventKYC, CreatedAt: time.Date(2026, 11, 24, 12, 0, 0, 0, time.UTC),
		Data: simulator.EventData{UserAccountID: "acct<&>é\u2028\u2029\u00a0\x7f\b\f\x01\"\\/日本", PlatformID: "usr_1",
			Product: simulator.ProductCrypto, KYCStatus: simulator.KYCApproved}}
	want := `{"event_id":"evt_1","event_type":"kyc","api_version":"v1","created_at":"2026-11-24T12:00:00Z","is_test":false,` +
		`"data":{"user_account_id":"acct<&>é` + "\u2028\u2029\u00a0\x7f" + `\b\f\u0001\"\\/日本","product":"crypto","kyc_status":"approved"},` +
		`"links":{"self":"/v1/users/usr_1/?user_account_id_type=platform"}}`
	assert.Equal(t, want, string(e.Body("v1")))
}
