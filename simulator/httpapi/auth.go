package httpapi

import (
	"context"
	"net/http"
	"strings"
	"time"

	"github.com/labstack/echo/v4"

	"github.com/partnersim/partnersim/simulator"
)

// headerAPIKey is x-api-key in net/http's canonical form, the key its server files the header
// under (headerValue).
const headerAPIKey = "X-Api-Key"

// headerValue is h.Get(name) for a name in canonical form: net/http's server files every header
// under its canonical name, and Get canonicalizes the name it is asked for first — a scan of it,
// four times a request.
func headerValue(h http.Header, name string) string {
	if vs := h[name]; len(vs) > 0 {
		return vs[0]
	}
	return ""
}

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
			plain := headerValue(c.Request().Header, headerAPIKey)
			rc := c.(*reqContext)
			rc.plain, rc.plainRead = plain, true
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
			rc.key = key
			return next(c)
		}
	}
}

// keyOf returns the authenticated key of the request (nil before requireKey, or without it).
func keyOf(c echo.Context) *simulator.APIKey { return c.(*reqContext).key }

// reqContext is the context every request is served with (Server.ServeHTTP): echo's, and the
// key requireKey authenticated. echo's own store (Context.Set) is a map made anew for every
// request, two allocations and a hashed insert for one pointer. Recycled with its echo context
// (Server.contexts): nothing keeps it past its request.
type reqContext struct {
	echo.Context
	// req and res are the echo context's request and response, kept beside it: every check and
	// handler asks for them, and through the embedded interface each ask was two calls.
	req *http.Request
	res *echo.Response
	key *simulator.APIKey
	// head holds the response's own header values (requestID).
	head *headValues
	// start and end, when set, are when the request began and was answered, stamped once for
	// the metrics and the journal.
	start, end time.Time
	// plain is the x-api-key header's value, once requireKey has read it (plainRead).
	plain     string
	plainRead bool
}

// apiKeyOf is the x-api-key header's value of c's request.
func apiKeyOf(c echo.Context) string {
	if rc := reqContextOf(c); rc != nil && rc.plainRead {
		return rc.plain
	}
	return headerValue(c.Request().Header, headerAPIKey)
}

// Request is the echo context's request.
func (rc *reqContext) Request() *http.Request { return rc.req }

// SetRequest sets the echo context's request.
func (rc *reqContext) SetRequest(r *http.Request) { rc.req = r; rc.Context.SetRequest(r) }

// Response is the echo context's response.
func (rc *reqContext) Response() *echo.Response { return rc.res }

// SetResponse sets the echo context's response.
func (rc *reqContext) SetResponse(r *echo.Response) { rc.res = r; rc.Context.SetResponse(r) }

// reqContextOf returns c as the request's reqContext, or nil when it is none.
func reqContextOf(c echo.Context) *reqContext {
	rc, _ := c.(*reqContext)
	return rc
}
