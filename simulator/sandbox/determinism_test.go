package sandbox_test

import (
	"net/http"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"github.com/tidwall/gjson"

	"github.com/partnersim/partnersim/internal/sandboxtest"
	"github.com/partnersim/partnersim/simulator/sandbox"
)

// deterministicRun plays a fixed script against a deterministic sandbox and returns what the
// receiver got.
func deterministicRun(t *testing.T) (body []byte, sig string, secret string) {
	t.Helper()
	seed := uint64(42)
	frozen := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	s := sandboxtest.MustServe(t, func(c *sandbox.Config) { c.Seed, c.FrozenClock = &seed, &frozen })
	recv := sandboxtest.NewCallback(t, sandboxtest.Answering(http.StatusOK))
	inst := s.MustControl(t, "POST", "/_sandbox/institutions", `{"name":"Det","vendors":{"core":null,"dbp":null}}`).JSON("institution_id").String()
	key := s.MustControl(t, "POST", "/_sandbox/institutions/"+inst+"/keys", `{"scopes":["manage:webhooks"]}`).JSON("key").String()
	sub := s.Call(t, "POST", "/v1/webhooks/subscriptions", `{"event_type":"kyc","url":"`+recv.URL+`"}`, "x-api-key: "+key)
	require.Equal(t, http.StatusCreated, sub.Status, sub.Body)
	pid := s.MustControl(t, "POST", "/_sandbox/institutions/"+inst+"/users", `{"user_account_id":"det","accounts":[{"product":"crypto","kyc_status":"pending"}]}`).
		JSON("platform_id").String()
	s.MustControl(t, "POST", "/_sandbox/users/"+pid+"/kyc", `{"product":"crypto","status":"approved"}`)
	sandboxtest.Eventually(t, func() bool { return len(recv.Received()) > 0 }, "no delivery")
	d := recv.Received()[0]
	return d.Body, d.Header.Get("X-Partner-Webhook-Signature"), sub.JSON("signing_secret").String()
}

// TestDeterministicModeIsByteIdentical: with --seed and --frozen-clock two runs give the same
// ids, secret, body bytes and signature (decisions D8's golden mode).
func TestDeterministicModeIsByteIdentical(t *testing.T) {
	b1, s1, sec1 := deterministicRun(t)
	b2, s2, sec2 := deterministicRun(t)
	require.Equal(t, sec1, sec2, "same signing secret")
	require.Equal(t, string(b1), string(b2), "same body bytes")
	require.Equal(t, s1, s2, "same signature header")
	require.Equal(t, "2026-01-02T03:04:05Z", gjson.GetBytes(b1, "created_at").String(), "frozen clock stamps the event")
	require.Contains(t, s1, "t=1767323045,", "frozen clock stamps the signature")
}
