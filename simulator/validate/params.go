package validate

import (
	"math/big"
	"time"

	"github.com/shopspring/decimal"
)

// Params reads scalar request parameters (query, path, header, cookie) of
// one source. Their values are always strings, validated by pydantic in lax
// mode; the input echoed in an error is the raw string. A required parameter
// that was not sent is missing with input null (FastAPI builds that item
// itself, fastapi/_compat/v2.py).
type Params struct {
	c      *Collector
	where  string
	lookup func(name string) (string, bool)
}

func (p *Params) get(name string) (Value, bool) {
	raw, ok := p.lookup(name)
	if !ok {
		return Value{c: p.c, where: p.where, name: name}, false
	}
	return Value{c: p.c, where: p.where, name: name, v: raw, present: true}, true
}

// Str returns an optional str parameter; ok is false when it was not sent.
func (p *Params) Str(name string) (s string, ok bool) {
	v, ok := p.get(name)
	if !ok {
		return "", false
	}
	return v.v.(string), true
}

// Enum validates a str Enum parameter with member values values. When it is
// not sent, a required parameter is missing and an optional one yields def.
// An invalid value yields def and records an enum item.
func (p *Params) Enum(name string, required bool, def string, values ...string) string {
	return p.choice("enum", name, required, def, values)
}

// Literal is Enum for a Literal[...] parameter (error type literal_error).
func (p *Params) Literal(name string, required bool, def string, values ...string) string {
	return p.choice("literal_error", name, required, def, values)
}

func (p *Params) choice(typ, name string, required bool, def string, values []string) string {
	v, ok := p.get(name)
	if !ok && !required {
		return def
	}
	s, valid := v.choice(typ, values)
	if !valid {
		return def
	}
	return s
}

// Int validates an optional int parameter with default def; an invalid
// value records its item and yields def. Out-of-int values that pass the
// bounds saturate (see Value.Int).
func (p *Params) Int(name string, def int, bounds ...Bound) int {
	v, ok := p.get(name)
	if !ok {
		return def
	}
	n, valid := v.intv(bounds)
	if !valid {
		return def
	}
	return n
}

// BigInt is Int for a parameter whose exact value matters beyond int's range (Python's ints
// are unbounded: a cursor of 2^64 is echoed as sent). It returns the value saturated to an
// int, for use, and exactly.
func (p *Params) BigInt(name string, def int, bounds ...Bound) (int, *big.Int) {
	v, ok := p.get(name)
	if !ok || !v.required() {
		return def, big.NewInt(int64(def))
	}
	n, it := validateInt(v.location(), v.v, bounds)
	if !v.fail(it) {
		return def, big.NewInt(int64(def))
	}
	return saturate(n), n
}

// OptInt validates an optional `int | None = None` parameter.
func (p *Params) OptInt(name string, bounds ...Bound) (int, bool) {
	v, ok := p.get(name)
	if !ok {
		return 0, false
	}
	return v.intv(bounds)
}

// Bool validates an optional bool parameter with default def.
func (p *Params) Bool(name string, def bool) bool {
	v, ok := p.get(name)
	if !ok {
		return def
	}
	b, valid := v.boolv()
	if !valid {
		return def
	}
	return b
}

// DateTime validates an optional `datetime | None = None` parameter; the
// time is in UTC, naive values taken as UTC.
func (p *Params) DateTime(name string) (time.Time, bool) {
	v, ok := p.get(name)
	if !ok {
		return time.Time{}, false
	}
	return v.datetime()
}

// QueryDateTime is the time a `datetime | None = None` parameter sent as s validates to (as
// DateTime gives it), and whether s is valid; wording the error of an invalid one is DateTime's.
func QueryDateTime(s string) (time.Time, bool) {
	t, it := validateDateTime(nil, s)
	return t, it == nil
}

// Decimal validates an optional `Decimal | None = None` parameter.
func (p *Params) Decimal(name string, bounds ...Bound) (decimal.Decimal, bool) {
	v, ok := p.get(name)
	if !ok {
		return decimal.Decimal{}, false
	}
	return v.dec(bounds)
}
