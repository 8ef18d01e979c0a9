package httpapi_test

import (
	"net/http"
	"testing"

	"github.com/stretchr/testify/assert"
)

// /docs and its files are not to be sniffed or framed by another page (decisions D18): a
// framing page could overlay Swagger UI's Authorize dialog and collect what is typed in it.
func TestDocsRefuseSniffingAndFraming(t *testing.T) {
	a := MustServe(t)
	for _, p := range []string{"/docs", "/docs/swagger-ui-bundle.js", "/docs/swagger-ui.css", "/docs/nothing.js"} {
		r := a.Call(t, "GET", p, "")
		assert.Equal(t, "nosniff", r.Header.Get("X-Content-Type-Options"), p)
		assert.Equal(t, "DENY", r.Header.Get("X-Frame-Options"), p)
		assert.Contains(t, r.Header.Get("Content-Security-Policy"), "frame-ancestors 'none'", p)
	}
	// The console already does; it stays so.
	r := a.Call(t, "GET", "/_sandbox/ui/signin", "")
	assert.Equal(t, http.StatusOK, r.Status)
	assert.Equal(t, "nosniff", r.Header.Get("X-Content-Type-Options"))
	assert.Equal(t, "DENY", r.Header.Get("X-Frame-Options"))
	assert.Contains(t, r.Header.Get("Content-Security-Policy"), "frame-ancestors 'none'")
}

// Swagger UI keeps the key and token typed into Authorize only for the tab's life (decisions
// D18): persistAuthorization off, what an earlier page stored in localStorage removed, and the
// browser told not to remember the fields' values.
func TestDocsKeepNoCredentials(t *testing.T) {
	body := MustServe(t).Call(t, "GET", "/docs", "").Body
	assert.Contains(t, body, "persistAuthorization: false")
	assert.NotContains(t, body, "persistAuthorization: true")
	assert.Contains(t, body, `localStorage.removeItem("authorized")`)
	assert.Contains(t, body, `autocomplete`)
	assert.Equal(t, "no-store", MustServe(t).Call(t, "GET", "/docs", "").Header.Get("Cache-Control"))
}
