package features

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math/big"
	"slices"
	"strings"

	"github.com/partnersim/partnersim/features/laws"
	"github.com/tidwall/gjson"
)

// decodeJSON decodes with numbers kept exact.
func decodeJSON(b []byte) (any, error) {
	d := json.NewDecoder(bytes.NewReader(b))
	d.UseNumber()
	var v any
	if err := d.Decode(&v); err != nil {
		return nil, err
	}
	if d.More() {
		return nil, fmt.Errorf("trailing data after JSON value")
	}
	return v, nil
}

// jsonDiff compares got with want. With subset, objects in got may carry keys want does not
// name (tolerant of extra fields); arrays must match element for element either way. It
// returns "" when they agree, else where they first differ.
func jsonDiff(want, got any, subset bool, at string) string {
	if at == "" {
		at = "$"
	}
	switch w := want.(type) {
	case map[string]any:
		g, ok := got.(map[string]any)
		if !ok {
			return fmt.Sprintf("at %s expected an object, got %s", at, compact(got))
		}
		keys := make([]string, 0, len(w))
		for k := range w {
			keys = append(keys, k)
		}
		slices.Sort(keys)
		for _, k := range keys {
			gv, ok := g[k]
			if !ok {
				return fmt.Sprintf("at %s expected key %q, got none", at, k)
			}
			if d := jsonDiff(w[k], gv, subset, at+"."+k); d != "" {
				return d
			}
		}
		if !subset {
			for k := range g {
				if _, ok := w[k]; !ok {
					return fmt.Sprintf("at %s expected no key %q, got %s", at, k, compact(g[k]))
				}
			}
		}
		return ""
	case []any:
		g, ok := got.([]any)
		if !ok {
			return fmt.Sprintf("at %s expected an array, got %s", at, compact(got))
		}
		if len(g) != len(w) {
			return fmt.Sprintf("at %s expected %d elements, got %d: %s", at, len(w), len(g), compact(g))
		}
		for i := range w {
			if d := jsonDiff(w[i], g[i], subset, fmt.Sprintf("%s[%d]", at, i)); d != "" {
				return d
			}
		}
		return ""
	case json.Number:
		g, ok := got.(json.Number)
		if !ok || !sameNumber(w, g) {
			return fmt.Sprintf("at %s expected %s, got %s", at, w, compact(got))
		}
		return ""
	default:
		if fmt.Sprint(want) != fmt.Sprint(got) || fmt.Sprintf("%T", want) != fmt.Sprintf("%T", got) {
			return fmt.Sprintf("at %s expected %s, got %s", at, compact(want), compact(got))
		}
		return ""
	}
}

func sameNumber(a, b json.Number) bool {
	x, ok1 := new(big.Float).SetString(string(a))
	y, ok2 := new(big.Float).SetString(string(b))
	return ok1 && ok2 && x.Cmp(y) == 0
}

func compact(v any) string {
	b, err := json.Marshal(v)
	if err != nil {
		return fmt.Sprint(v)
	}
	return truncate(string(b), 300)
}

func truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n] + "…"
}

// checkKind checks that r is of a named kind (the vocabulary of the "is a …" steps).
func checkKind(r gjson.Result, kind string) error {
	if !r.Exists() {
		return fmt.Errorf("expected %s, got nothing (absent)", kind)
	}
	ok := false
	switch kind {
	case "string":
		ok = r.Type == gjson.String
	case "integer":
		ok = r.Type == gjson.Number && !strings.ContainsAny(r.Raw, ".eE")
	case "number":
		ok = r.Type == gjson.Number
	case "boolean":
		ok = r.IsBool()
	case "object":
		ok = r.IsObject()
	case "array":
		ok = r.IsArray()
	case "empty array":
		ok = r.IsArray() && len(r.Array()) == 0
	case "non-empty array":
		ok = r.IsArray() && len(r.Array()) > 0
	case "decimal string":
		ok = r.Type == gjson.String && laws.Decimal.MatchString(r.Str)
	case "money string":
		ok = r.Type == gjson.String && laws.Money.MatchString(r.Str)
	case "timestamp":
		ok = r.Type == gjson.String && laws.UTCTimestamp(r.Str)
	default:
		return fmt.Errorf("unknown kind %q", kind)
	}
	if !ok {
		return fmt.Errorf("expected %s, got %s", kind, truncate(r.Raw, 300))
	}
	return nil
}

// splitList splits "a, b, c" into its trimmed elements; "" is the empty list.
func splitList(s string) []string {
	if strings.TrimSpace(s) == "" {
		return []string{}
	}
	parts := strings.Split(s, ",")
	for i, p := range parts {
		parts[i] = strings.TrimSpace(p)
	}
	return parts
}
