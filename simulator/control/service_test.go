package control_test

import (
	"context"
	"io/fs"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/partnersim/partnersim/fixtures"
	"github.com/partnersim/partnersim/simulator"
	"github.com/partnersim/partnersim/simulator/bolt"
	"github.com/partnersim/partnersim/simulator/control"
	"github.com/partnersim/partnersim/simulator/netguard"
	"github.com/partnersim/partnersim/simulator/sandbox"
	"github.com/partnersim/partnersim/simulator/webhook"
)

// start is the frozen instant the tests' clock starts at (deterministic mode, decisions D8).
var start = time.Date(2026, 6, 15, 12, 0, 0, 0, time.UTC)

// rig is the control service over the real pieces, wired as the sandbox wires them: a bbolt
// file in a temp folder given the default set by sandbox.Build, the address guard (loopback
// callbacks allowed, as on a loopback-bound sandbox), and the dispatcher as Send Test's sender.
// The dispatcher does not run: deliveries the operations enqueue stay pending for the test to
// read.
type rig struct {
	svc   *control.Service
	db    *bolt.DB
	clock *simulator.Clock
	guard *netguard.Guard
	dir   string
}

// newRig opens a rig on the embedded default set.
func newRig(tb testing.TB) *rig { return newRigOn(tb, fixtures.Default()) }

// newRigOn opens a rig on the set in fsys; Reset reads it again.
func newRigOn(tb testing.TB, fsys fs.FS) *rig {
	tb.Helper()
	ctx := context.Background()
	dir := tb.TempDir()
	clock := simulator.NewFrozenClock(start)
	db, err := bolt.Open(filepath.Join(dir, "sandbox.db"), clock, simulator.NewIDs(nil))
	require.NoError(tb, err)
	tb.Cleanup(func() { assert.NoError(tb, db.Close()) })
	set, err := sandbox.Build(ctx, db, fsys, nil)
	require.NoError(tb, err)
	db.Defaults = bolt.Defaults{Prices: set.DefaultPrices, Fees: set.DefaultFees, Portfolios: set.Portfolios}
	guard := netguard.New(netguard.Options{AllowLoopback: true})
	sender := webhook.New(db, webhook.Config{Dial: guard.DialContext, Clock: clock, Timeout: 5 * time.Second})
	svc := control.New(control.Config{Store: db, Guard: guard, Sender: sender, SnapshotDir: filepath.Join(dir, "snapshots"),
		Reload: func(ctx context.Context) error {
			set, err := fixtures.Open(fsys)
			if err != nil {
				return err
			}
			return sandbox.Seed(ctx, db, set, false)
		}})
	return &rig{svc: svc, db: db, clock: clock, guard: guard, dir: dir}
}

// code returns err's application error code ("" for nil).
func code(err error) string { return simulator.ErrorCode(err) }

// kycOf returns a user's KYC state of product p as stored.
func (r *rig) kycOf(tb testing.TB, platformID string, p simulator.Product) simulator.KYCStatus {
	tb.Helper()
	u, err := r.svc.User(context.Background(), platformID)
	require.NoError(tb, err)
	a := u.Account(p)
	require.NotNil(tb, a, "%s has no %s account", platformID, p)
	return a.KYCStatus
}

// copyDefaultSet copies the embedded default set into a folder a test may change.
func copyDefaultSet(tb testing.TB) (string, fs.FS) {
	tb.Helper()
	dir := tb.TempDir()
	require.NoError(tb, fs.WalkDir(fixtures.Default(), ".", func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		b, err := fs.ReadFile(fixtures.Default(), p)
		if err != nil {
			return err
		}
		require.NoError(tb, os.MkdirAll(filepath.Join(dir, filepath.Dir(p)), 0o700))
		return os.WriteFile(filepath.Join(dir, p), b, 0o600)
	}))
	return dir, os.DirFS(dir)
}

// Reset empties the store and loads the set again: what an operation changed is gone, and the
// AfterReset hooks run once each, after the reload.
func TestResetReloadsTheSetThenRunsItsHooks(t *testing.T) {
	ctx := context.Background()
	r := newRig(t)
	in, err := r.svc.CreateInstitution(ctx, "Reset Test CU", simulator.Vendors{})
	require.NoError(t, err)
	_, err = r.svc.TransitionKYC(ctx, "usr_hfcu_0002", simulator.ProductCrypto, simulator.KYCApproved)
	require.NoError(t, err)
	var ran []string
	r.svc.AfterReset(func() {
		_, err := r.db.Institution(ctx, in.ID)
		assert.Equal(t, simulator.ENOTFOUND, code(err), "the hook runs after the reload")
		ran = append(ran, "journal")
	})
	r.svc.AfterReset(func() { ran = append(ran, "second") })

	require.NoError(t, r.svc.Reset(ctx))

	_, err = r.svc.Institution(ctx, in.ID)
	assert.Equal(t, simulator.ENOTFOUND, code(err), "an institution created before the reset")
	assert.Equal(t, simulator.KYCPending, r.kycOf(t, "usr_hfcu_0002", simulator.ProductCrypto), "a KYC move made before the reset")
	assert.Equal(t, []string{"journal", "second"}, ran)
}

// A reset whose reload fails returns the error, runs no hook and leaves the store as it was
// (the set is checked before the store is emptied).
func TestResetThatFailsRunsNoHookAndKeepsTheStore(t *testing.T) {
	ctx := context.Background()
	dir, fsys := copyDefaultSet(t)
	r := newRigOn(t, fsys)
	in, err := r.svc.CreateInstitution(ctx, "Kept CU", simulator.Vendors{})
	require.NoError(t, err)
	ran := 0
	r.svc.AfterReset(func() { ran++ })
	require.NoError(t, os.WriteFile(filepath.Join(dir, fixtures.FilePrices), []byte(`{"AAPL":"-1"}`), 0o600))

	err = r.svc.Reset(ctx)

	require.Error(t, err)
	assert.NotNil(t, fixtures.Problems(err), "the set's problems, as Open reports them: %v", err)
	assert.Zero(t, ran, "no hook runs after a failed reset")
	_, err = r.svc.Institution(ctx, in.ID)
	assert.NoError(t, err, "the store keeps what it held")
}

// A snapshot saved, then restored, brings the store back to the moment it was saved; a
// snapshot never saved is ENOTFOUND.
func TestSnapshotSaveAndRestore(t *testing.T) {
	ctx := context.Background()
	r := newRig(t)
	require.NoError(t, r.svc.SaveSnapshot(ctx, "before"))
	assert.FileExists(t, filepath.Join(r.dir, "snapshots", "before.db"))
	_, err := r.svc.TransitionKYC(ctx, "usr_hfcu_0002", simulator.ProductCrypto, simulator.KYCApproved)
	require.NoError(t, err)

	require.NoError(t, r.svc.RestoreSnapshot(ctx, "before"))
	assert.Equal(t, simulator.KYCPending, r.kycOf(t, "usr_hfcu_0002", simulator.ProductCrypto))

	err = r.svc.RestoreSnapshot(ctx, "never-saved")
	assert.Equal(t, simulator.ENOTFOUND, code(err), "%v", err)
}

// A snapshot's name names a file in the snapshot folder and nothing else: a name that would
// lead outside it, or to no file, is EINVALID for both save and restore, and nothing is
// written.
func TestSnapshotNamesStayInTheirFolder(t *testing.T) {
	ctx := context.Background()
	r := newRig(t)
	require.NoError(t, r.svc.SaveSnapshot(ctx, "kept"))
	for _, name := range []string{"", ".", "..", "../escape", "a/b", `a\b`, "/abs"} {
		t.Run(name, func(t *testing.T) {
			assert.Equal(t, simulator.EINVALID, code(r.svc.SaveSnapshot(ctx, name)), "save %q", name)
			assert.Equal(t, simulator.EINVALID, code(r.svc.RestoreSnapshot(ctx, name)), "restore %q", name)
		})
	}
	assert.NoFileExists(t, filepath.Join(r.dir, "escape.db"))
	entries, err := os.ReadDir(filepath.Join(r.dir, "snapshots"))
	require.NoError(t, err)
	require.Len(t, entries, 1)
	assert.Equal(t, "kept.db", entries[0].Name())
}

// OnClockMove's wakers are called on every move of the virtual clock, process-wide or an
// institution's, and no longer once removed.
func TestOnClockMoveWakesUntilRemoved(t *testing.T) {
	ctx := context.Background()
	r := newRig(t)
	woken := 0
	remove := r.svc.OnClockMove(func() { woken++ })
	other := 0
	r.svc.OnClockMove(func() { other++ })

	_, err := r.svc.AdvanceClock(ctx, "", time.Minute)
	require.NoError(t, err)
	_, err = r.svc.AdvanceClock(ctx, "ins_harbor", time.Minute)
	require.NoError(t, err)
	assert.Equal(t, 2, woken)

	remove()
	_, err = r.svc.AdvanceClock(ctx, "", time.Minute)
	require.NoError(t, err)
	assert.Equal(t, 2, woken, "a removed waker is not called")
	assert.Equal(t, 3, other, "the others still are")
}
