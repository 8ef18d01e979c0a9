package console_test

import (
	"net/http"
	"net/url"
	"strings"
	"testing"

	"github.com/partnersim/partnersim/internal/sandboxtest"
)

// After sign-in, next= never leads out of the console (decisions D18): not by another origin,
// nor by dot segments, encoded or not, nor by backslashes that browsers read as slashes.
func TestSignInNextStaysInTheConsole(t *testing.T) {
	sb := sandboxtest.MustServe(t)
	for _, next := range []string{
		"/_sandbox/ui/../../v1/users/", "/_sandbox/ui/%2e%2e/%2E%2E/v1/users/", "/_sandbox/ui/..%2f..%2fv1/users/",
		"/_sandbox/ui/x/../../../_sandbox/institutions", "/_sandbox/ui/./../docs", "/_sandbox/ui/\\evil.example",
		"/_sandbox/ui/%5c%5cevil.example", "/_sandbox/ui/%2f%2fevil.example", "/_sandbox/ui//evil.example", "javascript:alert(1)",
		"https://evil.example/_sandbox/ui/", "//evil.example/_sandbox/ui/", "/_sandbox/ui/\t/x", "/_sandbox/uix",
	} {
		res, _ := newClient(sb).do(t, http.MethodPost, "/_sandbox/ui/signin", url.Values{"token": {sb.SB.Token}, "next": {next}})
		assert(t, res.Status == http.StatusSeeOther && res.Header.Get("Location") == "/_sandbox/ui/",
			"next %q: redirected to %q, want /_sandbox/ui/", next, res.Header.Get("Location"))
		// The sign-in page carries next into its form as the same rule leaves it.
		body := newClient(sb).get(t, "/_sandbox/ui/signin?next="+url.QueryEscape(next), http.StatusOK)
		assert(t, !strings.Contains(body, "evil") && !strings.Contains(body, "v1/users"), "next %q kept in the sign-in form", next)
	}
	for _, next := range []string{"/_sandbox/ui/clock", "/_sandbox/ui/institutions/ins_harbor/users?per_page=5&x=1", "/_sandbox/ui/"} {
		res, _ := newClient(sb).do(t, http.MethodPost, "/_sandbox/ui/signin", url.Values{"token": {sb.SB.Token}, "next": {next}})
		assert(t, res.Header.Get("Location") == next, "next %q: redirected to %q", next, res.Header.Get("Location"))
	}
}

// Sign-out reads a bounded form, as every action does (decisions D18): a body over 64 KiB is
// refused and the session stays.
func TestSignOutReadsABoundedForm(t *testing.T) {
	sb := sandboxtest.MustServe(t)
	c := signedIn(t, sb)
	res, _ := c.post(t, "/_sandbox/ui/signout", url.Values{"pad": {strings.Repeat("x", 100<<10)}})
	assert(t, res.Status == http.StatusBadRequest, "a 100 KiB sign-out form: status %d, want 400", res.Status)
	c.get(t, "/_sandbox/ui/", http.StatusOK)
	res, _ = c.post(t, "/_sandbox/ui/signout", nil)
	assert(t, res.Status == http.StatusSeeOther, "sign out: %d", res.Status)
}
