package httpapi_test

import (
	"encoding/json"
	"net/http"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"partnersim/openapi"
	"partnersim/sandbox"
)

// documentedRoutes returns "METHOD /path" for every operation of a served document, with
// {name} parameters written as echo's :name.
func documentedRoutes(t *testing.T, a *api, path string) []string {
	t.Helper()
	r := a.Call(t, "GET", path, "")
	require.Equal(t, http.StatusOK, r.Status, path)
	var doc struct {
		Paths map[string]map[string]json.RawMessage `json:"paths"`
	}
	require.NoError(t, json.Unmarshal([]byte(r.Body), &doc))
	param := regexp.MustCompile(`\{([^}]+)\}`)
	var out []string
	for p, item := range doc.Paths {
		for m := range item {
			if slices.Contains([]string{"get", "put", "post", "delete", "patch", "head", "options", "trace"}, m) {
				out = append(out, strings.ToUpper(m)+" "+param.ReplaceAllString(p, ":$1"))
			}
		}
	}
	return out
}

// Every route the router knows is in a document, and every operation of the documents is a
// route (decisions D16): the partner API per mounted version in /openapi.json, the control
// plane in /_sandbox/openapi.json.
func TestDocumentsListExactlyTheRoutes(t *testing.T) {
	a := MustServe(t, func(c *sandbox.Config) { c.APIVersions = []string{"v1", "v2"} })
	var routes []string
	for _, r := range a.SB.Server.Routes() {
		if !openapi.Undocumented(r.Path) {
			routes = append(routes, r.Method+" "+r.Path)
		}
	}
	documented := append(documentedRoutes(t, a, "/openapi.json"), documentedRoutes(t, a, "/_sandbox/openapi.json")...)
	assert.ElementsMatch(t, routes, documented)
	assert.Contains(t, documented, "GET /v2/users/:user_account_id/")
	assert.Contains(t, documented, "POST /_sandbox/transactions/:transaction_id/fill")
	assert.Greater(t, len(routes), 40)
}

// The documents and the viewer need no key or token; a version's document names its server;
// without the control plane its document is gone with it.
func TestServedDocumentsAndDocs(t *testing.T) {
	a := MustServe(t, func(c *sandbox.Config) { c.APIVersions = []string{"v1", "v2"} })
	for _, p := range []string{"/openapi.json", "/v1/openapi.json", "/v2/openapi.json", "/_sandbox/openapi.json"} {
		r := a.Call(t, "GET", p, "")
		require.Equal(t, http.StatusOK, r.Status, p)
		assert.Equal(t, "application/json", r.Header.Get("Content-Type"), p)
		assert.Equal(t, "3.1.0", r.JSON("openapi").String(), p)
	}
	assert.Equal(t, "/v2", a.Call(t, "GET", "/v2/openapi.json", "").JSON("servers.0.url").String())
	assert.True(t, a.Call(t, "GET", "/openapi.json", "").JSON(`paths.\/v2\/orders\/`).Exists())

	docs := a.Call(t, "GET", "/docs", "")
	require.Equal(t, http.StatusOK, docs.Status)
	assert.Equal(t, "text/html; charset=utf-8", docs.Header.Get("Content-Type"))
	assert.Contains(t, docs.Body, `"url":"/_sandbox/openapi.json"`)
	for _, m := range regexp.MustCompile(`(?:src|href)="([^"]+)"`).FindAllStringSubmatch(docs.Body, -1) {
		r := a.Call(t, "GET", m[1], "")
		assert.Equal(t, http.StatusOK, r.Status, m[1])
		assert.NotEmpty(t, r.Body, m[1])
	}
	assert.Equal(t, "text/javascript; charset=utf-8", a.Call(t, "GET", "/docs/swagger-ui-bundle.js", "").Header.Get("Content-Type"))
	assert.Equal(t, http.StatusNotFound, a.Call(t, "GET", "/docs/nothing.js", "").Status)
	assert.Equal(t, http.StatusNotFound, a.Call(t, "GET", "/docs/..%2Fopenapi.go", "").Status)

	off := MustServe(t, func(c *sandbox.Config) { c.NoControl = true })
	assert.Equal(t, http.StatusNotFound, off.Call(t, "GET", "/_sandbox/openapi.json", "").Status)
	assert.NotContains(t, off.Call(t, "GET", "/docs", "").Body, "/_sandbox/openapi.json")
}
