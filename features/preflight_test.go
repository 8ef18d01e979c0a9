package features_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/partnersim/partnersim/features"
	"github.com/partnersim/partnersim/internal/sandboxtest"
)

// Keys that cannot run the suite stop it before any scenario with one message naming every
// problem, instead of one 403 failure per scenario.
func TestPreflightStopsWithOneMessage(t *testing.T) {
	t.Parallel()
	srv := sandboxtest.MustServe(t)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	rep, err := features.Run(ctx, features.Options{BaseURL: srv.URL + "/v1",
		APIKey:      "sbx_harborReadOnly00000000000000000000000002", // read:user read:orders only
		KeysWithout: map[string]string{"read:user": "sbx_harborAllScopes0000000000000000000000001", "read:orders": "sbx_nosuchkey"},
		SandboxURL:  srv.URL, SandboxToken: "not-the-token"})
	if err == nil {
		t.Fatalf("expected the preflight to stop the run, it ran: %s", rep.Summary())
	}
	msg := err.Error()
	for _, want := range []string{
		"the control plane refuses the sandbox token",
		"--api-key: the key lacks manage:sessions (POST /sessions/revoke/ → 403",
		"--api-key: the key lacks manage:webhooks (GET /webhooks/subscriptions → 403",
		"--key-without read:user: the key has read:user (GET /users/?per_page=1 → 200), but must lack it",
		"--key-without read:orders: the key is not accepted",
	} {
		if !strings.Contains(msg, want) {
			t.Errorf("expected the message to say %q, got:\n%s", want, msg)
		}
	}
	if strings.Contains(msg, "lacks read:user") || strings.Contains(msg, "lacks read:orders") {
		t.Errorf("expected no complaint about scopes the key has, got:\n%s", msg)
	}
	if n := strings.Count(msg, "--key-without read:orders: the key is not accepted"); n != 1 {
		t.Errorf("expected one line per key and problem, got %d:\n%s", n, msg)
	}
}

// The preflight probes the token with an operation of the state adapter (GET
// /_sandbox/capabilities), so a wrong token stops a run against any implementation of the
// adapter, not only against the sandbox's whole control plane.
func TestPreflightProbesTheTokenThroughTheStateAdapter(t *testing.T) {
	t.Parallel()
	srv := sandboxtest.MustServe(t)
	state := adapterProxy(t, srv.URL, srv.SB.Token, []string{"tenants"})
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	rep, err := features.Run(ctx, features.Options{BaseURL: state + "/v1", SandboxURL: state, SandboxToken: "not-the-token"})
	if err == nil {
		t.Fatalf("expected the preflight to stop a run whose token the state adapter refuses, it ran: %s", rep.Summary())
	}
	if want := "the control plane refuses the sandbox token (GET /_sandbox/capabilities → 401"; !strings.Contains(err.Error(), want) {
		t.Errorf("expected the message to say %q, got:\n%s", want, err)
	}
}
