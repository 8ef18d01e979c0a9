package httpapi_test

import (
	"net/http"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// A rotation's overlap is scheduler state: it ends on the virtual clock, so advancing the clock
// past it ends it (decisions D8) — a partner can rehearse the end of an overlap without
// waiting an hour.
func TestRotationOverlapEndsOnTheVirtualClock(t *testing.T) {
	a := MustServe(t)
	hook := newHook(t)
	inst, key := a.tenant(t, "", "")
	r := a.Call(t, "POST", "/v1/webhooks/subscriptions", `{"event_type":"kyc","url":"`+hook.URL+`"}`, "x-api-key: "+key)
	require.Equal(t, http.StatusCreated, r.Status, r.Body)
	sub := r.JSON("subscription_id").String()
	v1s := func() int {
		t.Helper()
		r := a.Call(t, "POST", "/v1/webhooks/subscriptions/"+sub+"/test", "", "x-api-key: "+key)
		require.Equal(t, http.StatusOK, r.Status, r.Body)
		require.True(t, r.JSON("delivered").Bool(), r.Body)
		got := hook.Received()
		return strings.Count(got[len(got)-1].Header.Get("X-Partner-Webhook-Signature"), "v1=")
	}
	assert.Equal(t, 1, v1s(), "one secret before any rotation")
	a.MustControl(t, "POST", "/_sandbox/institutions/"+inst+"/signing-secret/rotate", `{"overlap_seconds":3600}`)
	assert.Equal(t, 2, v1s(), "both secrets during the overlap")
	a.MustControl(t, "POST", "/_sandbox/clock/advance", `{"seconds":3599}`)
	assert.Equal(t, 2, v1s(), "a second of the overlap left")
	a.MustControl(t, "POST", "/_sandbox/clock/advance", `{"seconds":1}`)
	assert.Equal(t, 1, v1s(), "the virtual clock passed the overlap's end")
}

// An institution's own clock (advanced with institution_id) ends its overlap, and no other
// institution's (decisions D8, D9).
func TestRotationOverlapEndsOnTheInstitutionsClock(t *testing.T) {
	a := MustServe(t)
	hook := newHook(t)
	type tenant struct{ inst, key, sub, path string }
	var ts []tenant
	for _, name := range []string{"a", "b"} {
		inst, key := a.tenant(t, "", "")
		r := a.Call(t, "POST", "/v1/webhooks/subscriptions", `{"event_type":"kyc","url":"`+hook.URL+"/"+name+`"}`, "x-api-key: "+key)
		require.Equal(t, http.StatusCreated, r.Status, r.Body)
		ts = append(ts, tenant{inst, key, r.JSON("subscription_id").String(), "/" + name})
		a.MustControl(t, "POST", "/_sandbox/institutions/"+inst+"/signing-secret/rotate", `{"overlap_seconds":3600}`)
	}
	v1s := func(tn tenant) int {
		t.Helper()
		r := a.Call(t, "POST", "/v1/webhooks/subscriptions/"+tn.sub+"/test", "", "x-api-key: "+tn.key)
		require.True(t, r.JSON("delivered").Bool(), r.Body)
		got := hook.Received()
		last := got[len(got)-1]
		require.Equal(t, tn.path, last.Path)
		return strings.Count(last.Header.Get("X-Partner-Webhook-Signature"), "v1=")
	}
	a.MustControl(t, "POST", "/_sandbox/clock/advance", `{"seconds":3600,"institution_id":"`+ts[0].inst+`"}`)
	assert.Equal(t, 1, v1s(ts[0]), "the institution's clock passed its overlap's end")
	assert.Equal(t, 2, v1s(ts[1]), "another institution's overlap goes on")
}
