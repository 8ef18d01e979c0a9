package openapi

import (
	"slices"

	"go.yaml.in/yaml/v3"
)

// PartnerVersion30 returns one version's document as OpenAPI 3.0.3, for generators that do not
// read 3.1 yet (oapi-codegen v2.8 refuses a `type` list). Only the forms this document uses
// are rewritten: a type list with null becomes the type with `nullable: true` (a list of
// several types, any value), `const` a one-value enum, `examples` the first `example`; the
// 3.1-only webhooks, info.summary and license.identifier are left out. The events are then
// described only in the 3.1 document.
func PartnerVersion30(version string) ([]byte, error) {
	doc, err := load("partner-api.yaml")
	if err != nil {
		return nil, err
	}
	setServer(doc, version)
	set(doc, "openapi", scalar("3.0.3"))
	remove(doc, "webhooks")
	info := get(doc, "info")
	remove(info, "summary")
	remove(get(info, "license"), "identifier")
	downgrade(doc)
	return toJSON(doc)
}

func downgrade(n *yaml.Node) {
	if n.Kind == yaml.MappingNode {
		if t := get(n, "type"); t != nil && t.Kind == yaml.SequenceNode {
			var types []string
			null := false
			for _, c := range t.Content {
				if c.Value == "null" {
					null = true
				} else {
					types = append(types, c.Value)
				}
			}
			if len(types) == 1 {
				set(n, "type", scalar(types[0]))
			} else {
				remove(n, "type")
			}
			if null {
				set(n, "nullable", &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!bool", Value: "true"})
			}
		}
		if c := get(n, "const"); c != nil {
			remove(n, "const")
			set(n, "enum", &yaml.Node{Kind: yaml.SequenceNode, Tag: "!!seq", Content: []*yaml.Node{c}})
		}
		if ex := get(n, "examples"); ex != nil && ex.Kind == yaml.SequenceNode && len(ex.Content) > 0 {
			remove(n, "examples")
			set(n, "example", ex.Content[0])
		}
	}
	for _, c := range slices.Clone(n.Content) {
		downgrade(c)
	}
}
