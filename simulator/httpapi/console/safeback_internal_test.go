package console

import (
	"net/url"
	"strings"
	"testing"
)

// FuzzSafeBack: whatever next= or back= says, the redirect safeBack keeps, resolved by a
// browser against the console's own page, lands under Prefix on the same origin (decisions D18).
func FuzzSafeBack(f *testing.F) {
	for _, s := range []string{Prefix, Prefix + "clock", Prefix + "institutions/ins_harbor/users?per_page=5&x=1", Prefix + "../../v1/users/",
		Prefix + "%2e%2e/%2e%2e/v1/", Prefix + "..%2f..%2fv1", Prefix + "\\evil", Prefix + "/evil.example", "//evil.example", "https://evil.example/",
		"javascript:alert(1)", Prefix + "%5c%5cevil", Prefix + "x/./y", Prefix + "a%00b", Prefix + "%2F%2Fevil", Prefix + "x#frag", Prefix + "x?next=//evil"} {
		f.Add(s)
	}
	base, _ := url.Parse("http://127.0.0.1:8080" + Prefix + "signin")
	f.Fuzz(func(t *testing.T, next string) {
		got := safeBack(next)
		if got != Prefix && got != next {
			t.Fatalf("safeBack(%q) = %q: want the input or %q", next, got, Prefix)
		}
		u, err := url.Parse(got)
		if err != nil {
			t.Fatalf("safeBack(%q) = %q, which does not parse: %v", next, got, err)
		}
		r := base.ResolveReference(u)
		if r.Scheme != base.Scheme || r.Host != base.Host || !strings.HasPrefix(r.EscapedPath(), Prefix) || !strings.HasPrefix(r.Path, Prefix) {
			t.Fatalf("safeBack(%q) = %q leads to %s", next, got, r)
		}
		// A browser resolves "." and ".." segments, %2e counting as a dot (WHATWG URL).
		for _, seg := range strings.Split(strings.ReplaceAll(strings.ToLower(r.EscapedPath()), "%2e", "."), "/") {
			if seg == ".." || seg == "." {
				t.Fatalf("safeBack(%q) = %q keeps a dot segment, which a browser resolves away", next, got)
			}
		}
	})
}
