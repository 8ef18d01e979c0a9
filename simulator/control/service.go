package control

import (
	"context"
	"maps"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/partnersim/partnersim/simulator"
	"github.com/partnersim/partnersim/simulator/bolt"
	"github.com/partnersim/partnersim/simulator/netguard"
)

// Sender makes one signed delivery attempt (the dispatcher's Send). A failed attempt is
// reported in the Attempt it returns, never as an error.
type Sender interface {
	// Send posts body to url, signed with each of secrets, once.
	Send(ctx context.Context, url string, body []byte, eventID string, secrets []string) simulator.Attempt
}

// Settler makes the delivery attempts due on the virtual clock (the dispatcher).
type Settler interface {
	// Hold keeps every other attempt from being made until release is called.
	Hold() (release func())
	// Settle makes every attempt due at now(), each once, and returns what each did once
	// they are recorded (while held).
	Settle(ctx context.Context, now func() time.Time) ([]simulator.FiredAttempt, error)
}

// StepPlayer plays the scenario steps due on the virtual clock (the scenario runner).
type StepPlayer interface {
	// NextStep returns when the earliest step not yet played falls due, on instID's virtual
	// clock (the process-wide one for "").
	NextStep(instID string) (time.Time, bool)
	// PlayDue plays every step due now and returns them.
	PlayDue() []simulator.FiredStep
}

// Config is what the service runs on.
type Config struct {
	// Store is the bbolt store every operation runs its one transaction in; its Clock and IDs
	// are the service's.
	Store *bolt.DB
	// Guard is the callback address guard whose DNS overrides the service sets and whose rule
	// Send Test applies.
	Guard *netguard.Guard
	// Sender makes Send Test's attempt.
	Sender Sender
	// Settler makes the attempts an advance of the clock brings due; nil makes none.
	Settler Settler
	// Reload empties the store and loads the fixture set again (Reset).
	Reload func(ctx context.Context) error
	// SnapshotDir holds the snapshots, NAME.db each.
	SnapshotDir string
}

// Service is the control plane's service. Its methods are safe for concurrent use.
type Service struct {
	db     *bolt.DB
	clock  *simulator.Clock
	guard  *netguard.Guard
	sender Sender
	reload func(ctx context.Context) error
	snaps  string

	settler Settler
	steps   StepPlayer
	playMu  sync.Mutex // held by an advance of the clock while it plays its window

	hookMu     sync.Mutex
	wakers     map[int]func() // by registration, so a waker can be removed
	nextWaker  int
	afterReset []func()

	dnsMu sync.Mutex
	dns   map[string][]string
}

// New returns the service over cfg.
func New(cfg Config) *Service {
	return &Service{db: cfg.Store, clock: cfg.Store.Clock, guard: cfg.Guard, sender: cfg.Sender, reload: cfg.Reload,
		snaps: cfg.SnapshotDir, settler: cfg.Settler, wakers: map[int]func(){}}
}

// PlayStepsWith makes advances of the clock play the scenario steps that fall due in their
// window through p (the runner, built over the service).
func (s *Service) PlayStepsWith(p StepPlayer) { s.steps = p }

// OnClockMove registers wake to be called whenever the virtual clock moves (process-wide or an
// institution's); remove unregisters it.
func (s *Service) OnClockMove(wake func()) (remove func()) {
	s.hookMu.Lock()
	defer s.hookMu.Unlock()
	id := s.nextWaker
	s.nextWaker++
	s.wakers[id] = wake
	return func() {
		s.hookMu.Lock()
		delete(s.wakers, id)
		s.hookMu.Unlock()
	}
}

// AfterReset registers f to run after every Reset that succeeded (the server empties its
// request journal).
func (s *Service) AfterReset(f func()) {
	s.hookMu.Lock()
	defer s.hookMu.Unlock()
	s.afterReset = append(s.afterReset, f)
}

// wake tells everything waiting on the virtual clock to look again.
func (s *Service) wake() {
	s.hookMu.Lock()
	ws := slices.Collect(maps.Values(s.wakers))
	s.hookMu.Unlock()
	for _, w := range ws {
		w()
	}
}

// Reset empties the store and loads the fixtures again, then runs the AfterReset hooks. It
// returns the reload's errors (the fixture set's problems, the store's): then no hook runs.
func (s *Service) Reset(ctx context.Context) error {
	if err := s.reload(ctx); err != nil {
		return err
	}
	// The virtual clock never goes back: the store keeps where it stands.
	if err := s.db.SaveClock(ctx); err != nil {
		return err
	}
	s.hookMu.Lock()
	hooks := slices.Clone(s.afterReset)
	s.hookMu.Unlock()
	for _, f := range hooks {
		f()
	}
	return nil
}

// snapshotPath is the file of the snapshot called name in the snapshot folder. Whatever names
// its consumers accept, the service itself keeps every snapshot in its folder: a name that is
// empty, starts with a dot or holds a path separator is EINVALID.
func (s *Service) snapshotPath(name string) (string, error) {
	if name == "" || name[0] == '.' || strings.ContainsAny(name, "/\\\x00") {
		return "", simulator.Errorf(simulator.EINVALID, "snapshot name %q: give a plain name such as before-test (no path separator, no leading dot)", name)
	}
	return filepath.Join(s.snaps, name+".db"), nil
}

// SaveSnapshot copies the store to the snapshot called name. Its errors:
// surface.SandboxOps.SaveSnapshot, their one home.
func (s *Service) SaveSnapshot(ctx context.Context, name string) error {
	path, err := s.snapshotPath(name)
	if err != nil {
		return err
	}
	return s.db.SaveSnapshot(ctx, path)
}

// RestoreSnapshot replaces the store's contents with the snapshot called name. Its errors:
// surface.SandboxOps.RestoreSnapshot, their one home.
func (s *Service) RestoreSnapshot(ctx context.Context, name string) error {
	path, err := s.snapshotPath(name)
	if err != nil {
		return err
	}
	if err := s.db.RestoreSnapshot(ctx, path); err != nil {
		return err
	}
	// The virtual clock never goes back: the store keeps where it stands, not the snapshot's.
	return s.db.SaveClock(ctx)
}
