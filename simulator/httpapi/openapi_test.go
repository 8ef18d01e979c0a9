package httpapi_test

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"os/exec"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/partnersim/partnersim/internal/sandboxtest"
	"github.com/partnersim/partnersim/simulator/openapi"
	"github.com/partnersim/partnersim/simulator/sandbox"
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
	for _, p := range []string{"/openapi.json", "/v1/openapi.json", "/v2/openapi.json", "/_sandbox/openapi.json", "/_sandbox/state-adapter.json"} {
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

// Every kind of delivery — a kyc event, a transaction event, a test send of each type — matches
// the document's webhooks section: headers and envelope, no field more or less.
func TestDeliveriesMatchTheWebhooksSection(t *testing.T) {
	a := MustServe(t)
	hook := sandboxtest.NewCallback(t, sandboxtest.Answering(http.StatusOK))
	inst, key := a.tenant(t, "symitar", "q2")
	subs := map[string]string{}
	for _, typ := range []string{"kyc", "transaction"} {
		r := a.Call(t, "POST", "/v1/webhooks/subscriptions", `{"event_type":"`+typ+`","url":"`+hook.URL+`"}`, "x-api-key: "+key)
		require.Equal(t, http.StatusCreated, r.Status, r.Body)
		subs[typ] = r.JSON("subscription_id").String()
	}
	a.MustControl(t, "PUT", "/_sandbox/institutions/"+inst+"/prices", `{"AAPL":"200.00"}`)
	pid := a.MustControl(t, "POST", "/_sandbox/institutions/"+inst+"/users",
		`{"user_account_id":"hooked","accounts":[{"product":"securities","kyc_status":"approved","cash":"1000.00"},{"product":"crypto"}]}`).JSON("platform_id").String()
	a.MustControl(t, "POST", "/_sandbox/users/"+pid+"/kyc", `{"product":"crypto","status":"approved"}`)
	txn := a.MustControl(t, "POST", "/_sandbox/orders", `{"platform_id":"`+pid+`","product":"securities","side":"buy","symbol":"AAPL","quantity":"1"}`).JSON("transaction_id").String()
	a.MustControl(t, "POST", "/_sandbox/transactions/"+txn+"/fill", "")
	for _, id := range subs {
		r := a.Call(t, "POST", "/v1/webhooks/subscriptions/"+id+"/test", "", "x-api-key: "+key)
		require.Equal(t, http.StatusOK, r.Status, r.Body)
	}
	sandboxtest.Eventually(t, func() bool { return len(hook.Received()) >= 4 }, "four deliveries")
	got := hook.Received()
	kinds := map[string]int{}
	for _, d := range got {
		var env struct {
			EventType string `json:"event_type"`
			IsTest    bool   `json:"is_test"`
		}
		require.NoError(t, json.Unmarshal(d.Body, &env))
		kinds[env.EventType+"/"+strconv.FormatBool(env.IsTest)]++
		assert.NoError(t, a.Checker().CheckEvent(d.Header, d.Body), string(d.Body))
	}
	assert.Equal(t, map[string]int{"kyc/false": 1, "kyc/true": 1, "transaction/false": 1, "transaction/true": 1}, kinds)

	// And the check has teeth: a field the document does not list fails it.
	extra := strings.Replace(string(got[0].Body), `"is_test"`, `"amount":"1.00","is_test"`, 1)
	err := a.Checker().CheckEvent(got[0].Header, []byte(extra))
	require.Error(t, err)
	assert.Contains(t, err.Error(), "amount")
	h := got[0].Header.Clone()
	h.Del("X-Partner-Webhook-Signature")
	assert.ErrorContains(t, a.Checker().CheckEvent(h, got[0].Body), "X-Partner-Webhook-Signature")
}

// /docs renders in a real browser from the sandbox's own files: headless Chromium (when the
// machine has it) loads the page, runs Swagger UI and lists the operations of /openapi.json.
func TestDocsRenderInChromium(t *testing.T) {
	browser, err := exec.LookPath("chromium")
	if err != nil {
		t.Skip("no chromium on PATH (Debian package chromium)")
	}
	a := MustServe(t)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, browser, "--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
		"--disable-background-networking", "--disable-component-update", "--disable-sync", "--user-data-dir="+t.TempDir(),
		"--virtual-time-budget=20000", "--dump-dom", a.URL+"/docs")
	dom, err := cmd.Output()
	require.NoError(t, err)
	for _, want := range []string{"Partner Investing Service (partnersim sandbox)", "/v1/users/{user_account_id}/", "Get User List", "Revoke Member Sessions"} {
		assert.Contains(t, string(dom), want, "Swagger UI rendered the document")
	}
}

// serveChecked hands one request to h in-process (a panic fails the input with its stack) and
// fails t when the exchange disagrees with the documents the sandbox serves: the fuzz targets'
// hostile inputs are checked against the document too.
func (a *api) serveChecked(t *testing.T, h http.Handler, method, path, rawQuery, contentType string, body []byte, headers ...string) *httptest.ResponseRecorder {
	t.Helper()
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, rawRequest(method, path, rawQuery, contentType, body, headers...))
	if err := a.Checker().Check(rawRequest(method, path, rawQuery, contentType, body, headers...), body, rec.Result(), rec.Body.Bytes()); err != nil {
		t.Fatal(err)
	}
	return rec
}
