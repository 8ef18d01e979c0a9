package httpapi_test

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
	"github.com/tidwall/gjson"

	"partnersim/sandbox"
)

// Default fixture keys and ids (fixtures/default).
const (
	keyAll      = "sbx_harborAllScopes0000000000000000000000001"
	keyRead     = "sbx_harborReadOnly00000000000000000000000002"
	keyHooks    = "sbx_harborWebhooks00000000000000000000000003"
	keySessions = "sbx_harborSessions00000000000000000000000004"
	keyPrairie  = "sbx_prairieAllScopes000000000000000000000005"
	token       = "psim_sandbox_default_token_2026"
)

// api is a sandbox on a temp bbolt file behind a real HTTP server.
type api struct {
	*httptest.Server
	sb *sandbox.Sandbox
}

// MustServe starts a sandbox with the default fixtures.
func MustServe(tb testing.TB, cfg ...func(*sandbox.Config)) *api {
	tb.Helper()
	c := sandbox.Config{DBPath: filepath.Join(tb.TempDir(), "api.db")}
	for _, f := range cfg {
		f(&c)
	}
	sb, err := sandbox.Open(context.Background(), c)
	require.NoError(tb, err)
	srv := httptest.NewServer(sb.Server)
	tb.Cleanup(func() { srv.Close(); sb.Close() })
	return &api{Server: srv, sb: sb}
}

// resp is a response read whole.
type resp struct {
	Status int
	Header http.Header
	Body   string
}

func (r resp) JSON(path string) gjson.Result { return gjson.Get(r.Body, path) }

// call makes one request; headers are "Name: value" strings; a string body is sent as is with
// Content-Type application/json unless a Content-Type header is given.
func (a *api) call(tb testing.TB, method, path string, body string, headers ...string) resp {
	tb.Helper()
	var rd io.Reader
	if body != "" {
		rd = strings.NewReader(body)
	}
	req, err := http.NewRequest(method, a.URL+path, rd)
	require.NoError(tb, err)
	if body != "" {
		req.Header.Set("Content-Type", "application/json")
	}
	for _, h := range headers {
		k, v, _ := strings.Cut(h, ": ")
		req.Header.Set(k, v)
	}
	client := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	res, err := client.Do(req)
	require.NoError(tb, err)
	defer res.Body.Close()
	b, err := io.ReadAll(res.Body)
	require.NoError(tb, err)
	return resp{Status: res.StatusCode, Header: res.Header, Body: string(b)}
}

func (a *api) get(tb testing.TB, path, key string) resp {
	tb.Helper()
	return a.call(tb, http.MethodGet, path, "", "x-api-key: "+key)
}

func (a *api) control(tb testing.TB, method, path, body string) resp {
	tb.Helper()
	return a.call(tb, method, path, body, "x-sandbox-token: "+token)
}

// mustControl is control that requires a 2xx.
func (a *api) mustControl(tb testing.TB, method, path, body string) resp {
	tb.Helper()
	r := a.control(tb, method, path, body)
	require.Less(tb, r.Status, 300, "%s %s: %s", method, path, r.Body)
	return r
}

// tenant creates an isolated institution with an all-scopes key.
func (a *api) tenant(tb testing.TB, core, dbp string) (instID, key string) {
	tb.Helper()
	v := func(s string) string {
		if s == "" {
			return "null"
		}
		return `"` + s + `"`
	}
	inst := a.mustControl(tb, "POST", "/_sandbox/institutions", `{"name":"T","vendors":{"core":`+v(core)+`,"dbp":`+v(dbp)+`}}`).JSON("institution_id").String()
	key = a.mustControl(tb, "POST", "/_sandbox/institutions/"+inst+"/keys", `{"scopes":["read:user","read:orders","manage:sessions","manage:webhooks"]}`).JSON("key").String()
	return inst, key
}
