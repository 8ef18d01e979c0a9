package sandbox

import (
	"context"
	"fmt"
	"maps"
	"net/netip"
	"path/filepath"
	"slices"
	"sync"
	"time"

	"github.com/shopspring/decimal"

	"github.com/partnersim/partnersim/fixtures"
	"github.com/partnersim/partnersim/simulator"
	"github.com/partnersim/partnersim/simulator/bolt"
	"github.com/partnersim/partnersim/simulator/httpapi"
	"github.com/partnersim/partnersim/simulator/netguard"
)

// control implements httpapi.Control: the store's operations plus the process-wide ones (the
// virtual clock, DNS overrides, reset, snapshots, scenarios).
type control struct {
	*bolt.DB
	sb *Sandbox

	dnsMu sync.Mutex
	dns   map[string][]string

	runs scenarioRuns
}

var _ httpapi.Control = (*control)(nil)

// AdvanceClock moves the virtual clock — the process-wide one, or with instID only that
// institution's (decisions D9) — and wakes everything scheduled on it.
func (c *control) AdvanceClock(ctx context.Context, instID string, d time.Duration) (time.Time, error) {
	var now time.Time
	if instID == "" {
		now = c.sb.Clock.Advance(d)
	} else {
		if _, err := c.DB.Institution(ctx, instID); err != nil {
			return time.Time{}, err
		}
		now = c.sb.Clock.AdvanceInstitution(instID, d)
	}
	c.sb.wake()
	return now, nil
}

// DeleteInstitution removes an institution with everything of it, its own virtual clock
// included.
func (c *control) DeleteInstitution(ctx context.Context, instID string) error {
	if err := c.DB.DeleteInstitution(ctx, instID); err != nil {
		return err
	}
	c.sb.Clock.ForgetInstitution(instID)
	return nil
}

// SetDNS overrides callback-host DNS answers; an empty list removes a host's override. Names
// are DNS host names, keyed as the guard compares them (lower case, no trailing dot); at most
// netguard.MaxOverrides names are overridden at once, each with at most
// netguard.MaxOverrideAddrs addresses (decisions D18). A refused call changes nothing.
func (c *control) SetDNS(_ context.Context, overrides map[string][]string) (map[string][]string, error) {
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
	c.dnsMu.Lock()
	defer c.dnsMu.Unlock()
	if c.dns == nil {
		c.dns = map[string][]string{}
	}
	n := len(c.dns)
	for name, addrs := range parsed {
		_, had := c.dns[name]
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
		c.sb.Guard.SetOverride(name, addrs)
		if len(addrs) == 0 {
			delete(c.dns, name)
		} else {
			c.dns[name] = slices.Clone(given[name])
		}
	}
	return maps.Clone(c.dns), nil
}

// Reset reloads the fixtures into an emptied store.
func (c *control) Reset(ctx context.Context) error {
	// The whole set, checked again: the start may have read only its settings.
	set, err := fixtures.Open(c.sb.fixturesFS)
	if err != nil {
		return fmt.Errorf("fixtures: %w", err)
	}
	return Seed(ctx, c.DB, set, false)
}

func (c *control) snapshotPath(name string) string {
	return filepath.Join(c.sb.cfg.DBPath+".snapshots", name+".db")
}

func (c *control) SaveSnapshot(ctx context.Context, name string) error {
	return c.DB.SaveSnapshot(ctx, c.snapshotPath(name))
}

func (c *control) RestoreSnapshot(ctx context.Context, name string) error {
	return c.DB.RestoreSnapshot(ctx, c.snapshotPath(name))
}

func (c *control) SetPrices(ctx context.Context, instID string, prices map[string]decimal.Decimal) (map[string]decimal.Decimal, error) {
	for sym, p := range prices {
		if !p.IsPositive() {
			return nil, simulator.Errorf(simulator.EINVALID, "price of %s must be positive, got %s", sym, p)
		}
	}
	return c.DB.SetPrices(ctx, instID, prices)
}

// DNS returns the callback-host overrides in force.
func (c *control) DNS(_ context.Context) map[string][]string {
	c.dnsMu.Lock()
	defer c.dnsMu.Unlock()
	out := maps.Clone(c.dns)
	if out == nil {
		out = map[string][]string{}
	}
	return out
}
