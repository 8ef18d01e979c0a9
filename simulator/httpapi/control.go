package httpapi

import (
	"crypto/subtle"

	"github.com/labstack/echo/v4"

	"github.com/partnersim/partnersim/simulator"
	"github.com/partnersim/partnersim/simulator/httpapi/surface"
)

// requireToken guards the control plane with x-sandbox-token (decisions D9); an address with
// too many wrong tokens lately is answered 429 whatever it sends (decisions D18).
func requireToken(token string, throttle *surface.TokenThrottle) echo.MiddlewareFunc {
	return func(next echo.HandlerFunc) echo.HandlerFunc {
		return func(c echo.Context) error {
			r := c.Request()
			tok := r.Header.Get("x-sandbox-token")
			if tok == "" {
				return simulator.Errorf(simulator.EUNAUTHORIZED, "Not authenticated")
			}
			if wait := throttle.RetryAfter(r.RemoteAddr); wait > 0 {
				c.Response().Header().Set("Retry-After", surface.RetryAfterSeconds(wait))
				return simulator.Errorf(simulator.ERATELIMIT, "Too many wrong sandbox tokens from this address: retry after the Retry-After seconds")
			}
			if subtle.ConstantTimeCompare([]byte(tok), []byte(token)) != 1 {
				throttle.Fail(r.RemoteAddr)
				return simulator.Errorf(simulator.EUNAUTHORIZED, "Invalid sandbox token")
			}
			return next(c)
		}
	}
}
