package features

import (
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/cucumber/godog"
	"github.com/tidwall/gjson"
)

// responseSteps are the assertions on the current response: its status, headers and body,
// FastAPI's error shapes.
func (w *world) responseSteps(sc *godog.ScenarioContext) {
	sc.Step(`^the response body writes `+q+` as FastAPI's JSON encoder does$`, w.bodyWritesText)
	sc.Step(`^the response status is (\d{3})$`, w.statusIs)
	sc.Step(`^the response status is a client error$`, w.statusClientError)
	sc.Step(`^the response status is not (\d{3})$`, w.statusIsNot)
	sc.Step(`^the response body is empty$`, w.bodyEmpty)
	sc.Step(`^the response header `+q+` is `+q+`$`, w.headerIs)
	sc.Step(`^the response header `+q+` is present$`, w.headerPresent)
	sc.Step(`^the response header `+q+` is absent$`, w.headerAbsent)
	sc.Step(`^the response header `+q+` ends with `+q+`$`, w.headerEndsWith)
	sc.Step(`^the response header `+q+` does not contain `+q+`$`, w.headerLacks)
	sc.Step(`^the response header `+q+` has the directive `+q+`$`, w.headerDirective)
	sc.Step(`^the response header `+q+` lists `+q+`$`, w.headerLists)
	sc.Step(`^the response is JSON:$`, w.bodyIs)
	sc.Step(`^the response body is exactly:$`, w.bodyExactly)
	sc.Step(`^the response JSON contains:$`, w.bodyContains)
	sc.Step(`^the detail is `+q+`$`, w.detailIs)
	sc.Step(`^the response is a validation error$`, w.validationShape)
	sc.Step(`^the response is a validation error naming `+q+`$`, w.validationNaming)
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

// statusHolds fails, saying what was expected (format and args) and what came, unless ok holds
// of the last response's status.
func (w *world) statusHolds(ok func(status int) bool, format string, args ...any) error {
	r, err := w.last()
	if err != nil {
		return err
	}
	if !ok(r.Status) {
		return fmt.Errorf(format+", got %s", append(args, r)...)
	}
	return nil
}

func (w *world) statusIs(code string) error {
	want, _ := strconv.Atoi(code)
	return w.statusHolds(func(s int) bool { return s == want }, "expected status %d", want)
}

func (w *world) statusIsNot(code string) error {
	want, _ := strconv.Atoi(code)
	return w.statusHolds(func(s int) bool { return s != want }, "expected a status other than %d", want)
}

func (w *world) statusClientError() error {
	return w.statusHolds(func(s int) bool { return s >= 400 && s <= 499 }, "expected a 4xx status (the request is refused)")
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
	return w.headerText(name, want, "be", func(v, t string) bool { return v == t }, true)
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
	return w.headerText(name, suffix, "end with", strings.HasSuffix, false)
}

func (w *world) headerLacks(name, text string) error {
	return w.headerText(name, text, "not contain", func(v, t string) bool { return !strings.Contains(v, t) }, false)
}

// headerText checks the first value of a header against a step's text (variables expanded):
// holds(value, text) must be true (and, when present is set, the header must be sent at all),
// else the step fails saying the header should "<verb>" it, with every value the header had
// and the response.
func (w *world) headerText(name, text, verb string, holds func(v, text string) bool, present bool) error {
	text, err := w.expand(unq(text))
	if err != nil {
		return err
	}
	v, vs, err := w.header(name)
	if err != nil {
		return err
	}
	if present && len(vs) == 0 || !holds(v, text) {
		return fmt.Errorf("expected header %s to %s %q, got %q (%s)", name, verb, text, vs, w.resp)
	}
	return nil
}

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

// headerLists checks a comma-separated header holds exactly these values, in any order.
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

func (w *world) bodyIs(doc *godog.DocString) error { return w.bodyCompare(doc, false) }

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
