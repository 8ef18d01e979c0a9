package httpapi

import (
	"net/http"
	"time"

	"github.com/labstack/echo/v4"

	"partnersim/simulator"
	"partnersim/simulator/validate"
)

type attemptJSON struct {
	At           string  `json:"at"`
	StatusCode   *int    `json:"status_code,omitempty"`
	Error        string  `json:"error,omitempty"`
	LatencyMS    float64 `json:"latency_ms"`
	ResponseBody string  `json:"response_body"`
	Signature    string  `json:"signature,omitempty"`
}

type deliveryJSON struct {
	DeliveryID     string        `json:"delivery_id"`
	EventID        string        `json:"event_id"`
	SubscriptionID string        `json:"subscription_id"`
	InstitutionID  string        `json:"institution_id"`
	URL            string        `json:"url"`
	Status         string        `json:"status"`
	NextAttemptAt  *string       `json:"next_attempt_at"`
	Attempts       []attemptJSON `json:"attempts"`
	Error          string        `json:"error,omitempty"`
	Body           string        `json:"body"`
	CreatedAt      string        `json:"created_at"`
}

func renderDelivery(d *simulator.Delivery) deliveryJSON {
	out := deliveryJSON{DeliveryID: d.ID, EventID: d.EventID, SubscriptionID: d.SubscriptionID, InstitutionID: d.InstitutionID,
		URL: d.URL, Status: d.Status, Attempts: make([]attemptJSON, 0, len(d.Attempts)), Error: d.Error, Body: string(d.Body),
		CreatedAt: simulator.FormatTime(d.CreatedAt)}
	if d.Status == simulator.DeliveryPending {
		t := simulator.FormatTime(d.NextAttemptAt)
		out.NextAttemptAt = &t
	}
	for _, a := range d.Attempts {
		aj := attemptJSON{At: simulator.FormatTime(a.At), Error: a.Error, LatencyMS: a.LatencyMS, ResponseBody: a.ResponseBody, Signature: a.Signature}
		if a.StatusCode != 0 {
			code := a.StatusCode
			aj.StatusCode = &code
		}
		out.Attempts = append(out.Attempts, aj)
	}
	return out
}

type deliveriesJSON struct {
	Deliveries []deliveryJSON `json:"deliveries"`
}

func renderDeliveries(ds []*simulator.Delivery) deliveriesJSON {
	out := deliveriesJSON{Deliveries: make([]deliveryJSON, 0, len(ds))}
	for _, d := range ds {
		out.Deliveries = append(out.Deliveries, renderDelivery(d))
	}
	return out
}

func (s *Server) handleDeliveries() echo.HandlerFunc {
	return func(c echo.Context) error {
		v := validate.New()
		q := v.Query(validate.ParseQuery(c.Request().URL.RawQuery))
		sub, _ := q.Str("subscription_id")
		ev, _ := q.Str("event_id")
		limit := q.Int("limit", 100, validate.Ge(1), validate.Le(100000))
		if err := v.Err(); err != nil {
			return err
		}
		ds, err := s.deps.Deliveries.Deliveries(c.Request().Context(), sub, ev, limit)
		if err != nil {
			return err
		}
		return s.jsonOK(c, http.StatusOK, renderDeliveries(ds))
	}
}

func (s *Server) handleRedeliver() echo.HandlerFunc {
	return func(c echo.Context) error {
		ds, err := s.deps.Deliveries.Redeliver(c.Request().Context(), c.Param("event_id"))
		if err != nil {
			return err
		}
		return s.jsonOK(c, http.StatusOK, renderDeliveries(ds))
	}
}

func (s *Server) handleAdvanceClock() echo.HandlerFunc {
	type response struct {
		Now string `json:"now"`
	}
	return func(c echo.Context) error {
		v := validate.New()
		b, err := s.body(c, v)
		if err != nil {
			return err
		}
		secs := b.Int("seconds", validate.Ge(0), validate.Le(MaxAdvanceSeconds))
		if err := v.Err(); err != nil {
			return err
		}
		now, err := s.AdvanceClock(c.Request().Context(), time.Duration(secs)*time.Second)
		if err != nil {
			return err
		}
		return s.jsonOK(c, http.StatusOK, response{Now: simulator.FormatTime(now)})
	}
}

func (s *Server) handleSetDNS() echo.HandlerFunc {
	type response struct {
		Overrides map[string][]string `json:"overrides"`
	}
	return func(c echo.Context) error {
		v := validate.New()
		b, err := s.body(c, v)
		if err != nil {
			return err
		}
		overrides := map[string][]string{}
		for _, host := range b.Keys() {
			overrides[host] = b.StrList(host)
		}
		if err := v.Err(); err != nil {
			return err
		}
		out, err := s.deps.Sandbox.SetDNS(c.Request().Context(), overrides)
		if err != nil {
			return err
		}
		return s.jsonOK(c, http.StatusOK, response{Overrides: out})
	}
}

func (s *Server) handleRotateSecret() echo.HandlerFunc {
	type response struct {
		SigningSecret  string `json:"signing_secret"`
		OverlapSeconds int    `json:"overlap_seconds"`
	}
	return func(c echo.Context) error {
		v := validate.New()
		inst := v.PathStr("institution_id", c.Param("institution_id"))
		b, err := s.body(c, v)
		if err != nil {
			return err
		}
		overlap := optInt(b, "overlap_seconds", 0, validate.Ge(0), validate.Le(MaxOverlapSeconds))
		if err := v.Err(); err != nil {
			return err
		}
		sec, err := s.deps.Tenants.RotateSecret(c.Request().Context(), inst, time.Duration(overlap)*time.Second)
		if err != nil {
			return err
		}
		return s.jsonOK(c, http.StatusOK, response{SigningSecret: sec, OverlapSeconds: overlap})
	}
}

func (s *Server) handleRunScenario() echo.HandlerFunc {
	return func(c echo.Context) error {
		v := validate.New()
		name := v.PathStr("name", c.Param("name"))
		inst := ""
		if raw, err := s.readBody(c); err != nil {
			return err
		} else if len(raw) > 0 {
			b := v.Body(c.Request().Header.Get(echo.HeaderContentType), raw)
			inst = optStr(b, "institution_id", "")
		}
		if err := v.Err(); err != nil {
			return err
		}
		run, err := s.deps.Scenarios.RunScenario(c.Request().Context(), name, inst)
		if err != nil {
			return err
		}
		return s.jsonOK(c, http.StatusOK, run)
	}
}

func (s *Server) handleScenarios() echo.HandlerFunc {
	type response struct {
		Scenarios []ScenarioInfo `json:"scenarios"`
	}
	return func(c echo.Context) error {
		list, err := s.deps.Scenarios.Scenarios(c.Request().Context())
		if err != nil {
			return err
		}
		return s.jsonOK(c, http.StatusOK, response{Scenarios: append([]ScenarioInfo{}, list...)})
	}
}

func (s *Server) handleScenarioRun() echo.HandlerFunc {
	return func(c echo.Context) error {
		run, err := s.deps.Scenarios.ScenarioRun(c.Request().Context(), c.Param("run_id"))
		if err != nil {
			return err
		}
		return s.jsonOK(c, http.StatusOK, run)
	}
}

func (s *Server) handleReset() echo.HandlerFunc {
	return func(c echo.Context) error {
		if err := s.ResetSandbox(c.Request().Context()); err != nil {
			return err
		}
		return c.NoContent(http.StatusNoContent)
	}
}

func (s *Server) handleSnapshot(restore bool) echo.HandlerFunc {
	type response struct {
		Snapshot string `json:"snapshot"`
		Action   string `json:"action"`
	}
	return func(c echo.Context) error {
		name := c.Param("name")
		if !validSnapshotName(name) {
			return simulator.Errorf(simulator.EINVALID, "snapshot name %q: use letters, digits, '-' and '_' (at most 64)", name)
		}
		ctx := c.Request().Context()
		if restore {
			if err := s.deps.Sandbox.RestoreSnapshot(ctx, name); err != nil {
				return err
			}
			return s.jsonOK(c, http.StatusOK, response{Snapshot: name, Action: "restored"})
		}
		if err := s.deps.Sandbox.SaveSnapshot(ctx, name); err != nil {
			return err
		}
		return s.jsonOK(c, http.StatusCreated, response{Snapshot: name, Action: "saved"})
	}
}

func validSnapshotName(n string) bool {
	if n == "" || len(n) > 64 {
		return false
	}
	for _, c := range n {
		if !(c == '-' || c == '_' || c >= '0' && c <= '9' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z') {
			return false
		}
	}
	return true
}
