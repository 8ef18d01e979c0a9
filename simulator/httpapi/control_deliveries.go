package httpapi

import (
	"context"
	"net/http"

	"github.com/labstack/echo/v4"

	"github.com/partnersim/partnersim/simulator"
	"github.com/partnersim/partnersim/simulator/httpapi/surface"
	"github.com/partnersim/partnersim/simulator/validate"
)

type attemptJSON struct {
	At           string  `json:"at"`
	DueAt        string  `json:"due_at"`
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
		aj := attemptJSON{At: simulator.FormatTime(a.At), DueAt: simulator.FormatTime(a.DueAt), Error: a.Error, LatencyMS: a.LatencyMS, ResponseBody: a.ResponseBody, Signature: a.Signature}
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

// handleDeliveries serves GET /_sandbox/deliveries: one page of the delivery log, newest first.
func handleDeliveries(deliveries surface.Deliveries) echo.HandlerFunc {
	return func(c echo.Context) error {
		v := validate.New()
		f := surface.DeliveryFilterQuery(v, v.Query(validate.ParseQuery(c.Request().URL.RawQuery)))
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

// handleRedeliverDelivery serves POST /_sandbox/deliveries/:delivery_id/redeliver.
func handleRedeliverDelivery(deliveries surface.Deliveries) echo.HandlerFunc {
	return redeliverBy("delivery_id", deliveries.RedeliverDelivery, renderDelivery)
}

// handleRedeliver serves POST /_sandbox/events/:event_id/redeliver.
func handleRedeliver(deliveries surface.Deliveries) echo.HandlerFunc {
	return redeliverBy("event_id", deliveries.Redeliver, renderDeliveries)
}

// redeliverBy serves a redelivery of what the path parameter param names: redeliver queues
// it, and the answer is what it queued, rendered.
func redeliverBy[T, J any](param string, redeliver func(ctx context.Context, id string) (T, error), render func(T) J) echo.HandlerFunc {
	return func(c echo.Context) error {
		v, err := redeliver(c.Request().Context(), c.Param(param))
		if err != nil {
			return err
		}
		return writeJSON(c, http.StatusOK, render(v))
	}
}
