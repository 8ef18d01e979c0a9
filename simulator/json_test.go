package simulator_test

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/partnersim/partnersim/simulator"
)

// Decisions D4 and D8: bodies are the Python service's bytes, and Python's json.dumps
// (ensure_ascii=False) writes U+2028 and U+2029 as they are where encoding/json escapes them,
// and <, & and > unescaped; every other escape is kept, including a backslash followed by the
// text "u2028".
func TestEncodeJSONIsPythonsJSONDumps(t *testing.T) {
	for in, want := range map[string]string{
		"a\u2028b\u2029c":       "\"a\u2028b\u2029c\"",
		`\u2028`:                `"\\u2028"`,
		"\\\u2028":              "\"\\\\\u2028\"",
		"q\"\x01\t\u202f\u00e9": `"q\"\u0001\t` + "\u202f\u00e9\"",
		"<&>":                   `"<&>"`,
	} {
		b, err := simulator.EncodeJSON(in)
		require.NoError(t, err)
		assert.Equal(t, want, string(b), "%q", in)
	}
}
