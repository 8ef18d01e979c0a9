package interop

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"github.com/stripe/stripe-go/v85/webhook"
	"github.com/tidwall/gjson"

	"github.com/partnersim/partnersim/simulator/sandbox"
)

type delivery struct {
	header string
	body   []byte
}

// TestStripeVerifierAcceptsDeliveries subscribes a real receiver, makes the simulator deliver
// kyc and transaction events and a test event, and verifies every delivery with stripe-go —
// also across a secret rotation, where the header carries two v1 entries.
func TestStripeVerifierAcceptsDeliveries(t *testing.T) {
	sb, err := sandbox.Open(context.Background(), sandbox.Config{DBPath: filepath.Join(t.TempDir(), "interop.db")})
	require.NoError(t, err)
	defer sb.Close()
	api := httptest.NewServer(sb.Server)
	defer api.Close()

	var (
		mu  sync.Mutex
		got []delivery
	)
	recv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		mu.Lock()
		got = append(got, delivery{r.Header.Get("X-Partner-Webhook-Signature"), b})
		mu.Unlock()
	}))
	defer recv.Close()

	call := func(method, path, token, key string, body any) gjson.Result {
		t.Helper()
		var rd io.Reader
		if body != nil {
			b, _ := json.Marshal(body)
			rd = bytes.NewReader(b)
		}
		req, err := http.NewRequest(method, api.URL+path, rd)
		require.NoError(t, err)
		req.Header.Set("Content-Type", "application/json")
		if token != "" {
			req.Header.Set("x-sandbox-token", token)
		}
		if key != "" {
			req.Header.Set("x-api-key", key)
		}
		resp, err := http.DefaultClient.Do(req)
		require.NoError(t, err)
		defer resp.Body.Close()
		raw, _ := io.ReadAll(resp.Body)
		require.Less(t, resp.StatusCode, 300, "%s %s: %s", method, path, raw)
		return gjson.ParseBytes(raw)
	}
	tok := sb.Token
	inst := call("POST", "/_sandbox/institutions", tok, "", map[string]any{"name": "Interop CU", "vendors": map[string]any{"core": nil, "dbp": nil}}).Get("institution_id").String()
	key := call("POST", "/_sandbox/institutions/"+inst+"/keys", tok, "", map[string]any{"scopes": []string{"manage:webhooks"}}).Get("key").String()
	user := call("POST", "/_sandbox/institutions/"+inst+"/users", tok, "", map[string]any{"user_account_id": "interop-1",
		"accounts": []any{map[string]any{"product": "securities", "kyc_status": "pending", "cash": "1000.00"}}}).Get("platform_id").String()
	kycSub := call("POST", "/v1/webhooks/subscriptions", "", key, map[string]string{"event_type": "kyc", "url": recv.URL + "/kyc"})
	secret := kycSub.Get("signing_secret").String()
	require.NotEmpty(t, secret)
	call("POST", "/v1/webhooks/subscriptions", "", key, map[string]string{"event_type": "transaction", "url": recv.URL + "/txn"})

	call("POST", "/_sandbox/users/"+user+"/kyc", tok, "", map[string]string{"product": "securities", "status": "approved"})
	txn := call("POST", "/_sandbox/orders", tok, "", map[string]any{"platform_id": user, "product": "securities", "side": "buy", "symbol": "AAPL", "notional": "100.00"}).Get("transaction_id").String()
	call("POST", "/_sandbox/transactions/"+txn+"/fill", tok, "", nil)
	call("POST", "/v1/webhooks/subscriptions/"+kycSub.Get("subscription_id").String()+"/test", "", key, nil)

	wait := func(n int) []delivery {
		deadline := time.Now().Add(5 * time.Second)
		for {
			mu.Lock()
			out := append([]delivery(nil), got...)
			mu.Unlock()
			if len(out) >= n || time.Now().After(deadline) {
				return out
			}
			time.Sleep(10 * time.Millisecond)
		}
	}
	ds := wait(3)
	require.Len(t, ds, 3, "kyc, transaction and test deliveries")
	for _, d := range ds {
		require.NoError(t, webhook.ValidatePayloadWithTolerance(d.body, d.header, secret, 5*time.Minute), "stripe-go rejects %s", d.body)
		require.Error(t, webhook.ValidatePayloadWithTolerance(append(d.body, ' '), d.header, secret, 5*time.Minute), "a tampered body must fail")
	}

	// After a rotation with overlap, both the old and the new secret verify the same delivery.
	fresh := call("POST", "/_sandbox/institutions/"+inst+"/signing-secret/rotate", tok, "", map[string]int{"overlap_seconds": 3600}).Get("signing_secret").String()
	call("POST", "/_sandbox/users/"+user+"/kyc", tok, "", map[string]string{"product": "securities", "status": "closed"})
	ds = wait(4)
	require.Len(t, ds, 4)
	last := ds[3]
	require.NoError(t, webhook.ValidatePayloadWithTolerance(last.body, last.header, fresh, 5*time.Minute))
	require.NoError(t, webhook.ValidatePayloadWithTolerance(last.body, last.header, secret, 5*time.Minute))
}
