package features

import (
	"strings"
	"testing"

	"github.com/tidwall/gjson"

	"github.com/partnersim/partnersim/features/laws"
)

// The suite's own verifier must accept exactly what the spec describes and name what it refuses.
func TestVerifySignature(t *testing.T) {
	const secret = "whsec_test"
	body := []byte(`{"event_id":"evt_1"}`)
	good := laws.HMACHex(secret, laws.SignedPayload("1700000000", body))
	other := laws.HMACHex("whsec_other", laws.SignedPayload("1700000000", body))
	cases := []struct {
		header, wantErr string
	}{
		{"t=1700000000,v1=" + good, ""},
		{"t=1700000000,v1=" + other + ",v1=" + good, ""},   // several v1 entries: any may match
		{"t=1700000000,v0=abc,v1=" + good + ",v2=zzz", ""}, // unknown tags are ignored
		{"t=1700000000,v1=" + strings.ToUpper(good), ""},   // hex compares by value
		{"", "got none"},                                  // no header
		{"v1=" + good, "expected a t entry"},              // no t
		{"t=1700000000,t=1700000001,v1=" + good, "one t"}, // two t
		{"t=1700000000", "expected a v1 entry"},           // no v1
		{"t=soon,v1=" + good, "unix seconds"},             // t not a number
		{"t=1700000000,v1=" + other, "expected a v1 entry equal"},
		{"t=1700000000,v1=" + laws.HMACHex(secret, body), "without \"t.\""},
		{"t=1700000000,v1=" + laws.HMACHex(secret, append([]byte("1700000000"), body...)), "without the \".\""},
		{"t=1700000001,v1=" + good, "expected a v1 entry equal"}, // t is covered by the digest
	}
	for _, c := range cases {
		err := laws.VerifySignature(c.header, body, secret)
		switch {
		case c.wantErr == "" && err != nil:
			t.Errorf("%q: expected it to verify, got %v", c.header, err)
		case c.wantErr != "" && (err == nil || !strings.Contains(err.Error(), c.wantErr)):
			t.Errorf("%q: expected an error containing %q, got %v", c.header, c.wantErr, err)
		}
	}
	if err := laws.VerifySignature("t=1700000000,v1="+good, append(body, ' '), secret); err == nil {
		t.Errorf("expected a changed body to fail verification")
	}
}

func TestJSONDiff(t *testing.T) {
	cases := []struct {
		want, got string
		subset    bool
		diff      string
	}{
		{`{"a":1,"b":[1,"x"]}`, `{"b":[1,"x"],"a":1.0}`, false, ""},
		{`{"a":1}`, `{"a":1,"b":2}`, false, `expected no key "b"`},
		{`{"a":1}`, `{"a":1,"b":2}`, true, ""},
		{`{"a":[1,2]}`, `{"a":[1]}`, true, "expected 2 elements"},
		{`{"a":null}`, `{}`, false, `expected key "a"`},
		{`{"a":"1"}`, `{"a":1}`, false, `at $.a expected "1"`},
		{`{"d":[{"loc":["query","x"]}]}`, `{"d":[{"loc":["query","y"]}]}`, false, "$.d[0].loc[1]"},
	}
	for _, c := range cases {
		w, _ := decodeJSON([]byte(c.want))
		g, _ := decodeJSON([]byte(c.got))
		d := jsonDiff(w, g, c.subset, "")
		if c.diff == "" && d != "" || c.diff != "" && !strings.Contains(d, c.diff) {
			t.Errorf("jsonDiff(%s, %s, subset=%v) = %q, want %q", c.want, c.got, c.subset, d, c.diff)
		}
	}
}

func TestCheckKindAndCents(t *testing.T) {
	j := gjson.Parse(`{"m":"12.30","d":"0.015","ts":"2026-01-02T03:04:05.5Z","off":"2026-01-02T03:04:05+01:00","i":3,"f":3.5}`)
	for path, kind := range map[string]string{"m": "money string", "d": "decimal string", "ts": "timestamp", "i": "integer"} {
		if err := checkKind(j.Get(path), kind); err != nil {
			t.Errorf("%s as %s: %v", path, kind, err)
		}
	}
	for path, kind := range map[string]string{"d": "money string", "off": "timestamp", "f": "integer", "missing": "string"} {
		if err := checkKind(j.Get(path), kind); err == nil {
			t.Errorf("%s as %s: expected a refusal", path, kind)
		}
	}
	if c, ok := laws.ParseCents("1520.07"); !ok || c != 152007 || laws.CentsString(c) != "1520.07" {
		t.Errorf("laws.ParseCents(1520.07) = %d, %v", c, ok)
	}
	if _, ok := laws.ParseCents("1.005"); ok {
		t.Errorf("laws.ParseCents(1.005) should refuse a sub-cent value")
	}
}
