package apiclient_test

import (
	"context"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/partnersim/partnersim/internal/apiclient"
	"github.com/partnersim/partnersim/internal/sandboxtest"
	"github.com/partnersim/partnersim/simulator/openapi"
)

const keyAll = "sbx_harborAllScopes0000000000000000000000001"

func withKey(key string) apiclient.RequestEditorFn {
	return func(_ context.Context, r *http.Request) error {
		r.Header.Set("x-api-key", key)
		return nil
	}
}

// The client generated from the document lists users, pages on, reads a user's detail and
// decodes a validation error, against a running sandbox — every exchange also checked against
// the served document.
func TestGeneratedClientAgainstTheSandbox(t *testing.T) {
	srv := sandboxtest.MustServe(t)
	c, err := apiclient.NewClientWithResponses(srv.URL+"/v1", apiclient.WithHTTPClient(srv.CheckedClient()), apiclient.WithRequestEditorFn(withKey(keyAll)))
	require.NoError(t, err)
	ctx := context.Background()

	perPage, asc := 2, apiclient.GetUserListParamsSortOrderAsc
	page, err := c.GetUserListWithResponse(ctx, &apiclient.GetUserListParams{PerPage: &perPage, SortOrder: &asc})
	require.NoError(t, err)
	require.Equal(t, http.StatusOK, page.StatusCode(), string(page.Body))
	require.Len(t, page.JSON200.Items, 2)
	assert.Greater(t, page.JSON200.TotalRecords, 4, "the default fixtures' Harbor users")
	assert.Equal(t, 2, page.JSON200.LastRecordNumber)

	next, err := c.GetUserListWithResponse(ctx, &apiclient.GetUserListParams{PerPage: &perPage, SortOrder: &asc, LastRecordNumber: &page.JSON200.LastRecordNumber})
	require.NoError(t, err)
	require.Len(t, next.JSON200.Items, 2)
	assert.NotEqual(t, page.JSON200.Items[0].UserAccountId, next.JSON200.Items[0].UserAccountId)

	detail, err := c.GetUserDetailWithResponse(ctx, "usr_hfcu_0001", &apiclient.GetUserDetailParams{UserAccountIdType: apiclient.Platform})
	require.NoError(t, err)
	require.Equal(t, http.StatusOK, detail.StatusCode(), string(detail.Body))
	assert.Equal(t, "usr_hfcu_0001", detail.JSON200.Identities.PlatformUserIdentifier)

	zero := 0
	bad, err := c.GetUserListWithResponse(ctx, &apiclient.GetUserListParams{PerPage: &zero})
	require.NoError(t, err)
	require.NotNil(t, bad.JSON422, string(bad.Body))
	require.NotNil(t, bad.JSON422.Detail, "FastAPI's HTTPValidationError leaves detail optional")
	assert.Equal(t, "greater_than_equal", (*bad.JSON422.Detail)[0].Type)
}

// The committed 3.0 view and client are what generating them now gives: regenerate with
// `go generate ./internal/apiclient` after changing the document.
func TestGeneratedCodeIsCurrent(t *testing.T) {
	doc, err := openapi.PartnerVersion30("v1")
	require.NoError(t, err)
	dir := t.TempDir()
	view := filepath.Join(dir, "openapi-3.0.json")
	gen := exec.Command("go", "run", "./gen", view)
	gen.Stderr = os.Stderr
	require.NoError(t, gen.Run())
	fresh, err := os.ReadFile(view)
	require.NoError(t, err)
	committed, err := os.ReadFile("openapi-3.0.json")
	require.NoError(t, err)
	require.True(t, string(fresh) == string(committed), "openapi-3.0.json is stale: run go generate ./internal/apiclient")
	assert.Contains(t, string(committed), `"openapi": "3.0.3"`)
	assert.NotEmpty(t, doc)

	if testing.Short() {
		t.Skip("regenerating the client runs oapi-codegen; skipped with -short")
	}
	// In a directory of its own, with the committed inputs: the config names its output.
	for _, f := range []string{"oapi-codegen.yaml", "openapi-3.0.json"} {
		b, err := os.ReadFile(f)
		require.NoError(t, err)
		require.NoError(t, os.WriteFile(filepath.Join(dir, f), b, 0o600))
	}
	cg := exec.Command("go", "run", "github.com/oapi-codegen/oapi-codegen/v2/cmd/oapi-codegen@v2.8.2", "-config", "oapi-codegen.yaml", "openapi-3.0.json")
	cg.Dir, cg.Stderr = dir, os.Stderr
	require.NoError(t, cg.Run(), "oapi-codegen (through the Go module proxy)")
	out := filepath.Join(dir, "client.gen.go")
	regenerated, err := os.ReadFile(out)
	require.NoError(t, err)
	current, err := os.ReadFile("client.gen.go")
	require.NoError(t, err)
	assert.True(t, string(regenerated) == string(current), "client.gen.go is stale: run go generate ./internal/apiclient")
}
