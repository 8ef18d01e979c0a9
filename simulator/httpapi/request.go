package httpapi

import (
	"context"
	"io"
	"math/big"
	"net/http"

	"github.com/labstack/echo/v4"
	"github.com/shopspring/decimal"

	"github.com/partnersim/partnersim/simulator"
	"github.com/partnersim/partnersim/simulator/validate"
)

// The request helpers every handler shares: reading a bounded body, optional fields with
// defaults (the enums and the list queries are surface's, which the QA console shares).

var idTypes = []string{string(simulator.IDPlatform), string(simulator.IDCore), string(simulator.IDDBP)}

// bodyReader reads request bodies up to the configured limit and decodes the large ones one
// at a time; the handlers that take a body share one.
type bodyReader struct {
	max   int64
	large chan struct{} // the one slot for decoding a large request body
}

func newBodyReader(max int64) *bodyReader {
	return &bodyReader{max: max, large: make(chan struct{}, 1)}
}

// read reads the request body up to the configured limit (413 beyond it).
func (br *bodyReader) read(c echo.Context) ([]byte, error) {
	r := c.Request()
	limit := br.max
	raw, err := io.ReadAll(io.LimitReader(r.Body, limit+1))
	if err != nil {
		return nil, simulator.Errorf(simulator.EINVALID, "There was an error parsing the body")
	}
	if int64(len(raw)) > limit {
		return nil, echo.NewHTTPError(http.StatusRequestEntityTooLarge)
	}
	if len(raw) > largeBody {
		// Decoding and validating a large body costs tens of bytes per JSON value: one at a
		// time, so six 1 MiB bodies at once cannot take hundreds of MB (decisions D17).
		select {
		case br.large <- struct{}{}:
			c.Response().After(func() { <-br.large })
		case <-r.Context().Done():
			return nil, r.Context().Err()
		}
	}
	return raw, nil
}

// largeBody is the size above which a body waits for one of the few large-body slots.
const largeBody = 64 << 10

// fields reads the request's JSON object body and hands it to read, which takes the fields it
// needs (adding its own checks to v); it returns the body's own refusal (413, an undecodable
// body) or every validation error collected (FastAPI's 422), else nil. Every handler that
// takes a JSON body reads it here, or through value when the body is not an object.
func (br *bodyReader) fields(c echo.Context, read func(b *validate.Object, v *validate.Collector)) error {
	return br.value(c, func(body validate.Value, v *validate.Collector) { read(body.Object(), v) })
}

// value is fields for a body of any JSON type: read picks the validator.
func (br *bodyReader) value(c echo.Context, read func(body validate.Value, v *validate.Collector)) error {
	raw, err := br.read(c)
	if err != nil {
		return err
	}
	v := validate.New()
	read(v.BodyValue(c.Request().Header.Get(echo.HeaderContentType), raw), v)
	return v.Err()
}

// Optional control-plane fields with defaults.

func optStr(o *validate.Object, name, def string) string {
	if s, ok := o.OptStr(name); ok {
		return s
	}
	return def
}

func nullableStr(o *validate.Object, name string) *string {
	if s, ok := o.NullableStr(name); ok {
		return &s
	}
	return nil
}

func optInt(o *validate.Object, name string, def int, bounds ...validate.Bound) int {
	if n, ok := o.OptInt(name, bounds...); ok {
		return n
	}
	return def
}

func optDecimal(o *validate.Object, name string, def decimal.Decimal, bounds ...validate.Bound) decimal.Decimal {
	if d, ok := o.OptDecimal(name, bounds...); ok {
		return d
	}
	return def
}

func optDecimalPtr(o *validate.Object, name string) *decimal.Decimal {
	if d, ok := o.OptDecimal(name); ok {
		return &d
	}
	return nil
}

// objects returns the objects of an optional list field.
func objects(o *validate.Object, name string) []*validate.Object {
	l, ok := o.OptList(name)
	if !ok {
		return nil
	}
	out := make([]*validate.Object, 0, min(l.Len(), 1024))
	l.Each(func(_ int, v validate.Value) { out = append(out, v.Object()) })
	return out
}

// infallible is a page's render that cannot fail, as handleList takes it.
func infallible[P any](render func(b []byte, page P, cursor *big.Int, perPage int) []byte) func([]byte, P, *big.Int, int) ([]byte, error) {
	return func(b []byte, page P, cursor *big.Int, perPage int) ([]byte, error) {
		return render(b, page, cursor, perPage), nil
	}
}

// handleList serves one of the partner API's two lists: parse the raw query (filters, paging,
// sort) into a filter and the cursor, fetch the key's institution's page, render it with the cursor and the
// page size into a recycled buffer (a page whose items are read as it renders can still fail:
// then nothing is written).
func handleList[F, P any](
	parse func(rawQuery string) (F, *big.Int, error),
	perPage func(F) int,
	list func(ctx context.Context, instID string, f F) (P, error),
	render func(b []byte, page P, cursor *big.Int, perPage int) ([]byte, error),
) echo.HandlerFunc {
	var bodies bodyPool
	return func(c echo.Context) error {
		f, cursor, err := parse(c.Request().URL.RawQuery)
		if err != nil {
			return err
		}
		page, err := list(c.Request().Context(), keyOf(c).InstitutionID, f)
		if err != nil {
			return err
		}
		return bodies.tryWrite(c, func(b []byte) ([]byte, error) { return render(b, page, cursor, perPage(f)) })
	}
}
