package simulator_test

import (
	"testing"

	"github.com/shopspring/decimal"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/partnersim/partnersim/simulator"
)

// The trading rules in the domain (decisions D7), table-tested without a store.
func TestTradingRules(t *testing.T) {
	ids := simulator.NewIDs(nil)
	in := &simulator.Institution{ID: "inst_1", Prices: map[string]decimal.Decimal{"AAPL": d("200.00")}}
	user := func(status simulator.KYCStatus, cash string, qty string) *simulator.User {
		a := simulator.Account{Product: simulator.ProductSecurities, KYCStatus: status, Cash: d(cash)}
		if qty != "" {
			a.Holdings = []simulator.Holding{{Symbol: "AAPL", Quantity: d(qty)}}
		}
		return &simulator.User{PlatformID: "usr_1", UserAccountID: "u1", InstitutionID: in.ID, Accounts: []simulator.Account{a}}
	}
	ten, one := d("10.00"), d("1")

	for _, c := range []struct {
		name       string
		u          *simulator.User
		req        simulator.OrderRequest
		placeErr   string
		fillErr    string
		cash, hold string
	}{
		{"a dollar buy", user(simulator.KYCApproved, "100.00", ""), simulator.OrderRequest{Side: simulator.SideBuy, Symbol: "AAPL", Notional: &ten}, "", "", "90.00", "0.05"},
		{"a share sell", user(simulator.KYCApproved, "0.00", "2"), simulator.OrderRequest{Side: simulator.SideSell, Symbol: "AAPL", Quantity: &one}, "", "", "200.00", "1"},
		{"a buy without the cash changes nothing", user(simulator.KYCApproved, "5.00", ""), simulator.OrderRequest{Side: simulator.SideBuy, Symbol: "AAPL", Notional: &ten}, "", "insufficient cash", "5.00", ""},
		{"a sell without the position changes nothing", user(simulator.KYCApproved, "0.00", ""), simulator.OrderRequest{Side: simulator.SideSell, Symbol: "AAPL", Quantity: &one}, "", "AAPL", "0.00", ""},
		{"only an approved account trades", user(simulator.KYCPending, "100.00", ""), simulator.OrderRequest{Side: simulator.SideBuy, Symbol: "AAPL", Notional: &ten}, "only an approved account can trade", "", "", ""},
		{"a symbol without a price", user(simulator.KYCApproved, "100.00", ""), simulator.OrderRequest{Side: simulator.SideBuy, Symbol: "ZZZZ", Notional: &ten}, "no price for symbol ZZZZ", "", "", ""},
	} {
		t.Run(c.name, func(t *testing.T) {
			c.req.PlatformID, c.req.Product = c.u.PlatformID, simulator.ProductSecurities
			txn, orders, err := simulator.PlaceOrder(ids, in, c.u, c.req, now)
			if c.placeErr != "" {
				require.Error(t, err)
				assert.Contains(t, err.Error(), c.placeErr)
				return
			}
			require.NoError(t, err)
			require.Len(t, orders, 1)
			assert.Equal(t, simulator.OrderPending, txn.Status)
			ev, err := simulator.Fill(ids, in, c.u, txn, orders, nil, now)
			acct := c.u.Account(simulator.ProductSecurities)
			assert.Equal(t, c.cash, simulator.FormatMoney(acct.Cash))
			if c.fillErr != "" {
				require.Error(t, err)
				assert.Contains(t, simulator.ErrorMessage(err), c.fillErr)
				assert.Equal(t, simulator.OrderPending, txn.Status, "nothing half-applied")
				assert.Equal(t, simulator.OrderPending, orders[0].Status)
				return
			}
			require.NoError(t, err)
			assert.Equal(t, c.hold, acct.Holdings[0].Quantity.String())
			assert.Equal(t, simulator.OrderCompleted, txn.Status)
			assert.Equal(t, simulator.EventTransaction, ev.Type)
			assert.Equal(t, txn.ID, ev.Data.TransactionID)
			_, err = simulator.Fill(ids, in, c.u, txn, orders, nil, now)
			assert.ErrorContains(t, err, "only a pending transaction can be filled")
		})
	}

	u := user(simulator.KYCApproved, "100.00", "")
	txn, orders, err := simulator.PlaceOrder(ids, in, u, simulator.OrderRequest{PlatformID: u.PlatformID, Product: simulator.ProductSecurities, Side: simulator.SideBuy, Symbol: "AAPL", Notional: &ten}, now)
	require.NoError(t, err)
	require.NoError(t, simulator.End(txn, orders, simulator.OrderCanceled))
	assert.Equal(t, simulator.OrderCanceled, txn.Status)
	assert.Equal(t, simulator.OrderCanceled, orders[0].Status)
	assert.ErrorContains(t, simulator.End(txn, orders, simulator.OrderFailed), "only a pending transaction can be failed")
	assert.Equal(t, "100.00", simulator.FormatMoney(u.Account(simulator.ProductSecurities).Cash), "cancel moves no cash")
}
