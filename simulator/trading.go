package simulator

import (
	"fmt"
	"time"

	"github.com/shopspring/decimal"
)

// The trading rules (decisions D7): who may trade, what placing an order or a robo transaction
// creates, what a fill moves and emits, what cancel and fail do. The store loads what these
// need, calls them and saves what they return, in one transaction.

// NoPriceError is the error of a symbol the institution has no price for. Its message names
// the symbol; the HTTP layer adds how to set the price.
type NoPriceError struct {
	Symbol        string
	InstitutionID string
}

func (e *NoPriceError) Error() string { return "no price for symbol " + e.Symbol }

// Unwrap makes a NoPriceError an EINVALID application error.
func (e *NoPriceError) Unwrap() error { return Errorf(EINVALID, "no price for symbol %s", e.Symbol) }

// CheckPrices refuses holdings of a symbol the institution has no price for.
func (in *Institution) CheckPrices(accounts []Account) error {
	for _, a := range accounts {
		for _, h := range a.Holdings {
			if _, ok := in.Prices[h.Symbol]; !ok {
				return &NoPriceError{Symbol: h.Symbol, InstitutionID: in.ID}
			}
		}
	}
	return nil
}

// TradableAccount returns the user's account of p, which must be approved to trade.
func (u *User) TradableAccount(p Product) (*Account, error) {
	a := u.Account(p)
	if a == nil {
		return nil, Errorf(ENOTFOUND, "user %s has no %s account", u.PlatformID, p)
	}
	if a.KYCStatus != KYCApproved {
		return nil, Errorf(ECONFLICT, "the %s account is %s: only an approved account can trade", p, a.KYCStatus)
	}
	return a, nil
}

// newTransaction is a pending transaction of u's.
func newTransaction(ids *IDs, in *Institution, u *User, p Product, typ TransactionType, amount decimal.Decimal, now time.Time) *Transaction {
	return &Transaction{ID: ids.New("txn"), InstitutionID: in.ID, PlatformID: u.PlatformID, UserAccountID: u.UserAccountID,
		Product: p, Type: typ, Status: OrderPending, Amount: amount, CreatedAt: now}
}

// PlaceOrder places a pending buy or sell: a transaction of one order.
func PlaceOrder(ids *IDs, in *Institution, u *User, r OrderRequest, now time.Time) (*Transaction, []*Order, error) {
	if _, err := u.TradableAccount(r.Product); err != nil {
		return nil, nil, err
	}
	if _, ok := in.Prices[r.Symbol]; !ok {
		return nil, nil, &NoPriceError{Symbol: r.Symbol, InstitutionID: in.ID}
	}
	typ := TxnBuy
	if r.Side == SideSell {
		typ = TxnSell
	}
	t := newTransaction(ids, in, u, r.Product, typ, decimal.Zero, now)
	o := &Order{ID: ids.New("ord"), InstitutionID: in.ID, TransactionID: t.ID, PlatformID: u.PlatformID, UserAccountID: u.UserAccountID,
		Product: r.Product, Side: r.Side, Symbol: r.Symbol, Status: OrderPending, PlacedAt: now,
		IsRecurringOrder: r.RecurringOrderID != "", RecurringOrderID: r.RecurringOrderID}
	if r.Notional != nil {
		o.ByNotional, o.Notional, o.Quantity, t.Amount = true, *r.Notional, decimal.Zero, *r.Notional
	} else {
		o.Quantity, o.Notional = *r.Quantity, decimal.Zero
	}
	t.OrderIDs = []string{o.ID}
	return t, []*Order{o}, nil
}

// PlaceRobo places a robo deposit, withdrawal or rebalance: one pending transaction of one leg
// per symbol of the account's model portfolio pf.
func PlaceRobo(ids *IDs, in *Institution, u *User, pf Portfolio, typ TransactionType, amount decimal.Decimal, now time.Time) (*Transaction, []*Order, error) {
	a, err := u.TradableAccount(ProductRobo)
	if err != nil {
		return nil, nil, err
	}
	legs, err := RoboLegs(typ, amount, pf, a, in.Prices, in.Fees[ProductRobo])
	if err != nil {
		return nil, nil, err
	}
	t := newTransaction(ids, in, u, ProductRobo, typ, amount, now)
	var orders []*Order
	for _, l := range legs {
		o := &Order{ID: ids.New("ord"), InstitutionID: in.ID, TransactionID: t.ID, PlatformID: u.PlatformID,
			UserAccountID: u.UserAccountID, Product: ProductRobo, Side: l.Side, Symbol: l.Symbol, Notional: l.Notional,
			Quantity: decimal.Zero, ByNotional: true, Status: OrderPending, PlacedAt: now}
		t.OrderIDs = append(t.OrderIDs, o.ID)
		orders = append(orders, o)
	}
	return t, orders, nil
}

// Fill fills every leg of a pending transaction at prices (a symbol missing there fills at the
// institution's current price), moves the user's cash and holdings — a deposit's amount in
// first, a withdrawal's out last — completes the transaction and returns its one transaction
// event. On error nothing is changed.
func Fill(ids *IDs, in *Institution, u *User, t *Transaction, orders []*Order, prices map[string]decimal.Decimal, now time.Time) (*Event, error) {
	if err := t.checkPending("filled"); err != nil {
		return nil, err
	}
	a := u.Account(t.Product)
	if a == nil {
		return nil, Errorf(ENOTFOUND, "user %s has no %s account", u.PlatformID, t.Product)
	}
	// Work on copies so a failed leg leaves nothing half-applied.
	acct := *a
	acct.Holdings = append([]Holding(nil), a.Holdings...)
	if t.Type == TxnDeposit {
		acct.Cash = acct.Cash.Add(t.Amount)
	}
	filled := make([]Order, len(orders))
	for i, o := range orders {
		filled[i] = *o
		price, ok := prices[o.Symbol]
		if !ok {
			if price, ok = in.Prices[o.Symbol]; !ok {
				return nil, Errorf(EINVALID, "no price for symbol %s", o.Symbol)
			}
		}
		if err := FillOrder(&filled[i], &acct, price, in.Fees[o.Product], now); err != nil {
			return nil, err
		}
	}
	if t.Type == TxnWithdrawal {
		if acct.Cash.LessThan(t.Amount) {
			return nil, Errorf(ECONFLICT, "insufficient cash to withdraw %s: have %s", FormatMoney(t.Amount), FormatMoney(acct.Cash))
		}
		acct.Cash = acct.Cash.Sub(t.Amount)
	}
	*a = acct
	for i, o := range orders {
		*o = filled[i]
	}
	t.Status, t.CompletedAt = OrderCompleted, &now
	return &Event{ID: ids.New("evt"), InstitutionID: t.InstitutionID, Type: EventTransaction, CreatedAt: now,
		Data: EventData{UserAccountID: u.UserAccountID, PlatformID: u.PlatformID, Product: t.Product, TransactionID: t.ID, Status: OrderCompleted}}, nil
}

// checkPending returns ECONFLICT unless t is pending: only a pending transaction can be
// filled, canceled or failed (done says which).
func (t *Transaction) checkPending(done string) error {
	if t.Status != OrderPending {
		return Errorf(ECONFLICT, "transaction %s is %s: only a pending transaction can be %s", t.ID, t.Status, done)
	}
	return nil
}

// End cancels or fails every leg of a pending transaction. No event (spec §3.2).
func End(t *Transaction, orders []*Order, to OrderStatus) error {
	if to != OrderCanceled && to != OrderFailed {
		return fmt.Errorf("end transaction: bad state %s", to)
	}
	if err := t.checkPending(string(to)); err != nil {
		return err
	}
	for _, o := range orders {
		o.Status = to
	}
	t.Status = to
	return nil
}

// TransitionKYC moves the user's account of p to a KYC status through the state machine and
// returns the kyc event, nil for a state that is not delivered (pending).
func (u *User) TransitionKYC(ids *IDs, p Product, to KYCStatus, now time.Time) (*Event, error) {
	a := u.Account(p)
	if a == nil {
		return nil, Errorf(ENOTFOUND, "user %s has no %s account", u.PlatformID, p)
	}
	if err := a.TransitionKYC(to, now); err != nil {
		return nil, err
	}
	if !KYCDelivered(to) {
		return nil, nil
	}
	return &Event{ID: ids.New("evt"), InstitutionID: u.InstitutionID, Type: EventKYC, CreatedAt: now,
		Data: EventData{UserAccountID: u.UserAccountID, PlatformID: u.PlatformID, Product: p, KYCStatus: to}}, nil
}
