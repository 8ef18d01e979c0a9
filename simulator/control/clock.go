package control

import (
	"context"
	"net/netip"
	"slices"
	"time"

	"github.com/partnersim/partnersim/simulator"
	"github.com/partnersim/partnersim/simulator/netguard"
)

// maxPlayStops bounds the due times one advance stops at: far more than any schedule makes,
// so a store full of other institutions' deliveries cannot keep an advance going for long.
const maxPlayStops = 100_000

// AdvanceClock moves the virtual clock by d — the process-wide one, or with instID only that
// institution's (decisions D9) — within the domain's bounds, and plays the window (decisions
// D8): it stops at each time within it that a delivery attempt or a scenario step falls due,
// in order, and makes them there, so each retry is scheduled from its predecessor's virtual
// time. It keeps the clock's offsets in the store, wakes everything waiting on the clock and
// answers the virtual time it moved to with what it played (of that institution alone, with
// instID). One advance plays at a time. Its errors: surface.SandboxOps.AdvanceClock, their one
// home.
func (s *Service) AdvanceClock(ctx context.Context, instID string, d time.Duration) (*simulator.Advance, error) {
	if err := s.clock.CheckAdvance(instID, d); err != nil {
		return nil, err
	}
	if instID != "" {
		if _, err := s.db.Institution(ctx, instID); err != nil {
			return nil, err
		}
	}
	s.playMu.Lock()
	defer s.playMu.Unlock()
	if s.settler != nil {
		// Nothing is attempted but what the play makes, in its order: not even the deliveries
		// the steps it plays cause, which would otherwise be taken at once.
		defer s.settler.Hold()()
	}
	now := s.clock.SchedulerNow
	move := s.clock.Advance
	if instID != "" {
		now = func() time.Time { return s.clock.InstitutionNow(instID) }
		move = func(by time.Duration) time.Time { return s.clock.AdvanceInstitution(instID, by) }
	}
	adv := &simulator.Advance{}
	var moved time.Duration
	defer func() {
		// The clock has moved however the play ended: say so to what waits on it.
		if moved > 0 {
			s.wake()
		}
	}()
	for stops := 0; ; stops++ {
		if err := s.playDue(ctx, instID, adv); err != nil {
			return nil, err
		}
		next, ok, err := s.nextDue(ctx, instID, now())
		if err != nil {
			return nil, err
		}
		by := next.Sub(now())
		if !ok || moved+by > d || stops == maxPlayStops {
			break
		}
		by = max(by, 0)
		move(by)
		moved += by
	}
	adv.Now = move(d - moved)
	moved = d
	if err := s.playDue(ctx, instID, adv); err != nil {
		return nil, err
	}
	if err := s.db.SaveClock(ctx); err != nil {
		return nil, err
	}
	adv.Now = now()
	return adv, nil
}

// playDue plays what is due now: the scenario steps first (a step's event is then attempted
// at the same time), then the delivery attempts; it adds to adv what concerned instID (all of
// it when instID is "").
func (s *Service) playDue(ctx context.Context, instID string, adv *simulator.Advance) error {
	if s.steps != nil {
		for _, st := range s.steps.PlayDue() {
			if instID == "" || st.InstitutionID == instID {
				adv.Steps = append(adv.Steps, st)
			}
		}
	}
	if s.settler == nil {
		return nil
	}
	fired, err := s.settler.Settle(ctx, s.clock.SchedulerNow)
	for _, f := range fired {
		if instID == "" || f.InstitutionID == instID {
			adv.Attempts = append(adv.Attempts, f)
		}
	}
	return err
}

// nextDue returns the earliest time after now, on instID's virtual clock (the process-wide
// one for ""), at which a delivery attempt or a scenario step falls due.
func (s *Service) nextDue(ctx context.Context, instID string, now time.Time) (time.Time, bool, error) {
	next, ok, err := s.db.NextDue(ctx, now)
	if err != nil {
		return time.Time{}, false, err
	}
	if s.steps != nil {
		if st, stOK := s.steps.NextStep(instID); stOK && (!ok || st.Before(next)) {
			next, ok = st, true
		}
	}
	return next, ok, nil
}

// SetDNS overrides callback-host DNS answers; an empty list removes a host's override. Names
// are DNS host names, keyed as the guard compares them (lower case, no trailing dot); at most
// netguard.MaxOverrides names are overridden at once, each with at most
// netguard.MaxOverrideAddrs addresses (decisions D18). It returns the overrides then in force.
// Its errors: surface.SandboxOps.SetDNS, their one home.
func (s *Service) SetDNS(_ context.Context, overrides map[string][]string) (map[string][]string, error) {
	parsed := map[string][]netip.Addr{}
	given := map[string][]string{}
	for host, ips := range overrides {
		name, err := netguard.OverrideHost(host)
		if err != nil {
			return nil, simulator.Errorf(simulator.EINVALID, "dns override: %q is not a DNS host name: give a name such as hooks.partner.example "+
				"(letters, digits, hyphens; an internationalized name in its xn-- form)", host)
		}
		if len(ips) > netguard.MaxOverrideAddrs {
			return nil, simulator.Errorf(simulator.EINVALID, "dns override for %s: %d addresses, at most %d", host, len(ips), netguard.MaxOverrideAddrs)
		}
		addrs := make([]netip.Addr, 0, len(ips))
		for _, ip := range ips {
			a, err := netip.ParseAddr(ip)
			if err != nil {
				return nil, simulator.Errorf(simulator.EINVALID, "dns override for %s: %q is not an IP address", host, ip)
			}
			addrs = append(addrs, a)
		}
		parsed[name], given[name] = addrs, ips
	}
	s.dnsMu.Lock()
	defer s.dnsMu.Unlock()
	if s.dns == nil {
		s.dns = map[string][]string{}
	}
	n := len(s.dns)
	for name, addrs := range parsed {
		_, had := s.dns[name]
		switch {
		case had && len(addrs) == 0:
			n--
		case !had && len(addrs) > 0:
			n++
		}
	}
	if n > netguard.MaxOverrides {
		return nil, simulator.Errorf(simulator.EINVALID, "dns overrides: this would make %d names, at most %d: remove some first (an empty list removes a name)",
			n, netguard.MaxOverrides)
	}
	for name, addrs := range parsed {
		s.guard.SetOverride(name, addrs)
		if len(addrs) == 0 {
			delete(s.dns, name)
		} else {
			s.dns[name] = slices.Clone(given[name])
		}
	}
	return s.copyDNS(), nil
}

// copyDNS copies the overrides in force, their lists too, so that no caller shares them
// (s.dnsMu held).
func (s *Service) copyDNS() map[string][]string {
	out := make(map[string][]string, len(s.dns))
	for name, ips := range s.dns {
		out[name] = slices.Clone(ips)
	}
	return out
}

// DNS returns the callback-host overrides in force; it cannot fail.
func (s *Service) DNS(_ context.Context) map[string][]string {
	s.dnsMu.Lock()
	defer s.dnsMu.Unlock()
	return s.copyDNS()
}
