package httpapi

import (
	"net/http"

	"github.com/labstack/echo/v4"
)

// handleHealth answers GET /health and GET /v1/health: 200 {"status":"ok"}, no key.
func handleHealth() echo.HandlerFunc {
	type response struct {
		Status string `json:"status"`
	}
	return func(c echo.Context) error { return writeJSON(c, http.StatusOK, response{"ok"}) }
}
