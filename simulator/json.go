package simulator

import (
	"bytes"
	"encoding/json"
	"unicode/utf8"
)

// EncodeJSON encodes v as the Python service writes every body it sends — API responses
// (Starlette's JSONResponse, decisions D4) and webhook event bodies (decisions D8) alike:
// json.dumps(v, ensure_ascii=False, separators=(",", ":")). That is encoding/json's compact
// output without HTML escaping (<, & and > as they are), without the trailing newline, and with
// U+2028 and U+2029 written as they are. It is the one JSON encoder of every body.
func EncodeJSON(v any) ([]byte, error) {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return nil, err
	}
	return rawLineSeparators(bytes.TrimSuffix(buf.Bytes(), []byte("\n"))), nil
}

// rawLineSeparators undoes the one escape encoding/json adds beyond Python's json.dumps
// (ensure_ascii=False): U+2028 and U+2029, which Go writes as \u2028 and \u2029 and Python as
// they are.
func rawLineSeparators(b []byte) []byte {
	if !bytes.Contains(b, []byte(`\u202`)) {
		return b
	}
	out := make([]byte, 0, len(b))
	for i := 0; i < len(b); {
		switch {
		case b[i] != '\\': // in JSON a backslash only ever starts an escape
			out = append(out, b[i])
			i++
		case b[i+1] != 'u':
			out = append(out, b[i:i+2]...)
			i += 2
		case string(b[i+2:i+6]) == "2028" || string(b[i+2:i+6]) == "2029":
			out = utf8.AppendRune(out, 0x2020+rune(b[i+5]-'0'))
			i += 6
		default:
			out = append(out, b[i:i+6]...)
			i += 6
		}
	}
	return out
}
