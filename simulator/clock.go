package simulator

import (
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"
)

// Clock is the sandbox's time (decisions D8). Now is the time stamped on everything that leaves
// the simulator: the wall clock, or in deterministic mode a frozen instant that moves only when
// advanced. SchedulerNow is the virtual clock that decides when retries and scenario steps are
// due: Now plus every Advance, so advancing makes work due at once without changing timestamps.
// An institution may also be ahead on its own (decisions D9): InstitutionNow is SchedulerNow
// plus that institution's offset, and only its work falls due sooner.
//
// Now takes no lock (every request stamps its journal entry with it, and a funded Get User
// Detail its history): whether the clock is frozen is fixed when it is made, wall never
// changes, and a frozen instant is replaced whole (frozen), never written in place.
type Clock struct {
	mu   sync.Mutex
	wall func() time.Time
	// frozen is the frozen instant of a clock in deterministic mode (nil for a wall clock, and
	// then for ever); its writers hold mu.
	frozen  atomic.Pointer[time.Time]
	offset  time.Duration            // how far every Advance has moved the virtual clock, frozen or not
	offsets map[string]time.Duration // institution id → how far it is ahead of SchedulerNow
	ahead   time.Duration            // the largest of offsets
}

// NewClock returns a wall clock; wall may be nil for time.Now.
func NewClock(wall func() time.Time) *Clock {
	if wall == nil {
		wall = time.Now
	}
	return &Clock{wall: wall}
}

// NewFrozenClock returns a clock frozen at t that moves only when advanced.
func NewFrozenClock(t time.Time) *Clock {
	t = t.UTC()
	c := &Clock{wall: time.Now}
	c.frozen.Store(&t)
	return c
}

// Now returns the time stamped on records, events and signatures.
func (c *Clock) Now() time.Time {
	if f := c.frozen.Load(); f != nil {
		return *f
	}
	return c.wall().UTC()
}

// SchedulerNow returns the virtual time against which scheduled work is due.
func (c *Clock) SchedulerNow() time.Time {
	if f := c.frozen.Load(); f != nil {
		return *f
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.wall().UTC().Add(c.offset)
}

// Advance moves the virtual clock forward by d (a frozen clock moves as a whole) and returns
// the new virtual time.
func (c *Clock) Advance(d time.Duration) time.Time {
	c.mu.Lock()
	if f := c.frozen.Load(); f != nil {
		t := f.Add(d)
		c.frozen.Store(&t)
	}
	c.offset += d
	c.mu.Unlock()
	return c.SchedulerNow()
}

// AdvanceInstitution moves one institution's virtual clock forward by d, on top of the
// process-wide one, and returns its new virtual time: its scheduled work falls due sooner, no
// other institution's does.
func (c *Clock) AdvanceInstitution(id string, d time.Duration) time.Time {
	c.mu.Lock()
	if c.offsets == nil {
		c.offsets = map[string]time.Duration{}
	}
	c.offsets[id] += d
	c.ahead = max(c.ahead, c.offsets[id])
	c.mu.Unlock()
	return c.InstitutionNow(id)
}

// InstitutionNow returns an institution's virtual time: SchedulerNow plus how far the
// institution alone has been advanced.
func (c *Clock) InstitutionNow(id string) time.Time {
	now := c.SchedulerNow()
	c.mu.Lock()
	defer c.mu.Unlock()
	return now.Add(c.offsets[id])
}

// Offset returns how far an institution's virtual clock is ahead of SchedulerNow.
func (c *Clock) Offset(id string) time.Duration {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.offsets[id]
}

// Ahead returns the largest offset of any institution: no institution's virtual time is later
// than SchedulerNow plus Ahead.
func (c *Clock) Ahead() time.Duration {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.ahead
}

// ForgetInstitution drops an institution's offset (the institution was deleted).
func (c *Clock) ForgetInstitution(id string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	delete(c.offsets, id)
	c.ahead = 0
	for _, o := range c.offsets {
		c.ahead = max(c.ahead, o)
	}
}

// InstitutionClock is an institution's own virtual clock: how far it is ahead of SchedulerNow,
// and the time it shows.
type InstitutionClock struct {
	InstitutionID string
	Offset        time.Duration
	Now           time.Time
}

// Institutions lists the clocks of the institutions advanced on their own, by institution id.
func (c *Clock) Institutions() []InstitutionClock {
	now := c.SchedulerNow()
	c.mu.Lock()
	defer c.mu.Unlock()
	out := make([]InstitutionClock, 0, len(c.offsets))
	for id, o := range c.offsets {
		out = append(out, InstitutionClock{InstitutionID: id, Offset: o, Now: now.Add(o)})
	}
	slices.SortFunc(out, func(a, b InstitutionClock) int { return strings.Compare(a.InstitutionID, b.InstitutionID) })
	return out
}

// ClockState is what of a clock is state, kept in the store so that it survives a restart
// (decisions D9): how far the virtual clock was advanced, process-wide and per institution.
type ClockState struct {
	Offset  time.Duration            `json:"offset_ns"`
	Offsets map[string]time.Duration `json:"institution_offsets_ns,omitempty"`
}

// State returns the clock's offsets.
func (c *Clock) State() ClockState {
	c.mu.Lock()
	defer c.mu.Unlock()
	st := ClockState{Offset: c.offset}
	if len(c.offsets) > 0 {
		st.Offsets = make(map[string]time.Duration, len(c.offsets))
		for id, o := range c.offsets {
			st.Offsets[id] = o
		}
	}
	return st
}

// Restore puts back offsets a store kept, on a clock that has not been advanced: the virtual
// clock (a frozen one as a whole) is then as far ahead as it was when st was taken.
func (c *Clock) Restore(st ClockState) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if f := c.frozen.Load(); f != nil {
		t := f.Add(st.Offset - c.offset)
		c.frozen.Store(&t)
	}
	c.offset = st.Offset
	c.offsets, c.ahead = map[string]time.Duration{}, 0
	for id, o := range st.Offsets {
		c.offsets[id] = o
		c.ahead = max(c.ahead, o)
	}
}

// Frozen reports whether the clock is in deterministic mode.
func (c *Clock) Frozen() bool { return c.frozen.Load() != nil }

// FirstStorableTime and LastStorableTime bound the instants the sandbox stores and indexes
// (users' created_at, orders' placed_at). The validator accepts Python's whole range (years 1
// to 9999), but stored times are index keys of 64-bit nanoseconds, which end in 1677 and 2262;
// the margin keeps the keys of stored times strictly inside the two clamped ends that filter
// bounds beyond the range use (docs: README, limits).
var (
	FirstStorableTime = time.Date(1700, 1, 1, 0, 0, 0, 0, time.UTC)
	LastStorableTime  = time.Date(2199, 12, 31, 23, 59, 59, 999999999, time.UTC)
)

// MaxAdvance bounds one advance of the virtual clock (ten years, decisions D17).
const MaxAdvance = 10 * 365 * 24 * time.Hour

// CheckAdvance refuses an advance of the virtual clock — the process-wide one, or with instID
// that institution's — by less than 0 or more than MaxAdvance, or that would take any
// institution's virtual time past the storable range (EINVALID either way). A process-wide
// advance moves every institution's time, so the one furthest ahead must stay storable.
func (c *Clock) CheckAdvance(instID string, d time.Duration) error {
	if d < 0 || d > MaxAdvance {
		return Errorf(EINVALID, "advance by 0 to %d seconds", MaxAdvance/time.Second)
	}
	latest := c.InstitutionNow(instID)
	if instID == "" {
		latest = latest.Add(c.Ahead())
	}
	if err := CheckStorable(latest.Add(d)); err != nil {
		return Errorf(EINVALID, "the virtual clock cannot move there: %s", ErrorMessage(err))
	}
	return nil
}

// CheckStorable returns an EINVALID error naming the range when t cannot be stored.
func CheckStorable(t time.Time) error {
	if t.Before(FirstStorableTime) || t.After(LastStorableTime) {
		return Errorf(EINVALID, "the sandbox stores times from %s to %s", FirstStorableTime.Format("2006-01-02"), LastStorableTime.Format("2006-01-02"))
	}
	return nil
}
