package openapi_test

import (
	"context"
	"encoding/json"
	"os"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.yaml.in/yaml/v3"

	"github.com/partnersim/partnersim/simulator/openapi"
	"github.com/partnersim/partnersim/simulator/openapi/check"
)

type document struct {
	OpenAPI string                               `json:"openapi"`
	Servers []struct{ URL string }               `json:"servers"`
	Paths   map[string]map[string]map[string]any `json:"paths"`
	Hooks   map[string]any                       `json:"webhooks"`
}

func decode(t *testing.T, b []byte) document {
	t.Helper()
	var d document
	require.NoError(t, json.Unmarshal(b, &d))
	return d
}

func TestIndented(t *testing.T) {
	out, err := openapi.Indented([]byte(`{"a":[1,{"b":"c"}]}`))
	require.NoError(t, err)
	assert.Equal(t, "{\n  \"a\": [\n    1,\n    {\n      \"b\": \"c\"\n    }\n  ]\n}\n", string(out))
	_, err = openapi.Indented([]byte(`{"a":`))
	assert.Error(t, err)
}

// Every served form of the documents loads and validates with kin-openapi as OpenAPI 3.1.
func TestDocumentsAreValidOpenAPI31(t *testing.T) {
	root, err := openapi.Partner([]string{"v1", "v2"})
	require.NoError(t, err)
	v2, err := openapi.PartnerVersion("v2")
	require.NoError(t, err)
	control, err := openapi.ControlPlane()
	require.NoError(t, err)
	for name, b := range map[string][]byte{"root": root, "v2": v2, "control": control} {
		_, err := check.New(context.Background(), check.Doc{Name: name, Data: b})
		assert.NoError(t, err, name)
		assert.Equal(t, "3.1.0", decode(t, b).OpenAPI, name)
	}
	v30, err := openapi.PartnerVersion30("v1")
	require.NoError(t, err)
	_, err = check.New(context.Background(), check.Doc{Name: "3.0 view", Data: v30})
	assert.NoError(t, err, "the 3.0 view validates as OpenAPI 3.0 (no type lists, no numeric exclusive bounds)")
	assert.Equal(t, "3.0.3", decode(t, v30).OpenAPI)
	assert.Empty(t, decode(t, v30).Hooks)
}

// The root document carries /health and every path of each mounted version under its prefix,
// with operationIds kept unique; a version's document is the source with its one server.
func TestPerVersionDocuments(t *testing.T) {
	src, err := openapi.Source("partner-api.yaml")
	require.NoError(t, err)
	var source document
	require.NoError(t, yaml.Unmarshal(src, &source))
	root, err := openapi.Partner([]string{"v1", "v2"})
	require.NoError(t, err)
	r := decode(t, root)
	require.Len(t, r.Servers, 1)
	assert.Equal(t, "/", r.Servers[0].URL, "the root document's paths are absolute")
	want := []string{"/health"}
	for _, v := range []string{"v1", "v2"} {
		for p := range source.Paths {
			want = append(want, "/"+v+p)
		}
	}
	var got []string
	ids := map[string]bool{}
	for p, item := range r.Paths {
		got = append(got, p)
		for _, op := range item {
			id, _ := op["operationId"].(string)
			assert.False(t, ids[id], "operationId %s twice", id)
			ids[id] = true
		}
	}
	assert.ElementsMatch(t, want, got)
	assert.True(t, ids["getUserList_v2"] && ids["getUserList_v1"] && ids["getHealth"], "ids: %v", ids)
	assert.Contains(t, r.Hooks, "kyc")
	assert.Contains(t, r.Hooks, "transaction")

	v2, err := openapi.PartnerVersion("v2")
	require.NoError(t, err)
	d := decode(t, v2)
	require.Len(t, d.Servers, 1)
	assert.Equal(t, "/v2", d.Servers[0].URL)
	assert.Len(t, d.Paths, len(source.Paths))
	assert.Contains(t, d.Paths, "/users/{user_account_id}/")
}

// Every operation names its scope in x-required-scope and in its description; only health
// needs no key.
func TestScopesPerOperation(t *testing.T) {
	b, err := openapi.PartnerVersion("v1")
	require.NoError(t, err)
	scopes := []string{"read:user", "read:orders", "manage:sessions", "manage:webhooks"}
	for p, item := range decode(t, b).Paths {
		for m, op := range item {
			scope, _ := op["x-required-scope"].(string)
			if p == "/health" {
				assert.Empty(t, scope)
				assert.Equal(t, []any{}, op["security"], "health needs no key")
				continue
			}
			assert.Contains(t, scopes, scope, "%s %s", m, p)
			assert.Contains(t, op["description"], "Scope: `"+scope+"`", "%s %s", m, p)
		}
	}
}

// The control plane's document refers only to components it carries: the shared ones are the
// partner document's, copied, not written twice.
func TestControlPlaneSharesComponents(t *testing.T) {
	b, err := openapi.ControlPlane()
	require.NoError(t, err)
	src, err := openapi.Source("control-plane.yaml")
	require.NoError(t, err)
	assert.NotContains(t, string(src), "\n    Detail:", "Detail's home is partner-api.yaml")
	var d struct {
		Components map[string]map[string]any `json:"components"`
	}
	require.NoError(t, json.Unmarshal(b, &d))
	assert.Contains(t, d.Components["schemas"], "Detail")
	assert.Contains(t, d.Components["schemas"], "HTTPValidationError")
	assert.NotContains(t, d.Components["schemas"], "UserDetail", "only what it refers to is copied")
}

// The /docs page loads the viewer only from this server: every script, stylesheet and icon is
// one of the vendored files, and nothing names another origin.
func TestDocsPageIsOffline(t *testing.T) {
	page, err := openapi.DocsPage("T", []openapi.Spec{{Name: "Partner API", URL: "/openapi.json"}})
	require.NoError(t, err)
	refs := regexp.MustCompile(`(?:src|href)="([^"]+)"`).FindAllStringSubmatch(string(page), -1)
	require.Len(t, refs, 4)
	for _, m := range refs {
		require.True(t, strings.HasPrefix(m[1], openapi.DocsAssetPrefix), m[1])
		body, ct, ok := openapi.DocsAsset(strings.TrimPrefix(m[1], openapi.DocsAssetPrefix))
		assert.True(t, ok, m[1])
		assert.NotEmpty(t, body, m[1])
		assert.NotEmpty(t, ct, m[1])
	}
	assert.NotRegexp(t, `https?://`, string(page))
	assert.Contains(t, string(page), `validatorUrl: null`, "Swagger UI would otherwise call validator.swagger.io")
	assert.Contains(t, string(page), `[{"name":"Partner API","url":"/openapi.json"}]`)
	_, _, ok := openapi.DocsAsset("../openapi.go")
	assert.False(t, ok)
	bundle, _, ok := openapi.DocsAsset("swagger-ui-bundle.js")
	require.True(t, ok)
	assert.True(t, slices.ContainsFunc([]string{`version:"` + openapi.SwaggerUIVersion + `"`, `"` + openapi.SwaggerUIVersion + `"`},
		func(s string) bool { return strings.Contains(string(bundle), s) }), "the bundle is swagger-ui-dist %s", openapi.SwaggerUIVersion)
}

// BenchmarkPartner is the cost of rendering /openapi.json (done once per server, on first use).
func BenchmarkPartner(b *testing.B) {
	for b.Loop() {
		if _, err := openapi.Partner([]string{"v1", "v2"}); err != nil {
			b.Fatal(err)
		}
	}
}

// The state adapter's document is the control plane's operations its capabilities name, each
// marked with its capability, tenants first, every $ref resolving inside the document; the
// capabilities endpoint's enumeration names exactly the adapter's capabilities.
func TestStateAdapter(t *testing.T) {
	caps, err := openapi.StateAdapterCapabilities()
	require.NoError(t, err)
	require.NotEmpty(t, caps)
	assert.Equal(t, "tenants", caps[0].Name)
	b, err := openapi.StateAdapter()
	require.NoError(t, err)
	var doc struct {
		Paths map[string]map[string]struct {
			Capability string `json:"x-capability"`
		} `json:"paths"`
	}
	require.NoError(t, json.Unmarshal(b, &doc))
	n := 0
	var names []string
	for _, c := range caps {
		names = append(names, c.Name)
		for _, op := range c.Operations {
			method, path, _ := strings.Cut(op, " ")
			assert.Equal(t, c.Name, doc.Paths[path][strings.ToLower(method)].Capability, op)
			n++
		}
	}
	count := 0
	for _, item := range doc.Paths {
		count += len(item)
	}
	assert.Equal(t, n, count, "the document holds exactly the operations the capabilities name")
	var whole struct {
		Components map[string]map[string]json.RawMessage `json:"components"`
	}
	require.NoError(t, json.Unmarshal(b, &whole))
	for _, ref := range regexp.MustCompile(`"\$ref":\s*"#/components/([a-zA-Z]+)/([^"]+)"`).FindAllStringSubmatch(string(b), -1) {
		assert.Contains(t, whole.Components[ref[1]], ref[2], "the $ref %s/%s resolves in the document", ref[1], ref[2])
	}
	control, err := openapi.ControlPlane()
	require.NoError(t, err)
	var cp struct {
		Paths map[string]map[string]struct {
			Responses map[string]struct {
				Content map[string]struct {
					Schema struct {
						Properties map[string]struct {
							Items struct {
								Enum []string `json:"enum"`
							} `json:"items"`
						} `json:"properties"`
					} `json:"schema"`
				} `json:"content"`
			} `json:"responses"`
		} `json:"paths"`
	}
	require.NoError(t, json.Unmarshal(control, &cp))
	enum := cp.Paths["/_sandbox/capabilities"]["get"].Responses["200"].Content["application/json"].Schema.Properties["capabilities"].Items.Enum
	assert.Equal(t, names, enum)
}

// The shared validation schemas are FastAPI's own, byte for byte as FastAPI 0.141 generates
// them (fastapi/openapi/utils.py validation_error_definition and
// validation_error_response_definition): input untyped, ctx an object, only loc, msg and type
// required, in FastAPI's key order (decisions D19). Both documents carry them.
func TestValidationSchemasAreFastAPIs(t *testing.T) {
	want := map[string]string{
		"ValidationError": `{"title":"ValidationError","type":"object","properties":{` +
			`"loc":{"title":"Location","type":"array","items":{"anyOf":[{"type":"string"},{"type":"integer"}]}},` +
			`"msg":{"title":"Message","type":"string"},"type":{"title":"Error Type","type":"string"},` +
			`"input":{"title":"Input"},"ctx":{"title":"Context","type":"object"}},"required":["loc","msg","type"]}`,
		"HTTPValidationError": `{"title":"HTTPValidationError","type":"object","properties":{` +
			`"detail":{"title":"Detail","type":"array","items":{"$ref":"#/components/schemas/ValidationError"}}}}`,
	}
	partner, err := openapi.Partner([]string{"v1"})
	require.NoError(t, err)
	control, err := openapi.ControlPlane()
	require.NoError(t, err)
	for name, doc := range map[string][]byte{"partner": partner, "control plane": control} {
		var d struct {
			Components struct {
				Schemas map[string]json.RawMessage `json:"schemas"`
			} `json:"components"`
		}
		require.NoError(t, json.Unmarshal(doc, &d))
		for schema, w := range want {
			assert.Equal(t, w, string(d.Components.Schemas[schema]), "%s document, %s", name, schema)
		}
	}
}

// The callback URL's maxLength is pydantic's max_length=2083, which pydantic-core checks on
// the string's UTF-8 bytes (Rust's str::len), not its characters as JSON Schema's maxLength
// counts them: the document says so beside it.
func TestCallbackURLLengthSaysBytes(t *testing.T) {
	b, err := openapi.Partner([]string{"v1"})
	require.NoError(t, err)
	var d struct {
		Components struct {
			Schemas map[string]struct {
				Properties map[string]struct {
					MaxLength   int    `json:"maxLength"`
					Description string `json:"description"`
				} `json:"properties"`
			} `json:"schemas"`
		} `json:"components"`
	}
	require.NoError(t, json.Unmarshal(b, &d))
	u := d.Components.Schemas["CreateSubscriptionRequest"].Properties["url"]
	assert.Equal(t, 2083, u.MaxLength)
	assert.Contains(t, u.Description, "2083 bytes of UTF-8")
}

// docs/decisions.md D9 says what the clock answers, field for field as the control plane's
// document has it: the advance's now, the attempts and the steps it played, and the clock's
// own page. It once showed the advance answering only {"now":…}.
func TestDecisionsSayWhatTheClockAnswers(t *testing.T) {
	b, err := openapi.ControlPlane()
	require.NoError(t, err)
	var cp any
	require.NoError(t, json.Unmarshal(b, &cp))
	doc, err := os.ReadFile("../../docs/decisions.md")
	require.NoError(t, err)
	_, d9, _ := strings.Cut(string(doc), "\n## D9.")
	d9, _, _ = strings.Cut(d9, "\n## D10.")
	for _, op := range []struct{ path, method string }{{"/_sandbox/clock/advance", "post"}, {"/_sandbox/clock", "get"}} {
		schema := cp
		for _, k := range []string{"paths", op.path, op.method, "responses", "200", "content", "application/json", "schema"} {
			m, _ := schema.(map[string]any)
			schema = m[k]
		}
		names := propertyNames(schema)
		require.NotEmpty(t, names, "%s %s answers an object", op.method, op.path)
		var missing []string
		for _, n := range names {
			if !strings.Contains(d9, "`"+n+"`") {
				missing = append(missing, n)
			}
		}
		assert.Empty(t, missing, "decisions D9 does not name these fields of what %s %s answers", strings.ToUpper(op.method), op.path)
	}
}

// propertyNames are the property names of a decoded schema and of every schema inline in it
// (its properties', its items'), sorted.
func propertyNames(schema any) []string {
	m, ok := schema.(map[string]any)
	if !ok {
		return nil
	}
	var out []string
	props, _ := m["properties"].(map[string]any)
	for k, p := range props {
		out = append(out, k)
		out = append(out, propertyNames(p)...)
	}
	out = append(out, propertyNames(m["items"])...)
	slices.Sort(out)
	return slices.Compact(out)
}
