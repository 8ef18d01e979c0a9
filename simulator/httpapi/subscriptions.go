package httpapi

import (
	"context"
	"errors"
	"net/http"

	"github.com/labstack/echo/v4"

	"github.com/partnersim/partnersim/simulator"
	"github.com/partnersim/partnersim/simulator/netguard"
	"github.com/partnersim/partnersim/simulator/validate"
)

// Webhooks is what the subscription endpoints need from storage.
type Webhooks interface {
	// CreateSubscription subscribes url to an event type at an API version and returns the
	// signing secret when this call issued it (ECONFLICT for an enabled twin).
	CreateSubscription(ctx context.Context, instID string, t simulator.EventType, url, version string) (*simulator.Subscription, string, error)
	// Subscriptions lists the institution's enabled subscriptions; it returns the store's
	// errors only.
	Subscriptions(ctx context.Context, instID string) ([]*simulator.Subscription, error)
	// DeleteSubscription disables a subscription for good (ENOTFOUND when unknown or already
	// deleted).
	DeleteSubscription(ctx context.Context, instID, id string) error
}

// Tester runs Send Test's use case (the control service's SendTest).
type Tester interface {
	// SendTest makes one signed attempt of a synthetic is_test event to the subscription and
	// records it; the delivery's one attempt says what the callback did (ENOTFOUND for an
	// unknown subscription, EINVALID when its URL no longer resolves to an allowed address).
	SendTest(ctx context.Context, instID, subscriptionID string) (*simulator.Delivery, error)
}

// URLChecker applies the callback address rule (netguard.Guard).
type URLChecker interface {
	// CheckURL refuses a callback URL the rule does not allow (netguard's ErrInvalidURL,
	// ErrHTTPSRequired, ErrNoAddress or ErrNotPublic naming the refused address).
	CheckURL(ctx context.Context, raw string) error
}

var eventTypes = []string{string(simulator.EventKYC), string(simulator.EventTransaction)}

type subscriptionJSON struct {
	SubscriptionID string              `json:"subscription_id"`
	EventType      simulator.EventType `json:"event_type"`
	URL            string              `json:"url"`
	APIVersion     string              `json:"api_version"`
	Enabled        bool                `json:"enabled"`
	CreatedAt      string              `json:"created_at"`
	SigningSecret  string              `json:"signing_secret,omitempty"`
}

type subscriptionsJSON struct {
	Subscriptions []subscriptionJSON `json:"subscriptions"`
}

// renderSubscriptions is the body of List Subscriptions (and of the control plane's list).
func renderSubscriptions(subs []*simulator.Subscription) subscriptionsJSON {
	out := subscriptionsJSON{Subscriptions: make([]subscriptionJSON, 0, len(subs))}
	for _, sub := range subs {
		out.Subscriptions = append(out.Subscriptions, renderSubscription(sub))
	}
	return out
}

func renderSubscription(sub *simulator.Subscription) subscriptionJSON {
	return subscriptionJSON{SubscriptionID: sub.ID, EventType: sub.EventType, URL: sub.URL, APIVersion: sub.APIVersion,
		Enabled: sub.Enabled, CreatedAt: simulator.FormatTime(sub.CreatedAt)}
}

// checkCallback maps the address guard's refusals at create to 400s that say what was
// refused: the scheme, a host that does not resolve, an address that is not public (decisions
// D8, D19). The URL is checked as it will be sent (simulator.CallbackTarget).
func checkCallback(ctx context.Context, guard URLChecker, url string) error {
	err := guard.CheckURL(ctx, simulator.CallbackTarget(url))
	for _, refusal := range []error{netguard.ErrHTTPSRequired, netguard.ErrNoAddress, netguard.ErrNotPublic, netguard.ErrInvalidURL} {
		if errors.Is(err, refusal) {
			return simulator.Errorf(simulator.EINVALID, "%s", refusal.Error())
		}
	}
	return err
}

// handleListSubscriptions serves GET /{v}/webhooks/subscriptions (spec §4.5).
func handleListSubscriptions(hooks Webhooks) echo.HandlerFunc {
	return func(c echo.Context) error {
		subs, err := hooks.Subscriptions(c.Request().Context(), keyOf(c).InstitutionID)
		if err != nil {
			return err
		}
		return writeJSON(c, http.StatusOK, renderSubscriptions(subs))
	}
}

// handleCreateSubscription serves POST /{v}/webhooks/subscriptions (spec §4.6, decisions D8):
// 201 with the subscription pinned to version, and signing_secret on the issuing call only.
func handleCreateSubscription(hooks Webhooks, guard URLChecker, reader *bodyReader, version string) echo.HandlerFunc {
	return func(c echo.Context) error {
		var typ, url string
		err := reader.fields(c, func(b *validate.Object, _ *validate.Collector) {
			typ = b.Enum("event_type", eventTypes...)
			url, _ = b.URL("url")
		})
		if err != nil {
			return err
		}
		ctx := c.Request().Context()
		if err := checkCallback(ctx, guard, url); err != nil {
			return err
		}
		sub, secret, err := hooks.CreateSubscription(ctx, keyOf(c).InstitutionID, simulator.EventType(typ), url, version)
		if err != nil {
			return err
		}
		out := renderSubscription(sub)
		out.SigningSecret = secret
		return writeJSON(c, http.StatusCreated, out)
	}
}

// handleDeleteSubscription serves DELETE /{v}/webhooks/subscriptions/{subscription_id}
// (decisions D8): 204, or 404 when unknown or already deleted.
func handleDeleteSubscription(hooks Webhooks) echo.HandlerFunc {
	return func(c echo.Context) error {
		id := c.Param("subscription_id")
		if err := hooks.DeleteSubscription(c.Request().Context(), keyOf(c).InstitutionID, id); err != nil {
			return err
		}
		return c.NoContent(http.StatusNoContent)
	}
}

// handleTestSubscription serves POST /{v}/webhooks/subscriptions/{subscription_id}/test
// (spec §4.7, §2.8): one signed attempt of a synthetic is_test event, no retries; 200 with the
// outcome whatever the callback did.
func handleTestSubscription(tester Tester) echo.HandlerFunc {
	type response struct {
		Delivered          bool   `json:"delivered"`
		ResponseStatusCode *int   `json:"response_status_code,omitempty"`
		EventID            string `json:"event_id"`
	}
	return func(c echo.Context) error {
		id := c.Param("subscription_id")
		d, err := tester.SendTest(c.Request().Context(), keyOf(c).InstitutionID, id)
		if err != nil {
			return err
		}
		out := response{Delivered: d.Status == simulator.DeliveryDelivered, EventID: d.EventID}
		if a := d.Attempts[0]; a.StatusCode != 0 {
			out.ResponseStatusCode = &a.StatusCode
		}
		return writeJSON(c, http.StatusOK, out)
	}
}
