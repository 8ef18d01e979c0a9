package validate

import (
	"bytes"
	"errors"
	"fmt"
	"strconv"
	"strings"
)

// ErrBodyParse is returned by Collector.Err when the request body could not be
// turned into text by Python's json.loads (bytes that are not valid UTF-8,
// UTF-16 or UTF-32 after json.detect_encoding, an integer literal longer than
// Python's 4300-digit limit, nesting deeper than the decoder's recursion
// limit). FastAPI answers these with 400 {"detail":"There was an error parsing
// the body"} (fastapi/routing.py, the `except Exception` after json.loads); the
// HTTP layer maps this sentinel to that response.
var ErrBodyParse = errors.New("validate: the request body could not be parsed")

// Loc is the location of an error item: "path", "query", "header", "cookie"
// or "body" followed by field names (string) and list indexes (int).
type Loc []any

// With returns a copy of l with elems appended; l itself is never modified,
// so sibling locations can share a prefix safely.
func (l Loc) With(elems ...any) Loc {
	out := make(Loc, 0, len(l)+len(elems))
	out = append(out, l...)
	return append(out, elems...)
}

// String renders l as dotted text for logs, e.g. body.items.0.sku.
func (l Loc) String() string {
	parts := make([]string, len(l))
	for i, e := range l {
		parts[i] = fmt.Sprint(e)
	}
	return strings.Join(parts, ".")
}

// CtxPair is one entry of an item's ctx object. Values are rendered like the
// inputs (see Item.Input); an empty map[string]any renders as {}.
type CtxPair struct {
	Key   string
	Value any
}

// Item is one element of the 422 "detail" array. Its JSON keys come in
// FastAPI's order: type, loc, msg, input, then ctx only when Ctx is not nil.
//
// Input accepts what validation saw: nil, bool, string, the integer and float
// kinds, *big.Int, []any, map[string]any (keys rendered sorted), Loc, and the
// opaque values returned by Value.Raw (which keep Python's dict order).
// Non-finite floats render as null: FastAPI itself cannot render them
// (Starlette's json.dumps uses allow_nan=False) and would answer 500.
type Item struct {
	Type  string
	Loc   Loc
	Msg   string
	Input any
	Ctx   []CtxPair
}

// NewItem builds an item by hand, for checks this package does not model.
func NewItem(typ string, loc Loc, msg string, input any, ctx ...CtxPair) Item {
	it := Item{Type: typ, Loc: loc, Msg: msg, Input: input}
	if len(ctx) > 0 {
		it.Ctx = ctx
	}
	return it
}

// ValueError builds the item pydantic produces when a custom validator raises
// ValueError(message): type value_error, msg "Value error, <message>", and
// ctx {"error":{}} because FastAPI's jsonable_encoder turns the exception
// object into an empty object (fastapi tests/test_tutorial/
// test_query_params_str_validations/test_tutorial015.py).
func ValueError(loc Loc, input any, message string) Item {
	return NewItem("value_error", loc, "Value error, "+message, input, CtxPair{"error", map[string]any{}})
}

// MarshalJSON renders the item as FastAPI does (compact, non-ASCII raw).
func (it Item) MarshalJSON() ([]byte, error) {
	var buf bytes.Buffer
	writeItem(&buf, it)
	return buf.Bytes(), nil
}

// Errors is a failed validation: the items of the 422 body, in order. It is
// the error Collector.Err returns; errors.As finds it. Send the bytes of
// its MarshalJSON as they are: passing it through encoding/json (json.Marshal,
// echo's c.JSON) would re-escape <, > and &, which FastAPI does not.
type Errors []Item

// Error summarises the items on one line, for logs.
func (e Errors) Error() string {
	var b strings.Builder
	b.WriteString(strconv.Itoa(len(e)))
	if len(e) == 1 {
		b.WriteString(" validation error")
	} else {
		b.WriteString(" validation errors")
	}
	for i, it := range e {
		if i == 0 {
			b.WriteString(": ")
		} else {
			b.WriteString("; ")
		}
		b.WriteString(it.Loc.String())
		b.WriteString(": ")
		b.WriteString(it.Msg)
		b.WriteString(" [type=")
		b.WriteString(it.Type)
		b.WriteString("]")
	}
	return b.String()
}

// MarshalJSON renders exactly the body FastAPI sends: {"detail":[...]}.
func (e Errors) MarshalJSON() ([]byte, error) {
	var buf bytes.Buffer
	buf.WriteString(`{"detail":[`)
	for i, it := range e {
		if i > 0 {
			buf.WriteByte(',')
		}
		writeItem(&buf, it)
	}
	buf.WriteString(`]}`)
	return buf.Bytes(), nil
}

func writeItem(buf *bytes.Buffer, it Item) {
	buf.WriteString(`{"type":`)
	writeGoString(buf, it.Type)
	buf.WriteString(`,"loc":[`)
	for i, e := range it.Loc {
		if i > 0 {
			buf.WriteByte(',')
		}
		writePy(buf, e, 0)
	}
	buf.WriteString(`],"msg":`)
	writeGoString(buf, it.Msg)
	buf.WriteString(`,"input":`)
	writePy(buf, it.Input, 0)
	if it.Ctx != nil {
		buf.WriteString(`,"ctx":{`)
		for i, p := range it.Ctx {
			if i > 0 {
				buf.WriteByte(',')
			}
			writeGoString(buf, p.Key)
			buf.WriteByte(':')
			writePy(buf, p.Value, 0)
		}
		buf.WriteByte('}')
	}
	buf.WriteByte('}')
}

// Message templates, from pydantic-core src/errors/types.rs
// (message_template_python), read at pydantic/pydantic@2151025 pydantic-core/.
const (
	msgMissing             = "Field required"
	msgModelAttributesType = "Input should be a valid dictionary or object to extract fields from"
	msgDictType            = "Input should be a valid dictionary"
	msgListType            = "Input should be a valid list"
	msgStringType          = "Input should be a valid string"
	msgStringUnicode       = "Input should be a valid string, unable to parse raw data as a unicode string"
	msgIntType             = "Input should be a valid integer"
	msgIntParsing          = "Input should be a valid integer, unable to parse string as an integer"
	msgIntFromFloat        = "Input should be a valid integer, got a number with a fractional part"
	msgIntParsingSize      = "Unable to parse input string as an integer, exceeded maximum size"
	msgFiniteNumber        = "Input should be a finite number"
	msgBoolType            = "Input should be a valid boolean"
	msgBoolParsing         = "Input should be a valid boolean, unable to interpret input"
	msgDecimalType         = "Decimal input should be an integer, float, string or Decimal object"
	msgDecimalParsing      = "Input should be a valid decimal"
	msgDatetimeType        = "Input should be a valid datetime"
	msgURLType             = "URL input should be a string or URL"
	msgJSONDecode          = "JSON decode error" // FastAPI's own text, fastapi/routing.py
)

// typeItem builds an item whose type has no context.
func typeItem(typ string, loc Loc, input any) Item {
	var msg string
	switch typ {
	case "missing":
		msg = msgMissing
	case "model_attributes_type":
		msg = msgModelAttributesType
	case "dict_type":
		msg = msgDictType
	case "list_type":
		msg = msgListType
	case "string_type":
		msg = msgStringType
	case "string_unicode":
		msg = msgStringUnicode
	case "int_type":
		msg = msgIntType
	case "int_parsing":
		msg = msgIntParsing
	case "int_from_float":
		msg = msgIntFromFloat
	case "int_parsing_size":
		msg = msgIntParsingSize
	case "finite_number":
		msg = msgFiniteNumber
	case "bool_type":
		msg = msgBoolType
	case "bool_parsing":
		msg = msgBoolParsing
	case "decimal_type":
		msg = msgDecimalType
	case "decimal_parsing":
		msg = msgDecimalParsing
	case "datetime_type":
		msg = msgDatetimeType
	case "url_type":
		msg = msgURLType
	default:
		panic("validate: no template for " + typ)
	}
	return Item{Type: typ, Loc: loc, Msg: msg, Input: input}
}

// errorCtxItem builds an item whose template is "<prefix>{error}" with
// ctx {"error": text}.
func errorCtxItem(typ string, loc Loc, input any, text string) Item {
	var prefix string
	switch typ {
	case "datetime_parsing":
		prefix = "Input should be a valid datetime, "
	case "datetime_from_date_parsing":
		prefix = "Input should be a valid datetime or date, "
	case "url_parsing":
		prefix = "Input should be a valid URL, "
	default:
		panic("validate: no template for " + typ)
	}
	return Item{Type: typ, Loc: loc, Msg: prefix + text, Input: input, Ctx: []CtxPair{{"error", text}}}
}

// expectedItem builds an enum or literal_error item: "Input should be
// {expected}" with ctx {"expected": ...}.
func expectedItem(typ string, loc Loc, input any, expected string) Item {
	return Item{Type: typ, Loc: loc, Msg: "Input should be " + expected, Input: input,
		Ctx: []CtxPair{{"expected", expected}}}
}

// jsonInvalidItem is FastAPI's hand-built item for a body json.loads rejects
// (fastapi/routing.py); loc is ["body"] instead of ["body", offset] by
// decisions D4.
func jsonInvalidItem(msg string) Item {
	return Item{Type: "json_invalid", Loc: Loc{"body"}, Msg: msgJSONDecode, Input: map[string]any{},
		Ctx: []CtxPair{{"error", msg}}}
}
