package httpapi

import (
	"net/http"

	"github.com/labstack/echo/v4"

	"github.com/partnersim/partnersim/simulator/validate"
)

// ScenarioRun reports a scenario run: the ids each step bound and what it did.
type ScenarioRun struct {
	Scenario string            `json:"scenario"`
	RunID    string            `json:"run_id"`
	Status   string            `json:"status"` // running (waiting on the virtual clock) or completed
	Bound    map[string]string `json:"bound"`
	Steps    []ScenarioStep    `json:"steps"`
}

// ScenarioInfo describes a fixture scenario.
type ScenarioInfo struct {
	Name        string `json:"name"`
	Description string `json:"description"`
	Steps       int    `json:"steps"`
}

// ScenarioStep is one step's outcome.
type ScenarioStep struct {
	Action  string `json:"action"`
	DueAt   string `json:"due_at"`
	Status  string `json:"status"` // pending, done, failed
	Result  string `json:"result,omitempty"`
	EventID string `json:"event_id,omitempty"`
	Error   string `json:"error,omitempty"`
}

// handleRunScenario serves POST /_sandbox/scenarios/:name/run.
func handleRunScenario(scenarios Scenarios, reader *bodyReader) echo.HandlerFunc {
	return func(c echo.Context) error {
		v := validate.New()
		name := v.PathStr("name", c.Param("name"))
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
		run, err := scenarios.RunScenario(c.Request().Context(), name, inst)
		if err != nil {
			return err
		}
		return writeJSON(c, http.StatusOK, run)
	}
}

// handleScenarios serves GET /_sandbox/scenarios.
func handleScenarios(scenarios Scenarios) echo.HandlerFunc {
	type response struct {
		Scenarios []ScenarioInfo `json:"scenarios"`
	}
	return func(c echo.Context) error {
		list, err := scenarios.Scenarios(c.Request().Context())
		if err != nil {
			return err
		}
		return writeJSON(c, http.StatusOK, response{Scenarios: append([]ScenarioInfo{}, list...)})
	}
}

// handleScenarioRun serves GET /_sandbox/scenarios/runs/:run_id.
func handleScenarioRun(scenarios Scenarios) echo.HandlerFunc {
	return func(c echo.Context) error {
		run, err := scenarios.ScenarioRun(c.Request().Context(), c.Param("run_id"))
		if err != nil {
			return err
		}
		return writeJSON(c, http.StatusOK, run)
	}
}

// handleScenarioRuns serves GET /_sandbox/scenarios/runs: the runs (?status, ?limit).
func handleScenarioRuns(scenarios Scenarios) echo.HandlerFunc {
	type response struct {
		Runs []*ScenarioRun `json:"runs"`
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
