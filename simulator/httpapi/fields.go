package httpapi

import (
	"time"

	"github.com/shopspring/decimal"

	"partnersim/simulator/validate"
)

// Small adapters for optional control-plane fields with defaults.

func optStr(o *validate.Object, name, def string) string {
	if s, ok := o.OptStr(name); ok {
		return s
	}
	return def
}

func nullableStr(o *validate.Object, name string) *string {
	if s, ok := o.NullableStr(name); ok {
		return &s
	}
	return nil
}

func optInt(o *validate.Object, name string, def int, bounds ...validate.Bound) int {
	if n, ok := o.OptInt(name, bounds...); ok {
		return n
	}
	return def
}

func optTime(o *validate.Object, name string, def time.Time) time.Time {
	if t, ok := o.OptDateTime(name); ok {
		return t
	}
	return def
}

func optDecimal(o *validate.Object, name string, def decimal.Decimal, bounds ...validate.Bound) decimal.Decimal {
	if d, ok := o.OptDecimal(name, bounds...); ok {
		return d
	}
	return def
}

func optDecimalPtr(o *validate.Object, name string) *decimal.Decimal {
	if d, ok := o.OptDecimal(name); ok {
		return &d
	}
	return nil
}

// objects returns the objects of an optional list field.
func objects(o *validate.Object, name string) []*validate.Object {
	l, ok := o.OptList(name)
	if !ok {
		return nil
	}
	out := make([]*validate.Object, 0, min(l.Len(), 1024))
	l.Each(func(_ int, v validate.Value) { out = append(out, v.Object()) })
	return out
}
