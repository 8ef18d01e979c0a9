package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"strings"
)

// The two definitions every Kubernetes client reads more widely than the document types them.
var widened = map[string]any{
	"io.k8s.apimachinery.pkg.util.intstr.IntOrString": map[string]any{"oneOf": []any{map[string]any{"type": "string"}, map[string]any{"type": "integer"}}},
	"io.k8s.apimachinery.pkg.api.resource.Quantity":   map[string]any{"oneOf": []any{map[string]any{"type": "string"}, map[string]any{"type": "number"}}},
}

const refPrefix = "#/definitions/"

// Convert turns a Kubernetes swagger.json into kubeconform's standalone strict schemas: one
// file body per kind and API version, keyed by the file name kubeconform looks for.
func Convert(swagger []byte) (map[string][]byte, error) {
	var doc struct {
		Definitions map[string]map[string]any `json:"definitions"`
	}
	if err := json.Unmarshal(swagger, &doc); err != nil {
		return nil, err
	}
	if len(doc.Definitions) == 0 {
		return nil, errors.New("no definitions: not a Kubernetes swagger.json")
	}
	defs := make(map[string]any, len(doc.Definitions))
	for name, def := range doc.Definitions {
		defs[name] = def
	}
	for name, def := range widened {
		defs[name] = def
	}
	for _, def := range defs {
		strict(def)
	}
	out := map[string][]byte{}
	for name, def := range doc.Definitions {
		for _, gvk := range kinds(def) {
			body, err := standalone(name, gvk, defs)
			if err != nil {
				return nil, fmt.Errorf("%s: %w", name, err)
			}
			out[gvk.fileName()] = body
		}
	}
	if len(out) == 0 {
		return nil, errors.New("no definition names a kind (x-kubernetes-group-version-kind)")
	}
	return out, nil
}

type groupVersionKind struct{ Group, Version, Kind string }

func (k groupVersionKind) apiVersion() string {
	if k.Group == "" {
		return k.Version
	}
	return k.Group + "/" + k.Version
}

// fileName is the name kubeconform's default layout gives the kind's schema: the kind, the
// group's first label and the version, in lower case (statefulset-apps-v1.json).
func (k groupVersionKind) fileName() string {
	name := k.Kind
	if k.Group != "" {
		name += "-" + strings.Split(k.Group, ".")[0]
	}
	return strings.ToLower(name+"-"+k.Version) + ".json"
}

func kinds(def map[string]any) []groupVersionKind {
	list, _ := def["x-kubernetes-group-version-kind"].([]any)
	var out []groupVersionKind
	for _, item := range list {
		m, _ := item.(map[string]any)
		k := groupVersionKind{Group: str(m["group"]), Version: str(m["version"]), Kind: str(m["kind"])}
		if k.Kind != "" && k.Version != "" {
			out = append(out, k)
		}
	}
	return out
}

func str(v any) string { s, _ := v.(string); return s }

// standalone is the kind's definition at the root, apiVersion and kind pinned to its own, with
// every definition it reaches under "definitions".
func standalone(name string, gvk groupVersionKind, defs map[string]any) ([]byte, error) {
	root := map[string]any{}
	for k, v := range defs[name].(map[string]any) {
		root[k] = v
	}
	props, _ := root["properties"].(map[string]any)
	pinned := map[string]any{}
	for k, v := range props {
		pinned[k] = v
	}
	pinned["apiVersion"] = map[string]any{"type": "string", "enum": []any{gvk.apiVersion()}}
	pinned["kind"] = map[string]any{"type": "string", "enum": []any{gvk.Kind}}
	root["properties"] = pinned
	reached := map[string]any{}
	if err := reach(root, defs, reached); err != nil {
		return nil, err
	}
	root["definitions"] = reached
	root["$schema"] = "http://json-schema.org/draft-04/schema#"
	return json.Marshal(root)
}

// reach adds to seen every definition v refers to, directly or through another.
func reach(v any, defs, seen map[string]any) error {
	switch v := v.(type) {
	case map[string]any:
		if ref, ok := v["$ref"].(string); ok {
			name, ok := strings.CutPrefix(ref, refPrefix)
			if !ok {
				return fmt.Errorf("a reference outside the document's definitions: %s", ref)
			}
			if _, done := seen[name]; done {
				return nil
			}
			def, ok := defs[name]
			if !ok {
				return fmt.Errorf("a reference to a missing definition: %s", ref)
			}
			seen[name] = def
			return reach(def, defs, seen)
		}
		for _, child := range v {
			if err := reach(child, defs, seen); err != nil {
				return err
			}
		}
	case []any:
		for _, child := range v {
			if err := reach(child, defs, seen); err != nil {
				return err
			}
		}
	}
	return nil
}

// strict makes every object schema with properties refuse the properties it does not name, as
// kubectl's strict validation does. It walks schemas, not raw JSON, so a property that happens
// to be called "properties" is not taken for the keyword.
func strict(v any) {
	schema, ok := v.(map[string]any)
	if !ok {
		return
	}
	if props, ok := schema["properties"].(map[string]any); ok {
		if _, set := schema["additionalProperties"]; !set {
			schema["additionalProperties"] = false
		}
		for _, p := range props {
			strict(p)
		}
	}
	strict(schema["items"])
	strict(schema["additionalProperties"])
	for _, key := range []string{"allOf", "anyOf", "oneOf"} {
		list, _ := schema[key].([]any)
		for _, s := range list {
			strict(s)
		}
	}
}
