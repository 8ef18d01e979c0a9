package httpapi

import (
	"encoding/binary"
	"fmt"
	"math/rand/v2"
	"net/http"
	"net/http/httptest"
	"slices"
	"testing"

	"github.com/labstack/echo/v4"
	"github.com/stretchr/testify/assert"
)

// A response's own header values share one allocation (headValues), and a string handed to
// net/http is never written again: a second Content-Length in the same request (an answer
// written after another was begun) is a value of its own, and the first keeps its digits.
func TestHeadValuesAreWrittenOnce(t *testing.T) {
	e := echo.New()
	ec := e.NewContext(httptest.NewRequest(http.MethodGet, "/", nil), httptest.NewRecorder())
	rc := &reqContext{Context: ec, req: ec.Request(), res: ec.Response()}
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

// A generated request id's digits are x's, each nibble one lowercase hex digit, the least
// significant first: every digit value in every place, and words at random.
func TestHexDigitsMatchStrconv(t *testing.T) {
	xs := []uint32{0, 0xffffffff, 0x01234567, 0x89abcdef, 0xfedcba98, 0x76543210, 0x9a9a9a9a, 0xa9a9a9a9}
	for i := range 16 * 8 {
		xs = append(xs, uint32(i%16)<<(4*(i/16)))
	}
	r := rand.New(rand.NewPCG(16, 34))
	for range 10000 {
		xs = append(xs, r.Uint32())
	}
	for _, x := range xs {
		var got [8]byte
		binary.LittleEndian.PutUint64(got[:], hexDigits(x))
		want := []byte(fmt.Sprintf("%08x", x))
		slices.Reverse(want)
		assert.Equal(t, string(want), string(got[:]), "%#x", x)
	}
}
