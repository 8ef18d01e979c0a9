package bolt

import (
	"context"
	"maps"

	"github.com/shopspring/decimal"
	"go.etcd.io/bbolt"

	"github.com/partnersim/partnersim/simulator"
)

// Defaults are what a new institution starts from, and the process-wide model portfolios
// (decisions D9).
type Defaults struct {
	Prices     map[string]decimal.Decimal
	Fees       map[simulator.Product]simulator.FeeRule
	Portfolios []simulator.Portfolio
}

// CreateInstitution creates an isolated tenant with the default prices and fees.
func (s *DB) CreateInstitution(ctx context.Context, name string, v simulator.Vendors) (*simulator.Institution, error) {
	in := &simulator.Institution{ID: s.IDs.New("ins"), Name: name, Vendors: v, CreatedAt: s.Clock.Now(),
		Prices: maps.Clone(s.defaults.Prices), Fees: maps.Clone(s.defaults.Fees)}
	err := s.update(ctx, func(w *writeTx) error { return w.putInstitution(in) })
	return in, err
}

// IssueKey issues a key for an institution, with a description people tell it by; the
// plaintext is returned once and never stored.
func (s *DB) IssueKey(ctx context.Context, instID string, scopes []simulator.Scope, description string) (*simulator.APIKey, string, error) {
	plain := s.IDs.NewKey("sbx")
	k := &simulator.APIKey{ID: s.IDs.New("key"), InstitutionID: instID, Hash: simulator.HashKey(plain), Prefix: simulator.KeyPrefix(plain), Last4: simulator.KeyLast4(plain),
		Scopes: scopes, Description: description, CreatedAt: s.Clock.Now()}
	err := s.update(ctx, func(w *writeTx) error {
		if _, err := getInstitution(w.Tx, instID); err != nil {
			return err
		}
		return w.putKey(k)
	})
	if err != nil {
		return nil, "", err
	}
	return k, plain, nil
}

// RevokeKey revokes a key by id; it answers 401 from then on.
func (s *DB) RevokeKey(ctx context.Context, keyID string) error {
	return s.update(ctx, func(w *writeTx) error {
		hash := w.Bucket(bKeyIDs).Get([]byte(keyID))
		if hash == nil {
			return simulator.Errorf(simulator.ENOTFOUND, "key not found")
		}
		var k simulator.APIKey
		if err := getRecord(w.Tx, bKeys, hash, &k, "key not found"); err != nil {
			return err
		}
		if k.RevokedAt != nil {
			return simulator.Errorf(simulator.ENOTFOUND, "key not found")
		}
		now := s.Clock.Now()
		k.RevokedAt = &now
		return w.putKey(&k)
	})
}

// CreateMember adds a member; a duplicate core id (or dbp id) in the institution is ECONFLICT.
func (s *DB) CreateMember(ctx context.Context, m *simulator.Member) error {
	m.CreatedAt = s.Clock.Now()
	return s.update(ctx, func(w *writeTx) error {
		if _, err := getInstitution(w.Tx, m.InstitutionID); err != nil {
			return err
		}
		if w.Bucket(bMembers).Get(cat(inst(m.InstitutionID), []byte(m.CoreID))) != nil {
			return simulator.Errorf(simulator.ECONFLICT, "a member with core_id %s already exists", m.CoreID)
		}
		if m.DBPID != nil && w.Bucket(bMemberDBP).Get(cat(inst(m.InstitutionID), []byte(*m.DBPID))) != nil {
			return simulator.Errorf(simulator.ECONFLICT, "a member with dbp_id %s already exists", *m.DBPID)
		}
		return w.putMember(m)
	})
}

// CreateUser adds a user; a duplicate user_account_id in the institution is ECONFLICT.
func (s *DB) CreateUser(ctx context.Context, u *simulator.User) error {
	u.PlatformID = s.IDs.New("usr")
	return s.update(ctx, func(w *writeTx) error {
		in, err := getInstitution(w.Tx, u.InstitutionID)
		if err != nil {
			return err
		}
		if w.Bucket(bUserUAID).Get(cat(inst(u.InstitutionID), []byte(u.UserAccountID))) != nil {
			return simulator.Errorf(simulator.ECONFLICT, "a user with user_account_id %s already exists", u.UserAccountID)
		}
		if err := in.CheckPrices(u.Accounts); err != nil {
			return err
		}
		return w.putUser(nil, u)
	})
}

// SetPrices merges prices into the institution's (the domain's rule: each positive).
func (s *DB) SetPrices(ctx context.Context, instID string, prices map[string]decimal.Decimal) (map[string]decimal.Decimal, error) {
	var out map[string]decimal.Decimal
	err := s.update(ctx, func(w *writeTx) error {
		in, err := getInstitution(w.Tx, instID)
		if err != nil {
			return err
		}
		if err := in.SetPrices(prices); err != nil {
			return err
		}
		out = in.Prices
		return w.putInstitution(in)
	})
	return out, err
}

// TransitionKYC moves one account's KYC status through the state machine and emits a kyc
// event for every delivered state (not pending), in one transaction that also reads the
// institution's prices the account's market value is counted at.
func (s *DB) TransitionKYC(ctx context.Context, platformID string, p simulator.Product, to simulator.KYCStatus) (*simulator.KYCMove, error) {
	var move simulator.KYCMove
	err := s.update(ctx, func(w *writeTx) error {
		u, in, err := userOfAnyInstitution(w.Tx, platformID)
		if err != nil {
			return err
		}
		old := u
		old.Accounts = append([]simulator.Account(nil), u.Accounts...)
		if move.Event, err = u.TransitionKYC(s.IDs, p, to, s.Clock.Now()); err != nil {
			return err
		}
		move.Account, move.Prices = *u.Account(p), in.Prices
		if err := w.putUser(&old, &u); err != nil {
			return err
		}
		if move.Event == nil {
			return nil
		}
		return s.emit(w, move.Event)
	})
	if err != nil {
		return nil, err
	}
	return &move, nil
}

// userOfAnyInstitution reads a user by platform id, in any institution (the control plane's
// reach), with the institution whose prices and fees a change to the user applies; the user
// is a copy the caller may change.
func userOfAnyInstitution(tx *bbolt.Tx, platformID string) (simulator.User, *simulator.Institution, error) {
	var u simulator.User
	if err := userRecords.get(tx, "", platformID, &u); err != nil {
		return u, nil, err
	}
	in, err := getInstitution(tx, u.InstitutionID)
	return u, in, err
}

// PlaceOrder places a pending order and its transaction.
func (s *DB) PlaceOrder(ctx context.Context, r simulator.OrderRequest) (*simulator.Transaction, []*simulator.Order, error) {
	var (
		t  *simulator.Transaction
		os []*simulator.Order
	)
	err := s.update(ctx, func(w *writeTx) error {
		u, in, err := userOfAnyInstitution(w.Tx, r.PlatformID)
		if err != nil {
			return err
		}
		if t, os, err = simulator.PlaceOrder(s.IDs, in, &u, r, s.Clock.Now()); err != nil {
			return err
		}
		return w.putTransaction(t, os)
	})
	return t, os, err
}

// PlaceRobo places a robo deposit, withdrawal or rebalance: one pending transaction of one leg
// per symbol of the account's model portfolio (decisions D7).
func (s *DB) PlaceRobo(ctx context.Context, platformID string, typ simulator.TransactionType, amount decimal.Decimal) (*simulator.Transaction, []*simulator.Order, error) {
	var (
		t  *simulator.Transaction
		os []*simulator.Order
	)
	err := s.update(ctx, func(w *writeTx) error {
		u, in, err := userOfAnyInstitution(w.Tx, platformID)
		if err != nil {
			return err
		}
		a, err := u.TradableAccount(simulator.ProductRobo)
		if err != nil {
			return err
		}
		pf, err := s.portfolio(a.Portfolio)
		if err != nil {
			return err
		}
		if t, os, err = simulator.PlaceRobo(s.IDs, in, &u, pf, typ, amount, s.Clock.Now()); err != nil {
			return err
		}
		return w.putTransaction(t, os)
	})
	return t, os, err
}

func (s *DB) portfolio(name string) (simulator.Portfolio, error) {
	for _, p := range s.defaults.Portfolios {
		if p.Name == name || name == "" {
			return p, nil
		}
	}
	return simulator.Portfolio{}, simulator.Errorf(simulator.EINVALID, "unknown model portfolio %q", name)
}

// FillTransaction fills every leg of a pending transaction at the given prices (a symbol
// missing from prices fills at the institution's current price), moves holdings and cash, and
// emits one transaction event — all in one bbolt transaction.
func (s *DB) FillTransaction(ctx context.Context, txnID string, prices map[string]decimal.Decimal) (*simulator.Transaction, []*simulator.Order, *simulator.Event, error) {
	var (
		t  simulator.Transaction
		os []*simulator.Order
		ev *simulator.Event
	)
	err := s.update(ctx, func(w *writeTx) error {
		t, os = simulator.Transaction{}, nil // a rerun starts afresh (DB.update)
		if err := getRecord(w.Tx, bTransactions, []byte(txnID), &t, "transaction not found"); err != nil {
			return err
		}
		u, in, err := userOfAnyInstitution(w.Tx, t.PlatformID)
		if err != nil {
			return err
		}
		old := u
		old.Accounts = append([]simulator.Account(nil), u.Accounts...)
		var olds []simulator.Order
		if olds, os, err = legs(w.Tx, &t); err != nil {
			return err
		}
		if ev, err = simulator.Fill(s.IDs, in, &u, &t, os, prices, s.Clock.Now()); err != nil {
			return err
		}
		if err := w.putLegs(&t, olds, os); err != nil {
			return err
		}
		if err := w.putUser(&old, &u); err != nil {
			return err
		}
		return s.emit(w, ev)
	})
	if err != nil {
		return nil, nil, nil, err
	}
	return &t, os, ev, nil
}

// EndTransaction cancels or fails every leg of a pending transaction. No event (spec §3.2).
func (s *DB) EndTransaction(ctx context.Context, txnID string, to simulator.OrderStatus) (*simulator.Transaction, []*simulator.Order, error) {
	var (
		t  simulator.Transaction
		os []*simulator.Order
	)
	err := s.update(ctx, func(w *writeTx) error {
		t, os = simulator.Transaction{}, nil // a rerun starts afresh (DB.update)
		if err := getRecord(w.Tx, bTransactions, []byte(txnID), &t, "transaction not found"); err != nil {
			return err
		}
		var olds []simulator.Order
		var err error
		if olds, os, err = legs(w.Tx, &t); err != nil {
			return err
		}
		if err := simulator.End(&t, os, to); err != nil {
			return err
		}
		return w.putLegs(&t, olds, os)
	})
	if err != nil {
		return nil, nil, err
	}
	return &t, os, nil
}

// legs reads a transaction's orders for a change: each as stored (olds, whose index entries
// the change replaces) and a copy to change.
func legs(tx *bbolt.Tx, t *simulator.Transaction) (olds []simulator.Order, orders []*simulator.Order, err error) {
	olds = make([]simulator.Order, 0, len(t.OrderIDs))
	for _, id := range t.OrderIDs {
		o, err := getOrder(tx, t.InstitutionID, id)
		if err != nil {
			return nil, nil, err
		}
		olds = append(olds, *o)
		orders = append(orders, o)
	}
	return olds, orders, nil
}

// putLegs saves a changed transaction and its orders (olds as legs read them).
func (w *writeTx) putLegs(t *simulator.Transaction, olds []simulator.Order, orders []*simulator.Order) error {
	for i, o := range orders {
		if err := w.putOrder(&olds[i], o); err != nil {
			return err
		}
	}
	return w.putRecord(bTransactions, []byte(t.ID), t)
}

// TransactionAny returns a transaction of any institution (control plane).
func (s *DB) TransactionAny(ctx context.Context, id string) (*simulator.Transaction, []*simulator.Order, error) {
	var (
		t      *simulator.Transaction
		orders []*simulator.Order
	)
	err := s.view(ctx, func(tx *bbolt.Tx) error {
		var tt simulator.Transaction
		if err := getRecord(tx, bTransactions, []byte(id), &tt, "transaction not found"); err != nil {
			return err
		}
		var err error
		t, orders, err = getTransaction(tx, tt.InstitutionID, id)
		return err
	})
	return t, orders, err
}
