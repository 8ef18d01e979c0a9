package control

import (
	"context"
	"net/netip"
	"slices"
	"time"

	"github.com/partnersim/partnersim/simulator"
	"github.com/partnersim/partnersim/simulator/netguard"
)

// AdvanceClock moves the virtual clock by d — the process-wide one, or with instID only that
// institution's (decisions D9) — within the domain's bounds, wakes everything waiting on it and
// returns the virtual time it moved to. Its errors: surface.SandboxOps.AdvanceClock, their one
// home.
func (s *Service) AdvanceClock(ctx context.Context, instID string, d time.Duration) (time.Time, error) {
	if err := s.clock.CheckAdvance(instID, d); err != nil {
		return time.Time{}, err
	}
	var now time.Time
	if instID == "" {
		now = s.clock.Advance(d)
	} else {
		if _, err := s.db.Institution(ctx, instID); err != nil {
			return time.Time{}, err
		}
		now = s.clock.AdvanceInstitution(instID, d)
	}
	s.wake()
	return now, nil
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
