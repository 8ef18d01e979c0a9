package control

import (
	"context"
	"errors"

	"github.com/partnersim/partnersim/simulator"
	"github.com/partnersim/partnersim/simulator/netguard"
)

// SendTest is Send Test's use case (spec §4.7, §2.8): one signed attempt of a synthetic
// is_test event to the subscription's URL, no retries, recorded in the delivery log. It
// returns the recorded delivery, whose one attempt says what the callback did (ENOTFOUND for
// an unknown or deleted subscription, EINVALID when the URL no longer resolves to an address
// the guard allows: then nothing is sent).
func (s *Service) SendTest(ctx context.Context, instID, subscriptionID string) (*simulator.Delivery, error) {
	sub, err := s.db.Subscription(ctx, instID, subscriptionID)
	if err != nil {
		return nil, err
	}
	// Every refusal at test time is a "no longer" one: a host that has stopped resolving says
	// so; an http URL accepted at create for a loopback host that now resolves elsewhere has
	// stopped resolving to an allowed address, like a host now resolving to a private one.
	target := simulator.CallbackTarget(sub.URL)
	if err := s.guard.CheckURL(ctx, target); err != nil {
		if errors.Is(err, netguard.ErrNoAddress) {
			return nil, simulator.Errorf(simulator.EINVALID, "callback URL host no longer resolves")
		}
		return nil, simulator.Errorf(simulator.EINVALID, "callback URL no longer resolves to a public address")
	}
	secrets, err := s.db.SigningSecrets(ctx, instID)
	if err != nil {
		return nil, err
	}
	e := simulator.TestEvent(s.db.IDs, instID, sub.EventType, s.clock)
	body := e.Body(sub.APIVersion)
	a := s.sender.Send(ctx, target, body, e.ID, secrets.Active(s.clock, instID))
	d := simulator.TestDelivery(s.db.IDs.New("dlv"), e, sub, instID, body, a)
	if err := s.db.RecordTestDelivery(ctx, e, d); err != nil {
		return nil, err
	}
	return d, nil
}
