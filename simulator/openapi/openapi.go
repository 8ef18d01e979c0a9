package openapi

import (
	"bytes"
	"embed"
	"encoding/json"
	"fmt"
	"slices"
	"strings"

	"go.yaml.in/yaml/v3"
)

//go:embed partner-api.yaml control-plane.yaml state-adapter.yaml
var sources embed.FS

// Partner returns the partner API document for the mounted versions, as /openapi.json serves
// it: one server, this sandbox's root, and every path absolute — /health, then each version's
// paths under /{version}, the operationIds of each version suffixed with _{version} so that they
// stay unique.
func Partner(versions []string) ([]byte, error) {
	doc, err := load("partner-api.yaml")
	if err != nil {
		return nil, err
	}
	src := get(doc, "paths")
	paths := mapping()
	if health := get(src, "/health"); health != nil {
		set(paths, "/health", health)
	}
	for _, v := range versions {
		for i := 0; i+1 < len(src.Content); i += 2 {
			item := clone(src.Content[i+1])
			for j := 0; j+1 < len(item.Content); j += 2 {
				if id := get(item.Content[j+1], "operationId"); id != nil {
					id.Value += "_" + v
				}
			}
			set(paths, "/"+v+src.Content[i].Value, item)
		}
	}
	set(doc, "paths", paths)
	server := mapping()
	set(server, "url", scalar("/"))
	set(server, "description", scalar("this sandbox"))
	set(doc, "servers", &yaml.Node{Kind: yaml.SequenceNode, Tag: "!!seq", Content: []*yaml.Node{server}})
	return toJSON(doc)
}

// PartnerVersion returns the partner API document of one mounted version, as
// /{version}/openapi.json serves it: paths relative to the one server, /{version}.
func PartnerVersion(version string) ([]byte, error) {
	doc, err := load("partner-api.yaml")
	if err != nil {
		return nil, err
	}
	setServer(doc, version)
	return toJSON(doc)
}

// setServer makes /{version} the document's one server.
func setServer(doc *yaml.Node, version string) {
	server := mapping()
	set(server, "url", scalar("/"+version))
	set(server, "description", scalar("this sandbox, API version "+version))
	set(doc, "servers", &yaml.Node{Kind: yaml.SequenceNode, Tag: "!!seq", Content: []*yaml.Node{server}})
}

// ControlPlane returns the control plane's document, as /_sandbox/openapi.json serves it: every
// component it refers to but does not define is the partner API document's (the shared error
// shapes, headers and enumerations have one home).
func ControlPlane() ([]byte, error) {
	docs, err := loadEach("control-plane.yaml", "partner-api.yaml")
	if err != nil {
		return nil, err
	}
	doc, partner := docs[0], docs[1]
	if err := importRefs(doc, partner); err != nil {
		return nil, err
	}
	return toJSON(doc)
}

// Capability is one capability of the state adapter: a name and the control-plane operations
// ("METHOD /path/{param}") it brings.
type Capability struct {
	Name, Description string
	Operations        []string
}

// StateAdapterCapabilities returns the state adapter's capabilities in the order
// state-adapter.yaml lists them (tenants, the required one, first).
func StateAdapterCapabilities() ([]Capability, error) {
	doc, err := load("state-adapter.yaml")
	if err != nil {
		return nil, err
	}
	caps := get(doc, "x-capabilities")
	if caps == nil {
		return nil, fmt.Errorf("openapi: state-adapter.yaml has no x-capabilities")
	}
	var out []Capability
	for i := 0; i+1 < len(caps.Content); i += 2 {
		c := Capability{Name: caps.Content[i].Value}
		if d := get(caps.Content[i+1], "description"); d != nil {
			c.Description = d.Value
		}
		if ops := get(caps.Content[i+1], "operations"); ops != nil {
			for _, op := range ops.Content {
				c.Operations = append(c.Operations, op.Value)
			}
		}
		out = append(out, c)
	}
	return out, nil
}

// StateAdapter returns the state adapter's document, as /_sandbox/state-adapter.json serves it:
// state-adapter.yaml's description, and each operation its capabilities name copied from the
// control plane's document with x-capability set, with the components they refer to.
func StateAdapter() ([]byte, error) {
	docs, err := loadEach("state-adapter.yaml", "control-plane.yaml", "partner-api.yaml")
	if err != nil {
		return nil, err
	}
	doc, control, partner := docs[0], docs[1], docs[2]
	caps, err := StateAdapterCapabilities()
	if err != nil {
		return nil, err
	}
	remove(doc, "x-capabilities")
	for _, k := range []string{"servers", "security"} {
		set(doc, k, clone(get(control, k)))
	}
	paths := mapping()
	for _, c := range caps {
		for _, op := range c.Operations {
			method, path, _ := strings.Cut(op, " ")
			item := get(get(control, "paths"), path)
			o := get(item, strings.ToLower(method))
			if o == nil {
				return nil, fmt.Errorf("openapi: state-adapter.yaml names %s, which control-plane.yaml does not define", op)
			}
			o = clone(o)
			remove(o, "tags")
			set(o, "x-capability", scalar(c.Name))
			if get(paths, path) == nil {
				set(paths, path, mapping())
			}
			set(get(paths, path), strings.ToLower(method), o)
		}
	}
	set(doc, "paths", paths)
	comps := mapping()
	if s := get(get(control, "components"), "securitySchemes"); s != nil {
		set(comps, "securitySchemes", clone(s))
	}
	set(doc, "components", comps)
	// Components come from the control plane's document, else the partner API's (as
	// ControlPlane imports them).
	if err := importRefs(doc, mergedComponents(control, partner)); err != nil {
		return nil, err
	}
	return toJSON(doc)
}

// mergedComponents is a document whose components are a's, then b's where a has none.
func mergedComponents(a, b *yaml.Node) *yaml.Node {
	out := mapping()
	comps := clone(get(a, "components"))
	if bc := get(b, "components"); bc != nil {
		for i := 0; i+1 < len(bc.Content); i += 2 {
			kind := bc.Content[i].Value
			section := get(comps, kind)
			if section == nil {
				set(comps, kind, clone(bc.Content[i+1]))
				continue
			}
			for j := 0; j+1 < len(bc.Content[i+1].Content); j += 2 {
				if get(section, bc.Content[i+1].Content[j].Value) == nil {
					set(section, bc.Content[i+1].Content[j].Value, clone(bc.Content[i+1].Content[j+1]))
				}
			}
		}
	}
	set(out, "components", comps)
	return out
}

// importRefs copies into dst every "#/components/KIND/NAME" that dst refers to (directly or
// through what it copies) and does not define, from src.
func importRefs(dst, src *yaml.Node) error {
	comps := get(dst, "components")
	if comps == nil {
		comps = mapping()
		set(dst, "components", comps)
	}
	for {
		var missing []string
		walkRefs(dst, func(ref string) {
			kind, name, ok := componentRef(ref)
			if ok && get(get(comps, kind), name) == nil && !slices.Contains(missing, ref) {
				missing = append(missing, ref)
			}
		})
		if len(missing) == 0 {
			return nil
		}
		for _, ref := range missing {
			kind, name, _ := componentRef(ref)
			v := get(get(get(src, "components"), kind), name)
			if v == nil {
				return fmt.Errorf("openapi: %s is defined in neither document", ref)
			}
			section := get(comps, kind)
			if section == nil {
				section = mapping()
				set(comps, kind, section)
			}
			set(section, name, clone(v))
		}
	}
}

func componentRef(ref string) (kind, name string, ok bool) {
	rest, ok := strings.CutPrefix(ref, "#/components/")
	if !ok {
		return "", "", false
	}
	kind, name, ok = strings.Cut(rest, "/")
	return kind, name, ok && !strings.Contains(name, "/")
}

func walkRefs(n *yaml.Node, f func(ref string)) {
	if n.Kind == yaml.MappingNode {
		for i := 0; i+1 < len(n.Content); i += 2 {
			if n.Content[i].Value == "$ref" && n.Content[i+1].Kind == yaml.ScalarNode {
				f(n.Content[i+1].Value)
			}
		}
	}
	for _, c := range n.Content {
		walkRefs(c, f)
	}
}

// Source returns one embedded YAML source as written (partner-api.yaml, control-plane.yaml).
func Source(name string) ([]byte, error) { return sources.ReadFile(name) }

// Indented returns a document as a file holds it for people and diffs: two-space indentation
// and a final newline (`partnersim openapi`, and the 3.0.3 view the client generator reads).
func Indented(doc []byte) ([]byte, error) {
	var out bytes.Buffer
	if err := json.Indent(&out, doc, "", "  "); err != nil {
		return nil, fmt.Errorf("openapi: indent: %w", err)
	}
	out.WriteByte('\n')
	return out.Bytes(), nil
}

// loadEach loads each named document, in order.
func loadEach(names ...string) ([]*yaml.Node, error) {
	docs := make([]*yaml.Node, len(names))
	for i, name := range names {
		doc, err := load(name)
		if err != nil {
			return nil, err
		}
		docs[i] = doc
	}
	return docs, nil
}

func load(name string) (*yaml.Node, error) {
	b, err := sources.ReadFile(name)
	if err != nil {
		return nil, err
	}
	var file yaml.Node
	if err := yaml.Unmarshal(b, &file); err != nil {
		return nil, fmt.Errorf("openapi: %s: %w", name, err)
	}
	if file.Kind != yaml.DocumentNode || len(file.Content) != 1 || file.Content[0].Kind != yaml.MappingNode {
		return nil, fmt.Errorf("openapi: %s is not one YAML mapping", name)
	}
	if err := uniqueKeys(file.Content[0]); err != nil {
		return nil, fmt.Errorf("openapi: %s: %w", name, err)
	}
	return file.Content[0], nil
}

// uniqueKeys refuses a mapping that names a key twice: JSON readers keep only one of them, so
// a second path item would silently hide the first's operations.
func uniqueKeys(n *yaml.Node) error {
	if n.Kind == yaml.MappingNode {
		seen := map[string]bool{}
		for i := 0; i+1 < len(n.Content); i += 2 {
			k := n.Content[i].Value
			if seen[k] {
				return fmt.Errorf("line %d: %q twice in one mapping", n.Content[i].Line, k)
			}
			seen[k] = true
		}
	}
	for _, c := range n.Content {
		if err := uniqueKeys(c); err != nil {
			return err
		}
	}
	return nil
}

func mapping() *yaml.Node { return &yaml.Node{Kind: yaml.MappingNode, Tag: "!!map"} }

func scalar(s string) *yaml.Node { return &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!str", Value: s} }

// get returns the value of key in mapping m, or nil.
func get(m *yaml.Node, key string) *yaml.Node {
	if m == nil || m.Kind != yaml.MappingNode {
		return nil
	}
	for i := 0; i+1 < len(m.Content); i += 2 {
		if m.Content[i].Value == key {
			return m.Content[i+1]
		}
	}
	return nil
}

// set replaces the value of key in mapping m, or appends the pair.
func set(m *yaml.Node, key string, v *yaml.Node) {
	for i := 0; i+1 < len(m.Content); i += 2 {
		if m.Content[i].Value == key {
			m.Content[i+1] = v
			return
		}
	}
	m.Content = append(m.Content, scalar(key), v)
}

func remove(m *yaml.Node, key string) {
	for i := 0; i+1 < len(m.Content); i += 2 {
		if m.Content[i].Value == key {
			m.Content = slices.Delete(m.Content, i, i+2)
			return
		}
	}
}

func clone(n *yaml.Node) *yaml.Node {
	c := *n
	c.Content = make([]*yaml.Node, len(n.Content))
	for i, k := range n.Content {
		c.Content[i] = clone(k)
	}
	return &c
}

// toJSON writes a YAML tree as compact JSON, keys in the source's order.
func toJSON(n *yaml.Node) ([]byte, error) {
	var b bytes.Buffer
	if err := writeJSON(&b, n); err != nil {
		return nil, err
	}
	return b.Bytes(), nil
}

func writeJSON(b *bytes.Buffer, n *yaml.Node) error {
	switch n.Kind {
	case yaml.MappingNode:
		b.WriteByte('{')
		for i := 0; i+1 < len(n.Content); i += 2 {
			if i > 0 {
				b.WriteByte(',')
			}
			writeString(b, n.Content[i].Value)
			b.WriteByte(':')
			if err := writeJSON(b, n.Content[i+1]); err != nil {
				return err
			}
		}
		b.WriteByte('}')
	case yaml.SequenceNode:
		b.WriteByte('[')
		for i, c := range n.Content {
			if i > 0 {
				b.WriteByte(',')
			}
			if err := writeJSON(b, c); err != nil {
				return err
			}
		}
		b.WriteByte(']')
	case yaml.ScalarNode:
		switch n.Tag {
		case "!!str", "!!binary", "!!timestamp":
			writeString(b, n.Value)
		case "!!int", "!!float":
			if !json.Valid([]byte(n.Value)) {
				return fmt.Errorf("openapi: line %d: %q is not a JSON number", n.Line, n.Value)
			}
			b.WriteString(n.Value)
		case "!!bool":
			b.WriteString(strings.ToLower(n.Value))
		case "!!null":
			b.WriteString("null")
		default:
			return fmt.Errorf("openapi: line %d: unsupported YAML tag %s", n.Line, n.Tag)
		}
	case yaml.AliasNode:
		return writeJSON(b, n.Alias)
	default:
		return fmt.Errorf("openapi: line %d: unsupported YAML node", n.Line)
	}
	return nil
}

func writeString(b *bytes.Buffer, s string) {
	enc := json.NewEncoder(b)
	enc.SetEscapeHTML(false)
	_ = enc.Encode(s)
	b.Truncate(b.Len() - 1) // the encoder's newline
}
