package features

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"maps"
	"net"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"sync"
	"time"
)

// scopeProbes are the cheapest requests that tell whether a key carries each scope: the API
// checks route, key and scope before it validates anything (decisions D3), so a key without the
// scope gets 403 and one with it gets anything else — the revoke probe's empty body is refused
// with 422 and changes nothing.
var scopeProbes = []struct {
	scope, method, path, body string
}{
	{"read:user", http.MethodGet, "/users/?per_page=1", ""},
	{"read:orders", http.MethodGet, "/orders/?per_page=1", ""},
	{"manage:sessions", http.MethodPost, "/sessions/revoke/", "{}"},
	{"manage:webhooks", http.MethodGet, "/webhooks/subscriptions", ""},
}

// preflight checks, before any scenario runs, that what the options give can run the suite: the
// control plane accepts the sandbox token, --api-key carries every scope and each
// --key-without key lacks its scope. Every problem is listed in one error, so a key
// without a scope is one clear message instead of one 403 failure per scenario.
func preflight(ctx context.Context, o Options) error {
	var problems []string
	if o.SandboxURL != "" {
		// GET /_sandbox/capabilities is an operation of the state adapter (every implementation
		// serves it, with the token), so a wrong token is caught whatever serves the adapter.
		st, body, err := call(ctx, o.HTTPClient, http.MethodGet, o.SandboxURL+"/_sandbox/capabilities", "", "x-sandbox-token", o.SandboxToken)
		var dial *net.OpError
		switch {
		case errors.As(err, &dial):
			problems = append(problems, fmt.Sprintf("the control plane at %s cannot be reached: %v", o.SandboxURL, dial))
		case err == nil && st == http.StatusUnauthorized:
			problems = append(problems, fmt.Sprintf("the control plane refuses the sandbox token (GET /_sandbox/capabilities → 401 %s): export PARTNERSIM_SANDBOX_TOKEN=… or pass --sandbox-token, with the token `partnersim serve` printed (or the state adapter's)", truncate(body, 200)))
		}
	}
	// --api-key must carry every scope; a --key-without key must lack its scope (the 403
	// scenarios need nothing else of it).
	type check struct {
		flag, key string
		scopes    []string
		want      bool
	}
	var checks []check
	if o.APIKey != "" {
		checks = append(checks, check{"--api-key", o.APIKey, AllScopes, true})
	}
	for _, scope := range slices.Sorted(maps.Keys(o.KeysWithout)) {
		checks = append(checks, check{"--key-without " + scope, o.KeysWithout[scope], []string{scope}, false})
	}
	controlProblems := len(problems)
	var mu sync.Mutex
	var wg sync.WaitGroup
	for _, c := range checks {
		for _, p := range scopeProbes {
			if !slices.Contains(c.scopes, p.scope) {
				continue
			}
			wg.Add(1)
			go func() {
				defer wg.Done()
				msg := probe(ctx, o, c.flag, c.key, p.scope, p.method, p.path, p.body, c.want)
				if msg != "" {
					mu.Lock()
					problems = append(problems, msg)
					mu.Unlock()
				}
			}()
		}
	}
	wg.Wait()
	if len(problems) == 0 {
		return nil
	}
	keyHint := ""
	if len(problems) > controlProblems {
		keyHint = fmt.Sprintf("\nGive --api-key a key with every scope (%s) and each --key-without SCOPE=KEY a key of the same institution lacking SCOPE", strings.Join(AllScopes, " "))
	}
	slices.Sort(problems)
	problems = slices.Compact(problems)
	return fmt.Errorf("preflight: the run would fail for reasons that are not the implementation's:\n  - %s%s",
		strings.Join(problems, "\n  - "), keyHint)
}

// probe makes one scope probe with key and says what is wrong, or "". Only what the answer
// proves is reported — 401, 403, or a success or a 422 (past the scope check) for a key that
// must lack the scope — and an API that cannot be reached at all; anything else (a 404, a 500,
// an answer the OpenAPI document does not list) is for the scenarios to judge.
func probe(ctx context.Context, o Options, flag, key, scope, method, path, body string, want bool) string {
	st, answer, err := call(ctx, o.HTTPClient, method, o.BaseURL+path, body, "x-api-key", key)
	where := fmt.Sprintf("%s %s", method, path)
	var dial *net.OpError
	switch {
	case errors.As(err, &dial):
		return fmt.Sprintf("the API at %s cannot be reached: %v", o.BaseURL, dial)
	case err != nil:
		return ""
	case st == http.StatusUnauthorized:
		return fmt.Sprintf("%s: the key is not accepted (401 %s)", flag, truncate(answer, 200))
	case want && st == http.StatusForbidden:
		return fmt.Sprintf("%s: the key lacks %s (%s → 403 %s)", flag, scope, where, truncate(answer, 200))
	case !want && (st/100 == 2 || st == http.StatusUnprocessableEntity):
		return fmt.Sprintf("%s: the key has %s (%s → %d), but must lack it", flag, scope, where, st)
	}
	return ""
}

// call makes one request with one header and returns the status and body (at most 64 KiB).
func call(ctx context.Context, client *http.Client, method, u, body, header, value string) (int, string, error) {
	ctx, cancel := context.WithTimeout(ctx, 15*time.Second)
	defer cancel()
	var rd io.Reader
	if body != "" {
		rd = bytes.NewReader([]byte(body))
	}
	req, err := http.NewRequestWithContext(ctx, method, u, rd)
	if err != nil {
		return 0, "", err
	}
	if body != "" {
		req.Header.Set("Content-Type", "application/json")
	}
	req.Header.Set(header, value)
	res, err := client.Do(req)
	if err != nil {
		return 0, "", err
	}
	defer res.Body.Close()
	b, _ := io.ReadAll(io.LimitReader(res.Body, 64<<10))
	return res.StatusCode, string(b), nil
}

// cleanupBudget is how long the cleanup of n institutions may take.
func cleanupBudget(n int) time.Duration {
	return max(time.Minute, time.Duration(n)*time.Second)
}

// cleanup deletes the institutions the run created through the control plane, so a shared
// sandbox is left as the run found it (decisions D9). It returns what it could not delete.
func (rn *run) cleanup(ctx context.Context) []string {
	rn.mu.Lock()
	ids := slices.Clone(rn.created)
	rn.created = nil
	rn.mu.Unlock()
	if len(ids) == 0 || rn.opts.KeepTenants {
		return nil
	}
	// The run's own context may be over (a timeout, an interrupt): the cleanup gets its own, a
	// second for each institution and at least a minute, so a large run on a slow or busy
	// sandbox is not cut short while every deletion still makes progress.
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), cleanupBudget(len(ids)))
	defer cancel()
	var (
		mu       sync.Mutex
		problems []string
		wg       sync.WaitGroup
		sem      = make(chan struct{}, 4)
	)
	for _, id := range ids {
		wg.Add(1)
		sem <- struct{}{}
		go func() {
			defer func() { <-sem; wg.Done() }()
			st, body, err := call(ctx, rn.client, http.MethodDelete, rn.opts.SandboxURL+"/_sandbox/institutions/"+url.PathEscape(id), "", "x-sandbox-token", rn.opts.SandboxToken)
			if err == nil && (st == http.StatusNoContent || st == http.StatusNotFound) {
				return
			}
			msg := fmt.Sprintf("institution %s was not deleted: ", id)
			if err != nil {
				msg += err.Error()
			} else {
				msg += fmt.Sprintf("DELETE /_sandbox/institutions/{id} → %d %s", st, truncate(body, 200))
			}
			mu.Lock()
			problems = append(problems, msg)
			mu.Unlock()
		}()
	}
	wg.Wait()
	slices.Sort(problems)
	return problems
}
