package sandbox_test

import (
	"bytes"
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"github.com/tidwall/gjson"

	"github.com/partnersim/partnersim/simulator/sandbox"
)

// run plays a fixed script against a deterministic sandbox and returns what the receiver got.
func deterministicRun(t *testing.T) (body []byte, sig string, secret string) {
	t.Helper()
	seed := uint64(42)
	frozen := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	sb, err := sandbox.Open(context.Background(), sandbox.Config{DBPath: filepath.Join(t.TempDir(), "d.db"), Seed: &seed, FrozenClock: &frozen})
	require.NoError(t, err)
	defer sb.Close()
	api := httptest.NewServer(sb.Server)
	defer api.Close()
	got := make(chan [2]string, 4)
	recv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		got <- [2]string{string(b), r.Header.Get("X-Partner-Webhook-Signature")}
	}))
	defer recv.Close()
	call := func(method, path, body string, hdr ...string) gjson.Result {
		req, _ := http.NewRequest(method, api.URL+path, bytes.NewReader([]byte(body)))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("x-sandbox-token", sb.Token)
		if len(hdr) > 0 {
			req.Header.Set("x-api-key", hdr[0])
		}
		res, err := http.DefaultClient.Do(req)
		require.NoError(t, err)
		defer res.Body.Close()
		b, _ := io.ReadAll(res.Body)
		require.Less(t, res.StatusCode, 300, string(b))
		return gjson.ParseBytes(b)
	}
	inst := call("POST", "/_sandbox/institutions", `{"name":"Det","vendors":{"core":null,"dbp":null}}`).Get("institution_id").String()
	key := call("POST", "/_sandbox/institutions/"+inst+"/keys", `{"scopes":["manage:webhooks"]}`).Get("key").String()
	secret = call("POST", "/v1/webhooks/subscriptions", `{"event_type":"kyc","url":"`+recv.URL+`"}`, key).Get("signing_secret").String()
	pid := call("POST", "/_sandbox/institutions/"+inst+"/users", `{"user_account_id":"det","accounts":[{"product":"crypto","kyc_status":"pending"}]}`).Get("platform_id").String()
	call("POST", "/_sandbox/users/"+pid+"/kyc", `{"product":"crypto","status":"approved"}`)
	select {
	case d := <-got:
		return []byte(d[0]), d[1], secret
	case <-time.After(5 * time.Second):
		t.Fatal("no delivery")
		return nil, "", ""
	}
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
