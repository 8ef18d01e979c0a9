package httpapi_test

import (
	"fmt"
	"net/http"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// dnsBody is a PUT /_sandbox/dns body of n names (name-<from+i>.partner.example), each with
// addrs addresses.
func dnsBody(from, n, addrs int) string {
	var b strings.Builder
	b.WriteString("{")
	for i := range n {
		if i > 0 {
			b.WriteString(",")
		}
		fmt.Fprintf(&b, `"name-%d.partner.example":[`, from+i)
		for j := range addrs {
			if j > 0 {
				b.WriteString(",")
			}
			fmt.Fprintf(&b, `"93.184.%d.%d"`, j, i%250)
		}
		b.WriteString("]")
	}
	b.WriteString("}")
	return b.String()
}

// DNS overrides take DNS host names only, at most 1,000 of them with 16 addresses each
// (decisions D18); a refused body changes nothing.
func TestDNSOverridesAreBoundedAndValidated(t *testing.T) {
	a := MustServe(t)
	for _, host := range []string{"<script>alert(1)</script>", "has space.example", "-lead.example", "trail-.example", "a..b.example",
		"127.0.0.1", "[::1]", "::1", "http://x.example", "x.example/path", "x.example:443", "münchen.example", strings.Repeat("a", 64) + ".example",
		strings.Repeat("abcdefghi.", 26) + "example", "", "localhost", "app.localhost", "127.1", "2130706433", "0x7f.1"} {
		r := a.Control(t, "PUT", "/_sandbox/dns", `{"`+host+`":["93.184.216.34"]}`)
		assert.Equal(t, http.StatusBadRequest, r.Status, "host %q: %s", host, r.Body)
		assert.Contains(t, r.JSON("detail").String(), "host name", "host %q", host)
	}
	for _, host := range []string{"hooks.partner.example", "HOOKS.Partner.example.", "xn--mnchen-3ya.example", "a_b.example", "h-1.example", "1.example"} {
		r := a.Control(t, "PUT", "/_sandbox/dns", `{"`+host+`":["93.184.216.34"]}`)
		assert.Equal(t, http.StatusOK, r.Status, "host %q: %s", host, r.Body)
	}
	a.MustControl(t, "POST", "/_sandbox/reset", "")

	r := a.Control(t, "PUT", "/_sandbox/dns", dnsBody(0, 1, 17))
	assert.Equal(t, http.StatusBadRequest, r.Status, r.Body)
	assert.Contains(t, r.JSON("detail").String(), "16")

	b := MustServe(t)
	b.MustControl(t, "PUT", "/_sandbox/dns", dnsBody(0, 600, 16))
	r = b.Control(t, "PUT", "/_sandbox/dns", dnsBody(600, 401, 1))
	assert.Equal(t, http.StatusBadRequest, r.Status, "1,001 names in all")
	assert.Contains(t, r.JSON("detail").String(), "1000")
	require.Len(t, b.MustControl(t, "GET", "/_sandbox/dns", "").JSON("overrides").Map(), 600, "the refused body changed nothing")
	b.MustControl(t, "PUT", "/_sandbox/dns", dnsBody(600, 400, 1))
	// Replacing or removing names that are there is always possible.
	b.MustControl(t, "PUT", "/_sandbox/dns", dnsBody(0, 10, 2))
	b.MustControl(t, "PUT", "/_sandbox/dns", `{"name-0.partner.example":[]}`)
	assert.Len(t, b.MustControl(t, "GET", "/_sandbox/dns", "").JSON("overrides").Map(), 999)
	b.MustControl(t, "PUT", "/_sandbox/dns", `{"NAME-5.partner.example.":["93.184.216.34"]}`)
	assert.Len(t, b.MustControl(t, "GET", "/_sandbox/dns", "").JSON("overrides").Map(), 999, "a name in another case is the same name")
}
