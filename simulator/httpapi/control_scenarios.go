package httpapi

import (
	"net/http"

	"github.com/labstack/echo/v4"

	"github.com/partnersim/partnersim/simulator"
	"github.com/partnersim/partnersim/simulator/httpapi/surface"
	"github.com/partnersim/partnersim/simulator/validate"
)

// handleRunScenario serves POST /_sandbox/scenarios/:name/run.
func handleRunScenario(scenarios surface.Scenarios, reader *bodyReader) echo.HandlerFunc {
	return func(c echo.Context) error {
		v := validate.New()
		inst := ""
		if raw, err := reader.read(c); err != nil {
			return err
		} else if len(raw) > 0 {
			b := v.Body(c.Request().Header.Get(echo.HeaderContentType), raw)
			inst = optStr(b, "institution_id", "")
		}
		if err := v.Err(); err != nil {
			return err
		}
		run, err := scenarios.RunScenario(c.Request().Context(), c.Param("name"), inst)
		if err != nil {
			return err
		}
		return writeJSON(c, http.StatusOK, run)
	}
}

// handleScenarios serves GET /_sandbox/scenarios.
func handleScenarios(scenarios surface.Scenarios) echo.HandlerFunc {
	type response struct {
		Scenarios []simulator.ScenarioInfo `json:"scenarios"`
	}
	return func(c echo.Context) error {
		list, err := scenarios.Scenarios(c.Request().Context())
		if err != nil {
			return err
		}
		return writeJSON(c, http.StatusOK, response{Scenarios: append([]simulator.ScenarioInfo{}, list...)})
	}
}

// handleScenarioRun serves GET /_sandbox/scenarios/runs/:run_id.
func handleScenarioRun(scenarios surface.Scenarios) echo.HandlerFunc {
	return func(c echo.Context) error {
		run, err := scenarios.ScenarioRun(c.Request().Context(), c.Param("run_id"))
		if err != nil {
			return err
		}
		return writeJSON(c, http.StatusOK, run)
	}
}

// handleScenarioRuns serves GET /_sandbox/scenarios/runs: the runs (?status, ?limit).
func handleScenarioRuns(scenarios surface.Scenarios) echo.HandlerFunc {
	type response struct {
		Runs []*simulator.ScenarioRun `json:"runs"`
	}
	return func(c echo.Context) error {
		v := validate.New()
		q := v.Query(validate.ParseQuery(c.Request().URL.RawQuery))
		status := q.Enum("status", false, "", "running", "completed", "failed")
		limit := q.Int("limit", 100, validate.Ge(1), validate.Le(1000))
		if err := v.Err(); err != nil {
			return err
		}
		runs, err := scenarios.ScenarioRuns(c.Request().Context(), status, limit)
		if err != nil {
			return err
		}
		return writeJSON(c, http.StatusOK, response{Runs: runs})
	}
}
