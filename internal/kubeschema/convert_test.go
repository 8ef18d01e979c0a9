package main

import (
	"bufio"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// A swagger.json cut down to the shapes the conversion must get right: a kind in a named group
// and one in the core group, a reference chain, IntOrString, Quantity, a map, and a property
// called "properties".
const swagger = `{"definitions": {
  "io.k8s.api.apps.v1.Widget": {
    "x-kubernetes-group-version-kind": [{"group": "apps", "kind": "Widget", "version": "v1"}],
    "properties": {
      "apiVersion": {"type": "string"}, "kind": {"type": "string"},
      "spec": {"$ref": "#/definitions/io.k8s.api.apps.v1.WidgetSpec"}
    }
  },
  "io.k8s.api.apps.v1.WidgetSpec": {
    "required": ["port"],
    "properties": {
      "port": {"$ref": "#/definitions/io.k8s.apimachinery.pkg.util.intstr.IntOrString"},
      "limits": {"type": "object", "additionalProperties": {"$ref": "#/definitions/io.k8s.apimachinery.pkg.api.resource.Quantity"}},
      "replicas": {"type": "integer", "format": "int32"},
      "schema": {"type": "object", "properties": {"properties": {"type": "object", "properties": {"x": {"type": "string"}}}}}
    }
  },
  "io.k8s.api.core.v1.Gadget": {
    "x-kubernetes-group-version-kind": [{"group": "", "kind": "Gadget", "version": "v1"}],
    "properties": {"apiVersion": {"type": "string"}, "kind": {"type": "string"}, "name": {"type": "string"}}
  },
  "io.k8s.apimachinery.pkg.util.intstr.IntOrString": {"type": "string", "format": "int-or-string"},
  "io.k8s.apimachinery.pkg.api.resource.Quantity": {"type": "string"}
}}`

func TestConvertNamesFilesAsKubeconformLooksThemUp(t *testing.T) {
	schemas, err := Convert([]byte(swagger))
	require.NoError(t, err)
	var names []string
	for name := range schemas {
		names = append(names, name)
	}
	require.ElementsMatch(t, []string{"widget-apps-v1.json", "gadget-v1.json"}, names)

	var widget map[string]any
	require.NoError(t, json.Unmarshal(schemas["widget-apps-v1.json"], &widget))
	require.Equal(t, false, widget["additionalProperties"])
	defs := widget["definitions"].(map[string]any)
	require.Len(t, defs, 3, "the spec, IntOrString and Quantity; not the Gadget it never reaches")
	require.NotContains(t, defs, "io.k8s.api.core.v1.Gadget")
}

// The converted schemas, read by the pinned kubeconform itself: what it accepts and refuses is
// the point of the conversion.
func TestKubeconformReadsTheSchemas(t *testing.T) {
	if testing.Short() {
		t.Skip("builds kubeconform")
	}
	dir := t.TempDir()
	require.NoError(t, os.WriteFile(filepath.Join(dir, "swagger.json"), []byte(swagger), 0o644))
	require.NoError(t, run([]string{"-kubernetes", "1.37.2", "-swagger", filepath.Join(dir, "swagger.json"), "-out", dir}, os.Stderr))

	cases := map[string]struct {
		manifest string
		valid    bool
	}{
		"an int port, a numeric and a string quantity": {"apiVersion: apps/v1\nkind: Widget\nspec:\n  port: 8080\n  limits: {cpu: 2, memory: 3Gi}\n", true},
		"a named port":                        {"apiVersion: apps/v1\nkind: Widget\nspec:\n  port: http\n", true},
		"a property called properties":        {"apiVersion: apps/v1\nkind: Widget\nspec:\n  port: 1\n  schema: {properties: {x: v}}\n", true},
		"a core kind":                         {"apiVersion: v1\nkind: Gadget\nname: g\n", true},
		"an unknown field":                    {"apiVersion: apps/v1\nkind: Widget\nspec:\n  port: 1\n  replica: 1\n", false},
		"an unknown field in a nested object": {"apiVersion: apps/v1\nkind: Widget\nspec:\n  port: 1\n  schema: {properties: {z: v}}\n", false},
		"a string where an integer goes":      {"apiVersion: apps/v1\nkind: Widget\nspec:\n  port: 1\n  replicas: \"1\"\n", false},
		"a boolean port":                      {"apiVersion: apps/v1\nkind: Widget\nspec:\n  port: true\n", false},
		"a required field missing":            {"apiVersion: apps/v1\nkind: Widget\nspec:\n  replicas: 1\n", false},
		"a duplicated key":                    {"apiVersion: apps/v1\nkind: Widget\nspec:\n  port: 1\n  port: 2\n", false},
	}
	kubeconform := makeVar(t, "KUBECONFORM")
	for name, c := range cases {
		t.Run(name, func(t *testing.T) {
			file := filepath.Join(t.TempDir(), "m.yaml")
			require.NoError(t, os.WriteFile(file, []byte(c.manifest), 0o644))
			cmd := exec.Command("go", "run", kubeconform, "-strict", "-summary",
				"-kubernetes-version", "1.37.2", "-schema-location", dir, file)
			out, err := cmd.CombinedOutput()
			if c.valid {
				require.NoError(t, err, "%s", out)
			} else {
				require.Error(t, err, "%s", out)
				require.Contains(t, string(out), "1 resource found in 1 file - Valid: 0", "%s", out)
			}
		})
	}
}

// makeVar reads a `NAME ?= value` line of the Makefile, the one home of the tools' pins.
func makeVar(t *testing.T, name string) string {
	f, err := os.Open("../../Makefile")
	require.NoError(t, err)
	defer f.Close()
	s := bufio.NewScanner(f)
	for s.Scan() {
		if v, ok := strings.CutPrefix(s.Text(), name+" ?= "); ok {
			return strings.TrimSpace(v)
		}
	}
	t.Fatalf("the Makefile sets no %s", name)
	return ""
}
