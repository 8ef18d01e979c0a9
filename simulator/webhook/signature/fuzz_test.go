package signature_test

import (
	"testing"
	"time"

	"github.com/partnersim/partnersim/simulator/webhook/signature"
)

// FuzzVerify checks that no header panics the parser, that a header Sign made always verifies,
// and that an arbitrary header never verifies against a body it was not made for.
func FuzzVerify(f *testing.F) {
	f.Add("t=1700000000,v1=00", []byte(`{"event_id":"evt_1"}`), "whsec_x", int64(1700000000))
	f.Add("t=1,v1=,v0=,x", []byte{}, "k", int64(0))
	f.Add(",,=,t==", []byte("body"), "", int64(-5))
	f.Fuzz(func(t *testing.T, header string, body []byte, secret string, unix int64) {
		now := time.Unix(unix, 0)
		if h, err := signature.Parse(header); err == nil && h.Timestamp.IsZero() {
			t.Fatalf("Parse(%q) succeeded without a timestamp", header)
		}
		_ = signature.Verify(header, body, []string{secret}, time.Minute, now)
		if secret == "" {
			return
		}
		signed := signature.Sign(now, body, secret)
		if err := signature.Verify(signed, body, []string{secret}, time.Minute, now); err != nil {
			t.Fatalf("Verify(Sign(...)) = %v", err)
		}
		if err := signature.Verify(signed, append(body, '!'), []string{secret}, time.Minute, now); err == nil {
			t.Fatalf("a body with one byte appended verified")
		}
	})
}
