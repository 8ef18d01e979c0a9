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

func (c *control) Deliveries(ctx context.Context, subscriptionID, eventID string, limit int) ([]*simulator.Delivery, error) {
	return c.DB.Deliveries(ctx, bolt.DeliveryFilter{SubscriptionID: subscriptionID, EventID: eventID, Limit: limit})
}

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

// SetDNS overrides callback-host DNS answers; an empty list removes a host's override.
func (c *control) SetDNS(_ context.Context, overrides map[string][]string) (map[string][]string, error) {
	parsed := map[string][]netip.Addr{}
	for host, ips := range overrides {
		for _, ip := range ips {
			a, err := netip.ParseAddr(ip)
			if err != nil {
				return nil, simulator.Errorf(simulator.EINVALID, "dns override for %s: %q is not an IP address", host, ip)
			}
			parsed[host] = append(parsed[host], a)
		}
		if len(ips) == 0 {
			parsed[host] = nil
		}
	}
	c.dnsMu.Lock()
	defer c.dnsMu.Unlock()
	if c.dns == nil {
		c.dns = map[string][]string{}
	}
	for host, addrs := range parsed {
		c.sb.Guard.SetOverride(host, addrs)
		if len(addrs) == 0 {
			delete(c.dns, host)
		} else {
			c.dns[host] = slices.Clone(overrides[host])
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

// PendingDeliveries lists up to limit deliveries waiting for an attempt, soonest first (the
// outbox's own order).
func (c *control) PendingDeliveries(ctx context.Context, limit int) ([]*simulator.Delivery, error) {
	out, err := c.DB.DueDeliveries(ctx, simulator.LastStorableTime, limit, nil)
	if out == nil {
		out = []*simulator.Delivery{}
	}
	return out, err
}
