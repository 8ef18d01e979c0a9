package httpapi_test

import (
	"net/http"
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/partnersim/partnersim/simulator/sandbox"
)

// --no-published-keys (decisions D18): the fixture set's published keys answer as unknown keys
// do — anyone who reaches an exposed sandbox knows them — while keys made through the control
// plane work; after a reset they stay refused.
func TestNoPublishedKeys(t *testing.T) {
	a := MustServe(t, func(c *sandbox.Config) { c.NoPublishedKeys = true })
	r := a.Call(t, http.MethodGet, "/v1/users/?per_page=1", "", "x-api-key: "+keyAll)
	assert.Equal(t, http.StatusUnauthorized, r.Status, "a published key: %s", r.Body)
	assert.Equal(t, `{"detail":"Invalid API key"}`, r.Body)
	_, key := a.tenant(t, "", "")
	r = a.Call(t, http.MethodGet, "/v1/users/?per_page=1", "", "x-api-key: "+key)
	assert.Equal(t, http.StatusOK, r.Status, "a key of the operator's: %s", r.Body)
	a.MustControl(t, http.MethodPost, "/_sandbox/reset", "")
	r = a.Call(t, http.MethodGet, "/v1/users/?per_page=1", "", "x-api-key: "+keyAll)
	assert.Equal(t, http.StatusUnauthorized, r.Status, "a published key after a reset: %s", r.Body)

	r = MustServe(t).Call(t, http.MethodGet, "/v1/users/?per_page=1", "", "x-api-key: "+keyAll)
	assert.Equal(t, http.StatusOK, r.Status, "without the flag the published keys work: %s", r.Body)
}
