package httpapi

import (
	"net/http"
	"time"

	"github.com/labstack/echo/v4"

	"github.com/partnersim/partnersim/simulator"
	"github.com/partnersim/partnersim/simulator/httpapi/surface"
	"github.com/partnersim/partnersim/simulator/validate"
)

// handleAdvanceClock serves POST /_sandbox/clock/advance: the process-wide virtual clock, or
// with institution_id that institution's alone (decisions D9).
func handleAdvanceClock(ops surface.SandboxOps, reader *bodyReader) echo.HandlerFunc {
	return func(c echo.Context) error {
		var secs int
		var instID string
		err := reader.fields(c, func(b *validate.Object, _ *validate.Collector) {
			secs = b.Int("seconds", validate.Ge(0), validate.Le(surface.MaxAdvanceSeconds))
			instID = optStr(b, "institution_id", "")
		})
		if err != nil {
			return err
		}
		adv, err := ops.AdvanceClock(c.Request().Context(), instID, time.Duration(secs)*time.Second)
		if err != nil {
			return err
		}
		return writeJSON(c, http.StatusOK, renderAdvance(adv))
	}
}

// advanceJSON is the answer of an advance of the virtual clock: where it stands, and the
// attempts and steps the advance played, in the order they ran.
type advanceJSON struct {
	Now      string             `json:"now"`
	Attempts []firedAttemptJSON `json:"attempts"`
	Steps    []firedStepJSON    `json:"steps"`
}

type firedAttemptJSON struct {
	DeliveryID     string `json:"delivery_id"`
	EventID        string `json:"event_id"`
	SubscriptionID string `json:"subscription_id"`
	InstitutionID  string `json:"institution_id"`
	Attempt        int    `json:"attempt"`
	DueAt          string `json:"due_at"`
	StatusCode     int    `json:"status_code,omitempty"`
	Error          string `json:"error,omitempty"`
	Status         string `json:"status"`
	NextAttemptAt  string `json:"next_attempt_at,omitempty"`
}

type firedStepJSON struct {
	RunID         string `json:"run_id"`
	Scenario      string `json:"scenario"`
	InstitutionID string `json:"institution_id"`
	Step          int    `json:"step"`
	simulator.ScenarioStep
}

func renderAdvance(adv *simulator.Advance) advanceJSON {
	out := advanceJSON{Now: simulator.FormatTime(adv.Now), Attempts: []firedAttemptJSON{}, Steps: []firedStepJSON{}}
	for _, a := range adv.Attempts {
		j := firedAttemptJSON{DeliveryID: a.DeliveryID, EventID: a.EventID, SubscriptionID: a.SubscriptionID, InstitutionID: a.InstitutionID,
			Attempt: a.Number, DueAt: simulator.FormatTime(a.DueAt), StatusCode: a.StatusCode, Error: a.Error, Status: a.Status}
		if a.NextAttemptAt != nil {
			j.NextAttemptAt = simulator.FormatTime(*a.NextAttemptAt)
		}
		out.Attempts = append(out.Attempts, j)
	}
	for _, st := range adv.Steps {
		out.Steps = append(out.Steps, firedStepJSON{RunID: st.RunID, Scenario: st.Scenario, InstitutionID: st.InstitutionID, Step: st.Number, ScenarioStep: st.ScenarioStep})
	}
	return out
}

// handleClock serves GET /_sandbox/clock: the stamped time, the virtual (scheduler) time, the
// clock of each institution advanced on its own, and the next deliveries waiting for an
// attempt, soonest first (?limit, default 20).
func handleClock(deliveries surface.Deliveries, clock *simulator.Clock) echo.HandlerFunc {
	type institutionClock struct {
		InstitutionID string `json:"institution_id"`
		VirtualNow    string `json:"virtual_now"`
		OffsetSeconds int64  `json:"offset_seconds"`
	}
	type response struct {
		Now          string             `json:"now"`
		VirtualNow   string             `json:"virtual_now"`
		Frozen       bool               `json:"frozen"`
		Institutions []institutionClock `json:"institutions"`
		NextDue      []deliveryJSON     `json:"next_due"`
	}
	return func(c echo.Context) error {
		v := validate.New()
		limit := v.Query(validate.ParseQuery(c.Request().URL.RawQuery)).Int("limit", 20, validate.Ge(1), validate.Le(surface.MaxPendingListed))
		if err := v.Err(); err != nil {
			return err
		}
		due, err := deliveries.PendingDeliveries(c.Request().Context(), limit)
		if err != nil {
			return err
		}
		insts := []institutionClock{}
		for _, ic := range clock.Institutions() {
			insts = append(insts, institutionClock{InstitutionID: ic.InstitutionID, VirtualNow: simulator.FormatTime(ic.Now),
				OffsetSeconds: int64(ic.Offset / time.Second)})
		}
		return writeJSON(c, http.StatusOK, response{Now: simulator.FormatTime(clock.Now()), VirtualNow: simulator.FormatTime(clock.SchedulerNow()),
			Frozen: clock.Frozen(), Institutions: insts, NextDue: renderDeliveries(due).Deliveries})
	}
}

// handleDNS serves GET /_sandbox/dns: the callback-host overrides in force.
func handleDNS(ops surface.SandboxOps) echo.HandlerFunc {
	type response struct {
		Overrides map[string][]string `json:"overrides"`
	}
	return func(c echo.Context) error {
		return writeJSON(c, http.StatusOK, response{Overrides: ops.DNS(c.Request().Context())})
	}
}

// handleSetDNS serves PUT /_sandbox/dns.
func handleSetDNS(ops surface.SandboxOps, reader *bodyReader) echo.HandlerFunc {
	type response struct {
		Overrides map[string][]string `json:"overrides"`
	}
	return func(c echo.Context) error {
		overrides := map[string][]string{}
		err := reader.fields(c, func(b *validate.Object, _ *validate.Collector) {
			for _, host := range b.Keys() {
				overrides[host] = b.StrList(host)
			}
		})
		if err != nil {
			return err
		}
		out, err := ops.SetDNS(c.Request().Context(), overrides)
		if err != nil {
			return err
		}
		return writeJSON(c, http.StatusOK, response{Overrides: out})
	}
}

// handleReset serves POST /_sandbox/reset.
func handleReset(ops surface.SandboxOps) echo.HandlerFunc {
	return func(c echo.Context) error {
		if err := ops.Reset(c.Request().Context()); err != nil {
			return err
		}
		return c.NoContent(http.StatusNoContent)
	}
}

// handleSnapshot serves POST /_sandbox/snapshots/:name and POST /_sandbox/snapshots/:name/restore.
func handleSnapshot(ops surface.SandboxOps, restore bool) echo.HandlerFunc {
	type response struct {
		Snapshot string `json:"snapshot"`
		Action   string `json:"action"`
	}
	return func(c echo.Context) error {
		name := c.Param("name")
		if !surface.ValidSnapshotName(name) {
			return simulator.Errorf(simulator.EINVALID, "snapshot name %q: use letters, digits, '-' and '_' (at most 64)", name)
		}
		ctx := c.Request().Context()
		if restore {
			if err := ops.RestoreSnapshot(ctx, name); err != nil {
				return err
			}
			return writeJSON(c, http.StatusOK, response{Snapshot: name, Action: "restored"})
		}
		if err := ops.SaveSnapshot(ctx, name); err != nil {
			return err
		}
		return writeJSON(c, http.StatusCreated, response{Snapshot: name, Action: "saved"})
	}
}

// handleRequests serves GET /_sandbox/requests.
func handleRequests(j *journal) echo.HandlerFunc {
	type response struct {
		Requests []surface.JournalEntry `json:"requests"`
	}
	return func(c echo.Context) error {
		v := validate.New()
		n := v.Query(validate.ParseQuery(c.Request().URL.RawQuery)).Int("limit", 100, validate.Ge(1), validate.Le(1000))
		if err := v.Err(); err != nil {
			return err
		}
		return writeJSON(c, http.StatusOK, response{Requests: j.last(n)})
	}
}
