package httpapi

import (
	"net/http"
	"strconv"
	"strings"
	"unsafe"

	"github.com/labstack/echo/v4"

	"github.com/partnersim/partnersim/simulator"
)

// writeJSON writes v as compact JSON the way Starlette's JSONResponse does: no HTML escaping,
// no trailing newline, Content-Type application/json. A handler returns it; a value that
// cannot be encoded is returned as the error (the error handler answers a logged 500).
func writeJSON(c echo.Context, status int, v any) error {
	b, err := simulator.EncodeJSON(v)
	if err != nil {
		return err
	}
	writeRaw(c, status, b)
	return nil
}

// writeRaw writes an encoded JSON body (none for HEAD) with its Content-Length, as FastAPI's
// JSONResponse does (net/http would send a body past its 2 KB buffer chunked). A body that may
// not fit net/http's 4 KB buffer with the head goes out with it in one write (holdResponse).
func writeRaw(c echo.Context, status int, body []byte) {
	h := c.Response().Header()
	h[echo.HeaderContentType] = contentTypeJSON
	if c.Request().Method == http.MethodHead {
		c.Response().WriteHeader(status)
		return
	}
	h[echo.HeaderContentLength] = contentLength(c, len(body))
	if held := holdResponse(c.Request(), len(body)); held != nil {
		defer held.release(c.Response().Writer) // whatever happens: nothing stays held
	}
	c.Response().WriteHeader(status)
	_, _ = c.Response().Write(body)
}

// contentLength is the Content-Length value of a body of n bytes, written into the request's
// headValues when c is its reqContext and their Content-Length is not yet set (else allocated).
func contentLength(c echo.Context, n int) []string {
	rc, ok := c.(*reqContext)
	if !ok || rc.head == nil || rc.head.length[0] != "" {
		return []string{strconv.Itoa(n)}
	}
	hv := rc.head
	b := strconv.AppendInt(hv.lengthBytes[:0], int64(n), 10)
	hv.length[0] = unsafe.String(&b[0], len(b)) // b is in hv.lengthBytes, never written again
	return hv.length[:]
}

// write answers c 200 with the body render appends to a buffer of the pool (bodyPool).
func (bp *bodyPool) write(c echo.Context, render func([]byte) []byte) {
	_ = bp.tryWrite(c, func(b []byte) ([]byte, error) { return render(b), nil })
}

// tryWrite is write for a render that can fail (a page whose items are read as it renders):
// nothing is written then, and the error is returned for the handler to return.
func (bp *bodyPool) tryWrite(c echo.Context, render func([]byte) ([]byte, error)) error {
	body := bp.get()
	defer bp.put(body)
	b, err := render(*body)
	if err != nil {
		return err
	}
	*body = b
	writeRaw(c, http.StatusOK, *body)
	return nil
}

// contentTypeJSON is every JSON answer's Content-Type value, shared (net/http only reads a
// header's values; the slice is full, so an append copies it).
var contentTypeJSON = []string{"application/json"}

// redirect answers 307 to path (decoded) with the Location Starlette builds (redirectLocation).
func redirect(c echo.Context, path string) {
	h := c.Response().Header()
	h.Set(echo.HeaderLocation, redirectLocation(c.Request(), path))
	h.Set(echo.HeaderContentLength, "0")
	c.Response().WriteHeader(http.StatusTemporaryRedirect)
}

func joinMethods(m []string) string { return strings.Join(m, ", ") }
