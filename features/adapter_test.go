package features_test

import (
	"bufio"
	"context"
	"encoding/json"
	"io/fs"
	"net"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/partnersim/partnersim/features"
	"github.com/partnersim/partnersim/internal/sandboxtest"
	"github.com/partnersim/partnersim/simulator/sandbox"
)

// adapterProxy serves the state adapter and nothing more of the control plane, in front of the
// sandbox's: it declares only caps at /_sandbox/capabilities and answers 404 to every other
// control-plane operation, and to an operation of a capability it does not declare — as another
// implementation serving a part of the adapter would. The partner API passes through. Declaring
// loopback_hosts, it refuses a Host that is not a loopback name on its own surface too, before
// routing (decisions D18: the check covers every surface).
func adapterProxy(t *testing.T, sandboxURL, token string, caps []string) string {
	t.Helper()
	target, _ := url.Parse(sandboxURL)
	proxy := httputil.NewSingleHostReverseProxy(target)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if !strings.HasPrefix(r.URL.Path, "/_sandbox/") {
			proxy.ServeHTTP(w, r)
			return
		}
		if slices.Contains(caps, "loopback_hosts") && !loopbackHost(r.Host) {
			w.Header().Set("Content-Type", "application/json")
			w.WriteHeader(http.StatusMisdirectedRequest)
			_, _ = w.Write([]byte(`{"detail":"Misdirected Request"}`))
			return
		}
		c := features.CapabilityOf(r.Method, r.URL.Path)
		if r.URL.Path == "/_sandbox/capabilities" && r.Method == http.MethodGet {
			if r.Header.Get("x-sandbox-token") != token { // the token check stays the sandbox's
				proxy.ServeHTTP(w, r)
				return
			}
			w.Header().Set("Content-Type", "application/json")
			_ = json.NewEncoder(w).Encode(map[string][]string{"capabilities": caps})
			return
		}
		if c == "" || !slices.Contains(caps, c) {
			w.Header().Set("Content-Type", "application/json")
			w.WriteHeader(http.StatusNotFound)
			_, _ = w.Write([]byte(`{"detail":"Not Found"}`))
			return
		}
		proxy.ServeHTTP(w, r)
	}))
	t.Cleanup(srv.Close)
	return srv.URL
}

// loopbackHost reports whether a Host names loopback: localhost or a name under it, 127.0.0.0/8
// or ::1, with or without a port.
func loopbackHost(host string) bool {
	h := host
	if hp, _, err := net.SplitHostPort(host); err == nil {
		h = hp
	}
	h = strings.TrimSuffix(strings.ToLower(strings.Trim(h, "[]")), ".")
	if h == "localhost" || strings.HasSuffix(h, ".localhost") {
		return true
	}
	ip := net.ParseIP(h)
	return ip != nil && ip.IsLoopback()
}

// capabilitySteps are the step texts that need an optional capability, by capability.
var capabilitySteps = map[string]*regexp.Regexp{
	"virtual_clock":   regexp.MustCompile(`the virtual clock advances|the retries of the event .* come`),
	"dns_overrides":   regexp.MustCompile(`callback host "[^"]*" (?:now )?resolv|a DNS override of|the control plane "/_sandbox/dns"`),
	"secret_rotation": regexp.MustCompile(`the signing secret is rotated`),
}

// scenariosNeeding reads the feature files for the scenarios with a step that needs one of caps:
// scenario name → the capability of its first such step.
func scenariosNeeding(t *testing.T, caps []string) map[string]string {
	t.Helper()
	out := map[string]string{}
	files, _ := fs.Glob(features.Features(), "*.feature")
	for _, f := range files {
		b, _ := fs.ReadFile(features.Features(), f)
		sc := bufio.NewScanner(strings.NewReader(string(b)))
		name := ""
		for sc.Scan() {
			line := strings.TrimSpace(sc.Text())
			if n, ok := strings.CutPrefix(line, "Scenario:"); ok {
				name = strings.TrimSpace(n)
				continue
			}
			if n, ok := strings.CutPrefix(line, "Scenario Outline:"); ok {
				name = strings.TrimSpace(n)
				continue
			}
			for _, c := range caps {
				if _, seen := out[name]; !seen && name != "" && capabilitySteps[c].MatchString(line) {
					out[name] = c
				}
			}
		}
	}
	return out
}

// The suite drives any implementation of the state adapter: through an adapter serving every
// capability it checks every rule, as against the sandbox's own control plane; through one
// lacking the virtual clock, DNS overrides and secret rotation, exactly the scenarios that need
// one of them are skipped, each naming it, and nothing fails.
//
// Not parallel with the other tests, nor its two runs with each other: two whole runs beside
// TestContract's would load a small CI machine past the timing the webhook steps allow.
func TestContractThroughTheStateAdapter(t *testing.T) {
	if testing.Short() {
		t.Skip("the contract suite runs the whole simulator; skipped with -short")
	}
	all := []string{"tenants", "kyc", "trading", "secret_rotation", "delivery_log", "virtual_clock", "dns_overrides", "loopback_hosts"}
	lacking := []string{"virtual_clock", "dns_overrides", "secret_rotation"}
	cases := map[string][]string{"every capability": all, "fewer capabilities": slices.DeleteFunc(slices.Clone(all), func(c string) bool { return slices.Contains(lacking, c) })}
	for name, caps := range cases {
		t.Run(name, func(t *testing.T) {
			// A sandbox each: the virtual clock is process-wide, and a @serial scenario runs
			// alone only within its own run.
			srv := sandboxtest.MustServe(t, func(c *sandbox.Config) { c.APIVersions = []string{"v1", "v2"} })
			state := adapterProxy(t, srv.URL, srv.SB.Token, caps)
			ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
			defer cancel()
			rep, err := features.Run(ctx, features.Options{BaseURL: state + "/v1", SandboxURL: state, SandboxToken: srv.SB.Token, Randomize: -1})
			if err != nil {
				t.Fatal(err)
			}
			t.Logf("%s: %s; rules: %s", name, rep.Summary(), rep.RulesSummary())
			for _, f := range rep.Failed() {
				t.Errorf("FAILED %s: %q\n    %s", f.Feature, f.Name, f.Err)
			}
			want := map[string]string{}
			if len(caps) < len(all) {
				want = scenariosNeeding(t, lacking)
				if len(want) < 8 {
					t.Fatalf("expected the features to have scenarios needing %v, found %v", lacking, want)
				}
			}
			got := map[string]string{}
			for _, s := range rep.Skipped() {
				got[s.Name] = s.Err
			}
			for n, c := range want {
				if got[n] != features.CapabilitySkipReason(c) {
					t.Errorf("expected %q skipped with %q, got %q", n, features.CapabilitySkipReason(c), got[n])
				}
			}
			for n, why := range got {
				if _, ok := want[n]; !ok {
					t.Errorf("expected %q to run through the adapter, it was skipped: %s", n, why)
				}
			}
			if len(caps) == len(all) {
				for _, o := range rep.RuleOutcomes() {
					if !o.Checked() {
						t.Errorf("rule %s is not checked through an adapter with every capability: %v", o.ID, o.SkipReasons)
					}
				}
			}
		})
	}
}
