package proxy_test

import (
	"context"
	"net/http"
	"net/http/httptest"
	"net/url"
	"testing"
	"time"

	"github.com/partnersim/partnersim/features"
	"github.com/partnersim/partnersim/features/proxy"
	"github.com/partnersim/partnersim/internal/sandboxtest"
	"github.com/partnersim/partnersim/simulator/sandbox"
)

// The contract suite run through the proxy against the sandbox: the suite passes as it does
// directly (the proxy changes nothing), and the proxy sees no violation — its laws and the
// suite's are the same code, and every answer agrees with the document. The suite's own
// mistakes on purpose (422s, 307s, missing keys) are lint, counted apart.
func TestContractSuiteBehindTheProxy(t *testing.T) {
	if testing.Short() {
		t.Skip("runs the whole contract suite; skipped with -short")
	}
	sb := sandboxtest.MustServe(t, func(c *sandbox.Config) { c.APIVersions = []string{"v1", "v2"} })
	up, _ := url.Parse(sb.URL)
	live := &syncBuffer{}
	p, err := proxy.New(proxy.Config{Upstream: up, Checker: documents(t, sb.URL), Loopback: true, Live: live})
	if err != nil {
		t.Fatal(err)
	}
	front := httptest.NewServer(p.API())
	t.Cleanup(front.Close)
	ctx, cancel := context.WithTimeout(context.Background(), 8*time.Minute)
	defer cancel()
	client := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }, Timeout: time.Minute}
	rep, err := features.Run(ctx, features.Options{BaseURL: front.URL + "/v1", SandboxURL: front.URL, SandboxToken: sb.SB.Token, HTTPClient: client})
	if err != nil {
		t.Fatal(err)
	}
	p.Close()
	for _, f := range rep.Failed() {
		t.Errorf("the suite failed behind the proxy: %s %q: %s", f.Feature, f.Name, f.Err)
	}
	t.Logf("suite: %s", rep.Summary())
	for _, r := range p.Book().Results() {
		t.Logf("%-40s %-12s observed %6d failed %5d", r.ID, r.Status(), r.Observed, r.Failed)
		if r.Kind == proxy.Violation && r.Failed > 0 {
			for _, f := range r.Findings {
				t.Errorf("violation behind the suite: %s", f)
			}
		}
	}
}
