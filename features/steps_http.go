package features

import (
	"fmt"
	"net/http"
	"strconv"
	"strings"

	"github.com/cucumber/godog"
)

// q matches a double-quoted step argument in which \" stands for a quote.
const q = `"((?:[^"\\]|\\.)*)"`

// httpSteps are the black-box steps: requests (here), assertions on responses
// (steps_response.go), on the JSON of the current response ("the JSON at …") or of the
// current delivery ("the event at …": steps_json.go), and walks through a list's pages
// (steps_paging.go).
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
	w.responseSteps(sc)
	w.jsonSteps(sc)
	w.pagingSteps(sc)
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
