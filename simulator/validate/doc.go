// Package validate reproduces, byte for byte, the 422 bodies that a FastAPI
// service validating its requests with pydantic v2 answers, so the simulator's
// errors are indistinguishable from the real service's (decisions D4).
//
// A handler creates a Collector per request, reads its path, query and body
// inputs through it in FastAPI's order (path, query, body; model fields in
// declaration order), and finally asks Err for the outcome:
//
//	c := validate.New()
//	id := c.PathStr("user_account_id", raw)
//	q := c.Query(values)
//	perPage := q.Int("per_page", 25, validate.Ge(1), validate.Le(100))
//	b := c.Body(contentType, body)
//	uid := b.Str("user_account_id")
//	if err := c.Err(); err != nil {
//		return err // validate.Errors (422) or validate.ErrBodyParse (400)
//	}
//
// What is reproduced, and where it was read:
//
//   - the error items (type, loc, msg, input, ctx) of pydantic-core's lax
//     Python-mode validators: str, int (str_as_int with jiter's integer
//     grammar), bool, Decimal (Python's decimal constructor), str Enum and
//     Literal, datetime (speedate plus pydantic's date fallback), HttpUrl
//     (rust-url's WHATWG parser and error texts; hosts through
//     golang.org/x/net/idna as the URL standard's domain-to-ASCII, checked
//     against Unicode's and the URL standard's test data and against
//     pydantic for every code point), list, dict and models
//     validated with from_attributes=True as FastAPI does;
//   - FastAPI's body handling before 0.132: which content types are parsed
//     as JSON, the missing body, the json_invalid item with CPython's json
//     decoder message (with loc ["body"], the one deliberate difference of
//     decisions D4), and the 400 for bodies json.loads cannot even decode;
//   - the rendering of Starlette's JSONResponse (json.dumps with
//     ensure_ascii=False and compact separators): Python dict order, Python
//     float repr, integers of any size.
//
// What FastAPI itself cannot render, answering 500 (non-finite floats, a str
// holding a lone surrogate, bytes that are not UTF-8), is rendered null
// (decisions D19). Limits that cannot be made exact are documented where they
// apply (the Unicode version of the IDNA tables, nesting depth).
//
// The package holds no state between requests and imports only the standard
// library, github.com/shopspring/decimal, golang.org/x/net/idna and simulator/wordwise (the
// word-at-a-time byte tests, a leaf). It must never import the HTTP framework, the store or any
// other simulator package: it is a leaf that the HTTP layer calls.
package validate
