package sandboxtest

import (
	"bytes"
	"context"
	"crypto/sha256"
	"io"
	"net/http"
	"regexp"
	"sync"
	"testing"
	"time"

	"partnersim/openapi/check"
)

// checkers holds one checker per served document: loading one costs milliseconds, and
// hundreds of tests serve the same few documents.
var checkers sync.Map // [sha256.Size]byte -> *check.Checker

// undocumented are the paths outside the documents: the documents themselves and the viewer.
var undocumented = regexp.MustCompile(`^(/v[0-9]+)?/openapi\.json$|^/docs(/|$)|^/_sandbox/`)

// checkedClient returns a client whose every exchange with base is checked against the
// document base serves at /openapi.json. The control plane has no document yet; its
// exchanges, and injected faults (sandbox-only, any status by design), are not checked.
func checkedClient(tb testing.TB, base string) *http.Client {
	tb.Helper()
	res, err := http.Get(base + "/openapi.json")
	if err != nil {
		tb.Fatalf("GET /openapi.json: %v", err)
	}
	doc, err := io.ReadAll(res.Body)
	res.Body.Close()
	if err != nil || res.StatusCode != http.StatusOK {
		tb.Fatalf("GET /openapi.json: %d %v", res.StatusCode, err)
	}
	key := sha256.Sum256(doc)
	c, ok := checkers.Load(key)
	if !ok {
		chk, err := check.New(context.Background(), check.Doc{Name: "/openapi.json", Data: doc})
		if err != nil {
			tb.Fatalf("the served /openapi.json does not load: %v", err)
		}
		chk.Skip = func(r *http.Request, _ int, body []byte) bool {
			return undocumented.MatchString(r.URL.Path) || bytes.HasPrefix(body, []byte(`{"detail":"Injected fault: `))
		}
		c, _ = checkers.LoadOrStore(key, chk)
	}
	return &http.Client{
		Timeout:       15 * time.Second,
		Transport:     c.(*check.Checker).Transport(nil),
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse },
	}
}

