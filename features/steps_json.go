package features

import (
	"fmt"
	"regexp"
	"slices"
	"strconv"
	"strings"

	"github.com/cucumber/godog"
	"github.com/partnersim/partnersim/features/laws"
	"github.com/tidwall/gjson"
)

// jsonSteps are the assertions on the JSON of the current response ("the JSON at …") or of
// the current delivery ("the event at …"), on a list's elements, and remembering values.
func (w *world) jsonSteps(sc *godog.ScenarioContext) {
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
