package sandboxtest

import (
	"context"
	"crypto/sha256"
	"io"
	"net/http"
	"sync"
	"testing"
	"time"

	"github.com/partnersim/partnersim/simulator/openapi"
	"github.com/partnersim/partnersim/simulator/openapi/check"
)

// checkers holds one checker per served document: loading one costs milliseconds, and
// hundreds of tests serve the same few documents.
var checkers sync.Map // [sha256.Size]byte -> *check.Checker

// checkedClient returns a client whose every exchange with base is checked against the
// documents base serves: /openapi.json and, when the control plane is on,
// /_sandbox/openapi.json. Injected faults (sandbox-only, any status by design) are not checked.
func checkedClient(tb testing.TB, base string) (*http.Client, *check.Checker) {
	tb.Helper()
	var docs []check.Doc
	h := sha256.New()
	for _, path := range []string{"/openapi.json", "/_sandbox/openapi.json"} {
		res, err := http.Get(base + path)
		if err != nil {
			tb.Fatalf("GET %s: %v", path, err)
		}
		doc, err := io.ReadAll(res.Body)
		res.Body.Close()
		if err != nil {
			tb.Fatalf("GET %s: %v", path, err)
		}
		if res.StatusCode == http.StatusNotFound && path != "/openapi.json" {
			continue // the control plane is off
		}
		if res.StatusCode != http.StatusOK {
			tb.Fatalf("GET %s: %d %s", path, res.StatusCode, doc)
		}
		docs = append(docs, check.Doc{Name: path, Data: doc})
		h.Write(doc)
	}
	key := [sha256.Size]byte(h.Sum(nil))
	c, ok := checkers.Load(key)
	if !ok {
		chk, err := check.New(context.Background(), docs...)
		if err != nil {
			tb.Fatalf("the served documents do not load: %v", err)
		}
		chk.Skip = func(r *http.Request, status int, body []byte) bool {
			return openapi.Undocumented(r.URL.Path) || openapi.InjectedFault(body) || openapi.Misdirected(status, body)
		}
		c, _ = checkers.LoadOrStore(key, chk)
	}
	chk := c.(*check.Checker)
	return &http.Client{
		Timeout:       15 * time.Second,
		Transport:     chk.Transport(nil),
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse },
	}, chk
}
