package validate

import (
	"errors"
	"net/url"
	"strings"
	"unicode/utf8"
)

// Collector gathers the error items of one request, in the order the inputs
// are read. It is not safe for concurrent use; create one per request.
type Collector struct {
	items []Item
	// bodyInvalid is the json_invalid item of a body json.loads rejected;
	// FastAPI raises it before validating anything else, so it is the only
	// item reported.
	bodyInvalid *Item
	// bodyAbort records a body json.loads could not decode at all (400).
	bodyAbort bool
}

// MaxItems is the most items a 422 lists (decisions D17). FastAPI has no limit, but a real
// request never comes near it, and without one a 1 MiB body of wrong items answers a 100 MB
// 422. The collector keeps only the first MaxItems, so its memory is bounded too.
const MaxItems = 1000

// New returns an empty collector.
func New() *Collector { return &Collector{} }

// Add appends hand-built items (see NewItem, ValueError) after the ones
// collected so far.
func (c *Collector) Add(items ...Item) {
	for _, it := range items {
		c.add(it)
	}
}

// Err reports the outcome: nil when every input was valid; ErrBodyParse when
// the body could not be decoded (FastAPI's 400); otherwise Errors — just the
// json_invalid item when the body was not valid JSON (FastAPI fails before
// validating path and query parameters), else every item collected.
func (c *Collector) Err() error {
	switch {
	case c.bodyAbort:
		return ErrBodyParse
	case c.bodyInvalid != nil:
		return Errors{*c.bodyInvalid}
	case len(c.items) == 0:
		return nil
	}
	out := make(Errors, len(c.items))
	copy(out, c.items)
	return out
}

// Full reports whether the collector holds MaxItems items: the 422 is decided and complete.
func (c *Collector) Full() bool { return len(c.items) >= MaxItems }

// add keeps an item while fewer than MaxItems are held; the rest are dropped (D17).
func (c *Collector) add(it Item) {
	if len(c.items) < MaxItems {
		c.items = append(c.items, it)
	}
}

// PathStr returns a str path parameter. Any string is a valid str; the
// method exists so handlers read every input through the collector.
func (c *Collector) PathStr(name, raw string) string {
	return raw
}

// Query reads query parameters (loc ["query", name]). When a name is repeated
// the last value wins, as with Starlette's QueryParams.get; unknown names are
// ignored. ParseQuery builds values the way Starlette does from a raw query
// string.
func (c *Collector) Query(values url.Values) *Params {
	return c.Params("query", func(name string) (string, bool) {
		vs, ok := values[name]
		if !ok || len(vs) == 0 {
			return "", false
		}
		return vs[len(vs)-1], true
	})
}

// Params reads scalar parameters from any source: where is the first loc
// element ("path", "header", "cookie", ...) and lookup returns a parameter's
// raw value and whether it was sent.
func (c *Collector) Params(where string, lookup func(name string) (string, bool)) *Params {
	return &Params{c: c, where: where, lookup: lookup}
}

// Body handles a request body the way FastAPI before 0.132 does for a single
// pydantic model parameter and returns an accessor for its fields, rooted at
// loc ["body"]:
//
//   - no bytes, or the JSON document null: missing at ["body"], input null;
//   - no Content-Type (or an empty one), application/json or
//     application/*+json (parameters ignored, case-insensitive): parsed with
//     json.loads semantics; a malformed document gives the single
//     json_invalid item, bytes that cannot be decoded give ErrBodyParse;
//   - any other content type: the raw bytes are the body, so the model
//     reports model_attributes_type with the text as input;
//   - a JSON value that is not an object: model_attributes_type.
func (c *Collector) Body(contentType string, raw []byte) *Object {
	return c.BodyValue(contentType, raw).Object()
}

// BodyValue is Body without deciding the body's type: the caller picks the
// validator (Object, Dict, DecimalMap, List, ...). An empty body or JSON
// null is an absent value, so required validators report missing with input
// null as FastAPI does.
func (c *Collector) BodyValue(contentType string, raw []byte) Value {
	loc := Loc{"body"}
	if len(raw) == 0 {
		return Value{c: c, loc: loc}
	}
	if !isJSONContentType(contentType) {
		return Value{c: c, loc: loc, v: pyBytes(raw), present: true}
	}
	v, err := parsePythonJSON(raw)
	var de *jsonDecodeError
	switch {
	case errors.As(err, &de):
		it := jsonInvalidItem(de.msg)
		c.bodyInvalid = &it
		return Value{c: c, loc: loc, inert: true}
	case err != nil:
		c.bodyAbort = true
		return Value{c: c, loc: loc, inert: true}
	case v == nil:
		return Value{c: c, loc: loc}
	}
	return Value{c: c, loc: loc, v: v, present: true}
}

// isJSONContentType is FastAPI's test (fastapi/routing.py): a missing or
// empty header means JSON; otherwise email.message.Message's
// get_content_maintype() must be "application" and the subtype "json" or
// end in "+json". Message.get_content_type() takes the text before ';',
// strips it, lowercases it, and falls back to text/plain unless it holds
// exactly one '/'.
func isJSONContentType(ct string) bool {
	if ct == "" {
		return true
	}
	main := ct
	if i := strings.IndexByte(main, ';'); i >= 0 {
		main = main[:i]
	}
	// Header values are latin-1 text to Starlette: strip and lowercase
	// each byte as that character.
	main = strings.ToLower(pyStrip(latin1(main)))
	if strings.Count(main, "/") != 1 {
		return false
	}
	slash := strings.IndexByte(main, '/')
	maintype, subtype := main[:slash], main[slash+1:]
	return maintype == "application" && (subtype == "json" || strings.HasSuffix(subtype, "+json"))
}

// latin1 maps each byte of s to the character with that code, as Starlette
// decodes header values.
func latin1(s string) string {
	ascii := true
	for i := 0; i < len(s); i++ {
		if s[i] >= utf8.RuneSelf {
			ascii = false
			break
		}
	}
	if ascii {
		return s
	}
	b := make([]byte, 0, len(s)*2)
	for i := 0; i < len(s); i++ {
		b = utf8.AppendRune(b, rune(s[i]))
	}
	return string(b)
}

func decodeRune(s string) (rune, int)     { return utf8.DecodeRuneInString(s) }
func decodeLastRune(s string) (rune, int) { return utf8.DecodeLastRuneInString(s) }
