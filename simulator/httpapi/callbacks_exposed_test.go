package httpapi_test

import (
	"net/http"
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/partnersim/partnersim/simulator/sandbox"
)

// An exposed sandbox refuses callbacks whose IPv6 address embeds a loopback or private IPv4
// address (decisions D18), as it refuses the IPv4 address itself.
func TestSubscribeRefusesEmbeddedPrivateIPv4(t *testing.T) {
	a := MustServe(t, func(c *sandbox.Config) { c.Exposed, c.SandboxToken = true, "an-operator-secret-of-24+chars" })
	for _, u := range []string{"https://[2002:7f00:1::]/h", "https://[::127.0.0.1]/h", "https://[2002:c0a8:101::]/h",
		"https://[64:ff9b::a9fe:a9fe]/h", "https://[2001:0:4136:e378:8000:63bf:80ff:fffe]/h"} {
		r := a.Call(t, "POST", "/v1/webhooks/subscriptions", `{"event_type":"kyc","url":"`+u+`"}`, "x-api-key: "+keyHooks)
		assert.Equal(t, http.StatusBadRequest, r.Status, "%s: %s", u, r.Body)
		assert.Contains(t, r.JSON("detail").String(), "public address", u)
	}
}
