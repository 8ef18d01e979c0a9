package httpapi

import (
	"net/http"
	"sync"

	"github.com/labstack/echo/v4"

	"github.com/partnersim/partnersim/simulator"
	"github.com/partnersim/partnersim/simulator/openapi"
)

// The OpenAPI documents and the offline reference (decisions D16): no key, like /health, and
// not journaled; each rendered once, on first use.

// handleOpenAPI serves GET /openapi.json: the partner API of every mounted version.
func handleOpenAPI(versions []string) echo.HandlerFunc {
	return serveDocument(func() ([]byte, error) { return openapi.Partner(versions) })
}

// handleVersionOpenAPI serves GET /{version}/openapi.json: that version's document.
func handleVersionOpenAPI(version string) echo.HandlerFunc {
	return serveDocument(func() ([]byte, error) { return openapi.PartnerVersion(version) })
}

// handleControlOpenAPI serves GET /_sandbox/openapi.json: the control plane's document. It
// needs no token, like /openapi.json: it describes the surface and holds no data.
func handleControlOpenAPI() echo.HandlerFunc { return serveDocument(openapi.ControlPlane) }

// handleStateAdapterOpenAPI serves GET /_sandbox/state-adapter.json: the state adapter's
// document, the part of the control plane a contract run uses to create state (decisions D9).
func handleStateAdapterOpenAPI() echo.HandlerFunc { return serveDocument(openapi.StateAdapter) }

// handleCapabilities serves GET /_sandbox/capabilities: the sandbox offers every capability of
// the state adapter, loopback_hosts only while it answers only loopback Hosts (decisions D18).
func handleCapabilities(loopbackOnly bool) echo.HandlerFunc {
	names := sync.OnceValues(func() ([]string, error) {
		caps, err := openapi.StateAdapterCapabilities()
		out := []string{}
		for _, c := range caps {
			if c.Name != "loopback_hosts" || loopbackOnly {
				out = append(out, c.Name)
			}
		}
		return out, err
	})
	return func(c echo.Context) error {
		ns, err := names()
		if err != nil {
			return err
		}
		return writeJSON(c, http.StatusOK, map[string][]string{"capabilities": ns})
	}
}

func serveDocument(render func() ([]byte, error)) echo.HandlerFunc {
	doc := sync.OnceValues(render)
	return func(c echo.Context) error {
		b, err := doc()
		if err != nil {
			return err
		}
		writeRaw(c, http.StatusOK, b)
		return nil
	}
}

// handleDocs serves GET /docs: Swagger UI over /openapi.json (and the control plane's
// document when the control plane is on), every file from this server.
func handleDocs(control bool) echo.HandlerFunc {
	page := sync.OnceValues(func() ([]byte, error) {
		specs := []openapi.Spec{{Name: "Partner API", URL: "/openapi.json"}}
		if control {
			specs = append(specs, openapi.Spec{Name: "Control plane (/_sandbox/)", URL: "/_sandbox/openapi.json"})
		}
		return openapi.DocsPage("Partner Investing Service (partnersim sandbox) - Swagger UI", specs)
	})
	return func(c echo.Context) error {
		guardPage(c)
		c.Response().Header().Set("Cache-Control", "no-store")
		b, err := page()
		if err != nil {
			return err
		}
		return c.Blob(http.StatusOK, "text/html; charset=utf-8", b)
	}
}

// handleDocsAsset serves GET /docs/{file}: the vendored viewer's files.
func handleDocsAsset() echo.HandlerFunc {
	return func(c echo.Context) error {
		guardPage(c)
		b, ct, ok := openapi.DocsAsset(c.Param("file"))
		if !ok {
			return simulator.Errorf(simulator.ENOTFOUND, "Not Found")
		}
		c.Response().Header().Set("Cache-Control", "public, max-age=86400")
		return c.Blob(http.StatusOK, ct, b)
	}
}

// guardPage tells the browser not to sniff the answer's type and not to let any page frame it
// (decisions D18): a framing page could overlay the reference's Authorize dialog.
func guardPage(c echo.Context) {
	h := c.Response().Header()
	h.Set("X-Content-Type-Options", "nosniff")
	h.Set("X-Frame-Options", "DENY")
	h.Set("Content-Security-Policy", "frame-ancestors 'none'; base-uri 'none'; object-src 'none'")
}

// Route is one registered route.
type Route struct{ Method, Path string }

// Routes lists the routes echo knows, in echo's form (":name" parameters).
func (s *Server) Routes() []Route {
	var out []Route
	for _, r := range s.e.Routes() {
		out = append(out, Route{Method: r.Method, Path: r.Path})
	}
	return out
}
