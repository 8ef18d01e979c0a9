package httpapi_test

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// A rotation's overlap is scheduler state: it ends on the virtual clock, so advancing the clock
// past it ends it (decisions D8) — a partner can rehearse the end of an overlap without
// waiting an hour.
func TestRotationOverlapEndsOnTheVirtualClock(t *testing.T) {
	a := MustServe(t)
	var mu sync.Mutex
	var sigs []string
	hook := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		sigs = append(sigs, r.Header.Get("X-Partner-Webhook-Signature"))
		mu.Unlock()
	}))
	t.Cleanup(hook.Close)
	inst, key := a.tenant(t, "", "")
	r := a.Call(t, "POST", "/v1/webhooks/subscriptions", `{"event_type":"kyc","url":"`+hook.URL+`"}`, "x-api-key: "+key)
	require.Equal(t, http.StatusCreated, r.Status, r.Body)
	sub := r.JSON("subscription_id").String()
	v1s := func() int {
		t.Helper()
		r := a.Call(t, "POST", "/v1/webhooks/subscriptions/"+sub+"/test", "", "x-api-key: "+key)
		require.Equal(t, http.StatusOK, r.Status, r.Body)
		require.True(t, r.JSON("delivered").Bool(), r.Body)
		mu.Lock()
		defer mu.Unlock()
		return strings.Count(sigs[len(sigs)-1], "v1=")
	}
	assert.Equal(t, 1, v1s(), "one secret before any rotation")
	a.MustControl(t, "POST", "/_sandbox/institutions/"+inst+"/signing-secret/rotate", `{"overlap_seconds":3600}`)
	assert.Equal(t, 2, v1s(), "both secrets during the overlap")
	a.MustControl(t, "POST", "/_sandbox/clock/advance", `{"seconds":3599}`)
	assert.Equal(t, 2, v1s(), "a second of the overlap left")
	a.MustControl(t, "POST", "/_sandbox/clock/advance", `{"seconds":1}`)
	assert.Equal(t, 1, v1s(), "the virtual clock passed the overlap's end")
}
