package control_test

import (
	"context"
	"fmt"
	"net/netip"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/partnersim/partnersim/simulator"
	"github.com/partnersim/partnersim/simulator/netguard"
)

// A process-wide advance moves every institution's virtual time; an institution's moves only
// its own. Each returns the virtual time it moved to and wakes what waits on the clock.
func TestAdvanceClock(t *testing.T) {
	ctx := context.Background()
	r := newRig(t)
	woken := 0
	r.svc.OnClockMove(func() { woken++ })

	adv, err := r.svc.AdvanceClock(ctx, "", time.Hour)
	require.NoError(t, err)
	assert.Equal(t, start.Add(time.Hour), adv.Now)
	assert.Equal(t, start.Add(time.Hour), r.clock.InstitutionNow("ins_harbor"))

	adv, err = r.svc.AdvanceClock(ctx, "ins_harbor", 24*time.Hour)
	require.NoError(t, err)
	assert.Equal(t, start.Add(25*time.Hour), adv.Now)
	assert.Equal(t, start.Add(25*time.Hour), r.clock.InstitutionNow("ins_harbor"))
	assert.Equal(t, start.Add(time.Hour), r.clock.InstitutionNow("ins_prairie"), "another institution's clock stays")
	assert.Equal(t, start.Add(time.Hour), r.clock.SchedulerNow(), "the process-wide clock stays")
	assert.Equal(t, 2, woken)
}

// An advance is refused (EINVALID) below 0 and beyond simulator.MaxAdvance, and ENOTFOUND for
// an unknown institution; a refused advance moves no clock and wakes nothing.
func TestAdvanceClockBounds(t *testing.T) {
	ctx := context.Background()
	r := newRig(t)
	woken := 0
	r.svc.OnClockMove(func() { woken++ })
	for _, tc := range []struct {
		name string
		inst string
		d    time.Duration
		code string
	}{
		{"backwards", "", -time.Nanosecond, simulator.EINVALID},
		{"beyond the most", "", simulator.MaxAdvance + time.Nanosecond, simulator.EINVALID},
		{"an institution's, beyond the most", "ins_harbor", simulator.MaxAdvance + time.Nanosecond, simulator.EINVALID},
		{"an unknown institution's", "ins_nobody", time.Hour, simulator.ENOTFOUND},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := r.svc.AdvanceClock(ctx, tc.inst, tc.d)
			assert.Equal(t, tc.code, code(err), "%v", err)
			assert.Equal(t, start, r.clock.SchedulerNow())
			assert.Equal(t, start, r.clock.InstitutionNow("ins_harbor"))
			assert.Zero(t, woken)
		})
	}
	adv, err := r.svc.AdvanceClock(ctx, "", simulator.MaxAdvance)
	require.NoError(t, err, "MaxAdvance itself is allowed")
	assert.Equal(t, start.Add(simulator.MaxAdvance), adv.Now)
	_, err = r.svc.AdvanceClock(ctx, "", 0)
	assert.NoError(t, err, "0 is allowed")
}

// No advance takes any institution's virtual time past the last instant the store keeps
// (simulator.LastStorableTime): neither its own advance nor a process-wide one, which moves
// an institution already ahead further still.
func TestAdvanceClockStaysInTheStorableRange(t *testing.T) {
	ctx := context.Background()
	r := newRig(t)
	// Harbor ahead by 170 years, within a decade of the end of the range.
	for range 17 {
		_, err := r.svc.AdvanceClock(ctx, "ins_harbor", simulator.MaxAdvance)
		require.NoError(t, err)
	}
	harbor := r.clock.InstitutionNow("ins_harbor")
	require.True(t, harbor.Add(simulator.MaxAdvance).After(simulator.LastStorableTime), "harbor is at %s", harbor)

	_, err := r.svc.AdvanceClock(ctx, "ins_harbor", simulator.MaxAdvance)
	assert.Equal(t, simulator.EINVALID, code(err), "harbor's own: %v", err)
	_, err = r.svc.AdvanceClock(ctx, "", simulator.MaxAdvance)
	assert.Equal(t, simulator.EINVALID, code(err), "process-wide, taking harbor along: %v", err)

	assert.Equal(t, harbor, r.clock.InstitutionNow("ins_harbor"), "nothing moved")
	assert.Equal(t, start, r.clock.SchedulerNow(), "nothing moved")
	_, err = r.svc.AdvanceClock(ctx, "ins_prairie", simulator.MaxAdvance)
	assert.NoError(t, err, "prairie is far from the end")
}

// SetDNS keys overrides as the guard compares names (lower case, no trailing dot), answers
// with those in force, and the guard resolves by them; an empty list removes a name.
func TestSetDNS(t *testing.T) {
	ctx := context.Background()
	r := newRig(t)

	got, err := r.svc.SetDNS(ctx, map[string][]string{"Hooks.Partner.Example.": {"203.0.113.7", "2001:db8::7"}, "other.example": {"198.51.100.1"}})
	require.NoError(t, err)
	want := map[string][]string{"hooks.partner.example": {"203.0.113.7", "2001:db8::7"}, "other.example": {"198.51.100.1"}}
	assert.Equal(t, want, got)
	assert.Equal(t, want, r.svc.DNS(ctx))
	addrs, err := r.guard.Resolve(ctx, "hooks.partner.example")
	require.NoError(t, err)
	assert.ElementsMatch(t, []netip.Addr{netip.MustParseAddr("203.0.113.7"), netip.MustParseAddr("2001:db8::7")}, addrs)

	got, err = r.svc.SetDNS(ctx, map[string][]string{"other.example": {}})
	require.NoError(t, err)
	assert.Equal(t, map[string][]string{"hooks.partner.example": {"203.0.113.7", "2001:db8::7"}}, got)
	got["hooks.partner.example"][0] = "changed"
	assert.Equal(t, "203.0.113.7", r.svc.DNS(ctx)["hooks.partner.example"][0], "the answer is a copy")
}

// A refused override — a name that is not a DNS host name, an address that is not an IP, too
// many addresses for a name, too many names — is EINVALID and changes nothing, not even the
// call's good entries.
func TestSetDNSRefusedChangesNothing(t *testing.T) {
	ctx := context.Background()
	r := newRig(t)
	_, err := r.svc.SetDNS(ctx, map[string][]string{"kept.example": {"203.0.113.1"}})
	require.NoError(t, err)
	tooMany := make([]string, netguard.MaxOverrideAddrs+1)
	for i := range tooMany {
		tooMany[i] = fmt.Sprintf("203.0.113.%d", i+1)
	}
	for name, overrides := range map[string]map[string][]string{
		"not a host name":       {"good.example": {"203.0.113.2"}, "bad_name!": {"203.0.113.3"}},
		"not an IP address":     {"good.example": {"203.0.113.2"}, "bad.example": {"203.0.113.300"}},
		"too many addresses":    {"good.example": {"203.0.113.2"}, "many.example": tooMany},
		"an empty name":         {"": {"203.0.113.2"}},
		"an IP literal as name": {"203.0.113.9": {"203.0.113.2"}},
	} {
		t.Run(name, func(t *testing.T) {
			_, err := r.svc.SetDNS(ctx, overrides)
			assert.Equal(t, simulator.EINVALID, code(err), "%v", err)
			assert.Equal(t, map[string][]string{"kept.example": {"203.0.113.1"}}, r.svc.DNS(ctx))
			_, err = r.guard.Resolve(ctx, "good.example")
			assert.Error(t, err, "the guard has no override for good.example")
		})
	}
}

// At most netguard.MaxOverrides names are overridden at once; a call that removes names makes
// room in the same call.
func TestSetDNSBoundsTheNames(t *testing.T) {
	ctx := context.Background()
	r := newRig(t)
	full := map[string][]string{}
	for i := range netguard.MaxOverrides {
		full[fmt.Sprintf("h%d.example", i)] = []string{"203.0.113.1"}
	}
	_, err := r.svc.SetDNS(ctx, full)
	require.NoError(t, err)

	_, err = r.svc.SetDNS(ctx, map[string][]string{"one-more.example": {"203.0.113.1"}})
	assert.Equal(t, simulator.EINVALID, code(err), "%v", err)
	assert.Len(t, r.svc.DNS(ctx), netguard.MaxOverrides)

	got, err := r.svc.SetDNS(ctx, map[string][]string{"one-more.example": {"203.0.113.1"}, "h0.example": nil})
	require.NoError(t, err, "one removed, one added")
	assert.Len(t, got, netguard.MaxOverrides)
	assert.Contains(t, got, "one-more.example")
	assert.NotContains(t, got, "h0.example")
}
