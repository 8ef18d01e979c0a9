package features

import (
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"regexp"
	"slices"
	"strconv"
	"strings"

	"github.com/cucumber/godog"
	"github.com/partnersim/partnersim/features/laws"
	"github.com/tidwall/gjson"
)

// q matches a double-quoted step argument in which \" stands for a quote.
const q = `"((?:[^"\\]|\\.)*)"`

// httpSteps are the black-box steps: requests, and assertions on responses and on the JSON of
// the current response ("the JSON at …") or of the current delivery ("the event at …").
func (w *world) httpSteps(sc *godog.ScenarioContext) {
	sc.Step(`^I (GET|DELETE|POST|PUT|PATCH|OPTIONS) `+q+`$`, w.request)
	sc.Step(`^I (GET|DELETE|POST|PUT|PATCH) `+q+` without an API key$`, w.requestNoKey)
	sc.Step(`^I (GET|DELETE|POST|PUT|PATCH) `+q+` with the API key `+q+`$`, w.requestLiteralKey)
	sc.Step(`^I (GET|DELETE|POST|PUT|PATCH) `+q+` with the key `+q+`$`, w.requestNamedKey)
	sc.Step(`^I (GET|DELETE|POST|PUT|PATCH|OPTIONS) `+q+` with the header `+q+` set to `+q+`$`, w.requestHeader)
	sc.Step(`^I (GET|DELETE|POST|PUT|PATCH) `+q+` with the header `+q+` set to `+q+` without an API key$`, w.requestHeaderNoKey)
	sc.Step(`^I (POST|PUT|PATCH) `+q+` with JSON:$`, w.requestJSON)
	sc.Step(`^I (POST|PUT|PATCH) `+q+` with the raw body `+q+`$`, w.requestRaw)
	sc.Step(`^I (POST|PUT|PATCH) `+q+` with the raw body `+q+` and no content type$`, w.requestRawNoType)
	sc.Step(`^I (POST|PUT|PATCH) `+q+` with the JSON `+q+` padded with spaces to (\d+) bytes$`, w.requestPadded)
	sc.Step(`^I (POST|PUT|PATCH) `+q+` with a JSON object nested (\d+) levels deep$`, w.requestNested)
	sc.Step(`^the response body writes `+q+` as FastAPI's JSON encoder does$`, w.bodyWritesText)

	sc.Step(`^the response status is (\d{3})$`, w.statusIs)
	sc.Step(`^the response status is a client error$`, w.statusClientError)
	sc.Step(`^the response status is not (\d{3})$`, w.statusIsNot)
	sc.Step(`^the response body is empty$`, w.bodyEmpty)
	sc.Step(`^the response header `+q+` is `+q+`$`, w.headerIs)
	sc.Step(`^the response header `+q+` is present$`, w.headerPresent)
	sc.Step(`^the response header `+q+` is absent$`, w.headerAbsent)
	sc.Step(`^the response header `+q+` ends with `+q+`$`, w.headerEndsWith)
	sc.Step(`^the response header `+q+` has the directive `+q+`$`, w.headerDirective)
	sc.Step(`^the response header `+q+` lists `+q+`$`, w.headerLists)
	sc.Step(`^the response is JSON:$`, w.bodyIs)
	sc.Step(`^the response body is exactly:$`, w.bodyExactly)
	sc.Step(`^the response JSON contains:$`, w.bodyContains)
	sc.Step(`^the detail is `+q+`$`, w.detailIs)
	sc.Step(`^the response is a validation error$`, w.validationShape)
	sc.Step(`^the response is a validation error naming `+q+`$`, w.validationNaming)

	sc.Step(`^the (JSON|event) at `+q+` is `+q+`$`, w.atIsString)
	sc.Step(`^the (JSON|event) at `+q+` is (-?\d+(?:\.\d+)?)$`, w.atIsNumber)
	sc.Step(`^the (JSON|event) at `+q+` is (true|false|null)$`, w.atIsLiteral)
	sc.Step(`^the (JSON|event) at `+q+` is absent$`, w.atAbsent)
	sc.Step(`^the (JSON|event) at `+q+` is present$`, w.atPresent)
	sc.Step(`^the (JSON|event) at `+q+` is an? (string|integer|number|boolean|object|array|empty array|non-empty array|decimal string|money string|timestamp)$`, w.atKind)
	sc.Step(`^the (JSON|event) at `+q+` has (\d+) elements?$`, w.atLen)
	sc.Step(`^the (JSON|event) at `+q+` has more than (\d+) elements?$`, w.atLenMore)
	sc.Step(`^the (JSON|event) at `+q+` matches `+q+`$`, w.atMatches)
	sc.Step(`^the (JSON|event) at `+q+` starts with `+q+`$`, w.atStartsWith)
	sc.Step(`^the (JSON|event) at `+q+` is one of `+q+`$`, w.atOneOf)
	sc.Step(`^the (JSON|event) at `+q+` is not `+q+`$`, w.atIsNot)
	sc.Step(`^the (JSON|event) at `+q+` has the keys `+q+`$`, w.atHasKeys)
	sc.Step(`^the (JSON|event) at `+q+` equals the sum of the (JSON|event) at `+q+`$`, w.atIsSum)
	sc.Step(`^the (JSON|event) at `+q+` is the JSON `+q+`$`, w.atIsJSON)
	sc.Step(`^the JSON at `+q+` lists `+q+` values `+q+`$`, w.listsValues)
	sc.Step(`^the JSON at `+q+` contains an element with `+q+` equal to `+q+`$`, w.containsElement)
	sc.Step(`^the JSON at `+q+` contains no element with `+q+` equal to `+q+`$`, w.containsNoElement)
	sc.Step(`^every element of the JSON at `+q+` has `+q+` equal to `+q+`$`, w.everyElementEq)
	sc.Step(`^every element of the JSON at `+q+` has the keys `+q+`$`, w.everyElementKeys)
	sc.Step(`^every element of the JSON at `+q+` has `+q+` as an? (string|integer|boolean|object|array|decimal string|money string|timestamp)$`, w.everyElementKind)
	sc.Step(`^I remember the (JSON|event) at `+q+` as `+q+`$`, w.remember)

	sc.Step(`^I page through `+q+` with per_page (\d+)$`, w.pageThrough)
	sc.Step(`^the pages list `+q+` values `+q+`$`, w.pagesList)
	sc.Step(`^every page reports total_records (\d+) and per_page (\d+)$`, w.pagesTotals)
	sc.Step(`^every page reports the same total_records$`, w.pagesSameTotal)
	sc.Step(`^each page's last_record_number is the previous one plus its item count$`, w.pagesCursor)
	sc.Step(`^the walk ends with an empty page$`, w.pagesEndEmpty)
	sc.Step(`^the pages visit total_records records, each once by `+q+`$`, w.pagesEachOnce)
	sc.Step(`^no page has more than (\d+) items$`, w.pagesMax)
}

func (w *world) request(method, path string) error {
	_, err := w.do(method, unq(path), nil, "", authKey)
	return err
}

func (w *world) requestNoKey(method, path string) error {
	_, err := w.do(method, unq(path), nil, "", authNone)
	return err
}

func (w *world) requestLiteralKey(method, path, key string) error {
	k, err := w.expand(unq(key))
	if err != nil {
		return err
	}
	_, err = w.do(method, unq(path), nil, "", authLiteral, k)
	return err
}

func (w *world) requestNamedKey(method, path, name string) error {
	k, ok := w.keys[name]
	if !ok {
		return fmt.Errorf("no key named %q in this scenario", name)
	}
	_, err := w.do(method, unq(path), nil, "", authLiteral, k)
	return err
}

func (w *world) requestHeader(method, path, name, value string) error {
	return w.requestWithHeader(method, path, name, value, authKey)
}

func (w *world) requestHeaderNoKey(method, path, name, value string) error {
	return w.requestWithHeader(method, path, name, value, authNone)
}

func (w *world) requestWithHeader(method, path, name, value, auth string) error {
	v, err := w.expand(unq(value))
	if err != nil {
		return err
	}
	_, err = w.doHeaders(method, unq(path), nil, "", http.Header{http.CanonicalHeaderKey(unq(name)): {v}}, auth)
	return err
}

func (w *world) requestJSON(method, path string, doc *godog.DocString) error {
	return w.sendExpanded(method, path, doc.Content, "application/json")
}

func (w *world) requestRaw(method, path, body string) error {
	return w.sendExpanded(method, path, unq(body), "application/json")
}

func (w *world) requestRawNoType(method, path, body string) error {
	return w.sendExpanded(method, path, unq(body), "")
}

// sendExpanded sends a step's body, its {variables} expanded, with the scenario's key.
func (w *world) sendExpanded(method, path, body, contentType string) error {
	b, err := w.expand(body)
	if err != nil {
		return err
	}
	_, err = w.do(method, unq(path), []byte(b), contentType, authKey)
	return err
}

// requestPadded sends the JSON followed by spaces up to exactly n bytes: whitespace after a
// JSON document is part of it, so the body is as valid as the JSON.
func (w *world) requestPadded(method, path, body, n string) error {
	b, err := w.padded(unq(body), n, " ")
	if err != nil {
		return err
	}
	_, err = w.do(method, unq(path), []byte(b), "application/json", authKey)
	return err
}

// padded expands s and appends pad until it is exactly n bytes long.
func (w *world) padded(s, n, pad string) (string, error) {
	s, err := w.expand(s)
	if err != nil {
		return "", err
	}
	size, _ := strconv.Atoi(n)
	if len(s) > size {
		return "", fmt.Errorf("%.40q… is longer than %d bytes", s, size)
	}
	return s + strings.Repeat(pad, size-len(s)), nil
}

// requestNested sends {"a":{"a":…1…}} with n objects.
func (w *world) requestNested(method, path, n string) error {
	depth, _ := strconv.Atoi(n)
	body := strings.Repeat(`{"a":`, depth) + "1" + strings.Repeat("}", depth)
	_, err := w.do(method, unq(path), []byte(body), "application/json", authKey)
	return err
}

// bodyWritesText checks the bytes a text value is written as: the step's argument is a JSON
// string literal (so escapes can name any character) or a variable holding the text, and the
// body must contain it as Python's json.dumps(ensure_ascii=False) writes it — FastAPI's
// JSONResponse — which escapes only '"', '\\' and the control characters below U+0020.
func (w *world) bodyWritesText(text string) error {
	r, err := w.last()
	if err != nil {
		return err
	}
	s, err := w.textArg(text)
	if err != nil {
		return err
	}
	want := pyJSONString(s)
	if !strings.Contains(string(r.Body), want) {
		return fmt.Errorf("expected the body to contain %s (Python's json.dumps of %q), got %s", want, s, r)
	}
	return nil
}

// textArg is a step's text: {variable} names a remembered text, else the argument is the
// inside of a JSON string literal.
func (w *world) textArg(arg string) (string, error) {
	if m := varRe.FindString(arg); m == arg && arg != "" {
		return w.expand(arg)
	}
	var s string
	if err := json.Unmarshal([]byte(`"`+arg+`"`), &s); err != nil {
		return "", fmt.Errorf("the text %q is not the inside of a JSON string literal: %w", arg, err)
	}
	return s, nil
}

// pyJSONString is a string as Python's json.dumps(s, ensure_ascii=False) writes it. It is the
// suite's own, written from Python's rules, not the simulator's encoder (simulator/validate):
// the suite judges any implementation, and an expectation computed by the code under test
// could not catch its mistakes (the package never imports the simulator).
func pyJSONString(s string) string {
	var b strings.Builder
	b.WriteByte('"')
	for _, r := range s {
		switch r {
		case '"':
			b.WriteString(`\"`)
		case '\\':
			b.WriteString(`\\`)
		case '\n':
			b.WriteString(`\n`)
		case '\r':
			b.WriteString(`\r`)
		case '\t':
			b.WriteString(`\t`)
		case '\b':
			b.WriteString(`\b`)
		case '\f':
			b.WriteString(`\f`)
		default:
			if r < 0x20 {
				fmt.Fprintf(&b, `\u%04x`, r)
			} else {
				b.WriteRune(r)
			}
		}
	}
	b.WriteByte('"')
	return b.String()
}

func (w *world) last() (*response, error) {
	if w.resp == nil {
		return nil, errors.New("no request was made yet")
	}
	return w.resp, nil
}

func (w *world) statusIs(code string) error {
	r, err := w.last()
	if err != nil {
		return err
	}
	if want, _ := strconv.Atoi(code); r.Status != want {
		return fmt.Errorf("expected status %d, got %s", want, r)
	}
	return nil
}

func (w *world) statusIsNot(code string) error {
	r, err := w.last()
	if err != nil {
		return err
	}
	if want, _ := strconv.Atoi(code); r.Status == want {
		return fmt.Errorf("expected a status other than %d, got %s", want, r)
	}
	return nil
}

func (w *world) statusClientError() error {
	r, err := w.last()
	if err != nil {
		return err
	}
	if r.Status < 400 || r.Status > 499 {
		return fmt.Errorf("expected a 4xx status (the request is refused), got %s", r)
	}
	return nil
}

func (w *world) bodyEmpty() error {
	r, err := w.last()
	if err != nil {
		return err
	}
	if len(r.Body) != 0 {
		return fmt.Errorf("expected an empty body, got %q", truncate(string(r.Body), 300))
	}
	return nil
}

func (w *world) header(name string) (string, []string, error) {
	r, err := w.last()
	if err != nil {
		return "", nil, err
	}
	vs := r.Header.Values(unq(name))
	if len(vs) == 0 {
		return "", nil, nil
	}
	return vs[0], vs, nil
}

func (w *world) headerIs(name, want string) error {
	want, err := w.expand(unq(want))
	if err != nil {
		return err
	}
	v, vs, err := w.header(name)
	if err != nil {
		return err
	}
	if len(vs) == 0 || v != want {
		return fmt.Errorf("expected header %s: %q, got %q (%s)", name, want, vs, w.resp)
	}
	return nil
}

func (w *world) headerPresent(name string) error {
	v, _, err := w.header(name)
	if err != nil {
		return err
	}
	if v == "" {
		return fmt.Errorf("expected a non-empty %s header, got none (%s)", name, w.resp)
	}
	return nil
}

func (w *world) headerAbsent(name string) error {
	_, vs, err := w.header(name)
	if err != nil {
		return err
	}
	if len(vs) > 0 {
		return fmt.Errorf("expected no %s header, got %q", name, vs)
	}
	return nil
}

func (w *world) headerEndsWith(name, suffix string) error {
	suffix, err := w.expand(unq(suffix))
	if err != nil {
		return err
	}
	v, _, err := w.header(name)
	if err != nil {
		return err
	}
	if !strings.HasSuffix(v, suffix) {
		return fmt.Errorf("expected header %s to end with %q, got %q", name, suffix, v)
	}
	return nil
}

// headerLists checks a comma-separated header holds exactly these values, in any order.
// headerDirective checks that a header of ;-separated directives (Content-Security-Policy)
// holds one, whatever the others.
func (w *world) headerDirective(name, directive string) error {
	_, vs, err := w.header(name)
	if err != nil {
		return err
	}
	want := strings.Join(strings.Fields(unq(directive)), " ")
	for _, v := range vs {
		for d := range strings.SplitSeq(v, ";") {
			if strings.Join(strings.Fields(d), " ") == want {
				return nil
			}
		}
	}
	return fmt.Errorf("expected header %s to hold the directive %q, got %q", name, want, vs)
}

func (w *world) headerLists(name, values string) error {
	_, vs, err := w.header(name)
	if err != nil {
		return err
	}
	var got []string
	for _, v := range vs {
		got = append(got, splitList(v)...)
	}
	want := splitList(unq(values))
	slices.Sort(got)
	slices.Sort(want)
	if !slices.Equal(got, want) {
		return fmt.Errorf("expected header %s to list %v, got %v", name, want, got)
	}
	return nil
}

func (w *world) bodyCompare(doc *godog.DocString, subset bool) error {
	r, err := w.last()
	if err != nil {
		return err
	}
	exp, err := w.expand(doc.Content)
	if err != nil {
		return err
	}
	want, err := decodeJSON([]byte(exp))
	if err != nil {
		return fmt.Errorf("the scenario's expected JSON does not parse: %w", err)
	}
	got, err := decodeJSON(r.Body)
	if err != nil {
		return fmt.Errorf("expected a JSON body, got %s", r)
	}
	if d := jsonDiff(want, got, subset, ""); d != "" {
		return fmt.Errorf("%s; the response was %s", d, r)
	}
	return nil
}

func (w *world) bodyIs(doc *godog.DocString) error       { return w.bodyCompare(doc, false) }
func (w *world) bodyContains(doc *godog.DocString) error { return w.bodyCompare(doc, true) }

// bodyExactly compares the raw bytes of the body, not their JSON meaning: separators, key order
// and escaping are part of what FastAPI sends (the DocString is one line, expanded).
func (w *world) bodyExactly(doc *godog.DocString) error {
	r, err := w.last()
	if err != nil {
		return err
	}
	want, err := w.expand(strings.TrimSpace(doc.Content))
	if err != nil {
		return err
	}
	if got := string(r.Body); got != want {
		return fmt.Errorf("expected the body to be exactly\n%s\ngot\n%s", want, truncate(got, 2000))
	}
	return nil
}

func (w *world) detailIs(want string) error {
	r, err := w.last()
	if err != nil {
		return err
	}
	want, err = w.expand(unq(want))
	if err != nil {
		return err
	}
	d := r.json().Get("detail")
	if d.Type != gjson.String || d.Str != want {
		return fmt.Errorf("expected detail %q, got %s", want, r)
	}
	return nil
}

// validationShape checks spec §7: a body {detail: [...]} whose elements have loc (array of
// strings), msg (string), type (string), input, and ctx (an object) when present.
func (w *world) validationShape() error {
	r, err := w.last()
	if err != nil {
		return err
	}
	if !gjson.ValidBytes(r.Body) {
		return fmt.Errorf("expected a JSON validation error body, got %s", r)
	}
	d := r.json().Get("detail")
	if !d.IsArray() || len(d.Array()) == 0 {
		return fmt.Errorf("expected detail to be a non-empty array (validation failure form), got %s", r)
	}
	for i, e := range d.Array() {
		loc := e.Get("loc")
		if !loc.IsArray() {
			return fmt.Errorf("expected detail[%d].loc to be an array of strings, got %s (%s)", i, orAbsent(loc), r)
		}
		for _, l := range loc.Array() {
			if l.Type != gjson.String {
				return fmt.Errorf("expected detail[%d].loc to hold only strings, got %s", i, loc.Raw)
			}
		}
		if m := e.Get("msg"); m.Type != gjson.String {
			return fmt.Errorf("expected detail[%d].msg to be a string, got %s", i, orAbsent(m))
		}
		if t := e.Get("type"); t.Type != gjson.String {
			return fmt.Errorf("expected detail[%d].type to be a string, got %s", i, orAbsent(t))
		}
		if !e.Get("input").Exists() {
			return fmt.Errorf("expected detail[%d].input to be present, got %s", i, e.Raw)
		}
		if c := e.Get("ctx"); c.Exists() && !c.IsObject() {
			return fmt.Errorf("expected detail[%d].ctx to be an object, got %s", i, c.Raw)
		}
	}
	return nil
}

// validationNaming checks the validation error shape and that one element's loc ends with the
// named input (the spec leaves loc's content to the implementation; its last element naming
// the input is FastAPI's and docs/decisions.md's).
func (w *world) validationNaming(name string) error {
	if err := w.validationShape(); err != nil {
		return err
	}
	name = unq(name)
	var locs []string
	for _, e := range w.resp.json().Get("detail").Array() {
		l := e.Get("loc").Array()
		locs = append(locs, e.Get("loc").Raw)
		if len(l) > 0 && l[len(l)-1].Str == name {
			return nil
		}
	}
	return fmt.Errorf("expected a validation error whose loc names %q, got locs %v", name, locs)
}

func orAbsent(r gjson.Result) string {
	if !r.Exists() {
		return "absent"
	}
	return r.Raw
}

// subject returns the JSON the "JSON at"/"event at" steps read.
func (w *world) subject(which string) (gjson.Result, string, error) {
	if which == "event" {
		d, err := w.current()
		if err != nil {
			return gjson.Result{}, "", err
		}
		return gjson.ParseBytes(d.Body), "the event " + truncate(string(d.Body), 400), nil
	}
	r, err := w.last()
	if err != nil {
		return gjson.Result{}, "", err
	}
	return r.json(), r.String(), nil
}

func (w *world) at(which, path string) (gjson.Result, string, error) {
	p, err := w.expand(unq(path))
	if err != nil {
		return gjson.Result{}, "", err
	}
	s, desc, err := w.subject(which)
	if err != nil {
		return gjson.Result{}, "", err
	}
	return s.Get(p), desc, nil
}

// atArg is at's value together with the step's other argument, its {variables} expanded.
func (w *world) atArg(which, path, arg string) (v gjson.Result, expanded, desc string, err error) {
	if expanded, err = w.expand(unq(arg)); err != nil {
		return gjson.Result{}, "", "", err
	}
	v, desc, err = w.at(which, path)
	return v, expanded, desc, err
}

func (w *world) atIsString(which, path, want string) error {
	v, want, desc, err := w.atArg(which, path, want)
	if err != nil {
		return err
	}
	if v.Type != gjson.String || v.Str != want {
		return fmt.Errorf("expected %s to be %q, got %s in %s", unq(path), want, orAbsent(v), desc)
	}
	return nil
}

// atIsJSON compares the value at a path with a JSON text (often a remembered value).
func (w *world) atIsJSON(which, path, raw string) error {
	v, raw, desc, err := w.atArg(which, path, raw)
	if err != nil {
		return err
	}
	want, err := decodeJSON([]byte(raw))
	if err != nil {
		return fmt.Errorf("the scenario's expected JSON %q does not parse: %w", raw, err)
	}
	if !v.Exists() {
		return fmt.Errorf("expected %s to be %s, got nothing in %s", unq(path), raw, desc)
	}
	got, err := decodeJSON([]byte(v.Raw))
	if err != nil {
		return err
	}
	if d := jsonDiff(want, got, false, unq(path)); d != "" {
		return fmt.Errorf("%s", d)
	}
	return nil
}

func (w *world) atIsNot(which, path, notWant string) error {
	v, notWant, desc, err := w.atArg(which, path, notWant)
	if err != nil {
		return err
	}
	if v.String() == notWant {
		return fmt.Errorf("expected %s to differ from %q, got it in %s", unq(path), notWant, desc)
	}
	return nil
}

func (w *world) atIsNumber(which, path, want string) error {
	v, desc, err := w.at(which, path)
	if err != nil {
		return err
	}
	if v.Type != gjson.Number || !sameNumberStr(v.Raw, want) {
		return fmt.Errorf("expected %s to be the number %s, got %s in %s", unq(path), want, orAbsent(v), desc)
	}
	return nil
}

func sameNumberStr(a, b string) bool {
	x, err1 := strconv.ParseFloat(a, 64)
	y, err2 := strconv.ParseFloat(b, 64)
	return err1 == nil && err2 == nil && x == y
}

func (w *world) atIsLiteral(which, path, want string) error {
	v, desc, err := w.at(which, path)
	if err != nil {
		return err
	}
	if !v.Exists() || v.Raw != want {
		return fmt.Errorf("expected %s to be %s, got %s in %s", unq(path), want, orAbsent(v), desc)
	}
	return nil
}

func (w *world) atAbsent(which, path string) error {
	v, desc, err := w.at(which, path)
	if err != nil {
		return err
	}
	if v.Exists() {
		return fmt.Errorf("expected %s to be absent, got %s in %s", unq(path), v.Raw, desc)
	}
	return nil
}

func (w *world) atPresent(which, path string) error {
	v, desc, err := w.at(which, path)
	if err != nil {
		return err
	}
	if !v.Exists() {
		return fmt.Errorf("expected %s to be present, got nothing in %s", unq(path), desc)
	}
	return nil
}

func (w *world) atKind(which, path, kind string) error {
	v, desc, err := w.at(which, path)
	if err != nil {
		return err
	}
	if err := checkKind(v, kind); err != nil {
		return fmt.Errorf("%s: %w in %s", unq(path), err, desc)
	}
	return nil
}

func (w *world) atLen(which, path, n string) error {
	v, desc, err := w.at(which, path)
	if err != nil {
		return err
	}
	want, _ := strconv.Atoi(n)
	if !v.IsArray() || len(v.Array()) != want {
		return fmt.Errorf("expected %s to be an array of %d, got %s in %s", unq(path), want, orAbsent(v), desc)
	}
	return nil
}

func (w *world) atLenMore(which, path, n string) error {
	v, desc, err := w.at(which, path)
	if err != nil {
		return err
	}
	want, _ := strconv.Atoi(n)
	if !v.IsArray() || len(v.Array()) <= want {
		return fmt.Errorf("expected %s to be an array of more than %d, got %s in %s", unq(path), want, orAbsent(v), desc)
	}
	return nil
}

func (w *world) atMatches(which, path, pattern string) error {
	v, pattern, desc, err := w.atArg(which, path, pattern)
	if err != nil {
		return err
	}
	re, err := regexp.Compile(pattern)
	if err != nil {
		return err
	}
	if v.Type != gjson.String || !re.MatchString(v.Str) {
		return fmt.Errorf("expected %s to match %q, got %s in %s", unq(path), pattern, orAbsent(v), desc)
	}
	return nil
}

func (w *world) atStartsWith(which, path, prefix string) error {
	v, prefix, desc, err := w.atArg(which, path, prefix)
	if err != nil {
		return err
	}
	if v.Type != gjson.String || !strings.HasPrefix(v.Str, prefix) {
		return fmt.Errorf("expected %s to start with %q, got %s in %s", unq(path), prefix, orAbsent(v), desc)
	}
	return nil
}

func (w *world) atOneOf(which, path, list string) error {
	v, desc, err := w.at(which, path)
	if err != nil {
		return err
	}
	opts := splitList(unq(list))
	if v.Type != gjson.String || !slices.Contains(opts, v.Str) {
		return fmt.Errorf("expected %s to be one of %v, got %s in %s", unq(path), opts, orAbsent(v), desc)
	}
	return nil
}

func (w *world) atHasKeys(which, path, keys string) error {
	v, desc, err := w.at(which, path)
	if err != nil {
		return err
	}
	return hasKeys(v, unq(path), splitList(unq(keys)), desc)
}

func hasKeys(v gjson.Result, path string, keys []string, desc string) error {
	if !v.IsObject() {
		return fmt.Errorf("expected %s to be an object, got %s in %s", path, orAbsent(v), desc)
	}
	for _, k := range keys {
		if !v.Get(gjson.Escape(k)).Exists() {
			return fmt.Errorf("expected %s to have the key %q, got %s", path, k, truncate(v.Raw, 400))
		}
	}
	return nil
}

// atIsSum checks a decimal string equals the sum of the decimal strings of an array path.
func (w *world) atIsSum(which, path, which2, arrayPath string) error {
	v, desc, err := w.at(which, path)
	if err != nil {
		return err
	}
	parts, _, err := w.at(which2, arrayPath)
	if err != nil {
		return err
	}
	total, ok := laws.ParseCents(v.Str)
	if !ok {
		return fmt.Errorf("expected %s to be a decimal string, got %s in %s", unq(path), orAbsent(v), desc)
	}
	var sum int64
	var terms []string
	for _, p := range parts.Array() {
		c, ok := laws.ParseCents(p.Str)
		if !ok {
			return fmt.Errorf("expected every %s to be a decimal string, got %s", unq(arrayPath), p.Raw)
		}
		sum += c
		terms = append(terms, p.Str)
	}
	if sum != total {
		return fmt.Errorf("expected %s = Σ %s = %s (%s), got %s", unq(path), unq(arrayPath), laws.CentsString(sum), strings.Join(terms, " + "), v.Str)
	}
	return nil
}

func (w *world) listsValues(path, field, values string) error {
	v, desc, err := w.at("JSON", path)
	if err != nil {
		return err
	}
	want, err := w.expand(unq(values))
	if err != nil {
		return err
	}
	if !v.IsArray() {
		return fmt.Errorf("expected %s to be an array, got %s in %s", unq(path), orAbsent(v), desc)
	}
	var got []string
	for _, e := range v.Array() {
		got = append(got, e.Get(unq(field)).String())
	}
	if got == nil {
		got = []string{}
	}
	if ws := splitList(want); !slices.Equal(got, ws) {
		return fmt.Errorf("expected %s to list %s %v, got %v", unq(path), unq(field), ws, got)
	}
	return nil
}

func (w *world) findElement(path, field, value string) (bool, string, error) {
	v, desc, err := w.at("JSON", path)
	if err != nil {
		return false, "", err
	}
	value, err = w.expand(unq(value))
	if err != nil {
		return false, "", err
	}
	if !v.IsArray() {
		return false, "", fmt.Errorf("expected %s to be an array, got %s in %s", unq(path), orAbsent(v), desc)
	}
	for _, e := range v.Array() {
		if f := e.Get(unq(field)); f.Exists() && f.String() == value {
			return true, desc, nil
		}
	}
	return false, desc, nil
}

func (w *world) containsElement(path, field, value string) error {
	ok, desc, err := w.findElement(path, field, value)
	if err != nil {
		return err
	}
	if !ok {
		v, _ := w.expand(unq(value))
		return fmt.Errorf("expected %s to contain an element with %s = %q, got none in %s", unq(path), unq(field), v, desc)
	}
	return nil
}

func (w *world) containsNoElement(path, field, value string) error {
	ok, desc, err := w.findElement(path, field, value)
	if err != nil {
		return err
	}
	if ok {
		v, _ := w.expand(unq(value))
		return fmt.Errorf("expected %s to contain no element with %s = %q, got one in %s", unq(path), unq(field), v, desc)
	}
	return nil
}

func (w *world) everyElement(path string, check func(i int, e gjson.Result) error) error {
	v, desc, err := w.at("JSON", path)
	if err != nil {
		return err
	}
	if !v.IsArray() {
		return fmt.Errorf("expected %s to be an array, got %s in %s", unq(path), orAbsent(v), desc)
	}
	for i, e := range v.Array() {
		if err := check(i, e); err != nil {
			return err
		}
	}
	return nil
}

func (w *world) everyElementEq(path, field, value string) error {
	value, err := w.expand(unq(value))
	if err != nil {
		return err
	}
	return w.everyElement(path, func(i int, e gjson.Result) error {
		if f := e.Get(unq(field)); f.String() != value || !f.Exists() {
			return fmt.Errorf("expected every %s[%d].%s to be %q, got %s", unq(path), i, unq(field), value, orAbsent(f))
		}
		return nil
	})
}

func (w *world) everyElementKeys(path, keys string) error {
	ks := splitList(unq(keys))
	return w.everyElement(path, func(i int, e gjson.Result) error {
		return hasKeys(e, fmt.Sprintf("%s[%d]", unq(path), i), ks, "")
	})
}

func (w *world) everyElementKind(path, field, kind string) error {
	return w.everyElement(path, func(i int, e gjson.Result) error {
		if err := checkKind(e.Get(unq(field)), kind); err != nil {
			return fmt.Errorf("%s[%d].%s: %w", unq(path), i, unq(field), err)
		}
		return nil
	})
}

func (w *world) remember(which, path, name string) error {
	v, desc, err := w.at(which, path)
	if err != nil {
		return err
	}
	if !v.Exists() {
		return fmt.Errorf("expected %s to be present to remember it, got nothing in %s", unq(path), desc)
	}
	w.vars[unq(name)] = v.String()
	return nil
}

// pageThrough walks a list with the cursor the responses return, until a page comes back
// empty (at most 200 pages).
func (w *world) pageThrough(path, perPage string) error {
	p, err := w.expand(unq(path))
	if err != nil {
		return err
	}
	w.pages = nil
	cursor := "0"
	for range 200 {
		u, err := url.Parse(p)
		if err != nil {
			return err
		}
		qv := u.Query()
		qv.Set("per_page", perPage)
		qv.Set("last_record_number", cursor)
		u.RawQuery = qv.Encode()
		r, err := w.do(http.MethodGet, u.String(), nil, "", authKey)
		if err != nil {
			return err
		}
		if r.Status != http.StatusOK {
			return fmt.Errorf("expected status 200 while paging, got %s", r)
		}
		page := r.json()
		w.pages = append(w.pages, page)
		if len(page.Get("items").Array()) == 0 {
			return nil
		}
		next := page.Get("last_record_number")
		if next.Type != gjson.Number {
			return fmt.Errorf("expected last_record_number to be an integer, got %s", orAbsent(next))
		}
		if next.Raw == cursor {
			return fmt.Errorf("expected the cursor to move past a non-empty page, got last_record_number %s again", cursor)
		}
		cursor = next.Raw
	}
	return errors.New("expected the walk to end within 200 pages")
}

func (w *world) walked() ([]gjson.Result, error) {
	if len(w.pages) == 0 {
		return nil, errors.New("no pages were walked")
	}
	return w.pages, nil
}

func (w *world) pagesList(field, values string) error {
	pages, err := w.walked()
	if err != nil {
		return err
	}
	want, err := w.expand(unq(values))
	if err != nil {
		return err
	}
	got := []string{}
	for _, p := range pages {
		for _, it := range p.Get("items").Array() {
			got = append(got, it.Get(unq(field)).String())
		}
	}
	if ws := splitList(want); !slices.Equal(got, ws) {
		return fmt.Errorf("expected the pages to list %s %v, got %v", unq(field), ws, got)
	}
	return nil
}

func (w *world) pagesTotals(total, perPage string) error {
	pages, err := w.walked()
	if err != nil {
		return err
	}
	for i, p := range pages {
		if p.Get("total_records").Raw != total || p.Get("per_page").Raw != perPage {
			return fmt.Errorf("expected page %d to report total_records %s and per_page %s, got %s and %s", i+1, total, perPage,
				orAbsent(p.Get("total_records")), orAbsent(p.Get("per_page")))
		}
	}
	return nil
}

func (w *world) pagesSameTotal() error {
	pages, err := w.walked()
	if err != nil {
		return err
	}
	first := pages[0].Get("total_records")
	if first.Type != gjson.Number {
		return fmt.Errorf("expected total_records to be an integer, got %s", orAbsent(first))
	}
	for i, p := range pages {
		if p.Get("total_records").Raw != first.Raw {
			return fmt.Errorf("expected every page to report total_records %s, got %s on page %d", first.Raw, p.Get("total_records").Raw, i+1)
		}
	}
	return nil
}

func (w *world) pagesCursor() error {
	pages, err := w.walked()
	if err != nil {
		return err
	}
	prev := int64(0)
	for i, p := range pages {
		n := int64(len(p.Get("items").Array()))
		got := p.Get("last_record_number").Int()
		if got != prev+n {
			return fmt.Errorf("expected page %d's last_record_number to be %d + %d = %d, got %s", i+1, prev, n, prev+n, orAbsent(p.Get("last_record_number")))
		}
		prev = got
	}
	return nil
}

func (w *world) pagesEndEmpty() error {
	pages, err := w.walked()
	if err != nil {
		return err
	}
	if l := pages[len(pages)-1].Get("items"); !l.IsArray() || len(l.Array()) != 0 {
		return fmt.Errorf("expected the page after the last to have items [], got %s", orAbsent(l))
	}
	return nil
}

func (w *world) pagesEachOnce(field string) error {
	pages, err := w.walked()
	if err != nil {
		return err
	}
	seen := map[string]int{}
	n := 0
	for i, p := range pages {
		for _, it := range p.Get("items").Array() {
			id := it.Get(unq(field)).String()
			if j, dup := seen[id]; dup {
				return fmt.Errorf("expected each record once, got %s %q on page %d and again on page %d", unq(field), id, j, i+1)
			}
			seen[id] = i + 1
			n++
		}
	}
	if total := pages[0].Get("total_records").Int(); int64(n) != total {
		return fmt.Errorf("expected the pages to visit total_records = %d records, got %d", total, n)
	}
	return nil
}

func (w *world) pagesMax(n string) error {
	pages, err := w.walked()
	if err != nil {
		return err
	}
	max, _ := strconv.Atoi(n)
	for i, p := range pages {
		if l := len(p.Get("items").Array()); l > max {
			return fmt.Errorf("expected at most %d items per page, got %d on page %d", max, l, i+1)
		}
	}
	return nil
}
