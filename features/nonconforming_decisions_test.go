package features_test

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/tidwall/gjson"

	"github.com/partnersim/partnersim/features"
	"github.com/partnersim/partnersim/features/laws"
	"github.com/partnersim/partnersim/internal/sandboxtest"
	"github.com/partnersim/partnersim/simulator/sandbox"
)

// The rows of the decisions walk that need created state are proved on the sandbox itself: a
// proxy in front of it breaks one decision on purpose, and the scenario citing the row must
// pass through the honest proxy and fail through the breaking one, naming the rule broken.

// breaker rewrites one exchange of the sandbox: it gets the request and the sandbox's answer
// and returns the answer to send.
type breaker func(r *http.Request, status int, body []byte) (int, []byte)

func breakingProxy(t *testing.T, sandboxURL string, b breaker) string {
	t.Helper()
	if b == nil {
		return modifyingProxy(t, sandboxURL, nil)
	}
	return modifyingProxy(t, sandboxURL, func(res *http.Response) error {
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
	})
}

// sentBody is the context key of a request's body as the proxy received it.
type sentBody struct{}

// requestBody is the body of the request a response answers, as the client sent it.
func requestBody(r *http.Request) []byte {
	b, _ := r.Context().Value(sentBody{}).([]byte)
	return b
}

// modifyingProxy is a proxy in front of the sandbox that lets modify rewrite each answer (nil:
// an honest proxy). The request's Host passes through, as a browser's would.
func modifyingProxy(t *testing.T, sandboxURL string, modify func(*http.Response) error) string {
	t.Helper()
	target, _ := url.Parse(sandboxURL)
	proxy := httputil.NewSingleHostReverseProxy(target)
	proxy.ModifyResponse = modify
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		r.Body = io.NopCloser(bytes.NewReader(b))
		proxy.ServeHTTP(w, r.WithContext(context.WithValue(r.Context(), sentBody{}, b)))
	}))
	t.Cleanup(srv.Close)
	return srv.URL
}

var kycMove = regexp.MustCompile(`^/_sandbox/users/([^/]+)/kyc$`)

// answering is a breaker that answers status and body in place of the sandbox's answer wherever
// when holds of the request and that answer, and passes every other answer on.
func answering(status int, body string, when func(r *http.Request, status int, body []byte) bool) breaker {
	return func(r *http.Request, st int, b []byte) (int, []byte) {
		if when(r, st, b) {
			return status, []byte(body)
		}
		return st, b
	}
}

// editUserDetail rewrites a Get User Detail answer (a 200 under /v1/users/) with edit, which
// says whether it changed anything; any other answer, or one edit leaves, is returned as it was.
func editUserDetail(r *http.Request, status int, body []byte, edit func(doc map[string]any) bool) (int, []byte) {
	if !strings.HasPrefix(r.URL.Path, "/v1/users/") || status != http.StatusOK {
		return status, body
	}
	var doc map[string]any
	if json.Unmarshal(body, &doc) != nil || !edit(doc) {
		return status, body
	}
	out, _ := json.Marshal(doc)
	return status, out
}

// setApprovedAt sets each account's kyc_approved_at to what at returns for the one it has (nil
// when it has none); at returns false to leave it.
func setApprovedAt(doc map[string]any, at func(old any) (any, bool)) bool {
	for _, a := range doc["accounts"].([]any) {
		acct := a.(map[string]any)
		if v, ok := at(acct["kyc_approved_at"]); ok {
			acct["kyc_approved_at"] = v
		}
	}
	return true
}

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
		at, ok := last[strings.Trim(strings.TrimPrefix(r.URL.Path, "/v1/users/"), "/")]
		return editUserDetail(r, status, body, func(doc map[string]any) bool {
			return ok && setApprovedAt(doc, func(old any) (any, bool) { return at, old != nil })
		})
	}
}

// approvedAtTooEarly is an implementation that shows kyc_approved_at on an account that has
// never been approved.
func approvedAtTooEarly() breaker {
	return func(r *http.Request, status int, body []byte) (int, []byte) {
		return editUserDetail(r, status, body, func(doc map[string]any) bool {
			return setApprovedAt(doc, func(old any) (any, bool) { return "2026-01-01T00:00:00Z", old == nil })
		})
	}
}

// allowReapproval is an implementation whose state machine lets a closed account be approved
// again: the sandbox's 409 for closed → approved becomes the 200 of a move.
func allowReapproval() breaker {
	return answering(http.StatusOK, `{"product":"crypto","kyc_status":"approved"}`, func(r *http.Request, status int, body []byte) bool {
		return kycMove.MatchString(r.URL.Path) && status == http.StatusConflict && strings.Contains(string(body), "closed")
	})
}

var institutionPath = regexp.MustCompile(`^/_sandbox/institutions/([^/]+)$`)

// deliveriesOutliveTheirInstitution is a control plane whose institution delete leaves the
// institution's deliveries in the delivery log.
func deliveriesOutliveTheirInstitution() breaker {
	var mu sync.Mutex
	deleted := map[string]bool{}
	return func(r *http.Request, status int, body []byte) (int, []byte) {
		mu.Lock()
		defer mu.Unlock()
		if m := institutionPath.FindStringSubmatch(r.URL.Path); m != nil && r.Method == http.MethodDelete && status == http.StatusNoContent {
			deleted[m[1]] = true
		}
		if r.URL.Path == "/_sandbox/deliveries" && deleted[r.URL.Query().Get("institution_id")] {
			return http.StatusOK, []byte(`{"deliveries":[{"delivery_id":"dlv_kept","status":"pending"}]}`)
		}
		return status, body
	}
}

// healthOnlyVersioned is an implementation that serves health only under its version prefix.
func healthOnlyVersioned() breaker {
	return answering(http.StatusNotFound, `{"detail":"Not Found"}`, func(r *http.Request, status int, body []byte) bool {
		return r.URL.Path == "/health"
	})
}

// controlPlaneVersioned is an implementation that serves its control plane under the version
// prefix too (/v1/_sandbox/…), where it asks for its token.
func controlPlaneVersioned() breaker {
	return answering(http.StatusUnauthorized, `{"detail":"Not authenticated"}`, func(r *http.Request, status int, body []byte) bool {
		return strings.HasPrefix(r.URL.Path, "/v1/_sandbox/")
	})
}

// answerAnyHost is a sandbox without decisions D18's Host check: a request naming another
// server is answered as any other (here, health's answer).
func answerAnyHost() breaker {
	return answering(http.StatusOK, `{"status":"ok"}`, func(r *http.Request, status int, body []byte) bool {
		return status == http.StatusMisdirectedRequest
	})
}

// localhostSuffixAnswered is a sandbox whose Host check takes any name ending in "localhost"
// for a loopback name (evillocalhost, localhost.evil.example) and refuses the rest.
func localhostSuffixAnswered() breaker {
	return answering(http.StatusOK, `{"status":"ok"}`, func(r *http.Request, status int, body []byte) bool {
		return status == http.StatusMisdirectedRequest && strings.Contains(strings.ToLower(r.Host), "localhost")
	})
}

// keyBeforeHost is a sandbox that checks the key before the Host.
func keyBeforeHost() breaker {
	return answering(http.StatusUnauthorized, `{"detail":"Not authenticated"}`, func(r *http.Request, status int, body []byte) bool {
		return status == http.StatusMisdirectedRequest && r.Header.Get("x-api-key") == "" && strings.Contains(r.URL.Path, "/users/")
	})
}

// onlyBareLocalhost is a sandbox whose Host check knows localhost itself but not the names
// under it (app.localhost), which RFC 6761 reserves for loopback too.
func onlyBareLocalhost() breaker {
	return func(r *http.Request, status int, body []byte) (int, []byte) {
		h := strings.ToLower(r.Host)
		if i := strings.LastIndexByte(h, ':'); i >= 0 && !strings.Contains(h, "]") {
			h = h[:i]
		}
		if strings.HasSuffix(strings.TrimSuffix(h, "."), ".localhost") {
			return http.StatusMisdirectedRequest, []byte(`{"detail":"Misdirected Request"}`)
		}
		return status, body
	}
}

// dnsNamesWithoutUnderscore is a control plane whose DNS overrides take RFC 1123 host names
// only, refusing the underscore that decisions D18 allows.
func dnsNamesWithoutUnderscore() breaker {
	return answering(http.StatusBadRequest, `{"detail":"not a DNS host name"}`, func(r *http.Request, status int, body []byte) bool {
		return r.URL.Path == "/_sandbox/dns" && bytes.Contains(requestBody(r), []byte("_"))
	})
}

// dnsAnyName is a control plane whose DNS overrides take any name and any number of addresses.
func dnsAnyName() breaker {
	return answering(http.StatusOK, `{}`, func(r *http.Request, status int, body []byte) bool {
		return r.URL.Path == "/_sandbox/dns" && status == http.StatusBadRequest
	})
}

// embeddedNotJudged is a sandbox that judges a callback's IPv6 address by its own range only,
// not by the IPv4 address a 6to4 or Teredo address embeds.
func embeddedNotJudged() breaker {
	return subscribesRefused("sub_embedded", "https://[2002::1]/hook", "[2002:", "[2001:0:")
}

// registryNotJudged is a sandbox whose callback rule knows only the ranges D8 lists, not the
// special-purpose registries' newer blocks (3fff::/20, 5f00::/16, …).
func registryNotJudged() breaker {
	return subscribesRefused("sub_registry", "https://[3fff::1]/hook", "[3fff:", "[5f00:")
}

// subscribesRefused is a sandbox that creates the subscription (id, to url) it refused with 400
// when the body named an address starting with one of prefixes.
func subscribesRefused(id, url string, prefixes ...string) breaker {
	created := `{"subscription_id":"` + id + `","event_type":"kyc","url":"` + url + `","api_version":"v1","enabled":true,"created_at":"2026-01-01T00:00:00Z"}`
	return answering(http.StatusCreated, created, func(r *http.Request, status int, _ []byte) bool {
		sent := requestBody(r)
		return status == http.StatusBadRequest && r.URL.Path == "/v1/webhooks/subscriptions" &&
			slices.ContainsFunc(prefixes, func(p string) bool { return bytes.Contains(sent, []byte(p)) })
	})
}

// folderListed is a sandbox that lists the console's static folder.
func folderListed(res *http.Response) error {
	if strings.HasSuffix(res.Request.URL.Path, "/static/") {
		res.StatusCode, res.Status = http.StatusOK, "200 OK"
	}
	return nil
}

// dnsNumericNames is a control plane whose DNS overrides take names a URL parser reads as IPv4.
func dnsNumericNames() breaker {
	return answering(http.StatusOK, `{}`, func(r *http.Request, status int, body []byte) bool {
		return r.URL.Path == "/_sandbox/dns" && status == http.StatusBadRequest && bytes.Contains(requestBody(r), []byte(`"127.1"`))
	})
}

// embeddedNotJudgedAtTest is a sandbox that judges a callback's addresses at create but sends
// a test event to wherever the host has come to resolve.
func embeddedNotJudgedAtTest() breaker {
	return answering(http.StatusOK, `{"delivered":false,"event_id":"evt_embedded"}`, func(r *http.Request, status int, body []byte) bool {
		return status == http.StatusBadRequest && strings.HasSuffix(r.URL.Path, "/test")
	})
}

// controlBodiesUnbounded is a control plane that reads a body of any size.
func controlBodiesUnbounded() breaker {
	return answering(http.StatusOK, `{}`, func(r *http.Request, status int, body []byte) bool {
		return strings.HasPrefix(r.URL.Path, "/_sandbox/") && status == http.StatusRequestEntityTooLarge
	})
}

// docsFramable is a sandbox whose docs may be framed by any page.
func docsFramable(res *http.Response) error {
	if strings.HasPrefix(res.Request.URL.Path, "/docs") {
		res.Header.Del("X-Frame-Options")
		res.Header.Del("Content-Security-Policy")
	}
	return nil
}

// unknownPlatformRevoked is an implementation that answers 204 to a revoke naming a platform id
// it has no user for.
func unknownPlatformRevoked() breaker {
	return func(r *http.Request, status int, body []byte) (int, []byte) {
		if r.URL.Path == "/v1/sessions/revoke/" && status == http.StatusNotFound && bytes.Contains(requestBody(r), []byte(`"platform"`)) {
			return http.StatusNoContent, nil
		}
		return status, body
	}
}

var createInInstitution = regexp.MustCompile(`^/_sandbox/institutions/[^/]+/(users|members)$`)

// duplicateIDsCreated is a control plane that creates a second user with a user_account_id, or
// a second member with a core_id, its institution already has.
func duplicateIDsCreated() breaker {
	return func(r *http.Request, status int, body []byte) (int, []byte) {
		if m := createInInstitution.FindStringSubmatch(r.URL.Path); m != nil && status == http.StatusConflict {
			if m[1] == "users" {
				return http.StatusCreated, []byte(`{"platform_id":"usr_duplicate"}`)
			}
			return http.StatusCreated, requestBody(r)
		}
		return status, body
	}
}

// memberAnsweredByID is a control plane whose member create answers only the member's id.
func memberAnsweredByID() breaker {
	return func(r *http.Request, status int, body []byte) (int, []byte) {
		if m := createInInstitution.FindStringSubmatch(r.URL.Path); m != nil && m[1] == "members" && status == http.StatusCreated {
			var sent struct {
				CoreID string `json:"core_id"`
			}
			_ = json.Unmarshal(requestBody(r), &sent)
			out, _ := json.Marshal(map[string]string{"core_id": sent.CoreID})
			return status, out
		}
		return status, body
	}
}

var pricesPath = regexp.MustCompile(`^/_sandbox/institutions/([^/]+)/prices$`)

// sharedPrices is a sandbox whose prices are shared by every institution: a PUT of one
// institution's prices sets those of every institution it has seen (the breaker writes them
// to the sandbox behind the proxy, at target).
func sharedPrices(target string) func() breaker {
	return func() breaker {
		var mu sync.Mutex
		seen := map[string]bool{}
		return func(r *http.Request, status int, body []byte) (int, []byte) {
			mu.Lock()
			defer mu.Unlock()
			if m := regexp.MustCompile(`^/_sandbox/institutions/([^/]+)`).FindStringSubmatch(r.URL.Path); m != nil {
				seen[m[1]] = true
			}
			if m := pricesPath.FindStringSubmatch(r.URL.Path); m != nil && r.Method == http.MethodPut && status == http.StatusOK {
				for id := range seen {
					if id == m[1] {
						continue
					}
					req, _ := http.NewRequest(http.MethodPut, target+"/_sandbox/institutions/"+id+"/prices", bytes.NewReader(requestBody(r)))
					req.Header.Set("x-sandbox-token", r.Header.Get("x-sandbox-token"))
					req.Header.Set("Content-Type", "application/json")
					if res, err := http.DefaultClient.Do(req); err == nil {
						res.Body.Close()
					}
				}
			}
			return status, body
		}
	}
}

// controlAnyHost is a sandbox whose Host check covers the partner API but not /_sandbox/.
func controlAnyHost() breaker {
	return answering(http.StatusOK, `{}`, func(r *http.Request, status int, body []byte) bool {
		return status == http.StatusMisdirectedRequest && strings.HasPrefix(r.URL.Path, "/_sandbox/")
	})
}

// deleteEndsEveryPending is a sandbox whose subscription delete ends every pending delivery of
// the institution, not only the deleted subscription's.
func deleteEndsEveryPending() breaker {
	var mu sync.Mutex
	deleted := false
	return func(r *http.Request, status int, body []byte) (int, []byte) {
		mu.Lock()
		defer mu.Unlock()
		if r.Method == http.MethodDelete && strings.HasPrefix(r.URL.Path, "/v1/webhooks/subscriptions/") && status == http.StatusNoContent {
			deleted = true
		}
		if deleted && r.URL.Path == "/_sandbox/deliveries" {
			return status, bytes.ReplaceAll(body, []byte(`"status":"pending"`), []byte(`"status":"failed"`))
		}
		return status, body
	}
}

// recordsOnTheVirtualClock is a sandbox that stamps records with the virtual clock: after an
// advance, kyc_approved_at is as far ahead as the clock was moved.
func recordsOnTheVirtualClock() breaker {
	var mu sync.Mutex
	var ahead time.Duration
	return func(r *http.Request, status int, body []byte) (int, []byte) {
		mu.Lock()
		defer mu.Unlock()
		if r.URL.Path == "/_sandbox/clock/advance" && status == http.StatusOK {
			var sent struct {
				Seconds int64 `json:"seconds"`
			}
			_ = json.Unmarshal(requestBody(r), &sent)
			ahead += time.Duration(sent.Seconds) * time.Second
		}
		return editUserDetail(r, status, body, func(doc map[string]any) bool {
			return ahead != 0 && setApprovedAt(doc, func(old any) (any, bool) {
				s, _ := old.(string)
				t, err := time.Parse(time.RFC3339Nano, s)
				return t.Add(ahead).Format(time.RFC3339Nano), err == nil
			})
		})
	}
}

// rewriteHistory is an implementation whose user details carry the history rewrite makes of
// the sandbox's.
func rewriteHistory(rewrite func(h map[string]any)) breaker {
	return func(r *http.Request, status int, body []byte) (int, []byte) {
		return editUserDetail(r, status, body, func(doc map[string]any) bool {
			if h, ok := doc["historical_market_value"].(map[string]any); ok {
				rewrite(h)
			}
			return true
		})
	}
}

// dailyAllTime is an implementation whose all_time series is daily from the user's creation:
// one point per day at midnight UTC, the last (today's) carrying the current value.
func dailyAllTime() breaker {
	return rewriteHistory(func(h map[string]any) {
		pts, _ := h["all_time"].([]any)
		if len(pts) == 0 {
			return
		}
		last := pts[len(pts)-1].(map[string]any)
		today := time.Now().UTC().Truncate(24 * time.Hour)
		daily := make([]any, 0, len(pts)*30)
		for d := len(pts)*30 - 1; d >= 0; d-- {
			daily = append(daily, map[string]any{"as_of": today.AddDate(0, 0, -d).Format(time.RFC3339), "cost_basis": last["cost_basis"], "value": last["value"]})
		}
		h["all_time"] = daily
	})
}

// frozenHistory is an implementation that serves a user's history as it was written a week
// ago: every point a week earlier, the last no longer at the current period's start.
func frozenHistory() breaker {
	return rewriteHistory(func(h map[string]any) {
		for _, series := range h {
			for _, p := range series.([]any) {
				pt := p.(map[string]any)
				if at, err := time.Parse(time.RFC3339, pt["as_of"].(string)); err == nil {
					pt["as_of"] = at.AddDate(0, 0, -7).Format(time.RFC3339)
				}
			}
		}
	})
}

// loopbackNamesRefused is a sandbox whose loopback callbacks are allowed by address literal
// (127.0.0.1) only: a callback at localhost, or at the IPv6 loopback address, is refused as
// any other private address.
func loopbackNamesRefused() breaker {
	return func(r *http.Request, status int, body []byte) (int, []byte) {
		sent := requestBody(r)
		if subscribing(r) && status == http.StatusCreated && (bytes.Contains(sent, []byte("//localhost:")) || bytes.Contains(sent, []byte("[::1]"))) {
			return http.StatusBadRequest, []byte(`{"detail":"callback URL does not resolve to a public address"}`)
		}
		return status, body
	}
}

// goEscapedLocation is a sandbox whose redirect keeps the path's escapes as they were sent (as
// Go's url.URL writes a path), rather than Starlette's decoded-and-quoted one.
func goEscapedLocation(res *http.Response) error {
	if loc := res.Header.Get("Location"); res.StatusCode == http.StatusTemporaryRedirect && loc != "" {
		res.Header.Set("Location", strings.NewReplacer("/a?b/", "/a%3Fb/", "%EF%BF%BD", "%FF").Replace(loc))
	}
	return nil
}

// hostAsSentInLocation is a sandbox whose redirect names the Host header whatever it holds,
// not only one Starlette reads as host[:port].
func hostAsSentInLocation(res *http.Response) error {
	loc, err := url.Parse(res.Header.Get("Location"))
	if res.StatusCode == http.StatusTemporaryRedirect && err == nil && loc.Host != "" {
		loc.Host = res.Request.Host
		res.Header.Set("Location", loc.String())
	}
	return nil
}

// allowOnEveryRoutingAnswer is a sandbox that names a path's methods on its 404s and 307s too.
func allowOnEveryRoutingAnswer(res *http.Response) error {
	if res.StatusCode == http.StatusNotFound || res.StatusCode == http.StatusTemporaryRedirect {
		res.Header.Set("Allow", "GET")
	}
	return nil
}

// finalNewlineNotFound is a sandbox whose routes match the exact path only.
func finalNewlineNotFound() breaker {
	return answering(http.StatusNotFound, `{"detail":"Not Found"}`, func(r *http.Request, status int, body []byte) bool {
		return strings.HasSuffix(r.URL.Path, "\n")
	})
}

// docsSlashesNotFound is a sandbox that answers /docs// 404, its asset route taking it.
func docsSlashesNotFound() breaker {
	return answering(http.StatusNotFound, `{"detail":"Not Found"}`, func(r *http.Request, status int, body []byte) bool {
		return strings.HasPrefix(r.URL.Path, "/docs/") && status == http.StatusTemporaryRedirect
	})
}

// subscribing is whether r creates a subscription.
func subscribing(r *http.Request) bool {
	return r.Method == http.MethodPost && strings.HasSuffix(r.URL.Path, "/webhooks/subscriptions")
}

// handWrittenIDNA is an implementation with a partial UTS 46: it accepts the hosts the Bidi,
// joiner and mapping rules refuse.
func handWrittenIDNA() breaker {
	return answering(http.StatusCreated, `{"subscription_id":"sub_x","event_type":"kyc","url":"https://x/","api_version":"v1","enabled":true,"created_at":"2026-01-01T00:00:00Z"}`, func(r *http.Request, status int, body []byte) bool {
		return subscribing(r) && status == http.StatusUnprocessableEntity && bytes.Contains(body, []byte("invalid international domain name"))
	})
}

// surrogateEscaped is an implementation that lets a lone surrogate through and renders it
// escaped where pydantic refuses it.
func surrogateEscaped() breaker {
	return answering(http.StatusCreated, `{"subscription_id":"sub_x","event_type":"kyc","url":"https://1.2.3.4/\ud800","api_version":"v1","enabled":true,"created_at":"2026-01-01T00:00:00Z"}`, func(r *http.Request, status int, body []byte) bool {
		return subscribing(r) && bytes.Contains(body, []byte(`"string_unicode"`))
	})
}

// oneRefusalSentence is an implementation that says "not a public address" for every address
// check it refuses, and refuses what its own URL parser cannot read.
func oneRefusalSentence() breaker {
	const notPublic = `{"detail":"callback URL does not resolve to a public address"}`
	return func(r *http.Request, status int, body []byte) (int, []byte) {
		switch {
		case subscribing(r) && status == http.StatusBadRequest && bytes.Contains(body, []byte("host does not resolve")):
			return status, []byte(notPublic)
		case subscribing(r) && status == http.StatusCreated && bytes.Contains(requestBody(r), []byte(`\u0003`)):
			return http.StatusBadRequest, []byte(notPublic)
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
		modify                             func(*http.Response) error // instead of breaker: rewrites headers too
	}{
		{"kyc_approved_at restamped on every approval", "user_detail.feature", "kyc_approved_at is kept through every later move, back to approved included",
			`expected accounts.0.kyc_approved_at to be "2026-01-10T12:00:00Z"`, restampApprovals, nil},
		{"kyc_approved_at restamped on every approval", "user_detail.feature", "kyc_approved_at is absent until the first approval, which it then keeps",
			`accounts.0.kyc_approved_at`, restampApprovals, nil},
		{"kyc_approved_at shown before any approval", "user_detail.feature", "kyc_approved_at is absent until the first approval, which it then keeps",
			`expected accounts.0.kyc_approved_at to be absent`, approvedAtTooEarly, nil},
		{"a closed account approved again", "control_plane.feature", "Every KYC move of the transition table is allowed, and no other",
			"closed → approved answered 200, want 409", allowReapproval, nil},
		{"deliveries outlive their institution", "webhook_events.feature", "Deleting an institution removes it with its deliveries, and its key stops answering",
			"a deleted institution's deliveries are deleted with it", deliveriesOutliveTheirInstitution, nil},
		{"health only under the version", "health.feature", "Health answers at the root too, outside any version",
			"expected status 200, got GET", healthOnlyVersioned, nil},
		{"the control plane under the version too", "health.feature", "The control plane is never under an API version",
			"expected status 404, got GET", controlPlaneVersioned, nil},
		{"any Host answered", "exposure.feature", "A Host that is not a loopback name is 421 before routing, whatever the path and key",
			"expected status 421, got GET", answerAnyHost, nil},
		{"any Host answered", "exposure.feature", "A request without a key from a foreign Host is 421, not 401",
			"expected status 421, got GET", answerAnyHost, nil},
		{"names ending in localhost answered", "exposure.feature", "Every Host that is not a loopback name is answered alike, and a refusal is 421 before routing and key",
			"every Host that is not a loopback name is answered alike", localhostSuffixAnswered, nil},
		{"names ending in localhost answered", "exposure.feature", "A Host that is not a loopback name is 421 before routing, whatever the path and key",
			"expected status 421, got GET", localhostSuffixAnswered, nil},
		{"the key checked before the Host", "exposure.feature", "Every Host that is not a loopback name is answered alike, and a refusal is 421 before routing and key",
			"every Host that is not a loopback name is answered alike", keyBeforeHost, nil},
		{"names under localhost refused", "exposure.feature", "Loopback names and addresses are answered",
			`→ 421 {"detail":"Misdirected Request"}`, onlyBareLocalhost, nil},
		{"DNS override names without underscores", "exposure.feature", "DNS overrides take DNS host names only",
			"decisions D18: DNS overrides take DNS host names only", dnsNamesWithoutUnderscore, nil},
		{"DNS overrides of any name and size", "exposure.feature", "DNS overrides take DNS host names only",
			"expected 400, got 200", dnsAnyName, nil},
		{"DNS overrides of any name and size", "exposure.feature", "A DNS override takes at most 16 addresses",
			"expected 400, got 200", dnsAnyName, nil},
		{"embedded IPv4 addresses not judged", "exposure.feature", "A callback address embedding a loopback or private IPv4 address is refused at create",
			"expected status 400, got POST", embeddedNotJudged, nil},
		{"embedded IPv4 addresses not judged at test", "exposure.feature", "A callback host that comes to resolve to an embedded private address is refused at test",
			`expected`, embeddedNotJudgedAtTest, nil},
		{"control-plane bodies unbounded", "exposure.feature", "The control plane reads a body of exactly 1 MiB and refuses one byte more with 413",
			"expected status 413, got PUT", controlBodiesUnbounded, nil},
		{"docs framable", "exposure.feature", "The docs refuse framing and sniffing",
			`expected header X-Frame-Options to be "DENY"`, nil, docsFramable},
		{"a hand-written IDNA subset", "subscriptions.feature", "A callback host pydantic's URL type refuses is its url_parsing item",
			"expected status 422, got POST", handWrittenIDNA, nil},
		{"a lone surrogate let through", "subscriptions.feature", "A lone surrogate is refused as pydantic refuses it, its input rendered null",
			`expected key "detail"`, surrogateEscaped, nil},
		{"one sentence for every refusal", "subscriptions.feature", "A callback host that does not resolve is refused as such, not as a private address",
			`callback URL host does not resolve`, oneRefusalSentence, nil},
		{"a control character refused", "subscriptions.feature", "A control character in the userinfo is percent-encoded as pydantic does, not refused",
			"expected status 201, got POST", oneRefusalSentence, nil},
		{"a Location re-escaped as Go's URL writes it", "health.feature", "The redirect's Location is the decoded path, quoted as Starlette quotes it",
			`expected header Location to end with`, nil, goEscapedLocation},
		{"any Host named in a Location", "health.feature", "A redirect names the Host only when Starlette reads it as host[:port]",
			`expected header Location to not contain`, nil, hostAsSentInLocation},
		{"Allow on every routing answer", "health.feature", "Allow goes with 405 only, never with a 404 or a redirect",
			`expected no Allow header`, nil, allowOnEveryRoutingAnswer},
		{"no match before a final newline", "health.feature", "A route matches its path with one final newline, as Starlette's patterns do",
			`/v1/health%0A → 404`, finalNewlineNotFound, nil},
		{"/docs// not redirected", "health.feature", "The docs page redirects from its trailing-slash forms",
			`expected status 307, got GET`, docsSlashesNotFound, nil},
		{"special-purpose registries not judged", "exposure.feature", "A callback address in a special-purpose block that is not globally reachable is refused at create",
			"expected status 400, got POST", registryNotJudged, nil},
		{"numeric DNS override names", "exposure.feature", "DNS overrides take DNS host names only",
			"decisions D18: DNS overrides take DNS host names only", dnsNumericNames, nil},
		{"folder listed", "exposure.feature", "No folder is listed",
			"expected status 404", nil, folderListed},
		{"all_time daily", "user_detail.feature", "all_time is monthly from the user's creation, not daily",
			"expected all_time to have", dailyAllTime, nil},
		{"all_time daily", "user_detail.feature", "A funded user's history has decisions D5's resolution from its creation and ends at its current value",
			"expected all_time to have", dailyAllTime, nil},
		{"a history frozen when it was written", "user_detail.feature", "A funded user's history has decisions D5's resolution from its creation and ends at its current value",
			"expected the last point of past_day at the start of the current hour", frozenHistory, nil},
		{"loopback names refused", "webhook_test_events.feature", "A callback host named localhost, which resolves to loopback, receives its test event",
			"expected status 201, got POST", loopbackNamesRefused, nil},
		{"loopback names refused", "webhook_test_events.feature", "A callback on the IPv6 loopback address receives its test event",
			"expected status 201, got POST", loopbackNamesRefused, nil},
		{"an unknown platform id's sessions revoked", "sessions.feature", "Revoking the sessions of an unknown platform id is 404, not 204",
			"expected status 404, got POST", unknownPlatformRevoked, nil},
		{"duplicate ids created", "control_plane.feature", "A user_account_id and a member's core_id are an institution's once; another institution may have them too",
			"expected status 409", duplicateIDsCreated, nil},
		{"a member answered by its id alone", "control_plane.feature", "Adding a member answers the member as stored",
			"core_id_type", memberAnsweredByID, nil},
		{"prices shared by every institution", "control_plane.feature", "Prices are per institution: setting one's leaves another's as they were",
			`"222.00"`, sharedPrices(srv.URL), nil},
		{"the control plane answers any Host", "exposure.feature", "The control plane and the console refuse a Host that is not a loopback name, token or not",
			"expected status 421, got GET", controlAnyHost, nil},
		{"a delete ends every pending delivery", "webhook_events.feature", "Deleting a subscription ends its own pending deliveries and no other",
			"as pending with", deleteEndsEveryPending, nil},
		{"records stamped on the virtual clock", "webhook_events.feature", "Timestamps that leave the sandbox stay wall-clock however far its clock was advanced",
			"timestamps stay wall-clock", recordsOnTheVirtualClock, nil},
	}
	for _, c := range cases {
		t.Run(c.defect+": "+c.scenario, func(t *testing.T) {
			t.Parallel()
			run := func(broken bool) features.ScenarioResult {
				t.Helper()
				u := breakingProxy(t, srv.URL, nil)
				switch {
				case broken && c.modify != nil:
					u = modifyingProxy(t, srv.URL, c.modify)
				case broken:
					u = breakingProxy(t, srv.URL, c.breaker())
				}
				return runScenario(t, features.Options{BaseURL: u + "/v1", SandboxURL: u, SandboxToken: srv.SB.Token}, c.feature, c.scenario)
			}
			requireCaught(t, run(false), run(true), c.defect, c.scenario, c.because)
		})
	}
}

// deliveryBreak is an implementation that breaks a rule in what it sends receivers: the API
// passes through (watched for the clock's advances and the secret the first subscribe
// issues), and each delivery to the suite's receiver goes through a rewrite, signed again with
// the institution's secret as the implementation would sign what it sends.
type deliveryBreak struct {
	mu     sync.Mutex
	ahead  time.Duration
	secret string
}

// rewrite breaks one delivery: its headers (the signature) and body.
type rewrite func(d *deliveryBreak, h http.Header, body []byte) []byte

// api watches the API: the advances it answers and the secret the first subscribe issues.
func (d *deliveryBreak) api(r *http.Request, status int, body []byte) (int, []byte) {
	d.mu.Lock()
	defer d.mu.Unlock()
	if r.URL.Path == "/_sandbox/clock/advance" && status == http.StatusOK {
		var sent struct {
			Seconds int64 `json:"seconds"`
		}
		_ = json.Unmarshal(requestBody(r), &sent)
		d.ahead += time.Duration(sent.Seconds) * time.Second
	}
	if s := gjson.GetBytes(body, "signing_secret").String(); subscribing(r) && s != "" {
		d.secret = s
	}
	return status, body
}

// receiverProxy serves the receiver's URL to the sandbox, rewrites each delivery (nil: none)
// and forwards it to the suite's receiver listening at hub, answering what it answers.
func (d *deliveryBreak) receiverProxy(t *testing.T, hub string, rw rewrite) string {
	t.Helper()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		h := r.Header.Clone()
		if rw != nil {
			d.mu.Lock()
			body = rw(d, h, body)
			d.mu.Unlock()
		}
		req, _ := http.NewRequest(r.Method, "http://"+hub+r.URL.RequestURI(), bytes.NewReader(body))
		req.Header = h
		res, err := http.DefaultClient.Do(req)
		if err != nil {
			http.Error(w, err.Error(), http.StatusBadGateway)
			return
		}
		defer res.Body.Close()
		b, _ := io.ReadAll(res.Body)
		w.WriteHeader(res.StatusCode)
		_, _ = w.Write(b)
	}))
	t.Cleanup(srv.Close)
	return srv.URL
}

// sign signs body at t (the header's t when t is 0) with the secret, as one v1 entry.
func (d *deliveryBreak) sign(h http.Header, t int64, body []byte) []byte {
	if t == 0 {
		s, err := laws.ParseSignature(h.Get("X-Partner-Webhook-Signature"))
		if err != nil {
			return body
		}
		t = s.Time().Unix()
	}
	ts := strconv.FormatInt(t, 10)
	h.Set("X-Partner-Webhook-Signature", "t="+ts+",v1="+laws.HMACHex(d.secret, laws.SignedPayload(ts, body)))
	return body
}

// setField is a rewrite that sets (or, with a nil value, removes) one field of every delivery
// of the event type, and signs the result.
func setField(eventType, field string, value any) rewrite {
	return func(d *deliveryBreak, h http.Header, body []byte) []byte {
		var doc map[string]any
		if json.Unmarshal(body, &doc) != nil || doc["event_type"] != eventType {
			return body
		}
		obj, key := doc, field
		if parent, leaf, ok := strings.Cut(field, "."); ok {
			obj, _ = doc[parent].(map[string]any)
			key = leaf
		}
		if obj == nil {
			return body
		}
		if value == nil {
			delete(obj, key)
		} else {
			obj[key] = value
		}
		out, _ := json.Marshal(doc)
		return d.sign(h, 0, out)
	}
}

// linksAtNewestVersion builds every link at v2, whatever the subscription's version.
func linksAtNewestVersion(d *deliveryBreak, h http.Header, body []byte) []byte {
	return d.sign(h, 0, bytes.Replace(body, []byte(`"self":"/v1/`), []byte(`"self":"/v2/`), 1))
}

// signatureOnVirtualClock signs with t on the virtual clock.
func signatureOnVirtualClock(d *deliveryBreak, h http.Header, body []byte) []byte {
	if s, err := laws.ParseSignature(h.Get("X-Partner-Webhook-Signature")); err == nil && d.ahead != 0 {
		return d.sign(h, s.Time().Add(d.ahead).Unix(), body)
	}
	return body
}

// createdAtOnVirtualClock writes the event's created_at on the virtual clock, and signs that.
func createdAtOnVirtualClock(d *deliveryBreak, h http.Header, body []byte) []byte {
	at, err := time.Parse(time.RFC3339Nano, gjson.GetBytes(body, "created_at").String())
	if err != nil || d.ahead == 0 {
		return body
	}
	was := gjson.GetBytes(body, "created_at").Raw
	return d.sign(h, 0, bytes.Replace(body, []byte(`"created_at":`+was), []byte(`"created_at":"`+at.Add(d.ahead).Format(time.RFC3339Nano)+`"`), 1))
}

// The rules on what a delivery carries are proved on the deliveries themselves: each case
// rewrites them on their way from the sandbox to the suite's receiver, as an implementation
// breaking the rule would send them (signed with the secret), and the scenario citing the
// rule must pass with nothing rewritten and fail with the rewrite, naming the rule. The
// wall-clock law (decisions D8) is proved so on each timestamp a delivery carries, the
// signature's t and the event's created_at (kyc_approved_at is TestNonConformingDecisionsFail's).
func TestNonConformingDeliveriesFail(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("runs scenarios against the simulator; skipped with -short")
	}
	const wallClock = "Timestamps that leave the sandbox stay wall-clock however far its clock was advanced"
	srv := sandboxtest.MustServe(t, func(c *sandbox.Config) { c.APIVersions = []string{"v1", "v2"} })
	cases := []struct {
		defect, feature, scenario, because string
		rewrite                            rewrite
	}{
		{"the signature's t on the virtual clock", "webhook_events.feature", wallClock,
			"expected the signature's t within 5m0s of the wall clock (decisions D8: timestamps stay wall-clock", signatureOnVirtualClock},
		{"created_at on the virtual clock", "webhook_events.feature", wallClock,
			"expected the delivery's created_at within 5m0s of the wall clock (decisions D8: timestamps stay wall-clock", createdAtOnVirtualClock},
		{"links at the newest version", "webhook_test_events.feature", "A test event's links are built at its subscription's version, v1 while v2 is served",
			"expected links.self to be built at version v1", linksAtNewestVersion},
		{"a kyc event without its product", "webhook_test_events.feature", "A kyc test event is shaped like a kyc event: event_id, data.kyc_status, data.product and links.self to a user",
			"data.product", setField("kyc", "data.product", nil)},
		{"a transaction event linking the user", "webhook_test_events.feature", "A transaction test event is shaped like a transaction event, and carries no balances, positions, quantities or amounts",
			"links.self", setField("transaction", "links.self", "/v1/users/usr_test_1/?user_account_id_type=platform")},
		{"a transaction event carrying its amount", "webhook_test_events.feature", "A transaction test event is shaped like a transaction event, and carries no balances, positions, quantities or amounts",
			"spec §6.3: a transaction event carries no balances, positions, quantities or amounts; got data.amount", setField("transaction", "data.amount", "100.00")},
		{"a transaction event carrying the user's cash", "webhook_events.feature", "A transaction event carries no balances, positions, quantities or amounts",
			"data.balances.cash", setField("transaction", "data.balances", map[string]string{"cash": "900.00"})},
	}
	for _, c := range cases {
		t.Run(c.defect+": "+c.scenario, func(t *testing.T) {
			t.Parallel()
			run := func(rw rewrite) features.ScenarioResult {
				t.Helper()
				d := &deliveryBreak{}
				u := breakingProxy(t, srv.URL, d.api)
				ln, err := net.Listen("tcp", "127.0.0.1:0")
				if err != nil {
					t.Fatal(err)
				}
				hub := ln.Addr().String()
				ln.Close() // the run's receiver listens there, behind the rewriting proxy
				return runScenario(t, features.Options{BaseURL: u + "/v1", SandboxURL: u, SandboxToken: srv.SB.Token,
					ReceiverListen: hub, ReceiverURL: d.receiverProxy(t, hub, rw)}, c.feature, c.scenario)
			}
			requireCaught(t, run(nil), run(c.rewrite), c.defect, c.scenario, c.because)
		})
	}
}

// runScenario runs one scenario of a feature with opts (a deployment behind a proxy) and
// returns its result.
func runScenario(t *testing.T, opts features.Options, feature, scenario string) features.ScenarioResult {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	opts.Paths, opts.Name = []string{feature}, "^"+regexp.QuoteMeta(scenario)+"$"
	rep, err := features.Run(ctx, opts)
	if err != nil {
		t.Fatal(err)
	}
	r, ok := rep.Result(scenario)
	if !ok {
		t.Fatalf("the run did not report %q", scenario)
	}
	return r
}

// requireCaught holds a breaking proxy's proof: the scenario passes against the honest
// deployment and fails against the broken one, naming the broken rule (because).
func requireCaught(t *testing.T, honest, broken features.ScenarioResult, defect, scenario, because string) {
	t.Helper()
	if honest.Status != features.Passed {
		t.Fatalf("through the honest proxy, expected %q to pass, got %s: %s", scenario, honest.Status, honest.Err)
	}
	if broken.Status != features.Failed {
		t.Fatalf("with %s, expected %q to fail, got %s", defect, scenario, broken.Status)
	}
	if !strings.Contains(broken.Err, because) {
		t.Errorf("expected the failure to name the broken rule (%q), got: %s", because, broken.Err)
	}
}

// The retry-schedule step judges the delivery log's next attempt against the virtual clock,
// which runs on with the wall clock while the suite reads it. A suite slowed down between an
// attempt and its reading (a loaded machine) must not see a broken schedule, and a schedule
// shifted by a few seconds must be seen however slow the suite is.

// slowLogReads delays the first read of the delivery log that shows a new attempt of a pending
// delivery by delay — the suite notices each attempt that much later, as on a loaded machine —
// and moves every next_attempt_at it passes by shift (0: the sandbox's schedule as it is).
func slowLogReads(delay, shift time.Duration) breaker {
	var mu sync.Mutex
	seen := map[string]int{} // delivery id → attempts already shown
	next := regexp.MustCompile(`"next_attempt_at":"([^"]+)"`)
	return func(r *http.Request, status int, body []byte) (int, []byte) {
		if r.Method != http.MethodGet || r.URL.Path != "/_sandbox/deliveries" || status != http.StatusOK {
			return status, body
		}
		slow := false
		mu.Lock()
		for _, d := range gjson.GetBytes(body, "deliveries").Array() {
			id, n := d.Get("delivery_id").String(), len(d.Get("attempts").Array())
			if n > seen[id] {
				seen[id] = n
				slow = slow || d.Get("status").String() == "pending"
			}
		}
		mu.Unlock()
		if slow {
			time.Sleep(delay)
		}
		if shift == 0 {
			return status, body
		}
		return status, next.ReplaceAllFunc(body, func(m []byte) []byte {
			t, err := time.Parse(time.RFC3339Nano, string(next.FindSubmatch(m)[1]))
			if err != nil {
				return m
			}
			return []byte(`"next_attempt_at":"` + t.Add(shift).Format(time.RFC3339Nano) + `"`)
		})
	}
}

func TestRetryScheduleJudgedByWhatTheSuiteObserved(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("runs a scenario against the simulator; skipped with -short")
	}
	const scenario = "A refused delivery follows the retry schedule exactly, then fails"
	// Longer than the 2 s the step once allowed for reading the log, shorter than the shifts.
	const delay = 2500 * time.Millisecond
	cases := []struct {
		name    string
		shift   time.Duration
		because string // "" when the scenario must pass
	}{
		{"every attempt noticed late", 0, ""},
		{"retries scheduled 4 s late, noticed late", 4 * time.Second, "expected retry 1 5s after attempt 1"},
		{"retries scheduled 4 s early, noticed late", -4 * time.Second, "expected retry 1 5s after attempt 1"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			// A sandbox of its own: the scenario is @serial, it moves the virtual clock.
			srv := sandboxtest.MustServe(t)
			u := breakingProxy(t, srv.URL, slowLogReads(delay, c.shift))
			ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
			defer cancel()
			start := time.Now()
			rep, err := features.Run(ctx, features.Options{BaseURL: u + "/v1", SandboxURL: u, SandboxToken: srv.SB.Token,
				Paths: []string{"webhook_events.feature"}, Name: "^" + regexp.QuoteMeta(scenario) + "$"})
			if err != nil {
				t.Fatal(err)
			}
			r, ok := rep.Result(scenario)
			if !ok {
				t.Fatalf("the run did not report %q", scenario)
			}
			t.Logf("%s in %s %s", r.Status, time.Since(start).Round(time.Millisecond), r.Err)
			if c.because == "" {
				if r.Status != features.Passed {
					t.Fatalf("with the log read %s after each attempt, expected %q to pass, got %s: %s", delay, scenario, r.Status, r.Err)
				}
				return
			}
			if r.Status != features.Failed {
				t.Fatalf("with every retry shifted by %s, expected %q to fail, got %s", c.shift, scenario, r.Status)
			}
			if !strings.Contains(r.Err, c.because) {
				t.Errorf("expected the failure to name the broken schedule (%q), got: %s", c.because, r.Err)
			}
		})
	}
}
