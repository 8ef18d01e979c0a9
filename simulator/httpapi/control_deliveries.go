package httpapi

import (
	"net/http"

	"github.com/labstack/echo/v4"

	"github.com/partnersim/partnersim/simulator"
	"github.com/partnersim/partnersim/simulator/validate"
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
	EventType      string        `json:"event_type"`
	PlatformID     string        `json:"platform_id"`
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
		EventType: string(d.EventType), PlatformID: d.PlatformID, URL: d.URL, Status: d.Status, Attempts: make([]attemptJSON, 0, len(d.Attempts)), Error: d.Error, Body: string(d.Body),
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
	NextCursor *string        `json:"next_cursor,omitempty"`
}

func renderDeliveries(ds []*simulator.Delivery) deliveriesJSON {
	out := deliveriesJSON{Deliveries: make([]deliveryJSON, 0, len(ds))}
	for _, d := range ds {
		out.Deliveries = append(out.Deliveries, renderDelivery(d))
	}
	return out
}

// DeliveryFilterQuery reads the delivery log's query (GET /_sandbox/deliveries) into a filter,
// recording what is wrong in v. The QA console reads its filters with it too.
func DeliveryFilterQuery(v *validate.Collector, q *validate.Params) simulator.DeliveryFilter {
	var f simulator.DeliveryFilter
	f.InstitutionID, _ = q.Str("institution_id")
	f.SubscriptionID, _ = q.Str("subscription_id")
	f.EventID, _ = q.Str("event_id")
	f.PlatformID, _ = q.Str("platform_id")
	f.EventType = simulator.EventType(q.Enum("event_type", false, "", string(simulator.EventKYC), string(simulator.EventTransaction)))
	f.Status = q.Enum("status", false, "", simulator.DeliveryPending, simulator.DeliveryDelivered, simulator.DeliveryFailed)
	f.CreatedStart = timeParam(q, "created_at_start")
	f.CreatedEnd = timeParam(q, "created_at_end")
	if c, ok := q.Str("cursor"); ok {
		if _, _, valid := simulator.ParseDeliveryCursor(c); !valid {
			v.Add(validate.ValueError(validate.Loc{"query", "cursor"}, c, "pass the next_cursor of an earlier page"))
		}
		f.Cursor = c
	}
	f.Limit = q.Int("limit", 100, validate.Ge(1), validate.Le(MaxDeliveryPage))
	return f
}

// handleDeliveries serves GET /_sandbox/deliveries: one page of the delivery log, newest first.
func handleDeliveries(deliveries Deliveries) echo.HandlerFunc {
	return func(c echo.Context) error {
		v := validate.New()
		f := DeliveryFilterQuery(v, v.Query(validate.ParseQuery(c.Request().URL.RawQuery)))
		if err := v.Err(); err != nil {
			return err
		}
		page, err := deliveries.Deliveries(c.Request().Context(), f)
		if err != nil {
			return err
		}
		out := renderDeliveries(page.Deliveries)
		if page.NextCursor != "" {
			out.NextCursor = &page.NextCursor
		}
		return writeJSON(c, http.StatusOK, out)
	}
}

// handleRedeliver serves POST /_sandbox/events/:event_id/redeliver.
func handleRedeliver(deliveries Deliveries) echo.HandlerFunc {
	return func(c echo.Context) error {
		ds, err := deliveries.Redeliver(c.Request().Context(), c.Param("event_id"))
		if err != nil {
			return err
		}
		return writeJSON(c, http.StatusOK, renderDeliveries(ds))
	}
}
