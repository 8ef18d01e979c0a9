package httpapi

import (
	"net/http"
	"strings"
	"sync/atomic"

	"github.com/labstack/echo/v4"

	"github.com/partnersim/partnersim/simulator/hostcheck"
)

// checkHost answers a request whose Host the policy refuses (decisions D18, package hostcheck)
// with 421 before routing. The policy's answer depends on the Host alone, so the last Host it
// allowed (a copy) is remembered and a request sending that very Host, as a client's every
// request does, is let through without asking again; any other Host is asked about.
func checkHost(p *hostcheck.Policy) echo.MiddlewareFunc {
	var allowed atomic.Pointer[string]
	return func(next echo.HandlerFunc) echo.HandlerFunc {
		return func(c echo.Context) error {
			host := c.Request().Host
			if last := allowed.Load(); last == nil || *last != host {
				if !p.Allows(host) {
					return writeJSON(c, http.StatusMisdirectedRequest, detail{"Misdirected Request"})
				}
				host = strings.Clone(host)
				allowed.Store(&host)
			}
			return next(c)
		}
	}
}
