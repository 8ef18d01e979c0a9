package httpapi_test

import (
	"testing"

	"github.com/partnersim/partnersim/internal/sandboxtest"
	"github.com/partnersim/partnersim/simulator/sandbox"
)

// Default fixture keys and ids (fixtures/default).
const (
	keyAll      = "sbx_harborAllScopes0000000000000000000000001"
	keyRead     = "sbx_harborReadOnly00000000000000000000000002"
	keyHooks    = "sbx_harborWebhooks00000000000000000000000003"
	keySessions = "sbx_harborSessions00000000000000000000000004"
	keyPrairie  = "sbx_prairieAllScopes000000000000000000000005"
	token       = sandboxtest.DefaultToken
)

// api is the module's test harness sandbox, with this package's own helpers on top.
type api struct{ *sandboxtest.Sandbox }

// MustServe starts a sandbox with the default fixtures (sandboxtest.MustServe).
func MustServe(tb testing.TB, cfg ...func(*sandbox.Config)) *api {
	tb.Helper()
	return &api{sandboxtest.MustServe(tb, cfg...)}
}

// resp is a response read whole.
type resp = sandboxtest.Response

// tenant creates an isolated institution with an all-scopes key.
func (a *api) tenant(tb testing.TB, core, dbp string) (instID, key string) {
	tb.Helper()
	v := func(s string) string {
		if s == "" {
			return "null"
		}
		return `"` + s + `"`
	}
	inst := a.MustControl(tb, "POST", "/_sandbox/institutions", `{"name":"T","vendors":{"core":`+v(core)+`,"dbp":`+v(dbp)+`}}`).JSON("institution_id").String()
	key = a.MustControl(tb, "POST", "/_sandbox/institutions/"+inst+"/keys", `{"scopes":["read:user","read:orders","manage:sessions","manage:webhooks"]}`).JSON("key").String()
	return inst, key
}
