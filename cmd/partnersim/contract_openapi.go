package main

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"strings"

	"github.com/partnersim/partnersim/features"
	"github.com/partnersim/partnersim/simulator/openapi"
	"github.com/partnersim/partnersim/simulator/openapi/check"
)

// withOpenAPI makes every exchange of a contract run checked against OpenAPI documents (issue
// 14): spec "" loads the target's /openapi.json, and the control plane's
// /_sandbox/openapi.json with --sandbox-url, when they are served; a file or an http(s) URL
// loads that document; "off" checks nothing. A response that disagrees fails its scenario with
// the operation, the status and the schema path. It returns the checker (nil when off) and
// what was loaded.
func withOpenAPI(ctx context.Context, o *features.Options, spec string) (*check.Checker, string, error) {
	if spec == "off" {
		return nil, "", nil
	}
	if o.HTTPClient == nil {
		o.HTTPClient = features.DefaultHTTPClient()
	}
	u, err := url.Parse(o.BaseURL)
	if spec == "" && (err != nil || u.Host == "") {
		return nil, "", nil // the suite reports the bad base URL
	}
	var candidates []string
	if spec == "" {
		candidates = []string{u.Scheme + "://" + u.Host + "/openapi.json"}
		if o.SandboxURL != "" {
			candidates = append(candidates, strings.TrimSuffix(o.SandboxURL, "/")+"/_sandbox/openapi.json")
		}
	}
	c, names, err := loadChecker(ctx, o.HTTPClient, spec, candidates)
	if err != nil {
		return nil, "", fmt.Errorf("contract: %w", err)
	}
	if c == nil {
		return nil, "", nil
	}
	client := *o.HTTPClient
	client.Transport = c.Transport(o.HTTPClient.Transport)
	o.HTTPClient = &client
	return c, names, nil
}

// loadChecker loads the documents to check against: spec "" the candidates that are served
// (none: no checker), an http(s) URL or a file that one; it returns the checker, which skips
// what lies outside the documents, and the names of what it loaded.
func loadChecker(ctx context.Context, client *http.Client, spec string, candidates []string) (*check.Checker, string, error) {
	var docs []check.Doc
	switch {
	case spec == "":
		for _, c := range candidates {
			if b, err := fetch(ctx, client, c); err == nil {
				docs = append(docs, check.Doc{Name: c, Data: b})
			}
		}
		if len(docs) == 0 {
			return nil, "", nil
		}
	case strings.HasPrefix(spec, "http://") || strings.HasPrefix(spec, "https://"):
		b, err := fetch(ctx, client, spec)
		if err != nil {
			return nil, "", fmt.Errorf("--openapi: %w", err)
		}
		docs = append(docs, check.Doc{Name: spec, Data: b})
	default:
		b, err := os.ReadFile(spec)
		if err != nil {
			return nil, "", fmt.Errorf("--openapi: %w", err)
		}
		docs = append(docs, check.Doc{Name: spec, Data: b})
	}
	c, err := check.New(ctx, docs...)
	if err != nil {
		return nil, "", fmt.Errorf("--openapi: %w", err)
	}
	c.Skip = func(r *http.Request, status int, body []byte) bool {
		return openapi.Undocumented(r.URL.Path) || openapi.InjectedFault(body) || openapi.Misdirected(status, body)
	}
	names := make([]string, len(docs))
	for i, d := range docs {
		names[i] = d.Name
	}
	return c, strings.Join(names, " and "), nil
}

// fetch GETs a document, failing on anything but a 200.
func fetch(ctx context.Context, client *http.Client, u string) ([]byte, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u, nil)
	if err != nil {
		return nil, err
	}
	res, err := client.Do(req)
	if err != nil {
		return nil, err
	}
	defer res.Body.Close()
	b, err := io.ReadAll(io.LimitReader(res.Body, 16<<20))
	if err != nil {
		return nil, err
	}
	if res.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("GET %s: %s", u, res.Status)
	}
	return b, nil
}
