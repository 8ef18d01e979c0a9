package control

import (
	"context"
	"maps"
	"path/filepath"
	"slices"
	"strings"
	"sync"

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
		snaps: cfg.SnapshotDir, wakers: map[int]func(){}}
}

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
	return s.db.RestoreSnapshot(ctx, path)
}
