package features_test

import (
	"bytes"
	"context"
	"flag"
	"io"
	"net/http"
	"os"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/tidwall/gjson"

	"github.com/partnersim/partnersim/features"
	"github.com/partnersim/partnersim/internal/sandboxtest"
	"github.com/partnersim/partnersim/simulator/sandbox"
)

// TestContract runs every feature against the simulator, self-hosted on a temp bbolt file with
// v1 and v2 mounted — or, when PARTNERSIM_BASE_URL is set, against that deployment
// (PARTNERSIM_API_KEY, PARTNERSIM_SANDBOX_URL, PARTNERSIM_SANDBOX_TOKEN as for `partnersim
// contract`). PARTNERSIM_TAGS and PARTNERSIM_NAME narrow the run; PARTNERSIM_SEED replays an
// order.
func TestContract(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("the contract suite runs the whole simulator; skipped with -short")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	opts := target(t)
	opts.Tags = os.Getenv("PARTNERSIM_TAGS")
	opts.Name = os.Getenv("PARTNERSIM_NAME")
	opts.StopOnFailure = os.Getenv("PARTNERSIM_STOP_ON_FAILURE") != ""
	opts.Randomize = time.Now().UnixNano() % 1_000_000
	if s := os.Getenv("PARTNERSIM_SEED"); s != "" {
		n, err := strconv.ParseInt(s, 10, 64)
		if err != nil {
			t.Fatalf("PARTNERSIM_SEED=%q: %v", s, err)
		}
		opts.Randomize = n
	}
	var out bytes.Buffer
	opts.Format, opts.Output = "pretty", &out
	tenantsBefore, usersBefore := tenantCounts(t, opts)
	rep, err := features.Run(ctx, opts)
	if err != nil {
		t.Fatalf("contract run: %v", err)
	}
	// A run leaves a shared sandbox as it found it: every institution it created is deleted.
	if tenants, users := tenantCounts(t, opts); tenants != tenantsBefore || users != usersBefore {
		t.Errorf("expected the run to leave %d institutions and %d users, it left %d and %d (cleanup problems: %v)",
			tenantsBefore, usersBefore, tenants, users, rep.Cleanup)
	}
	t.Logf("%s; scenario order seed %d (PARTNERSIM_SEED replays it)", rep.Summary(), opts.Randomize)
	t.Logf("rules: %s", rep.RulesSummary())
	if testing.Verbose() {
		t.Log("\n" + out.String())
	}
	for _, s := range rep.Slowest(5) {
		t.Logf("slow: %s %s: %q", s.Duration.Round(time.Millisecond), s.Feature, s.Name)
	}
	for _, f := range rep.Failed() {
		t.Errorf("FAILED %s: %q\n    %s", f.Feature, f.Name, strings.ReplaceAll(f.Err, "\n", "\n    "))
	}
	if rep.ExitCode != 0 && len(rep.Failed()) == 0 {
		t.Errorf("godog exited %d with no failed scenario recorded (undefined or pending steps?):\n%s", rep.ExitCode, out.String())
	}
	if opts.SandboxURL != "" && opts.Name == "" && opts.Tags == "" {
		for _, s := range rep.Skipped() {
			t.Errorf("scenario %q (%s) was skipped against the simulator: %s", s.Name, s.Feature, s.Err)
		}
	}
	if os.Getenv("PARTNERSIM_BASE_URL") == "" && opts.Name == "" && opts.Tags == "" && len(rep.Failed()) == 0 {
		adapterNeedsHold(t, rep)
	}
}

// adapterNeedsHold checks rules-adapter.tsv against a whole run on the self-hosted sandbox: each
// rule only a control plane unlocks names the state adapter's capabilities its least needy
// scenario asked for. -update rewrites the file.
func adapterNeedsHold(t *testing.T, rep *features.Report) {
	t.Helper()
	got := rep.RuleCapabilities()
	want := features.RulesAdapterTSV(got)
	if have := features.RulesAdapterTSV(features.AdapterNeeds()); have == want {
		return
	}
	if f := flag.Lookup("update"); f != nil && f.Value.String() == "true" {
		if err := os.WriteFile("rules-adapter.tsv", []byte(want), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	t.Errorf("rules-adapter.tsv does not say which capabilities of the state adapter this run's scenarios needed for each rule: go test ./features -run 'TestContract$' -update\nthe run's:\n%s", want)
}

// tenantCounts counts the institutions and users the control plane lists (0, 0 without one).
func tenantCounts(t *testing.T, o features.Options) (institutions, users int) {
	t.Helper()
	if o.SandboxURL == "" {
		return 0, 0
	}
	req, err := http.NewRequest(http.MethodGet, o.SandboxURL+"/_sandbox/institutions", nil)
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("x-sandbox-token", o.SandboxToken)
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatalf("list institutions: %v", err)
	}
	defer res.Body.Close()
	b, _ := io.ReadAll(res.Body)
	list := gjson.GetBytes(b, "institutions").Array()
	if res.StatusCode != http.StatusOK || len(list) == 0 {
		t.Fatalf("list institutions: %d %s", res.StatusCode, b)
	}
	for _, in := range list {
		users += int(in.Get("users").Int())
	}
	return len(list), users
}

// target is the deployment under test: the environment's, or a self-hosted simulator.
func target(t *testing.T) features.Options {
	t.Helper()
	if base := os.Getenv("PARTNERSIM_BASE_URL"); base != "" {
		return features.Options{BaseURL: base, APIKey: os.Getenv("PARTNERSIM_API_KEY"),
			SandboxURL: os.Getenv("PARTNERSIM_SANDBOX_URL"), SandboxToken: os.Getenv("PARTNERSIM_SANDBOX_TOKEN"),
			SigningSecret: os.Getenv("PARTNERSIM_SIGNING_SECRET")}
	}
	srv := sandboxtest.MustServe(t, func(c *sandbox.Config) { c.APIVersions = []string{"v1", "v2"} })
	// Every exchange is checked against the served OpenAPI documents (openapi/check).
	t.Cleanup(func() {
		n, bad := srv.Checker().Stats()
		t.Logf("openapi: %d exchanges checked against the served documents in this process, %d disagreed", n, bad)
	})
	return features.Options{BaseURL: srv.URL + "/v1", SandboxURL: srv.URL, SandboxToken: srv.SB.Token, HTTPClient: srv.CheckedClient()}
}

// HarborInputs are the inputs (--var) of the default fixtures' Harbor institution: an
// existing user, one with no funded account, the member naming it (core and dbp ids), a robo deposit, and Prairie's key, an institution
// without vendors, which also serves as the other institution.
var HarborInputs = map[string]string{"user_id": "usr_hfcu_0001", "unfunded_user_id": "usr_hfcu_0009", "core_member_id": "100231", "dbp_member_id": "q2-7f3a9c01",
	"other_institution_key": "sbx_prairieAllScopes000000000000000000000005", "vendorless_key": "sbx_prairieAllScopes000000000000000000000005",
	"robo_transaction_id": "txn_HA3MZObmicZkE211fC06sbYT"}

// TestContractWithoutControlPlane runs the suite as against a real deployment: no control
// plane, only what a partner has — the default fixtures' Harbor institution through its
// published keys (one with every scope, and keys lacking read:user, read:orders,
// manage:sessions and manage:webhooks), an existing user and the signing secret its first
// subscribe issued. Only scenarios that must create state (@sandbox) may be skipped, and every
// rule not cited only by such scenarios must be checked.
func TestContractWithoutControlPlane(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("the contract suite runs the whole simulator; skipped with -short")
	}
	srv := sandboxtest.MustServe(t, func(c *sandbox.Config) { c.APIVersions = []string{"v1", "v2"} })
	const full = "sbx_harborAllScopes0000000000000000000000001"
	sub := srv.Call(t, "POST", "/v1/webhooks/subscriptions", `{"event_type":"kyc","url":"https://93.184.216.34/secret-probe"}`, "x-api-key: "+full)
	secret := sub.JSON("signing_secret").String()
	if sub.Status != 201 || secret == "" {
		t.Fatalf("expected Harbor's first subscribe to issue the signing secret, got %d %s", sub.Status, sub.Body)
	}
	if del := srv.Call(t, "DELETE", "/v1/webhooks/subscriptions/"+sub.JSON("subscription_id").String(), "", "x-api-key: "+full); del.Status != 204 {
		t.Fatalf("delete the probe subscription: %d %s", del.Status, del.Body)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	var out bytes.Buffer
	rep, err := features.Run(ctx, features.Options{BaseURL: srv.URL + "/v1", APIKey: full,
		KeysWithout: map[string]string{
			"read:user":       "sbx_harborWebhooks00000000000000000000000003",
			"read:orders":     "sbx_harborWebhooks00000000000000000000000003",
			"manage:sessions": "sbx_harborReadOnly00000000000000000000000002",
			"manage:webhooks": "sbx_harborReadOnly00000000000000000000000002",
		},
		Vars:          HarborInputs,
		SigningSecret: secret, Randomize: -1, Format: "pretty", Output: &out})
	if err != nil {
		t.Fatalf("contract run: %v", err)
	}
	t.Logf("without a control plane: %s", rep.Summary())
	t.Logf("rules: %s", rep.RulesSummary())
	for _, f := range rep.Failed() {
		t.Errorf("FAILED %s: %q\n    %s", f.Feature, f.Name, strings.ReplaceAll(f.Err, "\n", "\n    "))
	}
	for _, s := range rep.Skipped() {
		if !slices.Contains(s.Tags, "sandbox") {
			t.Errorf("scenario %q (%s) needs no state but was skipped without a control plane: %s", s.Name, s.Feature, s.Err)
		}
	}
	for _, o := range rep.RuleOutcomes() {
		if !o.Checked() && !features.NeedsControlPlane(o.ID) {
			t.Errorf("rule %s is cited by a scenario that needs no control plane, but the run did not check it: %s", o.ID, o.SkipReasons)
		}
	}
	checked := 0
	for _, o := range rep.RuleOutcomes() {
		if o.Checked() {
			checked++
		}
	}
	if total := len(rep.RuleOutcomes()); checked*5 < total*4 {
		t.Errorf("a deployment without a control plane, given the documented inputs, must have at least 80 %% of the rules checked; got %d of %d: make a new rule's scenario data-driven (features/inputs.go) where it can be", checked, total)
	}
	if rep.ExitCode != 0 && len(rep.Failed()) == 0 {
		t.Errorf("godog exited %d with no failed scenario recorded:\n%s", rep.ExitCode, out.String())
	}
}

// A data-driven scenario without its input, and without a control plane to make it, is
// skipped naming the input; given the input, the same scenario runs.
func TestScenarioWithoutItsInputIsSkipped(t *testing.T) {
	t.Parallel()
	srv := sandboxtest.MustServe(t)
	const name = "An institution without a digital banking platform answers 400"
	run := func(vars map[string]string) features.ScenarioResult {
		t.Helper()
		return runScenario(t, features.Options{BaseURL: srv.URL + "/v1", APIKey: "sbx_harborAllScopes0000000000000000000000001", Vars: vars},
			"sessions.feature", name)
	}
	if r := run(nil); r.Status != features.Skipped || r.Err != features.InputSkipReason("vendorless_key") {
		t.Errorf("without vendorless_key, expected %q skipped with %q, got %s: %s", name, features.InputSkipReason("vendorless_key"), r.Status, r.Err)
	}
	if r := run(map[string]string{"vendorless_key": HarborInputs["vendorless_key"]}); r.Status != features.Passed {
		t.Errorf("with vendorless_key, expected %q to pass, got %s: %s", name, r.Status, r.Err)
	}
}

// TestContractWithLoopbackCallbacksRefused runs the subscription and exposure scenarios that
// need no delivery and no loopback callback (subscribing at a public address) against a sandbox that refuses loopback callbacks, as one listening
// beyond loopback does (decisions D8's sandbox rule, D18): https to a public address is still
// accepted, and every refusal is the same.
func TestContractWithLoopbackCallbacksRefused(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("runs scenarios against the simulator; skipped with -short")
	}
	refuse := false
	srv := sandboxtest.MustServe(t, func(c *sandbox.Config) { c.AllowLoopbackCallbacks, c.APIVersions = &refuse, []string{"v1", "v2"} })
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	rep, err := features.Run(ctx, features.Options{BaseURL: srv.URL + "/v1", SandboxURL: srv.URL, SandboxToken: srv.SB.Token,
		HTTPClient: srv.CheckedClient(), Paths: []string{"subscriptions.feature", "exposure.feature"},
		// Callbacks at a public address, which this sandbox accepts; no delivery is awaited.
		ReceiverListen: "127.0.0.1:0", ReceiverURL: "https://93.184.216.34",
		Tags: "~@webhook && ~@rule:D8.11", Randomize: -1})
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("loopback callbacks refused: %s", rep.Summary())
	for _, f := range rep.Failed() {
		t.Errorf("FAILED %s: %q\n    %s", f.Feature, f.Name, strings.ReplaceAll(f.Err, "\n", "\n    "))
	}
	for _, s := range rep.Skipped() {
		t.Errorf("scenario %q (%s) was skipped: %s", s.Name, s.Feature, s.Err)
	}
	if passed := len(rep.Scenarios) - len(rep.Failed()) - len(rep.Skipped()); passed < 30 {
		t.Errorf("expected at least 30 scenarios to run, %d passed", passed)
	}
	// And the sandbox rule is off: plain http to loopback is refused as anywhere else.
	r := srv.Call(t, "POST", "/v1/webhooks/subscriptions", `{"event_type":"kyc","url":"http://127.0.0.1:9/hook"}`, "x-api-key: sbx_harborAllScopes0000000000000000000000001")
	if r.Status != 400 || r.JSON("detail").String() != "callback URL must use https" {
		t.Errorf("expected http to loopback refused with 400 callback URL must use https, got %d %s", r.Status, r.Body)
	}
}
