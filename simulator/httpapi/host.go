package httpapi

import (
	"net/http"

	"github.com/labstack/echo/v4"

	"github.com/partnersim/partnersim/simulator/hostcheck"
)

// checkHost answers a request whose Host the policy refuses (decisions D18, package hostcheck)
// with 421 before routing.
func checkHost(p *hostcheck.Policy) echo.MiddlewareFunc {
	return func(next echo.HandlerFunc) echo.HandlerFunc {
		return func(c echo.Context) error {
			if !p.Allows(c.Request().Host) {
				return writeJSON(c, http.StatusMisdirectedRequest, detail{"Misdirected Request"})
			}
			return next(c)
		}
	}
}
