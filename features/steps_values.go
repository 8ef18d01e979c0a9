package features

import (
	"fmt"
	"regexp"

	"github.com/cucumber/godog"
	"github.com/tidwall/gjson"
)

// valueSteps are the steps that check values are written as the production service (FastAPI
// on pydantic v2) writes them.
func (w *world) valueSteps(sc *godog.ScenarioContext) {
	sc.Step(`^the (JSON|event) at `+q+` is a timestamp as pydantic writes it$`, w.atPydanticTimestamp)
	sc.Step(`^every timestamp in the (JSON|event) is written as pydantic writes it$`, w.everyPydanticTimestamp)
}

// pydanticDatetime is how pydantic v2 serializes an aware UTC datetime: Z, and the microseconds
// as six digits only when they are not zero (Python's datetime holds no finer time).
var pydanticDatetime = regexp.MustCompile(`^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d{6})?Z$`)

// looksLikeDatetime picks out the strings that are meant as date-times.
var looksLikeDatetime = regexp.MustCompile(`^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}`)

func (w *world) atPydanticTimestamp(which, path string) error {
	v, desc, err := w.at(which, path)
	if err != nil {
		return err
	}
	if v.Type != gjson.String || !pydanticDatetime.MatchString(v.Str) {
		return fmt.Errorf("%s: expected a datetime as pydantic writes one (2026-01-31T09:30:00.123456Z or 2026-01-31T09:30:00Z), got %s in %s",
			unq(path), truncate(v.Raw, 200), desc)
	}
	return nil
}

func (w *world) everyPydanticTimestamp(which string) error {
	v, desc, err := w.at(which, "@this")
	if err != nil {
		return err
	}
	var bad []string
	n := 0
	var walk func(path string, r gjson.Result)
	walk = func(path string, r gjson.Result) {
		switch {
		case r.IsObject() || r.IsArray():
			r.ForEach(func(k, x gjson.Result) bool {
				p := k.String()
				if path != "" {
					p = path + "." + p
				}
				walk(p, x)
				return true
			})
		case r.Type == gjson.String && looksLikeDatetime.MatchString(r.Str):
			n++
			if !pydanticDatetime.MatchString(r.Str) && len(bad) < 5 {
				bad = append(bad, path+"="+r.Str)
			}
		}
	}
	walk("", v)
	if n == 0 {
		return fmt.Errorf("expected timestamps in %s, found none", desc)
	}
	if len(bad) > 0 {
		return fmt.Errorf("expected every datetime as pydantic writes one (six-digit microseconds or none, then Z), got %v in %s", bad, desc)
	}
	return nil
}
