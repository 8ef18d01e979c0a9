package httpapi

import (
	"context"
	"strings"

	"github.com/labstack/echo/v4"

	"github.com/partnersim/partnersim/simulator"
)

const ctxKey = "partnersim.key"

// headerAPIKey is x-api-key in net/http's canonical form: Header.Get of any other spelling
// canonicalizes it first, an allocation on every request.
const headerAPIKey = "X-Api-Key"

// KeyAuthenticator finds the API key a plaintext names (storage).
type KeyAuthenticator interface {
	// Authenticate returns the live key whose plaintext this is (EUNAUTHORIZED when none is,
	// or it is revoked).
	Authenticate(ctx context.Context, plaintext string) (*simulator.APIKey, error)
}

// requireKey authenticates the x-api-key header and checks the route's scope, in decisions D3's
// order: missing key 401 (with WWW-Authenticate, as FastAPI ≥ 0.122), unknown/revoked/live key
// 401, missing scope 403. Validation comes after, in the handler.
func requireKey(keys KeyAuthenticator, scope simulator.Scope) echo.MiddlewareFunc {
	return func(next echo.HandlerFunc) echo.HandlerFunc {
		return func(c echo.Context) error {
			plain := c.Request().Header.Get(headerAPIKey)
			if plain == "" {
				c.Response().Header().Set("WWW-Authenticate", "APIKey")
				return simulator.Errorf(simulator.EUNAUTHORIZED, "Not authenticated")
			}
			if strings.HasPrefix(plain, "live_") {
				return simulator.Errorf(simulator.EUNAUTHORIZED, "Invalid API key: live keys cannot be used in the sandbox")
			}
			key, err := keys.Authenticate(c.Request().Context(), plain)
			if err != nil {
				return err
			}
			if !key.HasScope(scope) {
				return simulator.Errorf(simulator.EFORBIDDEN, "key does not have the required scope: %s", scope)
			}
			c.Set(ctxKey, key)
			return next(c)
		}
	}
}

// keyOf returns the authenticated key of the request.
func keyOf(c echo.Context) *simulator.APIKey {
	k, _ := c.Get(ctxKey).(*simulator.APIKey)
	return k
}
