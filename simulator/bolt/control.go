package bolt

import (
	"context"
	"fmt"
	"maps"

	"github.com/shopspring/decimal"
	"go.etcd.io/bbolt"

	"partnersim/simulator"
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
		Prices: maps.Clone(s.Defaults.Prices), Fees: maps.Clone(s.Defaults.Fees)}
	err := s.update(ctx, func(w *writeTx) error { return w.putInstitution(in) })
	return in, err
}

// IssueKey issues a key for an institution; the plaintext is returned once and never stored.
func (s *DB) IssueKey(ctx context.Context, instID string, scopes []simulator.Scope) (*simulator.APIKey, string, error) {
	plain := s.IDs.NewKey("sbx")
	k := &simulator.APIKey{ID: s.IDs.New("key"), InstitutionID: instID, Hash: simulator.HashKey(plain), Prefix: simulator.KeyPrefix(plain),
		Scopes: scopes, CreatedAt: s.Clock.Now()}
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
		if err := getJSON(w.Tx, bKeys, hash, &k, "key not found"); err != nil {
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
		for _, a := range u.Accounts {
			for _, h := range a.Holdings {
				if _, ok := in.Prices[h.Symbol]; !ok {
					return simulator.Errorf(simulator.EINVALID, "no price for symbol %s: set it with PUT /_sandbox/institutions/%s/prices", h.Symbol, in.ID)
				}
			}
		}
		return w.putUser(nil, u)
	})
}

// SetPrices merges prices into the institution's.
func (s *DB) SetPrices(ctx context.Context, instID string, prices map[string]decimal.Decimal) (map[string]decimal.Decimal, error) {
	var out map[string]decimal.Decimal
	err := s.update(ctx, func(w *writeTx) error {
		in, err := getInstitution(w.Tx, instID)
		if err != nil {
			return err
		}
		if in.Prices == nil {
			in.Prices = map[string]decimal.Decimal{}
		}
		maps.Copy(in.Prices, prices)
		out = in.Prices
		return w.putInstitution(in)
	})
	return out, err
}

// TransitionKYC moves one account's KYC status through the state machine and emits a kyc
// event for every delivered state (not pending), in the same transaction.
func (s *DB) TransitionKYC(ctx context.Context, platformID string, p simulator.Product, to simulator.KYCStatus) (*simulator.Account, *simulator.Event, error) {
	var (
		acct simulator.Account
		ev   *simulator.Event
	)
	err := s.update(ctx, func(w *writeTx) error {
		var u simulator.User
		if err := getJSON(w.Tx, bUsers, []byte(platformID), &u, "user not found"); err != nil {
			return err
		}
		old := u
		old.Accounts = append([]simulator.Account(nil), u.Accounts...)
		a := u.Account(p)
		if a == nil {
			return simulator.Errorf(simulator.ENOTFOUND, "user %s has no %s account", platformID, p)
		}
		now := s.Clock.Now()
		if err := a.TransitionKYC(to, now); err != nil {
			return err
		}
		acct = *a
		if err := w.putUser(&old, &u); err != nil {
			return err
		}
		if simulator.KYCDelivered(to) {
			ev = &simulator.Event{ID: s.IDs.New("evt"), InstitutionID: u.InstitutionID, Type: simulator.EventKYC, CreatedAt: now,
				Data: simulator.EventData{UserAccountID: u.UserAccountID, PlatformID: u.PlatformID, Product: p, KYCStatus: to}}
			return s.emit(w, ev)
		}
		return nil
	})
	if err != nil {
		return nil, nil, err
	}
	return &acct, ev, nil
}

// tradableAccount returns the user's account of p, which must be approved to trade.
func tradableAccount(u *simulator.User, p simulator.Product) (*simulator.Account, error) {
	a := u.Account(p)
	if a == nil {
		return nil, simulator.Errorf(simulator.ENOTFOUND, "user %s has no %s account", u.PlatformID, p)
	}
	if a.KYCStatus != simulator.KYCApproved {
		return nil, simulator.Errorf(simulator.ECONFLICT, "the %s account is %s: only an approved account can trade", p, a.KYCStatus)
	}
	return a, nil
}

// PlaceOrder places a pending order and its transaction.
func (s *DB) PlaceOrder(ctx context.Context, r simulator.OrderRequest) (*simulator.Transaction, []*simulator.Order, error) {
	var (
		t  *simulator.Transaction
		os []*simulator.Order
	)
	err := s.update(ctx, func(w *writeTx) error {
		var u simulator.User
		if err := getJSON(w.Tx, bUsers, []byte(r.PlatformID), &u, "user not found"); err != nil {
			return err
		}
		in, err := getInstitution(w.Tx, u.InstitutionID)
		if err != nil {
			return err
		}
		if _, err := tradableAccount(&u, r.Product); err != nil {
			return err
		}
		if _, ok := in.Prices[r.Symbol]; !ok {
			return simulator.Errorf(simulator.EINVALID, "no price for symbol %s: set it with PUT /_sandbox/institutions/%s/prices", r.Symbol, in.ID)
		}
		now := s.Clock.Now()
		typ := simulator.TxnBuy
		if r.Side == simulator.SideSell {
			typ = simulator.TxnSell
		}
		t = &simulator.Transaction{ID: s.IDs.New("txn"), InstitutionID: in.ID, PlatformID: u.PlatformID, UserAccountID: u.UserAccountID,
			Product: r.Product, Type: typ, Status: simulator.OrderPending, CreatedAt: now}
		o := &simulator.Order{ID: s.IDs.New("ord"), InstitutionID: in.ID, TransactionID: t.ID, PlatformID: u.PlatformID, UserAccountID: u.UserAccountID,
			Product: r.Product, Side: r.Side, Symbol: r.Symbol, Status: simulator.OrderPending, PlacedAt: now,
			IsRecurringOrder: r.RecurringOrderID != "", RecurringOrderID: r.RecurringOrderID}
		if r.Notional != nil {
			o.ByNotional, o.Notional, o.Quantity, t.Amount = true, *r.Notional, decimal.Zero, *r.Notional
		} else {
			o.Quantity, o.Notional = *r.Quantity, decimal.Zero
		}
		t.OrderIDs = []string{o.ID}
		os = []*simulator.Order{o}
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
		var u simulator.User
		if err := getJSON(w.Tx, bUsers, []byte(platformID), &u, "user not found"); err != nil {
			return err
		}
		in, err := getInstitution(w.Tx, u.InstitutionID)
		if err != nil {
			return err
		}
		a, err := tradableAccount(&u, simulator.ProductRobo)
		if err != nil {
			return err
		}
		pf, err := s.portfolio(a.Portfolio)
		if err != nil {
			return err
		}
		legs, err := simulator.RoboLegs(typ, amount, pf, a, in.Prices, in.Fees[simulator.ProductRobo])
		if err != nil {
			return err
		}
		now := s.Clock.Now()
		t = &simulator.Transaction{ID: s.IDs.New("txn"), InstitutionID: in.ID, PlatformID: u.PlatformID, UserAccountID: u.UserAccountID,
			Product: simulator.ProductRobo, Type: typ, Status: simulator.OrderPending, Amount: amount, CreatedAt: now}
		for _, l := range legs {
			o := &simulator.Order{ID: s.IDs.New("ord"), InstitutionID: in.ID, TransactionID: t.ID, PlatformID: u.PlatformID,
				UserAccountID: u.UserAccountID, Product: simulator.ProductRobo, Side: l.Side, Symbol: l.Symbol, Notional: l.Notional,
				Quantity: decimal.Zero, ByNotional: true, Status: simulator.OrderPending, PlacedAt: now}
			t.OrderIDs = append(t.OrderIDs, o.ID)
			os = append(os, o)
		}
		return w.putTransaction(t, os)
	})
	return t, os, err
}

func (s *DB) portfolio(name string) (simulator.Portfolio, error) {
	for _, p := range s.Defaults.Portfolios {
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
		if err := getJSON(w.Tx, bTransactions, []byte(txnID), &t, "transaction not found"); err != nil {
			return err
		}
		if t.Status != simulator.OrderPending {
			return simulator.Errorf(simulator.ECONFLICT, "transaction %s is %s: only a pending transaction can be filled", t.ID, t.Status)
		}
		in, err := getInstitution(w.Tx, t.InstitutionID)
		if err != nil {
			return err
		}
		var u simulator.User
		if err := getJSON(w.Tx, bUsers, []byte(t.PlatformID), &u, "user not found"); err != nil {
			return err
		}
		old := u
		old.Accounts = append([]simulator.Account(nil), u.Accounts...)
		a := u.Account(t.Product)
		if a == nil {
			return simulator.Errorf(simulator.ENOTFOUND, "user %s has no %s account", u.PlatformID, t.Product)
		}
		// Work on a copy of the account so a failed leg leaves nothing half-applied.
		acct := *a
		acct.Holdings = append([]simulator.Holding(nil), a.Holdings...)
		if t.Type == simulator.TxnDeposit {
			acct.Cash = acct.Cash.Add(t.Amount)
		}
		now := s.Clock.Now()
		olds := make([]simulator.Order, 0, len(t.OrderIDs))
		for _, id := range t.OrderIDs {
			o, err := getOrder(w.Tx, t.InstitutionID, id)
			if err != nil {
				return err
			}
			olds = append(olds, *o)
			price, ok := prices[o.Symbol]
			if !ok {
				if price, ok = in.Prices[o.Symbol]; !ok {
					return simulator.Errorf(simulator.EINVALID, "no price for symbol %s", o.Symbol)
				}
			}
			if err := simulator.FillOrder(o, &acct, price, in.Fees[o.Product], now); err != nil {
				return err
			}
			os = append(os, o)
		}
		if t.Type == simulator.TxnWithdrawal {
			if acct.Cash.LessThan(t.Amount) {
				return simulator.Errorf(simulator.ECONFLICT, "insufficient cash to withdraw %s: have %s", simulator.FormatMoney(t.Amount), simulator.FormatMoney(acct.Cash))
			}
			acct.Cash = acct.Cash.Sub(t.Amount)
		}
		*a = acct
		for i, o := range os {
			if err := w.putOrder(&olds[i], o); err != nil {
				return err
			}
		}
		t.Status, t.CompletedAt = simulator.OrderCompleted, &now
		if err := w.putJSON(bTransactions, []byte(t.ID), &t); err != nil {
			return err
		}
		if err := w.putUser(&old, &u); err != nil {
			return err
		}
		ev = &simulator.Event{ID: s.IDs.New("evt"), InstitutionID: t.InstitutionID, Type: simulator.EventTransaction, CreatedAt: now,
			Data: simulator.EventData{UserAccountID: u.UserAccountID, PlatformID: u.PlatformID, Product: t.Product, TransactionID: t.ID, Status: simulator.OrderCompleted}}
		return s.emit(w, ev)
	})
	if err != nil {
		return nil, nil, nil, err
	}
	return &t, os, ev, nil
}

// EndTransaction cancels or fails every leg of a pending transaction. No event (spec §3.2).
func (s *DB) EndTransaction(ctx context.Context, txnID string, to simulator.OrderStatus) (*simulator.Transaction, []*simulator.Order, error) {
	if to != simulator.OrderCanceled && to != simulator.OrderFailed {
		return nil, nil, fmt.Errorf("end transaction: bad state %s", to)
	}
	var (
		t  simulator.Transaction
		os []*simulator.Order
	)
	err := s.update(ctx, func(w *writeTx) error {
		if err := getJSON(w.Tx, bTransactions, []byte(txnID), &t, "transaction not found"); err != nil {
			return err
		}
		if t.Status != simulator.OrderPending {
			return simulator.Errorf(simulator.ECONFLICT, "transaction %s is %s: only a pending transaction can be %s", t.ID, t.Status, to)
		}
		for _, id := range t.OrderIDs {
			o, err := getOrder(w.Tx, t.InstitutionID, id)
			if err != nil {
				return err
			}
			old := *o
			o.Status = to
			if err := w.putOrder(&old, o); err != nil {
				return err
			}
			os = append(os, o)
		}
		t.Status = to
		return w.putJSON(bTransactions, []byte(t.ID), &t)
	})
	if err != nil {
		return nil, nil, err
	}
	return &t, os, nil
}

// TransactionAny returns a transaction of any institution (control plane).
func (s *DB) TransactionAny(ctx context.Context, id string) (*simulator.Transaction, []*simulator.Order, error) {
	var (
		t      *simulator.Transaction
		orders []*simulator.Order
	)
	err := s.view(ctx, func(tx *bbolt.Tx) error {
		var tt simulator.Transaction
		if err := getJSON(tx, bTransactions, []byte(id), &tt, "transaction not found"); err != nil {
			return err
		}
		var err error
		t, orders, err = getTransaction(tx, tt.InstitutionID, id)
		return err
	})
	return t, orders, err
}
