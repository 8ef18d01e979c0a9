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
	CreateSubscription(ctx context.Context, instID string, t simulator.EventType, url, version string) (*simulator.Subscription, string, error)
	Subscriptions(ctx context.Context, instID string) ([]*simulator.Subscription, error)
	Subscription(ctx context.Context, instID, id string) (*simulator.Subscription, error)
	DeleteSubscription(ctx context.Context, instID, id string) error
	SigningSecrets(ctx context.Context, instID string) (simulator.SigningSecrets, error)
	RecordTestDelivery(ctx context.Context, e *simulator.Event, d *simulator.Delivery) error
}

// Sender makes one signed delivery attempt (the dispatcher).
type Sender interface {
	Send(ctx context.Context, url string, body []byte, eventID string, secrets []string) simulator.Attempt
}

// URLChecker applies the callback address rule (netguard.Guard).
type URLChecker interface {
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

// checkCallback maps the address guard's refusals to 400s (decisions D8); notPublic words the
// sentence for create ("does not") or test ("no longer"). At test time every refusal is the
// "no longer" one: an http URL accepted at create for a loopback host that now resolves
// elsewhere has stopped resolving to an allowed address.
func checkCallback(ctx context.Context, guard URLChecker, url, notPublic string, atTest bool) error {
	err := guard.CheckURL(ctx, url)
	switch {
	case err == nil:
		return nil
	case errors.Is(err, netguard.ErrHTTPSRequired) && !atTest:
		return simulator.Errorf(simulator.EINVALID, "callback URL must use https")
	default:
		return simulator.Errorf(simulator.EINVALID, "%s", notPublic)
	}
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
		raw, err := reader.read(c)
		if err != nil {
			return err
		}
		v := validate.New()
		b := v.Body(c.Request().Header.Get(echo.HeaderContentType), raw)
		typ := b.Enum("event_type", eventTypes...)
		url, _ := b.URL("url")
		if err := v.Err(); err != nil {
			return err
		}
		ctx := c.Request().Context()
		if err := checkCallback(ctx, guard, url, "callback URL does not resolve to a public address", false); err != nil {
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
		v := validate.New()
		id := v.PathStr("subscription_id", c.Param("subscription_id"))
		if err := v.Err(); err != nil {
			return err
		}
		if err := hooks.DeleteSubscription(c.Request().Context(), keyOf(c).InstitutionID, id); err != nil {
			return err
		}
		return c.NoContent(http.StatusNoContent)
	}
}

// handleTestSubscription serves POST /{v}/webhooks/subscriptions/{subscription_id}/test
// (spec §4.7, §2.8): one signed attempt of a synthetic is_test event, no retries; 200 with the
// outcome whatever the callback did.
func handleTestSubscription(hooks Webhooks, guard URLChecker, sender Sender, ids *simulator.IDs, clock *simulator.Clock) echo.HandlerFunc {
	type response struct {
		Delivered          bool   `json:"delivered"`
		ResponseStatusCode *int   `json:"response_status_code,omitempty"`
		EventID            string `json:"event_id"`
	}
	return func(c echo.Context) error {
		v := validate.New()
		id := v.PathStr("subscription_id", c.Param("subscription_id"))
		if err := v.Err(); err != nil {
			return err
		}
		ctx := c.Request().Context()
		inst := keyOf(c).InstitutionID
		sub, err := hooks.Subscription(ctx, inst, id)
		if err != nil {
			return err
		}
		if err := checkCallback(ctx, guard, sub.URL, "callback URL no longer resolves to a public address", true); err != nil {
			return err
		}
		secrets, err := hooks.SigningSecrets(ctx, inst)
		if err != nil {
			return err
		}
		e := simulator.TestEvent(ids, inst, sub.EventType, clock)
		body := e.Body(sub.APIVersion)
		a := sender.Send(ctx, sub.URL, body, e.ID, secrets.Active(clock, inst))
		d := simulator.TestDelivery(ids.New("dlv"), e, sub, inst, body, a)
		if err := hooks.RecordTestDelivery(ctx, e, d); err != nil {
			return err
		}
		out := response{Delivered: d.Status == simulator.DeliveryDelivered, EventID: e.ID}
		if a.StatusCode != 0 {
			out.ResponseStatusCode = &a.StatusCode
		}
		return writeJSON(c, http.StatusOK, out)
	}
}
