package interop

import (
	"fmt"
	"net/http"
	"slices"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"github.com/stripe/stripe-go/v85/webhook"

	"github.com/partnersim/partnersim/internal/sandboxtest"
)

// TestStripeVerifierAcceptsDeliveries subscribes a real receiver, makes the simulator deliver
// kyc and transaction events and a test event, and verifies every delivery with stripe-go —
// also across a secret rotation, where the header carries two v1 entries.
func TestStripeVerifierAcceptsDeliveries(t *testing.T) {
	s := sandboxtest.MustServe(t)
	recv := sandboxtest.NewCallback(t, sandboxtest.Answering(http.StatusOK))
	api := func(path, key, body string) sandboxtest.Response {
		t.Helper()
		r := s.Call(t, http.MethodPost, path, body, "x-api-key: "+key)
		require.Less(t, r.Status, 300, "POST %s: %s", path, r.Body)
		return r
	}

	inst := s.MustControl(t, "POST", "/_sandbox/institutions", `{"name":"Interop CU","vendors":{"core":null,"dbp":null}}`).JSON("institution_id").String()
	key := s.MustControl(t, "POST", "/_sandbox/institutions/"+inst+"/keys", `{"scopes":["manage:webhooks"]}`).JSON("key").String()
	user := s.MustControl(t, "POST", "/_sandbox/institutions/"+inst+"/users", `{"user_account_id":"interop-1",
		"accounts":[{"product":"securities","kyc_status":"pending","cash":"1000.00"}]}`).JSON("platform_id").String()
	kycSub := api("/v1/webhooks/subscriptions", key, fmt.Sprintf(`{"event_type":"kyc","url":%q}`, recv.URL+"/kyc"))
	secret := kycSub.JSON("signing_secret").String()
	require.NotEmpty(t, secret)
	api("/v1/webhooks/subscriptions", key, fmt.Sprintf(`{"event_type":"transaction","url":%q}`, recv.URL+"/txn"))

	s.MustControl(t, "POST", "/_sandbox/users/"+user+"/kyc", `{"product":"securities","status":"approved"}`)
	txn := s.MustControl(t, "POST", "/_sandbox/orders", `{"platform_id":"`+user+`","product":"securities","side":"buy","symbol":"AAPL","notional":"100.00"}`).
		JSON("transaction_id").String()
	s.MustControl(t, "POST", "/_sandbox/transactions/"+txn+"/fill", "")
	api("/v1/webhooks/subscriptions/"+kycSub.JSON("subscription_id").String()+"/test", key, "")

	wait := func(n int) []sandboxtest.Received {
		sandboxtest.Eventually(t, func() bool { return len(recv.Received()) >= n }, "%d deliveries", n)
		return recv.Received()
	}
	verify := func(body []byte, d sandboxtest.Received, secret string) error {
		return webhook.ValidatePayloadWithTolerance(body, d.Header.Get("X-Partner-Webhook-Signature"), secret, 5*time.Minute)
	}
	ds := wait(3)
	require.Len(t, ds, 3, "kyc, transaction and test deliveries")
	for _, d := range ds {
		require.NoError(t, verify(d.Body, d, secret), "stripe-go rejects %s", d.Body)
		require.Error(t, verify(append(slices.Clone(d.Body), ' '), d, secret), "a tampered body must fail")
	}

	// After a rotation with overlap, both the old and the new secret verify the same delivery.
	fresh := s.MustControl(t, "POST", "/_sandbox/institutions/"+inst+"/signing-secret/rotate", `{"overlap_seconds":3600}`).JSON("signing_secret").String()
	s.MustControl(t, "POST", "/_sandbox/users/"+user+"/kyc", `{"product":"securities","status":"closed"}`)
	ds = wait(4)
	require.Len(t, ds, 4)
	last := ds[3]
	require.NoError(t, verify(last.Body, last, fresh))
	require.NoError(t, verify(last.Body, last, secret))
}
