package features

import (
	"net/http"
	"testing"
)

// The header steps hold the first value against the step's text; "is" also needs the header
// sent at all, so that an empty expectation is not met by a header that is missing.
func TestHeaderSteps(t *testing.T) {
	w := &world{resp: &response{Status: 307, Header: http.Header{"Location": {"http://127.0.0.1:8080/v1/users/"}}}}
	for _, c := range []struct {
		name string
		step func() error
		ok   bool
	}{
		{"is, equal", func() error { return w.headerIs("Location", "http://127.0.0.1:8080/v1/users/") }, true},
		{"is, other", func() error { return w.headerIs("Location", "/v1/users/") }, false},
		{"is empty, absent", func() error { return w.headerIs("X-Empty", "") }, false},
		{"ends with", func() error { return w.headerEndsWith("Location", "/v1/users/") }, true},
		{"ends with, other", func() error { return w.headerEndsWith("Location", "/v1/orders/") }, false},
		{"does not contain", func() error { return w.headerLacks("Location", "//localhost:/") }, true},
		{"does not contain, contained", func() error { return w.headerLacks("Location", "//127.0.0.1:8080/") }, false},
	} {
		if err := c.step(); (err == nil) != c.ok {
			t.Errorf("%s: got %v, want ok %v", c.name, err, c.ok)
		}
	}
}
