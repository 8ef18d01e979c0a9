package features

import (
	"fmt"
	"net/http"
	"strconv"
	"strings"

	"github.com/cucumber/godog"
)

// exposureSteps check decisions D18: what a sandbox answers to whom — the Host names a
// loopback-bound sandbox answers, the names its DNS overrides take, the pages it guards and the
// bodies its control plane reads.
func (w *world) exposureSteps(sc *godog.ScenarioContext) {
	sc.Step(`^the sandbox answers only loopback Hosts$`, w.loopbackHostsOnly)
	sc.Step(`^a DNS override of `+q+` to `+q+` is (accepted|refused)$`, w.dnsOverrideJudged)
	sc.Step(`^a DNS override of `+q+` to (\d+) public addresses is (accepted|refused)$`, w.dnsOverrideCount)
	sc.Step(`^I GET the sandbox page `+q+`$`, w.sandboxPage)
	sc.Step(`^I PUT the control plane `+q+` with the JSON `+q+` padded with spaces to (\d+) bytes$`, w.controlPadded)
}

// loopbackHostsOnly skips the scenario unless the control plane declares loopback_hosts: the
// sandbox says so only while it listens on loopback (decisions D18); beyond loopback any Host
// is answered.
func (w *world) loopbackHostsOnly() error {
	if !w.run.can("loopback_hosts") {
		w.skip = CapabilitySkipReason("loopback_hosts")
		return godog.ErrSkip
	}
	return nil
}

// dnsOverrideJudged asks the control plane to override a name ({unique} in it is replaced by a
// name unique to the scenario, so that runs never share a name) and checks that it is accepted
// (200, removed again when the scenario ends) or refused (400, nothing changed).
func (w *world) dnsOverrideJudged(name, addrs, outcome string) error {
	return w.dnsOverride(name, splitList(unq(addrs)), outcome)
}

// dnsOverrideCount overrides a name with n distinct public addresses.
func (w *world) dnsOverrideCount(name, n, outcome string) error {
	count, _ := strconv.Atoi(n)
	addrs := make([]string, count)
	for i := range addrs {
		addrs[i] = fmt.Sprintf("93.184.216.%d", i+1)
	}
	return w.dnsOverride(name, addrs, outcome)
}

func (w *world) dnsOverride(name string, addrs []string, outcome string) error {
	host := strings.ReplaceAll(unq(name), "{unique}", "h"+randomToken(6)+".contract.partnersim.test")
	want := http.StatusOK
	if outcome == "refused" {
		want = http.StatusBadRequest
	}
	if _, err := w.control(http.MethodPut, "/_sandbox/dns", map[string]any{host: addrs}, want); err != nil {
		return fmt.Errorf("decisions D18: DNS overrides take DNS host names only, at most 16 addresses each; a %s override of %q (%d addresses): %w",
			outcome, host, len(addrs), err)
	}
	if want == http.StatusOK {
		w.dnsHosts = append(w.dnsHosts, host)
	}
	return nil
}

// sandboxPage GETs a page of the sandbox's origin (the control plane's URL), without a key.
func (w *world) sandboxPage(path string) error {
	if !w.run.sandbox() {
		return fmt.Errorf("this step needs the control plane (--sandbox-url)")
	}
	_, err := w.doHeaders(http.MethodGet, w.run.opts.SandboxURL+unq(path), nil, "", nil, authNone)
	return err
}

// controlPadded sends a control-plane request whose JSON body is padded to n bytes.
func (w *world) controlPadded(path, body, n string) error {
	b, err := w.padded(unq(body), n, " ")
	if err != nil {
		return err
	}
	tok := w.run.opts.SandboxToken
	return w.controlAs(http.MethodPut, unq(path), []byte(b), &tok)
}
