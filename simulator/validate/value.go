package validate

import (
	"net/url"
	"time"

	"github.com/shopspring/decimal"
)

// Kind is the JSON type of a body value.
type Kind int

// The kinds a Value can have. KindAbsent is a field missing from its object.
const (
	KindAbsent Kind = iota
	KindNull
	KindBool
	KindNumber
	KindString
	KindArray
	KindObject
	// KindBytes is a body sent with a non-JSON content type.
	KindBytes
)

// Value is one value of the request body at a location, possibly absent.
// Its validators record an item on the collector when the value is invalid
// and return the zero value; the required ones also record missing (input:
// the enclosing object, or null for the body itself) when it is absent.
//
// A Value taken from an object or list that failed validation is inert: its
// validators record nothing, as pydantic stops at the first failure of a
// container.
type Value struct {
	c       *Collector
	loc     Loc
	v       any
	present bool
	parent  any
	inert   bool
	// where and name are a parameter's location when loc is nil (Params.get): built only when
	// an item needs it, as a request reads a dozen parameters and most are not sent.
	where, name string
}

// Loc returns the value's location (a copy).
func (v Value) Loc() Loc { return v.location().With() }

// location returns the value's location.
func (v Value) location() Loc {
	if v.loc == nil && v.name != "" {
		return Loc{v.where, v.name}
	}
	return v.loc
}

// Present reports whether the value was sent (null counts as sent, except
// for a whole body, where FastAPI treats null as missing).
func (v Value) Present() bool { return !v.inert && v.present }

// Kind returns the JSON type of the value.
func (v Value) Kind() Kind {
	if !v.Present() {
		return KindAbsent
	}
	switch v.v.(type) {
	case nil:
		return KindNull
	case bool:
		return KindBool
	case pyInt, float64:
		return KindNumber
	case pyStr:
		return KindString
	case []any:
		return KindArray
	case *jsonObject:
		return KindObject
	case pyBytes:
		return KindBytes
	}
	return KindAbsent
}

// Raw returns the value as an opaque input for hand-built items (NewItem):
// it renders exactly as FastAPI would echo it. It is nil when absent.
func (v Value) Raw() any {
	if !v.Present() {
		return nil
	}
	return v.v
}

// required reports whether validation should go on, recording missing for
// an absent value.
func (v Value) required() bool {
	if v.inert {
		return false
	}
	if !v.present {
		v.c.add(typeItem("missing", v.location(), v.parent))
		return false
	}
	return true
}

// optional reports whether an optional (`X | None = None`) value should be
// validated: it is neither absent nor null.
func (v Value) optional() bool { return !v.inert && v.present && v.v != nil }

func (v Value) fail(it *Item) bool {
	if it != nil {
		v.c.add(*it)
		return false
	}
	return true
}

// Str validates a required str.
func (v Value) Str() string {
	s, _ := v.str()
	return s
}

func (v Value) str() (string, bool) {
	if !v.required() {
		return "", false
	}
	s, it := validateStr(v.location(), v.v)
	return s, v.fail(it)
}

// NullableStr validates a required `str | None`: ok is false for null (no
// error) or when invalid.
func (v Value) NullableStr() (s string, ok bool) {
	if !v.required() || v.v == nil {
		return "", false
	}
	s, it := validateStr(v.location(), v.v)
	return s, v.fail(it)
}

// OptStr validates an optional `str | None = None`: ok is false when absent,
// null or invalid.
func (v Value) OptStr() (s string, ok bool) {
	if !v.optional() {
		return "", false
	}
	s, it := validateStr(v.location(), v.v)
	return s, v.fail(it)
}

// Enum validates a required str Enum whose member values are values (error
// type enum).
func (v Value) Enum(values ...string) string {
	s, _ := v.choice("enum", values)
	return s
}

// OptEnum validates an optional `Enum | None = None`.
func (v Value) OptEnum(values ...string) (string, bool) {
	if !v.optional() {
		return "", false
	}
	return v.choice("enum", values)
}

// Literal validates a required Literal["a", "b", ...] (error type
// literal_error).
func (v Value) Literal(values ...string) string {
	s, _ := v.choice("literal_error", values)
	return s
}

func (v Value) choice(typ string, values []string) (string, bool) {
	if !v.required() {
		return "", false
	}
	s, it := validateChoice(typ, v.location(), v.v, values)
	return s, v.fail(it)
}

// Int validates a required int with optional bounds. A value beyond the
// range of int that passes the bounds saturates at math.MinInt/MaxInt
// (Python ints are unbounded).
func (v Value) Int(bounds ...Bound) int {
	n, _ := v.intv(bounds)
	return n
}

// OptInt validates an optional `int | None = None`.
func (v Value) OptInt(bounds ...Bound) (int, bool) {
	if !v.optional() {
		return 0, false
	}
	return v.intv(bounds)
}

func (v Value) intv(bounds []Bound) (int, bool) {
	if !v.required() {
		return 0, false
	}
	n, it := validateInt(v.location(), v.v, bounds)
	if !v.fail(it) {
		return 0, false
	}
	return saturate(n), true
}

// Bool validates a required bool.
func (v Value) Bool() bool {
	b, _ := v.boolv()
	return b
}

func (v Value) boolv() (bool, bool) {
	if !v.required() {
		return false, false
	}
	b, it := validateBool(v.location(), v.v)
	return b, v.fail(it)
}

// Decimal validates a required decimal.Decimal with optional bounds.
// Infinity and NaN are rejected (finite_number), as pydantic does by default.
func (v Value) Decimal(bounds ...Bound) decimal.Decimal {
	d, _ := v.dec(bounds)
	return d
}

// OptDecimal validates an optional `Decimal | None = None`.
func (v Value) OptDecimal(bounds ...Bound) (decimal.Decimal, bool) {
	if !v.optional() {
		return decimal.Decimal{}, false
	}
	return v.dec(bounds)
}

func (v Value) dec(bounds []Bound) (decimal.Decimal, bool) {
	if !v.required() {
		return decimal.Decimal{}, false
	}
	d, it := validateDecimal(v.location(), v.v, bounds)
	return d, v.fail(it)
}

// DateTime validates a required datetime; the result is in UTC, naive
// inputs being taken as UTC (decisions D6).
func (v Value) DateTime() time.Time {
	t, _ := v.datetime()
	return t
}

// OptDateTime validates an optional `datetime | None = None`.
func (v Value) OptDateTime() (time.Time, bool) {
	if !v.optional() {
		return time.Time{}, false
	}
	return v.datetime()
}

func (v Value) datetime() (time.Time, bool) {
	if !v.required() {
		return time.Time{}, false
	}
	t, it := validateDateTime(v.location(), v.v)
	return t, v.fail(it)
}

// URL validates a required pydantic HttpUrl. It returns the string as sent
// and the URL as the WHATWG parser normalised it (nil when invalid).
func (v Value) URL() (string, *url.URL) {
	if !v.required() {
		return "", nil
	}
	raw, u, it := validateHTTPURL(v.location(), v.v)
	if !v.fail(it) {
		return "", nil
	}
	return raw, u
}

// StrList validates a required list[str]; it reports every invalid item
// and returns nil when anything failed.
func (v Value) StrList() []string {
	l := v.List()
	if !l.OK() {
		return nil
	}
	out := make([]string, 0, l.Len())
	ok := true
	for i := 0; i < l.Len(); i++ {
		s, valid := l.Item(i).str()
		ok = ok && valid
		out = append(out, s)
	}
	if !ok {
		return nil
	}
	return out
}

// Object validates a required nested model and returns an accessor for its
// fields. A value that is not an object gives model_attributes_type (FastAPI
// validates with from_attributes=True).
func (v Value) Object() *Object { return v.object("model_attributes_type") }

// Dict validates a required dict[str, ...] (dict_type when not an object)
// and returns an accessor for its entries.
func (v Value) Dict() *Object { return v.object("dict_type") }

func (v Value) object(typ string) *Object {
	if !v.required() {
		return &Object{c: v.c, loc: v.location(), inert: true}
	}
	o, ok := v.v.(*jsonObject)
	if !ok {
		v.c.add(typeItem(typ, v.location(), v.v))
		return &Object{c: v.c, loc: v.location(), inert: true}
	}
	return &Object{c: v.c, loc: v.location(), obj: o}
}

// List validates a required list and returns an accessor for its items
// (list_type when not a list).
func (v Value) List() *List {
	if !v.required() {
		return &List{c: v.c, loc: v.location(), inert: true}
	}
	a, ok := v.v.([]any)
	if !ok {
		v.c.add(typeItem("list_type", v.location(), v.v))
		return &List{c: v.c, loc: v.location(), inert: true}
	}
	return &List{c: v.c, loc: v.location(), items: a}
}

// DecimalMap validates a required dict[str, Decimal]: dict_type when not an
// object, then each entry at loc [..., key]. It returns nil when anything
// failed.
func (v Value) DecimalMap(bounds ...Bound) map[string]decimal.Decimal {
	o := v.Dict()
	if !o.OK() {
		return nil
	}
	out := make(map[string]decimal.Decimal, len(o.obj.keys))
	ok := true
	for _, k := range o.obj.keys {
		d, valid := o.Field(k).dec(bounds)
		ok = ok && valid
		out[toValidUTF8(k)] = d
	}
	if !ok {
		return nil
	}
	return out
}

// Object is an accessor for the fields of a JSON object (a model or a dict).
// Required field validators record missing, with the whole object as input,
// when the field is absent. An Object whose own validation failed is inert.
type Object struct {
	c     *Collector
	loc   Loc
	obj   *jsonObject
	inert bool
}

// OK reports whether the object itself was valid (present and an object).
func (o *Object) OK() bool { return !o.inert }

// Loc returns the object's location (a copy).
func (o *Object) Loc() Loc { return o.loc.With() }

// Keys returns the object's keys in document order (duplicates once).
func (o *Object) Keys() []string {
	if o.inert {
		return nil
	}
	out := make([]string, len(o.obj.keys))
	for i, k := range o.obj.keys {
		out[i] = toValidUTF8(k)
	}
	return out
}

// Has reports whether the field was sent (null included).
func (o *Object) Has(name string) bool {
	if o.inert {
		return false
	}
	_, ok := o.obj.get(name)
	return ok
}

// Raw returns the object as an opaque input for hand-built items.
func (o *Object) Raw() any {
	if o.inert {
		return nil
	}
	return o.obj
}

// Field returns the value of a field, present or not. Use it for fields
// with a non-None default (`x: int = 5`), which report null as a type error:
//
//	if o.Has("x") { x = o.Field("x").Int() }
func (o *Object) Field(name string) Value {
	if o.inert {
		return Value{c: o.c, loc: o.loc.With(name), inert: true}
	}
	v, ok := o.obj.get(name)
	return Value{c: o.c, loc: o.loc.With(name), v: v, present: ok, parent: o.obj}
}

// Str validates a required str field.
func (o *Object) Str(name string) string { return o.Field(name).Str() }

// OptStr validates an optional `str | None = None` field.
func (o *Object) OptStr(name string) (string, bool) { return o.Field(name).OptStr() }

// NullableStr validates a required `str | None` field.
func (o *Object) NullableStr(name string) (string, bool) { return o.Field(name).NullableStr() }

// Enum validates a required str Enum field.
func (o *Object) Enum(name string, values ...string) string { return o.Field(name).Enum(values...) }

// OptEnum validates an optional `Enum | None = None` field.
func (o *Object) OptEnum(name string, values ...string) (string, bool) {
	return o.Field(name).OptEnum(values...)
}

// Literal validates a required Literal[...] field.
func (o *Object) Literal(name string, values ...string) string {
	return o.Field(name).Literal(values...)
}

// Int validates a required int field.
func (o *Object) Int(name string, bounds ...Bound) int { return o.Field(name).Int(bounds...) }

// OptInt validates an optional `int | None = None` field.
func (o *Object) OptInt(name string, bounds ...Bound) (int, bool) {
	return o.Field(name).OptInt(bounds...)
}

// Bool validates a required bool field.
func (o *Object) Bool(name string) bool { return o.Field(name).Bool() }

// Decimal validates a required Decimal field.
func (o *Object) Decimal(name string, bounds ...Bound) decimal.Decimal {
	return o.Field(name).Decimal(bounds...)
}

// OptDecimal validates an optional `Decimal | None = None` field.
func (o *Object) OptDecimal(name string, bounds ...Bound) (decimal.Decimal, bool) {
	return o.Field(name).OptDecimal(bounds...)
}

// DateTime validates a required datetime field (UTC).
func (o *Object) DateTime(name string) time.Time { return o.Field(name).DateTime() }

// OptDateTime validates an optional `datetime | None = None` field.
func (o *Object) OptDateTime(name string) (time.Time, bool) { return o.Field(name).OptDateTime() }

// URL validates a required HttpUrl field: the string as sent and its parse.
func (o *Object) URL(name string) (string, *url.URL) { return o.Field(name).URL() }

// StrList validates a required list[str] field.
func (o *Object) StrList(name string) []string { return o.Field(name).StrList() }

// Object validates a required nested model field.
func (o *Object) Object(name string) *Object { return o.Field(name).Object() }

// OptObject validates an optional `Model | None = None` field.
func (o *Object) OptObject(name string) (*Object, bool) { return optField(o, name, Value.Object) }

// Dict validates a required dict[str, ...] field.
func (o *Object) Dict(name string) *Object { return o.Field(name).Dict() }

// List validates a required list field.
func (o *Object) List(name string) *List { return o.Field(name).List() }

// OptList validates an optional `list[...] | None = None` field.
func (o *Object) OptList(name string) (*List, bool) { return optField(o, name, Value.List) }

// optField validates an optional `X | None = None` field with get (Value.Object, Value.List)
// and reports whether it holds a valid X; absent or null, it is what get makes of an inert
// value: an accessor that validates nothing.
func optField[T interface{ OK() bool }](o *Object, name string, get func(Value) T) (T, bool) {
	f := o.Field(name)
	if !f.optional() {
		f.inert = true
		return get(f), false
	}
	x := get(f)
	return x, x.OK()
}

// DecimalMap validates a required dict[str, Decimal] field.
func (o *Object) DecimalMap(name string, bounds ...Bound) map[string]decimal.Decimal {
	return o.Field(name).DecimalMap(bounds...)
}

// List is an accessor for the items of a JSON array; item locations end in
// their integer index.
type List struct {
	c     *Collector
	loc   Loc
	items []any
	inert bool
}

// OK reports whether the list itself was valid (present and a list).
func (l *List) OK() bool { return !l.inert }

// Loc returns the list's location (a copy).
func (l *List) Loc() Loc { return l.loc.With() }

// Len returns the number of items (0 for an invalid list).
func (l *List) Len() int { return len(l.items) }

// Item returns item i (0 <= i < Len()).
func (l *List) Item(i int) Value {
	if l.inert || i < 0 || i >= len(l.items) {
		return Value{c: l.c, loc: l.loc.With(i), inert: true}
	}
	return Value{c: l.c, loc: l.loc.With(i), v: l.items[i], present: true, parent: l.items}
}

// Each calls fn for every item, in order, and stops early once the collector holds MaxItems
// items: the answer is that 422 whatever follows, so a huge list of wrong items costs no more
// work (decisions D17).
func (l *List) Each(fn func(i int, v Value)) {
	for i := range l.items {
		if l.c.Full() {
			return
		}
		fn(i, l.Item(i))
	}
}
