package control_test

import (
	"context"
	"testing"
	"time"

	"github.com/shopspring/decimal"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/partnersim/partnersim/simulator"
)

// A new institution starts from the set's default prices and fees, holds no user, and is
// deleted with its own virtual clock; deleting it again, or reading it, is ENOTFOUND.
func TestCreateAndDeleteInstitution(t *testing.T) {
	ctx := context.Background()
	r := newRig(t)
	core := "symitar"

	in, err := r.db.CreateInstitution(ctx, "Tenant CU", simulator.Vendors{Core: &core})
	require.NoError(t, err)

	got, err := r.db.Institution(ctx, in.ID)
	require.NoError(t, err)
	assert.Equal(t, "Tenant CU", got.Name)
	assert.Equal(t, &core, got.Vendors.Core)
	assertPrices(t, r.defaults.Prices, got.Prices)
	require.Len(t, got.Fees, len(r.defaults.Fees))
	for p, rule := range r.defaults.Fees {
		assert.True(t, rule.Rate.Equal(got.Fees[p].Rate) && rule.Minimum.Equal(got.Fees[p].Minimum), "%s: want %v, got %v", p, rule, got.Fees[p])
	}
	all, users, err := r.db.Institutions(ctx)
	require.NoError(t, err)
	require.Len(t, all, 3)
	for i, x := range all {
		if x.ID == in.ID {
			assert.Zero(t, users[i])
		}
	}

	_, err = r.svc.AdvanceClock(ctx, in.ID, time.Hour)
	require.NoError(t, err)
	require.NoError(t, r.db.DeleteInstitution(ctx, in.ID))
	assert.Zero(t, r.clock.Offset(in.ID), "its virtual clock goes with it")
	_, err = r.db.Institution(ctx, in.ID)
	assert.Equal(t, simulator.ENOTFOUND, code(err), "%v", err)
	assert.Equal(t, simulator.ENOTFOUND, code(r.db.DeleteInstitution(ctx, in.ID)))
}

// A key is issued with its plaintext once and authenticates until revoked; revoking it again,
// or an unknown key, is ENOTFOUND, as is issuing one for an unknown institution.
func TestIssueAndRevokeKey(t *testing.T) {
	ctx := context.Background()
	r := newRig(t)

	k, plain, err := r.db.IssueKey(ctx, "ins_prairie", []simulator.Scope{simulator.ScopeReadUser}, "ci runner")
	require.NoError(t, err)
	assert.Equal(t, simulator.HashKey(plain), k.Hash)
	authed, err := r.db.Authenticate(ctx, plain)
	require.NoError(t, err)
	assert.Equal(t, k.ID, authed.ID)
	keys, err := r.db.Keys(ctx, "ins_prairie")
	require.NoError(t, err)
	assert.Contains(t, keyIDs(keys), k.ID)

	require.NoError(t, r.db.RevokeKey(ctx, k.ID))
	_, err = r.db.Authenticate(ctx, plain)
	assert.Equal(t, simulator.EUNAUTHORIZED, code(err), "a revoked key answers 401: %v", err)
	assert.Equal(t, simulator.ENOTFOUND, code(r.db.RevokeKey(ctx, k.ID)), "revoked twice")
	assert.Equal(t, simulator.ENOTFOUND, code(r.db.RevokeKey(ctx, "key_nobody")))
	_, _, err = r.db.IssueKey(ctx, "ins_nobody", []simulator.Scope{simulator.ScopeReadUser}, "")
	assert.Equal(t, simulator.ENOTFOUND, code(err), "%v", err)
}

func keyIDs(keys []*simulator.APIKey) []string {
	var out []string
	for _, k := range keys {
		out = append(out, k.ID)
	}
	return out
}

// A member is added once per core id and per dbp id in its institution.
func TestCreateMember(t *testing.T) {
	ctx := context.Background()
	r := newRig(t)
	dbp := "q2-new-0001"
	require.NoError(t, r.db.CreateMember(ctx, &simulator.Member{InstitutionID: "ins_harbor", CoreID: "900001",
		CoreIDType: simulator.CoreIDMemberNumber, DBPID: &dbp, UserIDs: []string{"usr_hfcu_0003"}}))

	taken := "q2-7f3a9c01" // the default set's first member's
	for _, tc := range []struct {
		name string
		m    simulator.Member
		code string
	}{
		{"a taken core id", simulator.Member{InstitutionID: "ins_harbor", CoreID: "100231", CoreIDType: simulator.CoreIDMemberNumber}, simulator.ECONFLICT},
		{"a taken dbp id", simulator.Member{InstitutionID: "ins_harbor", CoreID: "900002", CoreIDType: simulator.CoreIDMemberNumber, DBPID: &taken}, simulator.ECONFLICT},
		{"an unknown institution", simulator.Member{InstitutionID: "ins_nobody", CoreID: "900003", CoreIDType: simulator.CoreIDMemberNumber}, simulator.ENOTFOUND},
	} {
		t.Run(tc.name, func(t *testing.T) {
			m := tc.m
			assert.Equal(t, tc.code, code(r.db.CreateMember(ctx, &m)))
		})
	}
	// The same core id in another institution is another member.
	assert.NoError(t, r.db.CreateMember(ctx, &simulator.Member{InstitutionID: "ins_prairie", CoreID: "100231", CoreIDType: simulator.CoreIDMemberNumber}))
}

// A user is added with a platform id of its own; a taken user_account_id, an unknown
// institution and a holding of a symbol without a price are refused.
func TestCreateUser(t *testing.T) {
	ctx := context.Background()
	r := newRig(t)
	newUser := func(inst, uaid, symbol string) *simulator.User {
		req := simulator.UserRequest{UserAccountID: uaid, Accounts: []simulator.AccountRequest{{Product: simulator.ProductSecurities,
			KYCStatus: simulator.KYCApproved, Cash: dec("10.00"), Holdings: []simulator.Holding{{Symbol: symbol, Quantity: dec("1")}}}}}
		return simulator.NewUser(inst, req, r.clock.Now())
	}

	u := newUser("ins_harbor", "NEW-0001", "AAPL")
	require.NoError(t, r.db.CreateUser(ctx, u))
	assert.Regexp(t, `^usr_`, u.PlatformID)
	got, err := r.db.User(ctx, u.PlatformID)
	require.NoError(t, err)
	assert.Equal(t, "NEW-0001", got.UserAccountID)

	assert.Equal(t, simulator.ECONFLICT, code(r.db.CreateUser(ctx, newUser("ins_harbor", "NEW-0001", "AAPL"))), "a taken user_account_id")
	assert.Equal(t, simulator.ENOTFOUND, code(r.db.CreateUser(ctx, newUser("ins_nobody", "NEW-0002", "AAPL"))), "an unknown institution")
	assert.Equal(t, simulator.EINVALID, code(r.db.CreateUser(ctx, newUser("ins_harbor", "NEW-0003", "ZZZZ"))), "a holding without a price")
	page, err := r.db.ListUsers(ctx, "ins_harbor", simulator.UserFilter{Limit: 100})
	require.NoError(t, err)
	assert.Equal(t, 31, page.Total, "the default set's 30 users and the one added")
}

// SetPrices merges the given prices into the institution's and returns them all; one price
// that is not positive refuses the whole call.
func TestSetPrices(t *testing.T) {
	ctx := context.Background()
	r := newRig(t)
	before, err := r.db.Institution(ctx, "ins_harbor")
	require.NoError(t, err)

	got, err := r.db.SetPrices(ctx, "ins_harbor", map[string]decimal.Decimal{"AAPL": dec("199.99"), "NEWCO": dec("12.50")})
	require.NoError(t, err)

	assert.True(t, dec("199.99").Equal(got["AAPL"]))
	assert.True(t, dec("12.50").Equal(got["NEWCO"]))
	assert.True(t, before.Prices["MSFT"].Equal(got["MSFT"]), "a price not given is kept")
	assert.Len(t, got, len(before.Prices)+1)
	stored, err := r.db.Institution(ctx, "ins_harbor")
	require.NoError(t, err)
	assertPrices(t, got, stored.Prices)

	for _, bad := range []string{"0", "-1.00"} {
		_, err = r.db.SetPrices(ctx, "ins_harbor", map[string]decimal.Decimal{"MSFT": dec("500.00"), "AAPL": dec(bad)})
		assert.Equal(t, simulator.EINVALID, code(err), "%s: %v", bad, err)
	}
	stored, err = r.db.Institution(ctx, "ins_harbor")
	require.NoError(t, err)
	assertPrices(t, got, stored.Prices, "a refused call changes no price, not even its good ones")
	_, err = r.db.SetPrices(ctx, "ins_nobody", map[string]decimal.Decimal{"AAPL": dec("1")})
	assert.Equal(t, simulator.ENOTFOUND, code(err), "%v", err)
}

// assertPrices asserts two price lists hold the same symbols at equal prices (a stored
// decimal keeps its value, not its trailing zeros).
func assertPrices(tb testing.TB, want, got map[string]decimal.Decimal, msg ...any) {
	tb.Helper()
	assert.Len(tb, got, len(want), msg...)
	for sym, p := range want {
		assert.True(tb, p.Equal(got[sym]), "%s: want %s, got %s %v", sym, p, got[sym], msg)
	}
}

// A rotated secret signs at once, and the previous one beside it until the overlap ends on
// the institution's virtual clock.
func TestRotateSecret(t *testing.T) {
	ctx := context.Background()
	r := newRig(t)
	r.subscribe(t, "ins_harbor", simulator.EventKYC, "https://hooks.partner.example/kyc")
	old, err := r.db.SigningSecrets(ctx, "ins_harbor")
	require.NoError(t, err)

	secret, err := r.db.RotateSecret(ctx, "ins_harbor", time.Hour)
	require.NoError(t, err)

	sec, err := r.db.SigningSecrets(ctx, "ins_harbor")
	require.NoError(t, err)
	assert.Equal(t, []string{secret, old.Current}, sec.Active(r.clock, "ins_harbor"))
	_, err = r.svc.AdvanceClock(ctx, "ins_harbor", time.Hour)
	require.NoError(t, err)
	assert.Equal(t, []string{secret}, sec.Active(r.clock, "ins_harbor"), "the overlap is over")
	_, err = r.db.RotateSecret(ctx, "ins_nobody", time.Hour)
	assert.Equal(t, simulator.ENOTFOUND, code(err), "%v", err)
}
