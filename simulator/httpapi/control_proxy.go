package httpapi

import (
	"net/http"
	"strings"
	"sync"
	"time"

	"github.com/labstack/echo/v4"

	"github.com/partnersim/partnersim/simulator"
	"github.com/partnersim/partnersim/simulator/httpapi/surface"
	"github.com/partnersim/partnersim/simulator/validate"
)

// proxyReports holds the latest report of a contract proxy in front of this sandbox (decisions,
// "The contract proxy's page"): one report, bounded, replaced by the next.
type proxyReports struct {
	mu  sync.Mutex
	r   surface.ProxyReport
	has bool
}

func (p *proxyReports) get() (surface.ProxyReport, bool) {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.r, p.has
}

func (p *proxyReports) set(r surface.ProxyReport) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.r, p.has = r, true
}

// ProxyReport returns the latest report of a contract proxy in front of this sandbox, if one
// has reported.
func (s *Server) ProxyReport() (surface.ProxyReport, bool) { return s.proxies.get() }

// handleProxyReport serves PUT and GET /_sandbox/proxy-report: `partnersim proxy` in front of
// this sandbox reports its rules and recent exchanges — its JSON report (--report json=…) with
// proxy, final and recent — and the console's Contract proxy page shows the latest. Texts are cut to surface.MaxProxyText, lists to their bounds, and secrets masked
// again: the report is kept, never a key.
func handleProxyReport(reports *proxyReports, reader *bodyReader) echo.HandlerFunc {
	return func(c echo.Context) error {
		if c.Request().Method == http.MethodGet {
			r, ok := reports.get()
			if !ok {
				return simulator.Errorf(simulator.ENOTFOUND, "No contract proxy has reported to this sandbox: start partnersim proxy --upstream <this sandbox> with its sandbox token")
			}
			return writeJSON(c, http.StatusOK, r)
		}
		r := surface.ProxyReport{Rules: []surface.ProxyRule{}, Recent: []surface.ProxyExchange{}}
		err := reader.fields(c, func(b *validate.Object, _ *validate.Collector) {
			r.Proxy = proxyText(optStr(b, "proxy", ""))
			r.Final = b.Has("final") && b.Bool("final")
			r.Unchecked = int64(b.Int("unchecked_exchanges", validate.Ge(0)))
			r.UncheckedDocument = int64(b.Int("exchanges_unchecked_against_the_document", validate.Ge(0)))
			for i, o := range objects(b, "rules") {
				if i == surface.MaxProxyRules {
					break
				}
				rule := surface.ProxyRule{ID: proxyText(o.Str("id")), Kind: o.Enum("kind", "violation", "lint"), Says: proxyText(o.Str("says")),
					Status: o.Enum("status", "passed", "failed", "not observed"), Findings: []string{},
					ProxyTally: surface.ProxyTally{Observed: o.Int("observed", validate.Ge(0)), Failed: o.Int("failed", validate.Ge(0))}}
				for k, f := range objects(o, "findings") {
					if k < surface.MaxProxyFindings {
						rule.Findings = append(rule.Findings, proxyText(f.Str("exchange")+": "+f.Str("detail")))
					}
				}
				r.Rules = append(r.Rules, rule)
			}
			for i, o := range objects(b, "recent") {
				if i == surface.MaxProxyRecent {
					break
				}
				r.Recent = append(r.Recent, surface.ProxyExchange{At: proxyText(o.Str("at")), Exchange: proxyText(o.Str("exchange")),
					Findings: proxyTexts(o.StrList("findings"))})
			}
		})
		if err != nil {
			return err
		}
		r.ReportedAt = simulator.FormatTime(time.Now().UTC())
		reports.set(r)
		return c.NoContent(http.StatusNoContent)
	}
}

// proxyText is a report's text as the sandbox keeps it: cut, secrets masked.
func proxyText(s string) string {
	if len(s) > surface.MaxProxyText {
		s = strings.ToValidUTF8(s[:surface.MaxProxyText], "") + "…"
	}
	return surface.MaskSecrets(s)
}

func proxyTexts(list []string) []string {
	out := []string{}
	for i, s := range list {
		if i == surface.MaxProxyFindings {
			break
		}
		out = append(out, proxyText(s))
	}
	return out
}
