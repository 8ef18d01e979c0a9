package httpapi

import (
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/labstack/echo/v4"
	"github.com/stretchr/testify/assert"
)

// A response's own header values share one allocation (headValues), and a string handed to
// net/http is never written again: a second Content-Length in the same request (an answer
// written after another was begun) is a value of its own, and the first keeps its digits.
func TestHeadValuesAreWrittenOnce(t *testing.T) {
	e := echo.New()
	rc := &reqContext{Context: e.NewContext(httptest.NewRequest(http.MethodGet, "/", nil), httptest.NewRecorder())}
	err := requestID(func(c echo.Context) error { return nil })(rc)
	assert.NoError(t, err)
	id := rc.Response().Header().Get(headerRequestID)
	assert.Regexp(t, `^req_[0-9a-f]{32}$`, id)

	first := contentLength(rc, 9731)
	second := contentLength(rc, 12)
	assert.Equal(t, []string{"9731"}, first, "the first value keeps its digits")
	assert.Equal(t, []string{"12"}, second)
	assert.Equal(t, id, rc.Response().Header().Get(headerRequestID), "the id is untouched")

	// Another context than the request's own (echo's, as its error handler is given) allocates.
	assert.Equal(t, []string{"0"}, contentLength(rc.Context, 0))
}
