package scenario

import (
	"context"
	"encoding/json"
	"strings"

	"github.com/shopspring/decimal"

	"github.com/partnersim/partnersim/fixtures"
	"github.com/partnersim/partnersim/simulator"
)

// playStep plays one step: its args, bound, decoded into the typed form the fixture checker
// reads, then the service called — the same validation of the domain, the same state machine,
// the same outbox as a person's request. It returns the id or state the step produced and the
// event it emitted.
func (r *Runner) playStep(ctx context.Context, run *simulator.ScenarioRun, st fixtures.Step) (result, eventID string, err error) {
	r.mu.Lock()
	args := bind(run, st.Args)
	inst := run.Bound["institution"]
	r.mu.Unlock()
	decoded, err := decodeArgs(st.Action, args)
	if err != nil {
		return "", "", err
	}
	var ev *simulator.Event
	switch a := decoded.(type) {
	case *fixtures.CreateUserArgs:
		result, err = r.createUser(ctx, run, inst, a)
	case *fixtures.KYCArgs:
		var move *simulator.KYCMove
		if move, err = r.cfg.Service.TransitionKYC(ctx, a.User, simulator.Product(a.Product), simulator.KYCStatus(a.Status)); err == nil {
			result, ev = string(move.Account.KYCStatus), move.Event
		}
	case *fixtures.PlaceOrderArgs:
		result, err = r.placeOrder(ctx, a)
	case *fixtures.PlaceTxnArgs:
		result, err = r.placeTxn(ctx, a)
	case *fixtures.SettleArgs:
		result, ev, err = r.settle(ctx, st.Action, a)
	case map[string]decimal.Decimal:
		_, err = r.cfg.Service.SetPrices(ctx, inst, a)
	}
	if err != nil {
		return "", "", err
	}
	if st.As != "" {
		r.mu.Lock()
		run.Bound[st.As] = result
		r.mu.Unlock()
	}
	if ev != nil {
		eventID = ev.ID
	}
	return result, eventID, nil
}

// createUser plays create_user and returns the new platform id. Without a user_account_id
// each run makes its own user, so a scenario can be played again and again.
func (r *Runner) createUser(ctx context.Context, run *simulator.ScenarioRun, inst string, a *fixtures.CreateUserArgs) (string, error) {
	req, err := userRequest(a)
	if err != nil {
		return "", err
	}
	if req.UserAccountID == "" {
		req.UserAccountID = run.Scenario + "-" + strings.TrimPrefix(run.RunID, "run_")
	}
	u := simulator.NewUser(inst, req, r.cfg.Clock.Now())
	if err := r.cfg.Service.CreateUser(ctx, u); err != nil {
		return "", err
	}
	return u.PlatformID, nil
}

// placeOrder plays place_order and returns the transaction id.
func (r *Runner) placeOrder(ctx context.Context, a *fixtures.PlaceOrderArgs) (string, error) {
	req, err := orderRequest(a)
	if err != nil {
		return "", err
	}
	t, _, err := r.cfg.Service.PlaceOrder(ctx, req)
	if err != nil {
		return "", err
	}
	return t.ID, nil
}

// placeTxn plays place_transaction and returns the transaction id.
func (r *Runner) placeTxn(ctx context.Context, a *fixtures.PlaceTxnArgs) (string, error) {
	amount, err := optDecimal(a.Amount) // zero for a rebalance
	if err != nil {
		return "", err
	}
	t, _, err := r.cfg.Service.PlaceRobo(ctx, a.User, simulator.TransactionType(a.Type), amount)
	if err != nil {
		return "", err
	}
	return t.ID, nil
}

// settle plays fill, cancel or fail and returns the transaction's status, with a fill's event.
func (r *Runner) settle(ctx context.Context, action string, a *fixtures.SettleArgs) (string, *simulator.Event, error) {
	if action != fixtures.ActionFill {
		to := map[string]simulator.OrderStatus{fixtures.ActionCancel: simulator.OrderCanceled, fixtures.ActionFail: simulator.OrderFailed}[action]
		t, _, err := r.cfg.Service.EndTransaction(ctx, a.Transaction, to)
		if err != nil {
			return "", nil, err
		}
		return string(t.Status), nil, nil
	}
	_, orders, err := r.cfg.Service.TransactionAny(ctx, a.Transaction)
	if err != nil {
		return "", nil, err
	}
	prices, err := fillPrices(a, orders[0].Symbol) // a single price is checked to name a one-order transaction
	if err != nil {
		return "", nil, err
	}
	t, _, ev, err := r.cfg.Service.FillTransaction(ctx, a.Transaction, prices)
	if err != nil {
		return "", nil, err
	}
	return string(t.Status), ev, nil
}

// bind replaces "$name" string values bound by earlier steps, and "{run}" inside strings with
// the run's id, so a scenario can run many times (user_account_id "onboard-{run}").
func bind(run *simulator.ScenarioRun, raw json.RawMessage) []byte {
	var v any
	if err := json.Unmarshal(raw, &v); err != nil {
		return raw
	}
	var walk func(any) any
	walk = func(x any) any {
		switch t := x.(type) {
		case string:
			if strings.HasPrefix(t, "$") {
				if b, ok := run.Bound[t[1:]]; ok {
					return b
				}
			}
			return strings.ReplaceAll(t, "{run}", strings.TrimPrefix(run.RunID, "run_"))
		case map[string]any:
			for k, e := range t {
				t[k] = walk(e)
			}
		case []any:
			for i, e := range t {
				t[i] = walk(e)
			}
		}
		return x
	}
	b, err := json.Marshal(walk(v))
	if err != nil {
		return raw
	}
	return b
}
