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

// UserView.CheckPlain notes the view plain only when every string it speaks for is: one string
// needing an escape anywhere (a quote, a backslash, a control character, DEL, non-ASCII, U+2028,
// invalid UTF-8) clears it.
func TestUserViewCheckPlain(t *testing.T) {
	plain := func() simulator.UserView {
		v := simulator.UserView{PlatformID: "usr_hfcu_0009", Terms: simulator.Terms{Version: "v1.2"},
			CoreIDs: []simulator.IdentityRef{{ID: "M-1", Type: "member_number"}}, DBPIDs: []simulator.IdentityRef{{ID: "d1", Type: "q2"}}}
		v.Item.UserAccountID = "1234567890"
		return v
	}
	v := plain()
	v.CheckPlain()
	assert.True(t, v.PlainStrings, "a view of plain strings")
	fields := map[string]func(v *simulator.UserView, s string){
		"user_account_id": func(v *simulator.UserView, s string) { v.Item.UserAccountID = s },
		"platform id":     func(v *simulator.UserView, s string) { v.PlatformID = s },
		"terms version":   func(v *simulator.UserView, s string) { v.Terms.Version = s },
		"core id":         func(v *simulator.UserView, s string) { v.CoreIDs[0].ID = s },
		"core id type":    func(v *simulator.UserView, s string) { v.CoreIDs[0].Type = s },
		"dbp id":          func(v *simulator.UserView, s string) { v.DBPIDs[0].ID = s },
		"dbp id type":     func(v *simulator.UserView, s string) { v.DBPIDs[0].Type = s },
		"second dbp id": func(v *simulator.UserView, s string) {
			v.DBPIDs = append(v.DBPIDs, simulator.IdentityRef{ID: s, Type: "q2"})
		},
		"second core type": func(v *simulator.UserView, s string) {
			v.CoreIDs = append(v.CoreIDs, simulator.IdentityRef{ID: "M-2", Type: s})
		},
	}
	for name, set := range fields {
		for _, s := range []string{`a"b`, `c\d`, "line\nbreak", "x\x1f", "\x7f", "émigré", "x\u2028", "bad\xffutf8", "long plain prefix then a quote\""} {
			v := plain()
			set(&v, s)
			v.PlainStrings = true // a stale mark is overwritten
			v.CheckPlain()
			assert.False(t, v.PlainStrings, "%s = %q: got plain, want not", name, s)
		}
	}
}
