package features

import (
	"fmt"
	"net/http"
	"net/url"
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
	sc.Step(`^I GET the control plane `+q+` with its token and the Host `+q+`$`, w.controlHost)
	sc.Step(`^these Hosts are all refused with 421 before routing and key, or all answered:$`, w.hostsAlike)
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
	w.noteCapability("loopback_hosts")
	return nil
}

// hostsAlike checks the form of decisions D18's Host check on any sandbox, however it listens:
// each Host of the table, on a route with and without the key and on no route, is refused with
// exactly 421 {"detail":"Misdirected Request"} — or, by a sandbox listening beyond loopback,
// none is. Which of the two a sandbox must do is D18.1's, checked where the control plane
// declares it (loopback_hosts).
func (w *world) hostsAlike(t *godog.Table) error {
	rows, err := tableRows(t)
	if err != nil {
		return err
	}
	const misdirected = `{"detail":"Misdirected Request"}`
	requests := []struct {
		path, auth string
	}{{"/health", authNone}, {"/users/", authKey}, {"/users/", authNone}, {"/no/such/path/", authKey}}
	var refused, answered []string
	for _, r := range rows {
		for _, q := range requests {
			res, err := w.doHeaders(http.MethodGet, q.path, nil, "", http.Header{"Host": {r["host"]}}, q.auth)
			if err != nil {
				return err
			}
			what := fmt.Sprintf("GET %s (Host %s, %s) → %d %s", q.path, r["host"], map[string]string{authKey: "with the key", authNone: "without a key"}[q.auth], res.Status, truncate(string(res.Body), 80))
			switch {
			case res.Status == http.StatusMisdirectedRequest && string(res.Body) == misdirected:
				refused = append(refused, what)
			case res.Status == http.StatusMisdirectedRequest:
				return fmt.Errorf("decisions D18: a refused Host is answered 421 %s, got %s", misdirected, what)
			default:
				answered = append(answered, what)
			}
		}
	}
	if len(refused) > 0 && len(answered) > 0 {
		return fmt.Errorf("decisions D18: every Host that is not a loopback name is answered alike, before routing and key; %d requests were refused, e.g. %s, and %d answered, e.g. %s",
			len(refused), refused[0], len(answered), answered[0])
	}
	w.resp = nil
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

// sandboxPage GETs a page of the sandbox's origin (the control plane's URL, else the base
// URL's origin), without a key.
func (w *world) sandboxPage(path string) error {
	origin := w.run.opts.SandboxURL
	if origin == "" {
		u, err := url.Parse(w.run.opts.BaseURL)
		if err != nil {
			return fmt.Errorf("the base URL %q: %w", w.run.opts.BaseURL, err)
		}
		origin = u.Scheme + "://" + u.Host
	}
	_, err := w.doHeaders(http.MethodGet, origin+unq(path), nil, "", nil, authNone)
	return err
}

// controlHost calls the control plane with its token and the Host given: decisions D18's
// Host check covers /_sandbox/ (the console included) as every other surface.
func (w *world) controlHost(path, host string) error {
	hdr := http.Header{"X-Sandbox-Token": {w.run.opts.SandboxToken}, "Host": {unq(host)}}
	_, err := w.doHeaders(http.MethodGet, w.run.opts.SandboxURL+unq(path), nil, "", hdr, authNone)
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
