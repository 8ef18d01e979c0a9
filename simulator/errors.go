package simulator

import (
	"errors"
	"fmt"
)

// Error codes. The HTTP layer maps each to one status (simulator/httpapi/errors.go).
const (
	ECONFLICT     = "conflict"     // 409: duplicate or disallowed transition
	EINTERNAL     = "internal"     // 500: masked, logged
	EINVALID      = "invalid"      // 400: a business rule failed
	ENOTFOUND     = "not_found"    // 404
	EUNAUTHORIZED = "unauthorized" // 401
	EFORBIDDEN    = "forbidden"    // 403
	ERATELIMIT    = "rate_limited" // 429
	EUNAVAILABLE  = "unavailable"  // 503: injected faults
)

// Error is the one application error type. Message is the sentence a partner sees in
// {"detail": Message}; it names the check that failed.
type Error struct {
	Code    string
	Message string
}

// Error implements the error interface.
func (e *Error) Error() string {
	return fmt.Sprintf("simulator error: code=%s message=%s", e.Code, e.Message)
}

// Errorf returns an *Error with the given code and formatted message.
func Errorf(code, format string, args ...any) *Error {
	return &Error{Code: code, Message: fmt.Sprintf(format, args...)}
}

// ErrorCode returns the code of an application error, or EINTERNAL for any other error.
func ErrorCode(err error) string { return appError(err).Code }

// ErrorMessage returns the message of an application error, or "Internal Server Error".
func ErrorMessage(err error) string { return appError(err).Message }

// appError is the application error err is or wraps; any other error is an EINTERNAL whose
// message says nothing of it, and no error is the zero Error.
func appError(err error) Error {
	var e *Error
	switch {
	case err == nil:
		return Error{}
	case errors.As(err, &e):
		return *e
	}
	return Error{Code: EINTERNAL, Message: "Internal Server Error"}
}

// IsNotFound reports whether err is an ENOTFOUND application error.
func IsNotFound(err error) bool { return ErrorCode(err) == ENOTFOUND }
