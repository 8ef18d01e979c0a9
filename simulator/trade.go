package simulator

import (
	"slices"
	"time"

	"github.com/shopspring/decimal"
)

// FillOrder fills a pending order at price: a dollar order's quantity is notional ÷ price
// truncated to 8 decimals; the notional is then quantity × price in cents (half-even); the fee
// comes from the product's schedule and is added to a buy's cost and taken from a sell's
// proceeds (decisions D9). It moves the account's holdings and cash and fails with ECONFLICT,
// changing nothing, when the cash or the position is not there.
func FillOrder(o *Order, a *Account, price decimal.Decimal, rule FeeRule, now time.Time) error {
	if o.Status != OrderPending {
		return Errorf(ECONFLICT, "order %s is %s: only a pending order can be filled", o.ID, o.Status)
	}
	if !price.IsPositive() {
		return Errorf(EINVALID, "fill price for %s must be positive", o.Symbol)
	}
	qty := o.Quantity
	if o.ByNotional {
		qty = o.Notional.DivRound(price, 16).Truncate(8)
	}
	notional := qty.Mul(price).RoundBank(2)
	fee := rule.Fee(notional)
	cash, holdings := a.Cash, slices.Clone(a.Holdings)
	if o.Side == SideBuy {
		cost := notional.Add(fee)
		if a.Cash.LessThan(cost) {
			return Errorf(ECONFLICT, "insufficient cash in the %s account: have %s, need %s", a.Product, FormatMoney(a.Cash), FormatMoney(cost))
		}
		a.Cash = a.Cash.Sub(cost)
		if err := a.ApplyHolding(o.Symbol, qty); err != nil {
			a.Cash, a.Holdings = cash, holdings
			return err
		}
	} else {
		if err := a.ApplyHolding(o.Symbol, qty.Neg()); err != nil {
			return &Error{Code: ECONFLICT, Message: ErrorMessage(err)}
		}
		a.Cash = a.Cash.Add(notional).Sub(fee)
	}
	o.Quantity, o.Notional, o.Fee, o.Status = qty, notional, fee, OrderCompleted
	t := now.UTC()
	o.CompletedAt = &t
	return nil
}

// Leg is one order of a robo transaction.
type Leg struct {
	Side     Side
	Symbol   string
	Notional decimal.Decimal
}

// RoboLegs splits a robo transaction into one leg per symbol of the model portfolio (decisions
// D7). Each symbol's share of a deposit or withdrawal is amount × weight (the last takes the
// rounding remainder). Fees are charged on each leg, so a deposit buys the most whose cost
// including its fee fits the share (the deposit pays for its own fees and never overdraws the
// account), and a withdrawal sells the least whose proceeds after its fee cover the share. A
// rebalance ignores amount: it sells what is over its target weight of the account's invested
// value (and anything outside the portfolio) and buys what is under.
func RoboLegs(typ TransactionType, amount decimal.Decimal, pf Portfolio, a *Account, prices map[string]decimal.Decimal, rule FeeRule) ([]Leg, error) {
	switch typ {
	case TxnDeposit, TxnWithdrawal:
		if !amount.IsPositive() {
			return nil, Errorf(EINVALID, "amount must be positive")
		}
		side := SideBuy
		if typ == TxnWithdrawal {
			side = SideSell
		}
		var legs []Leg
		rest := amount
		for i, w := range pf.Weights {
			n := amount.Mul(w.Weight).RoundBank(2)
			if i == len(pf.Weights)-1 {
				n = rest
			}
			rest = rest.Sub(n)
			if side == SideBuy {
				n = rule.MaxNotionalWithin(n)
			} else {
				n = rule.MinNotionalYielding(n)
			}
			if n.IsPositive() {
				legs = append(legs, Leg{Side: side, Symbol: w.Symbol, Notional: n})
			}
		}
		if len(legs) == 0 {
			return nil, Errorf(EINVALID, "amount %s is too small to trade after fees", FormatMoney(amount))
		}
		return legs, nil
	case TxnRebalance:
		total := decimal.Zero
		for _, h := range a.Holdings {
			total = total.Add(h.Quantity.Mul(prices[h.Symbol]))
		}
		var sells, buys []Leg
		cent := decimal.New(1, -2)
		for _, w := range pf.Weights {
			cur := decimal.Zero
			for _, h := range a.Holdings {
				if h.Symbol == w.Symbol {
					cur = h.Quantity.Mul(prices[h.Symbol])
				}
			}
			diff := total.Mul(w.Weight).Sub(cur).RoundBank(2)
			if diff.GreaterThanOrEqual(cent) {
				buys = append(buys, Leg{Side: SideBuy, Symbol: w.Symbol, Notional: diff})
			} else if diff.LessThanOrEqual(cent.Neg()) {
				sells = append(sells, Leg{Side: SideSell, Symbol: w.Symbol, Notional: diff.Neg()})
			}
		}
		for _, h := range a.Holdings {
			if !slices.ContainsFunc(pf.Weights, func(w Weight) bool { return w.Symbol == h.Symbol }) {
				if v := h.Quantity.Mul(prices[h.Symbol]).RoundBank(2); v.IsPositive() {
					sells = append(sells, Leg{Side: SideSell, Symbol: h.Symbol, Notional: v})
				}
			}
		}
		if len(sells)+len(buys) == 0 {
			return nil, Errorf(ECONFLICT, "the robo account is already balanced to the %s portfolio", pf.Name)
		}
		return append(sells, buys...), nil
	}
	return nil, Errorf(EINVALID, "a robo transaction is a deposit, withdrawal or rebalance, not %s", typ)
}

// ApplyHolding adds delta (possibly negative) to the account's position in symbol, dropping a
// position that reaches zero. It fails with EINVALID when the position would go negative.
func (a *Account) ApplyHolding(symbol string, delta decimal.Decimal) error {
	for i := range a.Holdings {
		if a.Holdings[i].Symbol != symbol {
			continue
		}
		q := a.Holdings[i].Quantity.Add(delta)
		if q.IsNegative() {
			return Errorf(EINVALID, "insufficient %s holdings: have %s, need %s", symbol, FormatQuantity(a.Holdings[i].Quantity), FormatQuantity(delta.Neg()))
		}
		if q.IsZero() {
			a.Holdings = append(a.Holdings[:i], a.Holdings[i+1:]...)
		} else {
			a.Holdings[i].Quantity = q
		}
		return nil
	}
	if delta.IsNegative() {
		return Errorf(EINVALID, "insufficient %s holdings: have 0, need %s", symbol, FormatQuantity(delta.Neg()))
	}
	if !delta.IsZero() {
		a.Holdings = append(a.Holdings, Holding{Symbol: symbol, Quantity: delta})
	}
	return nil
}
