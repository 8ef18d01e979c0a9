package proxy

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"regexp"
	"strings"
	"time"
)

// reportPath is where a sandbox takes a proxy's report (PUT, with the sandbox token): its QA
// console's Contract proxy page shows the latest. Only a sandbox has it; a real deployment
// answers 404 and the proxy stops reporting.
const reportPath = "/_sandbox/proxy-report"

// The report's bounds, within the sandbox's (it keeps 100 exchanges and 8 findings a rule).
const (
	reportRecent   = 50
	reportFindings = 8
)

// secretLike is what a report never carries in clear: API keys and signing secrets.
var secretLike = regexp.MustCompile(`\b(sbx|whsec)_[A-Za-z0-9_\-]{4,}`)

// mask replaces each key or signing secret in s by its prefix and "…".
func mask(s string) string {
	return secretLike.ReplaceAllStringFunc(s, func(m string) string { return m[:strings.IndexByte(m, '_')+1] + "…" })
}

// report is the JSON report (WriteJSON's) with the proxy's address and its last exchanges, as
// the sandbox takes it: the latest findings of each rule, keys and secrets masked.
func (p *Proxy) report(final bool) jsonReport {
	r := p.book.jsonReport(p.cfg.Now())
	r.Proxy, r.Final, r.Recent = p.cfg.Address, final, []seenExchange{}
	for i := range r.Rules {
		fs := r.Rules[i].Findings
		fs = append([]Finding(nil), fs[max(0, len(fs)-reportFindings):]...)
		for k := range fs {
			fs[k].Exchange, fs[k].Detail = mask(fs[k].Exchange), mask(fs[k].Detail)
		}
		r.Rules[i].Findings = fs
	}
	for i, e := range p.recent.list() {
		if i == reportRecent {
			break
		}
		e.Exchange, e.Findings = mask(e.Exchange), append([]string{}, e.Findings...)
		for k := range e.Findings {
			e.Findings[k] = mask(e.Findings[k])
		}
		r.Recent = append(r.Recent, e)
	}
	return r
}

// reportLoop sends the report to the sandbox each second something was checked, until stop
// closes; a sandbox that refuses it (no control plane, another token) is told of once, on the
// live lines, and not asked again.
func (p *Proxy) reportLoop(stop <-chan struct{}, done chan<- struct{}) {
	defer close(done)
	t := time.NewTicker(p.cfg.ReportEvery)
	defer t.Stop()
	sent := int64(-1)
	for {
		select {
		case <-stop:
			return
		case <-t.C:
			if n := p.seen.Load(); n != sent {
				if !p.sendReport(false) {
					p.refused.Store(true)
					return
				}
				sent = n
			}
		}
	}
}

// sendReport PUTs the report to the sandbox; false when the sandbox refused it for good.
func (p *Proxy) sendReport(final bool) bool {
	body, err := json.Marshal(p.report(final))
	if err != nil {
		return false
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	u := *p.cfg.Upstream
	u.Path, u.RawQuery, u.RawPath = reportPath, "", ""
	req, err := http.NewRequestWithContext(ctx, http.MethodPut, u.String(), bytes.NewReader(body))
	if err != nil {
		return false
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("X-Sandbox-Token", p.cfg.SandboxToken)
	res, err := (&http.Client{Transport: p.cfg.Transport}).Do(req)
	if err != nil {
		return true // the sandbox may be restarting: the next report tries again
	}
	res.Body.Close()
	if res.StatusCode < 400 || res.StatusCode >= 500 || res.StatusCode == http.StatusTooManyRequests {
		return true // taken, or the sandbox is busy: the next report tries again
	}
	if p.cfg.Live != nil {
		why := "the sandbox refused the report"
		switch res.StatusCode {
		case http.StatusNotFound, http.StatusMethodNotAllowed:
			why = "the upstream has no sandbox control plane"
		case http.StatusUnauthorized, http.StatusForbidden:
			why = "the sandbox refused the token (pass its --sandbox-token or PARTNERSIM_SANDBOX_TOKEN)"
		}
		fmt.Fprintf(p.cfg.Live, "partnersim proxy: not reporting to the QA console: %s (%s %s answered %d)\n", why, http.MethodPut, reportPath, res.StatusCode)
	}
	return false
}
