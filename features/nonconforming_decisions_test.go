package features_test

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/partnersim/partnersim/features"
	"github.com/partnersim/partnersim/internal/sandboxtest"
)

// The rows of the decisions walk that need created state are proved on the sandbox itself: a
// proxy in front of it breaks one decision on purpose, and the scenario citing the row must
// pass through the honest proxy and fail through the breaking one, naming the rule broken.

// breaker rewrites one exchange of the sandbox: it gets the request and the sandbox's answer
// and returns the answer to send.
type breaker func(r *http.Request, status int, body []byte) (int, []byte)

func breakingProxy(t *testing.T, sandboxURL string, b breaker) string {
	t.Helper()
	target, _ := url.Parse(sandboxURL)
	proxy := httputil.NewSingleHostReverseProxy(target)
	proxy.ModifyResponse = func(res *http.Response) error {
		if b == nil {
			return nil
		}
		body, err := io.ReadAll(res.Body)
		if err != nil {
			return err
		}
		res.Body.Close()
		status, out := b(res.Request, res.StatusCode, body)
		res.StatusCode = status
		res.Body = io.NopCloser(bytes.NewReader(out))
		res.ContentLength = int64(len(out))
		res.Header.Del("Content-Length")
		return nil
	}
	srv := httptest.NewServer(proxy)
	t.Cleanup(srv.Close)
	return srv.URL
}

var kycMove = regexp.MustCompile(`^/_sandbox/users/([^/]+)/kyc$`)

// restampApprovals is an implementation that sets kyc_approved_at on every move into approved,
// not only the first: it remembers each user's last approval and shows it on the detail.
func restampApprovals() breaker {
	var mu sync.Mutex
	last := map[string]string{}
	n := 0
	return func(r *http.Request, status int, body []byte) (int, []byte) {
		mu.Lock()
		defer mu.Unlock()
		if m := kycMove.FindStringSubmatch(r.URL.Path); m != nil && status == http.StatusOK && strings.Contains(string(body), `"approved"`) {
			n++ // each approval a minute after the one before, as they would be apart in time
			last[m[1]] = time.Now().UTC().Add(time.Duration(n) * time.Minute).Format(time.RFC3339)
			return status, body
		}
		if strings.HasPrefix(r.URL.Path, "/v1/users/") && status == http.StatusOK {
			pid := strings.Trim(strings.TrimPrefix(r.URL.Path, "/v1/users/"), "/")
			if at, ok := last[pid]; ok {
				var doc map[string]any
				if json.Unmarshal(body, &doc) == nil {
					for _, a := range doc["accounts"].([]any) {
						if acct := a.(map[string]any); acct["kyc_approved_at"] != nil {
							acct["kyc_approved_at"] = at
						}
					}
					out, _ := json.Marshal(doc)
					return status, out
				}
			}
		}
		return status, body
	}
}

// approvedAtTooEarly is an implementation that shows kyc_approved_at on an account that has
// never been approved.
func approvedAtTooEarly() breaker {
	return func(r *http.Request, status int, body []byte) (int, []byte) {
		if !strings.HasPrefix(r.URL.Path, "/v1/users/") || status != http.StatusOK {
			return status, body
		}
		var doc map[string]any
		if json.Unmarshal(body, &doc) != nil {
			return status, body
		}
		for _, a := range doc["accounts"].([]any) {
			if acct := a.(map[string]any); acct["kyc_approved_at"] == nil {
				acct["kyc_approved_at"] = "2026-01-01T00:00:00Z"
			}
		}
		out, _ := json.Marshal(doc)
		return status, out
	}
}

// allowReapproval is an implementation whose state machine lets a closed account be approved
// again: the sandbox's 409 for closed → approved becomes the 200 of a move.
func allowReapproval() breaker {
	return func(r *http.Request, status int, body []byte) (int, []byte) {
		if kycMove.MatchString(r.URL.Path) && status == http.StatusConflict && strings.Contains(string(body), "closed") {
			return http.StatusOK, []byte(`{"product":"crypto","kyc_status":"approved"}`)
		}
		return status, body
	}
}

func TestNonConformingDecisionsFail(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("runs scenarios against the simulator; skipped with -short")
	}
	srv := sandboxtest.MustServe(t)
	cases := []struct {
		defect, feature, scenario, because string
		breaker                            func() breaker
	}{
		{"kyc_approved_at restamped on every approval", "user_detail.feature", "kyc_approved_at is kept through every later move, back to approved included",
			`expected accounts.0.kyc_approved_at to be "2026-01-10T12:00:00Z"`, restampApprovals},
		{"kyc_approved_at restamped on every approval", "user_detail.feature", "kyc_approved_at is absent until the first approval, which it then keeps",
			`accounts.0.kyc_approved_at`, restampApprovals},
		{"kyc_approved_at shown before any approval", "user_detail.feature", "kyc_approved_at is absent until the first approval, which it then keeps",
			`expected accounts.0.kyc_approved_at to be absent`, approvedAtTooEarly},
		{"a closed account approved again", "control_plane.feature", "Every KYC move of the transition table is allowed, and no other",
			"closed → approved answered 200, want 409", allowReapproval},
	}
	for _, c := range cases {
		t.Run(c.defect+": "+c.scenario, func(t *testing.T) {
			t.Parallel()
			run := func(b breaker) features.ScenarioResult {
				t.Helper()
				u := breakingProxy(t, srv.URL, b)
				ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
				defer cancel()
				rep, err := features.Run(ctx, features.Options{BaseURL: u + "/v1", SandboxURL: u, SandboxToken: srv.SB.Token,
					Paths: []string{c.feature}, Name: "^" + regexp.QuoteMeta(c.scenario) + "$"})
				if err != nil {
					t.Fatal(err)
				}
				r, ok := rep.Result(c.scenario)
				if !ok {
					t.Fatalf("the run did not report %q", c.scenario)
				}
				return r
			}
			if r := run(nil); r.Status != features.Passed {
				t.Fatalf("through the honest proxy, expected %q to pass, got %s: %s", c.scenario, r.Status, r.Err)
			}
			r := run(c.breaker())
			if r.Status != features.Failed {
				t.Fatalf("with %s, expected %q to fail, got %s", c.defect, c.scenario, r.Status)
			}
			if !strings.Contains(r.Err, c.because) {
				t.Errorf("expected the failure to name the broken rule (%q), got: %s", c.because, r.Err)
			}
		})
	}
}
