package httpapi

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http"

	"github.com/labstack/echo/v4"

	"github.com/partnersim/partnersim/simulator"
	"github.com/partnersim/partnersim/simulator/validate"
)

// statusOf maps application error codes to HTTP statuses.
var statusOf = map[string]int{
	simulator.ECONFLICT:     http.StatusConflict,
	simulator.EINVALID:      http.StatusBadRequest,
	simulator.ENOTFOUND:     http.StatusNotFound,
	simulator.EUNAUTHORIZED: http.StatusUnauthorized,
	simulator.EFORBIDDEN:    http.StatusForbidden,
	simulator.ERATELIMIT:    http.StatusTooManyRequests,
	simulator.EUNAVAILABLE:  http.StatusServiceUnavailable,
	simulator.EINTERNAL:     http.StatusInternalServerError,
}

// detail is the body of every non-validation error.
type detail struct {
	Detail string `json:"detail"`
}

// errorHandler is the server's only error writer. It answers validation errors with FastAPI's
// 422 array, application errors with their status and {"detail": message}, echo's own routing
// errors with FastAPI's 404/405/307 behaviour, and masks anything else as a logged 500.
func (s *Server) errorHandler(err error, c echo.Context) {
	if c.Response().Committed {
		return
	}
	var (
		verrs   validate.Errors
		he      *echo.HTTPError
		noPrice *simulator.NoPriceError
	)
	switch {
	case c.Request().Context().Err() != nil && (errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded)):
		s.cancelled(c)
	case errors.As(err, &verrs):
		body, merr := verrs.MarshalJSON()
		if merr != nil {
			s.internal(c, merr)
			return
		}
		writeRaw(c, http.StatusUnprocessableEntity, body)
	case errors.Is(err, validate.ErrBodyParse):
		s.writeDetail(c, http.StatusBadRequest, "There was an error parsing the body")
	case errors.As(err, &he):
		s.routingError(c, he)
	case errors.As(err, &noPrice):
		// The domain names the symbol; the control plane says how to set its price.
		s.writeDetail(c, http.StatusBadRequest, fmt.Sprintf("%s: set it with PUT /_sandbox/institutions/%s/prices", noPrice.Error(), noPrice.InstitutionID))
	default:
		code := simulator.ErrorCode(err)
		if code == simulator.EINTERNAL {
			s.internal(c, err)
			return
		}
		s.writeDetail(c, statusOf[code], simulator.ErrorMessage(err))
	}
}

// StatusClientClosedRequest is nginx's 499: the client went away before the answer. Nothing
// reaches the client; the status is for the journal and the log (decisions D17).
const StatusClientClosedRequest = 499

// cancelled records a request whose client disconnected: its work has stopped (the store
// checks the context), it is logged at info level as cancelled and journaled as 499.
func (s *Server) cancelled(c echo.Context) {
	s.log.Info("request cancelled by the client", slog.String("method", c.Request().Method), slog.String("path", c.Request().URL.Path),
		slog.String("request_id", c.Response().Header().Get(headerRequestID)))
	c.Response().WriteHeader(StatusClientClosedRequest)
}

// internal logs an unexpected error and answers a 500 that says nothing of it.
func (s *Server) internal(c echo.Context, err error) {
	s.log.Error("internal error", slog.String("method", c.Request().Method), slog.String("path", c.Request().URL.Path),
		slog.String("request_id", c.Response().Header().Get(headerRequestID)), slog.Any("err", err))
	writeRaw(c, http.StatusInternalServerError, []byte(`{"detail":"Internal Server Error"}`))
}

// writeDetail answers {"detail": msg} with status.
func (s *Server) writeDetail(c echo.Context, status int, msg string) {
	if err := writeJSON(c, status, detail{msg}); err != nil {
		s.internal(c, err)
	}
}

// routingError turns echo's router errors into FastAPI's: 307 to the canonical trailing-slash
// path, 404 {"detail":"Not Found"}, 405 {"detail":"Method Not Allowed"} with Allow.
func (s *Server) routingError(c echo.Context, he *echo.HTTPError) {
	r := c.Request()
	// echo's router sets Allow on its own 405; Starlette sends it with a 405 only.
	c.Response().Header().Del("Allow")
	switch he.Code {
	case http.StatusNotFound, http.StatusMethodNotAllowed:
		path := r.URL.Path
		if methods := s.routes.methods(path); len(methods) > 0 {
			c.Response().Header().Set("Allow", joinMethods(methods))
			s.writeDetail(c, http.StatusMethodNotAllowed, "Method Not Allowed")
			return
		}
		if alt, ok := s.routes.slashAlternative(path); ok {
			redirect(c, alt)
			return
		}
		s.writeDetail(c, http.StatusNotFound, "Not Found")
	case http.StatusRequestEntityTooLarge:
		s.writeDetail(c, he.Code, "Request body too large")
	default:
		msg := http.StatusText(he.Code)
		if m, ok := he.Message.(string); ok && m != "" {
			msg = m
		}
		if he.Code >= 500 {
			s.internal(c, he)
			return
		}
		s.writeDetail(c, he.Code, msg)
	}
}
