package httpapi

import (
	"net/http"

	"github.com/labstack/echo/v4"
	"github.com/shopspring/decimal"

	"github.com/partnersim/partnersim/simulator"
	"github.com/partnersim/partnersim/simulator/httpapi/surface"
	"github.com/partnersim/partnersim/simulator/validate"
)

// handleKYC serves POST /_sandbox/users/:platform_id/kyc.
func handleKYC(trading surface.Trading, reader *bodyReader) echo.HandlerFunc {
	type response struct {
		accountJSON
		EventID string `json:"event_id,omitempty"`
	}
	return func(c echo.Context) error {
		var p, st string
		err := reader.fields(c, func(b *validate.Object, _ *validate.Collector) {
			p = b.Enum("product", surface.Products...)
			st = b.Enum("status", surface.KYCStatuses...)
		})
		if err != nil {
			return err
		}
		move, err := trading.TransitionKYC(c.Request().Context(), c.Param("platform_id"), simulator.Product(p), simulator.KYCStatus(st))
		if err != nil {
			return err
		}
		a := &move.Account
		out := response{accountJSON: accountJSON{Product: a.Product, CurrentMarketValue: simulator.FormatMoney(a.MarketValue(move.Prices)), KYCStatus: a.KYCStatus}}
		if a.ShowsApprovedAt() {
			out.KYCApprovedAt = simulator.FormatTime(*a.KYCApprovedAt)
		}
		if move.Event != nil {
			out.EventID = move.Event.ID
		}
		return writeJSON(c, http.StatusOK, out)
	}
}

// handlePlaceOrder serves POST /_sandbox/orders.
func handlePlaceOrder(trading surface.Trading, reader *bodyReader) echo.HandlerFunc {
	type response struct {
		OrderID       string `json:"order_id"`
		TransactionID string `json:"transaction_id"`
		Status        string `json:"status"`
	}
	return func(c echo.Context) error {
		var r simulator.OrderRequest
		err := reader.fields(c, func(b *validate.Object, v *validate.Collector) {
			r.PlatformID = b.Str("platform_id")
			r.Product = simulator.Product(b.Enum("product", surface.Products...))
			r.Side = simulator.Side(b.Enum("side", surface.Sides...))
			r.Symbol = b.Str("symbol")
			r.Notional = optDecimalPtr(b, "notional")
			r.Quantity = optDecimalPtr(b, "quantity")
			r.RecurringOrderID = optStr(b, "recurring_order_id", "")
			if b.OK() && (r.Notional == nil) == (r.Quantity == nil) {
				v.Add(validate.ValueError(b.Loc(), b.Raw(), "give exactly one of notional or quantity"))
			} else if r.Notional != nil && !r.Notional.IsPositive() || r.Quantity != nil && !r.Quantity.IsPositive() {
				v.Add(validate.ValueError(b.Loc(), b.Raw(), "notional or quantity must be positive"))
			}
		})
		if err != nil {
			return err
		}
		t, orders, err := trading.PlaceOrder(c.Request().Context(), r)
		if err != nil {
			return err
		}
		return writeJSON(c, http.StatusCreated, response{OrderID: orders[0].ID, TransactionID: t.ID, Status: string(t.Status)})
	}
}

type controlTransactionJSON struct {
	transactionJSON
	InstitutionID string `json:"institution_id"`
	PlatformID    string `json:"platform_id"`
	Amount        string `json:"amount,omitempty"`
	EventID       string `json:"event_id,omitempty"`
}

func renderControlTransaction(t *simulator.Transaction, orders []*simulator.Order, ev *simulator.Event) controlTransactionJSON {
	out := controlTransactionJSON{transactionJSON: renderTransaction(t, orders), InstitutionID: t.InstitutionID, PlatformID: t.PlatformID}
	if !t.Amount.IsZero() {
		out.Amount = simulator.FormatMoney(t.Amount)
	}
	if ev != nil {
		out.EventID = ev.ID
	}
	return out
}

// handlePlaceTransaction serves POST /_sandbox/transactions.
func handlePlaceTransaction(trading surface.Trading, reader *bodyReader) echo.HandlerFunc {
	return func(c echo.Context) error {
		var pid, typ string
		var amount decimal.Decimal
		err := reader.fields(c, func(b *validate.Object, _ *validate.Collector) {
			pid = b.Str("platform_id")
			b.Enum("product", string(simulator.ProductRobo))
			typ = b.Enum("type", string(simulator.TxnDeposit), string(simulator.TxnWithdrawal), string(simulator.TxnRebalance))
			amount = optDecimal(b, "amount", decimal.Zero)
		})
		if err != nil {
			return err
		}
		t, orders, err := trading.PlaceRobo(c.Request().Context(), pid, simulator.TransactionType(typ), amount)
		if err != nil {
			return err
		}
		return writeJSON(c, http.StatusCreated, renderControlTransaction(t, orders, nil))
	}
}

// handleFill serves POST /_sandbox/transactions/:transaction_id/fill.
func handleFill(trading surface.Trading, reader *bodyReader) echo.HandlerFunc {
	return func(c echo.Context) error {
		v := validate.New()
		id := v.PathStr("transaction_id", c.Param("transaction_id"))
		raw, err := reader.read(c)
		if err != nil {
			return err
		}
		prices := map[string]decimal.Decimal{}
		if len(raw) > 0 {
			b := v.Body(c.Request().Header.Get(echo.HeaderContentType), raw)
			switch f := b.Field("price"); f.Kind() {
			case validate.KindAbsent, validate.KindNull:
			case validate.KindObject:
				prices = f.DecimalMap()
			default:
				p := f.Decimal()
				if err := v.Err(); err != nil {
					return err
				}
				_, orders, err := trading.TransactionAny(c.Request().Context(), id)
				if err != nil {
					return err
				}
				if len(orders) != 1 {
					v.Add(validate.ValueError(f.Loc(), f.Raw(), `a single price fills only a one-order transaction; give {"SYMBOL": price} for each leg`))
				} else {
					prices[orders[0].Symbol] = p
				}
			}
		}
		if err := v.Err(); err != nil {
			return err
		}
		t, orders, ev, err := trading.FillTransaction(c.Request().Context(), id, prices)
		if err != nil {
			return err
		}
		return writeJSON(c, http.StatusOK, renderControlTransaction(t, orders, ev))
	}
}

// handleEndTransaction serves POST /_sandbox/transactions/:transaction_id/cancel and POST /_sandbox/transactions/:transaction_id/fail.
func handleEndTransaction(trading surface.Trading, to simulator.OrderStatus) echo.HandlerFunc {
	return func(c echo.Context) error {
		t, orders, err := trading.EndTransaction(c.Request().Context(), c.Param("transaction_id"), to)
		if err != nil {
			return err
		}
		return writeJSON(c, http.StatusOK, renderControlTransaction(t, orders, nil))
	}
}

// handleGetTransactionAny serves GET /_sandbox/transactions/:transaction_id.
func handleGetTransactionAny(trading surface.Trading) echo.HandlerFunc {
	return func(c echo.Context) error {
		t, orders, err := trading.TransactionAny(c.Request().Context(), c.Param("transaction_id"))
		if err != nil {
			return err
		}
		return writeJSON(c, http.StatusOK, renderControlTransaction(t, orders, nil))
	}
}
