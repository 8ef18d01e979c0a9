package control_test

import (
	"context"
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/partnersim/partnersim/fixtures"
	"github.com/partnersim/partnersim/simulator"
	"github.com/partnersim/partnersim/simulator/bolt"
	"github.com/partnersim/partnersim/simulator/control"
	"github.com/partnersim/partnersim/simulator/netguard"
	"github.com/partnersim/partnersim/simulator/webhook"
)

// start is the frozen instant the tests' clock starts at (deterministic mode, decisions D8).
var start = time.Date(2026, 6, 15, 12, 0, 0, 0, time.UTC)

// rig is the control service over the real pieces, wired as the sandbox wires them: a bbolt
// file in a temp folder given the default set by bolt's Build, the address guard (loopback
// callbacks allowed, as on a loopback-bound sandbox), and the dispatcher as Send Test's sender.
// The dispatcher does not run: deliveries the operations enqueue stay pending for the test to
// read.
type rig struct {
	svc      *control.Service
	db       *bolt.DB
	defaults bolt.Defaults // the store's, from the set's settings
	clock    *simulator.Clock
	guard    *netguard.Guard
	dir      string
}

// newRig opens a rig on the embedded default set.
func newRig(tb testing.TB) *rig { return newRigOn(tb, fixtures.Default()) }

// newRigOn opens a rig on the set in fsys; Reset reads it again.
func newRigOn(tb testing.TB, fsys fs.FS) *rig {
	tb.Helper()
	ctx := context.Background()
	dir := tb.TempDir()
	clock := simulator.NewFrozenClock(start)
	settings, err := fixtures.OpenSettings(fsys)
	require.NoError(tb, err)
	defaults := bolt.DefaultsOf(settings)
	db, err := bolt.Open(filepath.Join(dir, "sandbox.db"), clock, simulator.NewIDs(nil), bolt.Options{Defaults: defaults})
	require.NoError(tb, err)
	tb.Cleanup(func() { assert.NoError(tb, db.Close()) })
	_, err = db.Build(ctx, fsys, nil)
	require.NoError(tb, err)
	guard := netguard.New(netguard.Options{AllowLoopback: true})
	sender := webhook.New(db, webhook.Config{Dial: guard.DialContext, Clock: clock, Timeout: 5 * time.Second})
	svc := control.New(control.Config{Store: db, Guard: guard, Sender: sender, SnapshotDir: filepath.Join(dir, "snapshots"),
		Reload: func(ctx context.Context) error {
			set, err := fixtures.Open(fsys)
			if err != nil {
				return err
			}
			return db.Seed(ctx, set, false)
		}})
	return &rig{svc: svc, db: db, defaults: defaults, clock: clock, guard: guard, dir: dir}
}

// code returns err's application error code ("" for nil).
func code(err error) string { return simulator.ErrorCode(err) }

// errOf is the error of a call that also returns a value the caller does not look at.
func errOf[T any](_ T, err error) error { return err }

// kycOf returns a user's KYC state of product p as stored.
func (r *rig) kycOf(tb testing.TB, platformID string, p simulator.Product) simulator.KYCStatus {
	tb.Helper()
	u, err := r.db.User(context.Background(), platformID)
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
	in, err := r.db.CreateInstitution(ctx, "Reset Test CU", simulator.Vendors{})
	require.NoError(t, err)
	_, err = r.db.TransitionKYC(ctx, "usr_hfcu_0002", simulator.ProductCrypto, simulator.KYCApproved)
	require.NoError(t, err)
	var ran []string
	r.svc.AfterReset(func() {
		_, err := r.db.Institution(ctx, in.ID)
		assert.Equal(t, simulator.ENOTFOUND, code(err), "the hook runs after the reload")
		ran = append(ran, "journal")
	})
	r.svc.AfterReset(func() { ran = append(ran, "second") })

	require.NoError(t, r.svc.Reset(ctx))

	_, err = r.db.Institution(ctx, in.ID)
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
	in, err := r.db.CreateInstitution(ctx, "Kept CU", simulator.Vendors{})
	require.NoError(t, err)
	ran := 0
	r.svc.AfterReset(func() { ran++ })
	require.NoError(t, os.WriteFile(filepath.Join(dir, fixtures.FilePrices), []byte(`{"AAPL":"-1"}`), 0o600))

	err = r.svc.Reset(ctx)

	require.Error(t, err)
	assert.NotNil(t, fixtures.Problems(err), "the set's problems, as Open reports them: %v", err)
	assert.Zero(t, ran, "no hook runs after a failed reset")
	_, err = r.db.Institution(ctx, in.ID)
	assert.NoError(t, err, "the store keeps what it held")
}

// A snapshot saved, then restored, brings the store back to the moment it was saved; a
// snapshot never saved is ENOTFOUND.
func TestSnapshotSaveAndRestore(t *testing.T) {
	ctx := context.Background()
	r := newRig(t)
	require.NoError(t, r.svc.SaveSnapshot(ctx, "before"))
	assert.FileExists(t, filepath.Join(r.dir, "snapshots", "before.db"))
	_, err := r.db.TransitionKYC(ctx, "usr_hfcu_0002", simulator.ProductCrypto, simulator.KYCApproved)
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

// codeValues are the error codes by the names the comments use.
var codeValues = map[string]string{"ENOTFOUND": simulator.ENOTFOUND, "ECONFLICT": simulator.ECONFLICT,
	"EINVALID": simulator.EINVALID, "EUNAUTHORIZED": simulator.EUNAUTHORIZED, "EFORBIDDEN": simulator.EFORBIDDEN}

// contracts reads the error codes each method of the control plane's interfaces names in its
// comment, in the one home of those contracts: the interfaces by concern both front ends call
// (simulator/httpapi/surface/ops.go). The service's own methods point there.
func contracts(tb testing.TB) map[string][]string {
	tb.Helper()
	f, err := parser.ParseFile(token.NewFileSet(), "../httpapi/surface/ops.go", nil, parser.ParseComments)
	require.NoError(tb, err)
	codes := regexp.MustCompile(`\bE[A-Z]+\b`)
	out := map[string][]string{}
	ast.Inspect(f, func(n ast.Node) bool {
		ts, ok := n.(*ast.TypeSpec)
		if !ok {
			return true
		}
		it, ok := ts.Type.(*ast.InterfaceType)
		if !ok || ts.Name.Name == "Scenarios" { // the runner serves Scenarios; its tests hold them
			return false
		}
		for _, m := range it.Methods.List {
			if len(m.Names) == 1 && m.Doc != nil {
				var named []string
				for _, c := range codes.FindAllString(m.Doc.Text(), -1) {
					v, ok := codeValues[c]
					require.True(tb, ok, "%s's comment names %s, which is no error code", m.Names[0].Name, c)
					named = append(named, v)
				}
				slices.Sort(named)
				out[m.Names[0].Name] = slices.Compact(named)
			}
		}
		return false
	})
	require.NotEmpty(tb, out["TransitionKYC"], "found no contract for TransitionKYC in surface/ops.go")
	return out
}

// Every error an operation returns is named in its one comment, and every error a comment
// names is one the operation returns: each row provokes one (method, code) on the real pieces.
func TestEveryErrorIsNamedInItsOneComment(t *testing.T) {
	ctx := context.Background()
	r := newRig(t)
	one := dec("1")
	order := func(user string, p simulator.Product, symbol string) error {
		_, _, err := r.db.PlaceOrder(ctx, simulator.OrderRequest{PlatformID: user, Product: p, Side: simulator.SideBuy, Symbol: symbol, Quantity: &one})
		return err
	}
	robo := func(user, amount string) error {
		_, _, err := r.db.PlaceRobo(ctx, user, simulator.TxnDeposit, dec(amount))
		return err
	}
	kyc := func(user string, to simulator.KYCStatus) error {
		_, err := r.db.TransitionKYC(ctx, user, simulator.ProductCrypto, to)
		return err
	}
	fill := func(qty, price string) error {
		txn := r.placeAAPL(t, simulator.SideBuy, qty)
		_, _, _, err := r.db.FillTransaction(ctx, txn.ID, aapl(price))
		return err
	}
	filled := r.placeAAPL(t, simulator.SideBuy, "1")
	_, _, _, err := r.db.FillTransaction(ctx, filled.ID, nil)
	require.NoError(t, err)
	prices := func(inst, price string) error {
		_, err := r.db.SetPrices(ctx, inst, aapl(price))
		return err
	}
	newUser := func(inst, uaid, symbol string) *simulator.User {
		req := simulator.UserRequest{UserAccountID: uaid, Accounts: []simulator.AccountRequest{{Product: simulator.ProductSecurities,
			KYCStatus: simulator.KYCApproved, Cash: dec("10.00"), Holdings: []simulator.Holding{{Symbol: symbol, Quantity: dec("1")}}}}}
		return simulator.NewUser(inst, req, r.clock.Now())
	}
	require.NoError(t, r.db.CreateUser(ctx, newUser("ins_harbor", "NEW-0001", "AAPL")))
	rows := []struct {
		method, code string
		provoke      func() error
	}{
		{"CreateMember", simulator.ENOTFOUND, func() error {
			return r.db.CreateMember(ctx, &simulator.Member{InstitutionID: "ins_nobody", CoreID: "900003", CoreIDType: simulator.CoreIDMemberNumber})
		}},
		{"CreateMember", simulator.ECONFLICT, func() error {
			return r.db.CreateMember(ctx, &simulator.Member{InstitutionID: "ins_harbor", CoreID: "100231", CoreIDType: simulator.CoreIDMemberNumber})
		}},
		{"CreateUser", simulator.ENOTFOUND, func() error { return r.db.CreateUser(ctx, newUser("ins_nobody", "NEW-0002", "AAPL")) }},
		{"CreateUser", simulator.ECONFLICT, func() error { return r.db.CreateUser(ctx, newUser("ins_harbor", "NEW-0001", "AAPL")) }},
		{"CreateUser", simulator.EINVALID, func() error { return r.db.CreateUser(ctx, newUser("ins_harbor", "NEW-0003", "ZZZZ")) }},
		{"DeleteInstitution", simulator.ENOTFOUND, func() error { return r.db.DeleteInstitution(ctx, "ins_nobody") }},
		{"IssueKey", simulator.ENOTFOUND, func() error { _, _, err := r.db.IssueKey(ctx, "ins_nobody", nil, ""); return err }},
		{"RevokeKey", simulator.ENOTFOUND, func() error { return r.db.RevokeKey(ctx, "key_nobody") }},
		{"SetPrices", simulator.ENOTFOUND, func() error { return prices("ins_nobody", "1.00") }},
		{"SetPrices", simulator.EINVALID, func() error { return prices("ins_harbor", "0") }},
		{"RotateSecret", simulator.ENOTFOUND, func() error { _, err := r.db.RotateSecret(ctx, "ins_nobody", 0); return err }},
		{"Institution", simulator.ENOTFOUND, func() error { _, err := r.db.Institution(ctx, "ins_nobody"); return err }},
		{"User", simulator.ENOTFOUND, func() error { _, err := r.db.User(ctx, "usr_nobody"); return err }},
		{"ListUsers", simulator.ENOTFOUND, func() error {
			_, err := r.db.ListUsers(ctx, "ins_nobody", simulator.UserFilter{Limit: 1})
			return err
		}},
		{"ListOrders", simulator.ENOTFOUND, func() error {
			_, err := r.db.ListOrders(ctx, "ins_nobody", simulator.OrderFilter{Limit: 1})
			return err
		}},
		{"Keys", simulator.ENOTFOUND, func() error { _, err := r.db.Keys(ctx, "ins_nobody"); return err }},
		{"Subscriptions", simulator.ENOTFOUND, func() error {
			_, err := r.db.Subscriptions(ctx, "ins_nobody")
			return err
		}},
		{"TransitionKYC", simulator.ENOTFOUND, func() error { return kyc("usr_nobody", simulator.KYCApproved) }},
		{"TransitionKYC", simulator.ECONFLICT, func() error { return kyc("usr_hfcu_0012", simulator.KYCApproved) }},
		{"TransitionKYC", simulator.EINVALID, func() error { return kyc("usr_hfcu_0002", "frozen") }},
		{"PlaceOrder", simulator.ENOTFOUND, func() error { return order("usr_nobody", simulator.ProductSecurities, "AAPL") }},
		{"PlaceOrder", simulator.ECONFLICT, func() error { return order("usr_hfcu_0002", simulator.ProductSecurities, "AAPL") }},
		{"PlaceOrder", simulator.EINVALID, func() error { return order("usr_hfcu_0001", simulator.ProductSecurities, "ZZZZ") }},
		{"PlaceRobo", simulator.ENOTFOUND, func() error { return robo("usr_nobody", "100") }},
		{"PlaceRobo", simulator.ECONFLICT, func() error { return robo("usr_hfcu_0009", "100") }},
		{"PlaceRobo", simulator.EINVALID, func() error { return robo("usr_hfcu_0001", "0") }},
		{"FillTransaction", simulator.ENOTFOUND, func() error { _, _, _, err := r.db.FillTransaction(ctx, "txn_nobody", nil); return err }},
		{"FillTransaction", simulator.ECONFLICT, func() error { return fill("1000", "190.00") }},
		{"FillTransaction", simulator.EINVALID, func() error { return fill("1", "0") }},
		{"EndTransaction", simulator.ENOTFOUND, func() error {
			_, _, err := r.db.EndTransaction(ctx, "txn_nobody", simulator.OrderCanceled)
			return err
		}},
		{"EndTransaction", simulator.ECONFLICT, func() error { _, _, err := r.db.EndTransaction(ctx, filled.ID, simulator.OrderCanceled); return err }},
		{"TransactionAny", simulator.ENOTFOUND, func() error { _, _, err := r.db.TransactionAny(ctx, "txn_nobody"); return err }},
		{"Deliveries", simulator.EINVALID, func() error {
			_, err := r.db.Deliveries(ctx, simulator.DeliveryFilter{Cursor: "not-a-cursor", Limit: 1})
			return err
		}},
		{"Redeliver", simulator.ENOTFOUND, func() error { _, err := r.db.Redeliver(ctx, "evt_nobody"); return err }},
		{"RedeliverDelivery", simulator.ENOTFOUND, func() error { _, err := r.db.RedeliverDelivery(ctx, "dlv_nobody"); return err }},
		{"AdvanceClock", simulator.EINVALID, func() error { _, err := r.svc.AdvanceClock(ctx, "", -time.Nanosecond); return err }},
		{"AdvanceClock", simulator.ENOTFOUND, func() error { _, err := r.svc.AdvanceClock(ctx, "ins_nobody", time.Hour); return err }},
		{"SetDNS", simulator.EINVALID, func() error {
			_, err := r.svc.SetDNS(ctx, map[string][]string{"bad host": {"203.0.113.1"}})
			return err
		}},
		{"SaveSnapshot", simulator.EINVALID, func() error { return r.svc.SaveSnapshot(ctx, "../out") }},
		{"RestoreSnapshot", simulator.EINVALID, func() error { return r.svc.RestoreSnapshot(ctx, "../out") }},
		{"RestoreSnapshot", simulator.ENOTFOUND, func() error { return r.svc.RestoreSnapshot(ctx, "never-saved") }},
	}
	named := contracts(t)
	provoked := map[string][]string{}
	for _, tc := range rows {
		provoked[tc.method] = append(provoked[tc.method], tc.code)
		t.Run(tc.method+" "+tc.code, func(t *testing.T) {
			err := tc.provoke()
			require.Equal(t, tc.code, code(err), "the provocation: %v", err)
			assert.Contains(t, named[tc.method], tc.code, "%s returns %s, which its comment in surface/ops.go does not name", tc.method, tc.code)
		})
	}
	for method, codes := range named {
		for _, c := range codes {
			assert.Contains(t, provoked[method], c, "%s's comment names %s: provoke it here, or drop it from the comment", method, c)
		}
	}
}
