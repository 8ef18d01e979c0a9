package check

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/getkin/kin-openapi/openapi3"
	"github.com/getkin/kin-openapi/openapi3filter"
	"github.com/getkin/kin-openapi/routers"
	"github.com/getkin/kin-openapi/routers/gorillamux"
)

// Checker validates exchanges against one or more documents (the first that routes a request
// decides it).
type Checker struct {
	docs            []*entry
	checked, failed atomic.Int64
	// Skip, when set, names exchanges outside the documents (the documents themselves, a
	// viewer's files): they are not checked.
	Skip func(r *http.Request, status int, body []byte) bool
	// everyBodyBy2020 turns builtInBody off (its test compares both ways).
	everyBodyBy2020 bool
}

type entry struct {
	name   string
	doc    *openapi3.T
	router routers.Router
	// builtIn is doc as an OpenAPI 3.0 document, for the bodies kin-openapi validates with its
	// built-in validator after all (builtInBody).
	builtIn *openapi3.T
	// byBuiltIn caches builtInBody's answer per response schema (*openapi3.Schema → bool), plain
	// plainHeader's per header schema.
	byBuiltIn, plain sync.Map
}

// Doc is one document to check against, as JSON or YAML.
type Doc struct {
	Name string
	Data []byte
}

// New loads and validates the documents.
func New(ctx context.Context, docs ...Doc) (*Checker, error) {
	c := &Checker{}
	for _, d := range docs {
		l := openapi3.NewLoader()
		l.Context = ctx
		doc, err := l.LoadFromData(d.Data)
		if err != nil {
			return nil, fmt.Errorf("openapi %s: %w", d.Name, err)
		}
		if err := doc.Validate(ctx); err != nil {
			return nil, fmt.Errorf("openapi %s is not a valid document: %w", d.Name, err)
		}
		if doc.Components != nil {
			seen := map[*openapi3.Schema]bool{}
			for _, ref := range doc.Components.Schemas {
				admitNullWhereUntyped(ref, seen)
			}
		}
		r, err := gorillamux.NewRouter(doc)
		if err != nil {
			return nil, fmt.Errorf("openapi %s: %w", d.Name, err)
		}
		builtIn := *doc
		builtIn.OpenAPI = "3.0.3"
		c.docs = append(c.docs, &entry{name: d.Name, doc: doc, router: r, builtIn: &builtIn})
	}
	return c, nil
}

// admitNullWhereUntyped lets a schema without a type (FastAPI's ValidationError.input,
// {"title": "Input"}) take any value, null included, as JSON Schema (and OpenAPI 3.1) reads it:
// the validator refuses null there (by 3.0's rule that nothing is nullable unless it says so).
// Only the checker's copy changes, never the document served.
func admitNullWhereUntyped(ref *openapi3.SchemaRef, seen map[*openapi3.Schema]bool) {
	if ref == nil || ref.Value == nil || seen[ref.Value] {
		return
	}
	s := ref.Value
	seen[s] = true
	if s.Type.IsEmpty() && len(s.AnyOf)+len(s.OneOf)+len(s.AllOf) == 0 && s.Not == nil {
		// Every type, null included, said both ways the validator may read.
		s.Type = &openapi3.Types{openapi3.TypeNull, openapi3.TypeBoolean, openapi3.TypeInteger, openapi3.TypeNumber,
			openapi3.TypeString, openapi3.TypeArray, openapi3.TypeObject}
		s.Nullable = true
	}
	for _, p := range s.Properties {
		admitNullWhereUntyped(p, seen)
	}
	for _, list := range [][]*openapi3.SchemaRef{s.AnyOf, s.OneOf, s.AllOf} {
		for _, r := range list {
			admitNullWhereUntyped(r, seen)
		}
	}
	admitNullWhereUntyped(s.Items, seen)
	admitNullWhereUntyped(s.AdditionalProperties.Schema, seen)
}

// Failure is one exchange that disagrees with its document.
type Failure struct {
	Method, Path string
	// Operation is the document's operationId ("" when the document routes no operation).
	Operation string
	Status    int
	// Problems say what disagreed, each naming the schema path that failed.
	Problems []string
}

func (f *Failure) Error() string {
	op := f.Operation
	if op == "" {
		op = "no operation"
	}
	return fmt.Sprintf("openapi: %s %s (%s) answered %d: %s", f.Method, f.Path, op, f.Status, strings.Join(f.Problems, "; "))
}

// baseHeaders are the transport's own response headers, which no document lists: the HTTP
// server's or a proxy's in front of it (uvicorn and nginx name themselves in Server).
var baseHeaders = []string{"Content-Type", "Content-Length", "Date", "Transfer-Encoding", "Connection", "Keep-Alive", "Server", "Via"}

// routingResponses are the document's shared responses for requests it routes to no
// operation, by status (partner-api.yaml's components; a document without them leaves such
// exchanges unchecked).
var routingResponses = map[int]string{
	http.StatusNotFound:                    "NotFound",
	http.StatusMethodNotAllowed:            "MethodNotAllowed",
	http.StatusTemporaryRedirect:           "TrailingSlashRedirect",
	http.StatusRequestURITooLong:           "URITooLong",
	http.StatusRequestHeaderFieldsTooLarge: "HeadersTooLarge",
}

// Check validates one exchange: req as sent with reqBody, res as received with resBody. It
// returns nil or a *Failure.
func (c *Checker) Check(req *http.Request, reqBody []byte, res *http.Response, resBody []byte) error {
	if c.Skip != nil && c.Skip(req, res.StatusCode, resBody) {
		return nil
	}
	c.checked.Add(1)
	err := c.check(req, reqBody, res, resBody)
	if err != nil {
		c.failed.Add(1)
	}
	return err
}

// Stats returns how many exchanges were checked (skipped ones aside) and how many disagreed.
func (c *Checker) Stats() (checked, failed int64) { return c.checked.Load(), c.failed.Load() }

func (c *Checker) check(req *http.Request, reqBody []byte, res *http.Response, resBody []byte) error {
	ctx := req.Context()
	f := &Failure{Method: req.Method, Path: req.URL.Path, Status: res.StatusCode}
	// Route on the decoded path, as Starlette (and the sandbox) do: an encoded slash in an id
	// is a path separator there too.
	req = withBody(req, reqBody)
	req.URL.RawPath = ""
	route, path, ok := c.findRoute(req, res.StatusCode, f)
	if !ok {
		if len(f.Problems) > 0 {
			return f
		}
		return nil
	}
	in := &openapi3filter.RequestValidationInput{Request: req, PathParams: path, Route: route,
		Options: &openapi3filter.Options{AuthenticationFunc: openapi3filter.NoopAuthenticationFunc, MultiError: true, SkipSettingDefaults: true}}
	// The request is validated only to judge a 422 (what else it could say is the caller's
	// business): a tenth of a check's time, on every exchange, for the few that are 422.
	if res.StatusCode == http.StatusUnprocessableEntity && f.Operation == route.Operation.OperationID && route.Operation.OperationID != "" {
		reqErr := openapi3filter.ValidateRequest(ctx, in)
		// kin-openapi decodes a JSON body's first value and ignores what follows it; json.loads
		// (and the document's application/json) refuses that, so such a body is not accepted.
		accepted := reqErr == nil && (len(reqBody) == 0 || json.Valid(reqBody))
		if accepted && !onlyValueErrors(resBody) && !repeatedQuery(req) {
			f.Problems = append(f.Problems, "the document accepts this request but it was refused with 422: "+clip(resBody))
		}
	}
	in.Options = &openapi3filter.Options{IncludeResponseStatus: true, MultiError: true, AuthenticationFunc: openapi3filter.NoopAuthenticationFunc}
	out := &openapi3filter.ResponseValidationInput{RequestValidationInput: in, Status: res.StatusCode, Header: res.Header,
		Body: io.NopCloser(bytes.NewReader(resBody)), Options: in.Options}
	if req.Method == http.MethodHead {
		out.Options = &openapi3filter.Options{IncludeResponseStatus: true, MultiError: true, ExcludeResponseBody: true}
	}
	body, whole := c.builtInBody(route, res)
	var err error
	if whole && req.Method != http.MethodHead {
		// Status, headers and body at once: no header schema there needs 2020-12's validator.
		err = openapi3filter.ValidateResponse(ctx, &openapi3filter.ResponseValidationInput{RequestValidationInput: &openapi3filter.RequestValidationInput{
			Request: in.Request, PathParams: in.PathParams, Route: body, Options: in.Options}, Status: res.StatusCode, Header: res.Header,
			Body: io.NopCloser(bytes.NewReader(resBody)), Options: in.Options})
		body = nil
	} else if body != nil {
		opts := *out.Options
		opts.ExcludeResponseBody = true
		out.Options = &opts
	}
	if !whole || req.Method == http.MethodHead {
		err = openapi3filter.ValidateResponse(ctx, out)
	}
	if err == nil && body != nil {
		// kin-openapi validates the body only once the status and headers pass.
		err = openapi3filter.ValidateResponse(ctx, &openapi3filter.ResponseValidationInput{RequestValidationInput: &openapi3filter.RequestValidationInput{
			Request: in.Request, PathParams: in.PathParams, Route: body, Options: in.Options}, Status: res.StatusCode, Header: res.Header,
			Body: io.NopCloser(bytes.NewReader(resBody)), Options: in.Options})
	}
	if err != nil {
		f.Problems = append(f.Problems, problems(err)...)
	}
	f.Problems = append(f.Problems, documentedProblems(req, res, resBody, documented(route.Operation, res.StatusCode))...)
	if len(f.Problems) == 0 {
		return nil
	}
	slices.Sort(f.Problems)
	return f
}

// builtInBody returns, for a response whose body kin-openapi would validate with its built-in
// validator, the route to validate that body alone with: the same response without its headers
// (checked already) in the document read as OpenAPI 3.0. Otherwise nil.
//
// Given an OpenAPI 3.1 document, kin-openapi compiles a JSON Schema 2020-12 validator from the
// response's schema on every call — then, for a schema that refers to the document's components
// and uses no keyword only 2020-12 has, drops it and validates with its built-in validator
// (useJSONSchema2020). The compile is most of a check's time (a page of users: 4.3 ms of
// CPU). Asking for the built-in validator directly gives the same answer without the compile;
// the 3.0 reading differs from it only in honouring "nullable", so a schema that says nullable
// without null among its types keeps the full path.
//
// whole says the route keeps the response's headers too, to validate all at once: each header
// it documents has a schema any value of it passes, by either validator (plainHeader), and the
// answer holds no empty one. Else the headers are left to the document as it is (kin-openapi
// compiles a 2020-12 validator for each of them, on every call).
func (c *Checker) builtInBody(route *routers.Route, res *http.Response) (r *routers.Route, whole bool) {
	var e *entry
	for _, d := range c.docs {
		if d.doc == route.Spec {
			e = d
		}
	}
	if e == nil || c.everyBodyBy2020 || !route.Spec.IsOpenAPI31OrLater() || route.Operation.Responses.Len() == 0 {
		return nil, false
	}
	ref := route.Operation.Responses.Status(res.StatusCode)
	if ref == nil {
		ref = route.Operation.Responses.Default()
	}
	if ref == nil || ref.Value == nil || len(ref.Value.Content) == 0 {
		return nil, false
	}
	mt := ref.Value.Content.Get(res.Header.Get("Content-Type"))
	if mt == nil || mt.Schema == nil || mt.Schema.Value == nil || !e.validatedByBuiltIn(mt.Schema.Value) {
		return nil, false
	}
	bare := *ref.Value
	whole = true
	for name, h := range bare.Headers {
		if h.Value == nil || h.Value.Content != nil || h.Value.Schema == nil || !e.plainHeader(h.Value.Schema.Value) {
			whole = false
		} else if v, ok := res.Header[http.CanonicalHeaderKey(name)]; ok && (len(v) == 0 || v[0] == "") {
			whole = false
		}
	}
	if !whole {
		bare.Headers = nil
	}
	op := *route.Operation
	op.Responses = openapi3.NewResponses(openapi3.WithStatus(res.StatusCode, &openapi3.ResponseRef{Value: &bare}))
	b := *route
	b.Spec, b.Operation = e.builtIn, &op
	return &b, whole
}

// plainHeader says whether a header's schema is {type: string}, with at most minLength 1 and
// words that validate nothing: every value but the empty one passes it, in 3.0's reading and in
// 2020-12's.
func (e *entry) plainHeader(s *openapi3.Schema) bool {
	if s == nil {
		return false
	}
	if v, ok := e.plain.Load(s); ok {
		return v.(bool)
	}
	c := *s
	c.Title, c.Description, c.Example, c.Examples, c.Extensions, c.Deprecated = "", "", nil, nil, nil, false
	ok := c.Type != nil && len(*c.Type) == 1 && c.Type.Is(openapi3.TypeString) && c.MinLength <= 1
	c.Type, c.MinLength = nil, 0
	ok = ok && reflect.DeepEqual(c, openapi3.Schema{})
	e.plain.Store(s, ok)
	return ok
}

// validatedByBuiltIn says whether kin-openapi validates a value against s with its built-in
// validator though the document is 3.1 (builtInBody): s refers to a schema of the components,
// uses no keyword only JSON Schema 2020-12 has, and says nullable only with null among its types.
func (e *entry) validatedByBuiltIn(s *openapi3.Schema) bool {
	if v, ok := e.byBuiltIn.Load(s); ok {
		return v.(bool)
	}
	only2020, nullable := false, false
	_ = openapi3.NewSchemaRef("", s).WalkSubtree(func(_ string, ref *openapi3.SchemaRef) error {
		v := ref.Value
		if v == nil {
			return nil
		}
		// kin-openapi's schemaHasJSONSchema2020FallbackGuardKeyword, keyword by keyword.
		only2020 = only2020 || v.Const != nil || len(v.PrefixItems) != 0 || v.Contains != nil || len(v.PatternProperties) != 0 ||
			len(v.DependentSchemas) != 0 || v.PropertyNames != nil || v.UnevaluatedItems.Has != nil || v.UnevaluatedItems.Schema != nil ||
			v.UnevaluatedProperties.Has != nil || v.UnevaluatedProperties.Schema != nil || v.If != nil || v.Then != nil || v.Else != nil ||
			len(v.DependentRequired) != 0 || len(v.Defs) != 0 || v.ContentSchema != nil
		nullable = nullable || v.Nullable && !v.Type.IncludesNull()
		return nil
	})
	refers := false
	if b, err := json.Marshal(s); err == nil {
		var doc any
		refers = json.Unmarshal(b, &doc) == nil && refersToComponents(doc)
	}
	ok := refers && !only2020 && !nullable
	e.byBuiltIn.Store(s, ok)
	return ok
}

// refersToComponents says whether a schema, as JSON, holds a $ref to the document's schemas
// (kin-openapi's containsInternalSchemaRef).
func refersToComponents(node any) bool {
	switch node := node.(type) {
	case map[string]any:
		if ref, ok := node["$ref"].(string); ok && strings.HasPrefix(ref, "#/components/schemas/") {
			return true
		}
		for _, v := range node {
			if refersToComponents(v) {
				return true
			}
		}
	case []any:
		return slices.ContainsFunc(node, refersToComponents)
	}
	return false
}

// findRoute finds the operation of the first document that has the request's path and
// method. With none, an answer with a routing status (404, 405…) is checked against the
// document's routing response instead. ok false means there is nothing to check, or f says why
// the exchange is wrong.
func (c *Checker) findRoute(req *http.Request, status int, f *Failure) (route *routers.Route, path map[string]string, ok bool) {
	var e *entry
	for _, d := range c.docs {
		r, p, err := findRoute(d.router, req)
		if err == nil {
			e, route, path = d, r, p
			break
		}
		if e == nil && errors.Is(err, routers.ErrMethodNotAllowed) {
			e = d
		}
	}
	if route == nil {
		if e == nil && len(c.docs) > 0 {
			e = c.docs[0]
		}
		if e == nil {
			return nil, nil, false
		}
		name, ok := routingResponses[status]
		if !ok || e.doc.Components == nil || e.doc.Components.Responses[name] == nil {
			if !ok {
				f.Problems = append(f.Problems, fmt.Sprintf("no operation of %s has this path and method, and %d is not a routing answer", e.name, status))
			}
			return nil, nil, false // a document without routing responses says nothing about them
		}
		op := openapi3.NewOperation()
		op.Responses = openapi3.NewResponses(openapi3.WithStatus(status, e.doc.Components.Responses[name]))
		route = &routers.Route{Spec: e.doc, Path: req.URL.Path, Method: req.Method, Operation: op}
		f.Operation = "components/responses/" + name
	} else {
		f.Operation = route.Operation.OperationID
	}
	return route, path, true
}

// findRoute finds req's route in one document as Starlette (and the sandbox) route it: a route's
// pattern also matches before one final newline (Python's "$"), so /v1/health\n is /v1/health.
func findRoute(router routers.Router, req *http.Request) (*routers.Route, map[string]string, error) {
	r, p, err := router.FindRoute(req)
	if path := req.URL.Path; err != nil && len(path) > 1 && strings.HasSuffix(path, "\n") {
		trimmed := req.Clone(req.Context())
		trimmed.URL.Path = path[:len(path)-1]
		if r2, p2, err2 := router.FindRoute(trimmed); err2 == nil || !errors.Is(err2, routers.ErrPathNotFound) {
			return r2, p2, err2
		}
	}
	return r, p, err
}

// documentedProblems checks an answer against what the document says of its status (resp, nil
// when it says nothing) where kin-openapi does not: HEAD's and redirects' status and required
// headers, headers the document does not name, and a body where it documents none.
func documentedProblems(req *http.Request, res *http.Response, resBody []byte, resp *openapi3.Response) []string {
	var out []string
	if unvalidated(req.Method, res.StatusCode) {
		// kin-openapi leaves HEAD and redirects alone: their status and required headers here.
		if resp == nil {
			out = append(out, fmt.Sprintf("status %d is not documented", res.StatusCode))
		}
		for name, h := range headersOf(resp) {
			if h.Value != nil && h.Value.Required && res.Header.Get(name) == "" {
				out = append(out, fmt.Sprintf("required header %s is missing", name))
			}
		}
	}
	if resp != nil {
		for name := range res.Header {
			if !slices.ContainsFunc(baseHeaders, func(h string) bool { return strings.EqualFold(h, name) }) && resp.Headers[name] == nil &&
				!hasHeaderFold(resp.Headers, name) {
				out = append(out, fmt.Sprintf("header %s is not documented for %d", name, res.StatusCode))
			}
		}
		if len(resp.Content) == 0 && len(resBody) > 0 {
			out = append(out, fmt.Sprintf("%d is documented without a body, got %s", res.StatusCode, clip(resBody)))
		}
	}
	return out
}

// CheckEvent validates one webhook delivery — its headers and its body — against the
// document's webhooks entry for the body's event_type. It returns nil or a *Failure.
func (c *Checker) CheckEvent(header http.Header, body []byte) error {
	var env struct {
		EventType string `json:"event_type"`
	}
	_ = json.Unmarshal(body, &env)
	f := &Failure{Method: http.MethodPost, Path: "webhooks/" + env.EventType}
	c.checked.Add(1)
	for _, d := range c.docs {
		item := d.doc.Webhooks[env.EventType]
		if item == nil || item.Post == nil {
			continue
		}
		f.Operation = item.Post.OperationID
		req, err := http.NewRequest(http.MethodPost, "http://receiver.test/", bytes.NewReader(body))
		if err != nil {
			return err
		}
		req.Header = header.Clone()
		in := &openapi3filter.RequestValidationInput{Request: req, Route: &routers.Route{Spec: d.doc, Path: "/", PathItem: item,
			Method: http.MethodPost, Operation: item.Post},
			Options: &openapi3filter.Options{AuthenticationFunc: openapi3filter.NoopAuthenticationFunc, MultiError: true, SkipSettingDefaults: true}}
		if err := openapi3filter.ValidateRequest(context.Background(), in); err != nil {
			f.Problems = problems(err)
			c.failed.Add(1)
			return f
		}
		return nil
	}
	f.Problems = []string{fmt.Sprintf("no document describes the event type %q under webhooks", env.EventType)}
	c.failed.Add(1)
	return f
}

// documented returns the response the operation documents for status: exact, then its range
// (2XX), then default.
func documented(op *openapi3.Operation, status int) *openapi3.Response {
	if op == nil || op.Responses == nil {
		return nil
	}
	for _, key := range []string{strconv.Itoa(status), strconv.Itoa(status/100) + "XX", "default"} {
		if r := op.Responses.Value(key); r != nil && r.Value != nil {
			return r.Value
		}
	}
	return nil
}

func unvalidated(method string, status int) bool {
	return method == http.MethodHead || slices.Contains([]int{http.StatusMovedPermanently, http.StatusNotModified,
		http.StatusTemporaryRedirect, http.StatusPermanentRedirect}, status)
}

func headersOf(r *openapi3.Response) openapi3.Headers {
	if r == nil {
		return nil
	}
	return r.Headers
}

func hasHeaderFold(h openapi3.Headers, name string) bool {
	for k := range h {
		if strings.EqualFold(k, name) {
			return true
		}
	}
	return false
}

// problems flattens kin-openapi's errors into one line each, with the schema path that failed.
func problems(err error) []string {
	var re *openapi3filter.ResponseError
	if errors.As(err, &re) && re.Err != nil {
		var out []string
		for _, p := range problems(re.Err) {
			out = append(out, re.Reason+": "+p)
		}
		return out
	}
	if re != nil {
		return []string{re.Reason}
	}
	var me openapi3.MultiError
	if errors.As(err, &me) {
		var out []string
		for _, e := range me {
			out = append(out, problems(e)...)
		}
		return out
	}
	return []string{describe(err)}
}

func describe(err error) string {
	var se *openapi3.SchemaError
	if errors.As(err, &se) {
		ptr := "/" + strings.Join(se.JSONPointer(), "/")
		return fmt.Sprintf("at %s: %s (schema keyword %q)", ptr, se.Reason, se.SchemaField)
	}
	return strings.ReplaceAll(err.Error(), "\n", " ")
}

// repeatedQuery reports whether the query is one the checker cannot read as the server did: a
// parameter given twice (OpenAPI leaves which one counts unsaid; Starlette takes the last,
// kin-openapi the first), or a pair Go's parser drops (a bad escape such as %zz, a semicolon)
// where Starlette keeps it. Such a request's 422 says nothing about the document.
func repeatedQuery(r *http.Request) bool {
	q, err := url.ParseQuery(r.URL.RawQuery)
	if err != nil {
		return true
	}
	for _, vs := range q {
		if len(vs) > 1 {
			return true
		}
	}
	return false
}

// onlyValueErrors reports whether a 422 lists only refusals no schema keyword expresses:
// pydantic's value_error (a model's own validator: a cross-field rule, the storable time range),
// url_parsing (the URL parser's finer rules, such as IDNA) and string_unicode (a string holding
// a lone surrogate, which a JSON decoder hands a schema validator as U+FFFD, decisions D19) —
// and a date-time of year 0000, which RFC 3339 (the document's format) allows and pydantic-core
// refuses (Python's datetime starts at year 1).
func onlyValueErrors(body []byte) bool {
	var v struct {
		Detail []struct {
			Type string `json:"type"`
			Ctx  struct {
				Error json.RawMessage `json:"error"` // a string, or a value_error's object
			} `json:"ctx"`
		} `json:"detail"`
	}
	if json.Unmarshal(body, &v) != nil || len(v.Detail) == 0 {
		return false
	}
	for _, it := range v.Detail {
		switch {
		case it.Type == "value_error" || it.Type == "url_parsing" || it.Type == "string_unicode":
		case it.Type == "datetime_parsing" && string(it.Ctx.Error) == `"year 0 is out of range"`:
		default:
			return false
		}
	}
	return true
}

func withBody(req *http.Request, body []byte) *http.Request {
	r := req.Clone(req.Context())
	r.Body = io.NopCloser(bytes.NewReader(body))
	r.ContentLength = int64(len(body))
	return r
}

func clip(b []byte) string {
	if len(b) > 300 {
		return string(b[:300]) + "…"
	}
	return string(b)
}

// Transport returns a RoundTripper that sends through next (http.DefaultTransport when nil)
// and checks every exchange, answering a *Failure as the round trip's error when one
// disagrees with the documents.
func (c *Checker) Transport(next http.RoundTripper) http.RoundTripper {
	if next == nil {
		next = http.DefaultTransport
	}
	return &transport{c: c, next: next}
}

type transport struct {
	c    *Checker
	next http.RoundTripper
}

func (t *transport) RoundTrip(req *http.Request) (*http.Response, error) {
	var reqBody []byte
	if req.Body != nil && req.Body != http.NoBody {
		b, err := io.ReadAll(req.Body)
		req.Body.Close()
		if err != nil {
			return nil, err
		}
		reqBody = b
		req = req.Clone(req.Context())
		req.Body = io.NopCloser(bytes.NewReader(b))
		req.GetBody = func() (io.ReadCloser, error) { return io.NopCloser(bytes.NewReader(b)), nil }
	}
	res, err := t.next.RoundTrip(req)
	if err != nil {
		return nil, err
	}
	body, err := io.ReadAll(res.Body)
	res.Body.Close()
	if err != nil {
		return nil, err
	}
	res.Body = io.NopCloser(bytes.NewReader(body))
	if err := t.c.Check(req, reqBody, res, body); err != nil {
		return nil, err
	}
	return res, nil
}
