package surface

import (
	"regexp"
	"strings"
)

// JournalEntry is one request of the server's journal (GET /_sandbox/requests).
type JournalEntry struct {
	At        string  `json:"at"`
	Method    string  `json:"method"`
	Path      string  `json:"path"`
	Query     string  `json:"query,omitempty"`
	Status    int     `json:"status"`
	LatencyMS float64 `json:"latency_ms"`
	RequestID string  `json:"request_id"`
	KeyPrefix string  `json:"key_prefix,omitempty"`
	// Truncated says the path or the query was cut to the journal's 4 KiB a field (decisions
	// D17).
	Truncated bool `json:"truncated,omitempty"`
}

// FaultRule injects latency and/or an error status into matching API requests (decisions D12).
type FaultRule struct {
	Method      string  `json:"method,omitempty"` // empty matches any
	Path        string  `json:"path"`             // a route pattern ("/v1/users/:user_account_id/") or a concrete path
	LatencyMS   int     `json:"latency_ms,omitempty"`
	Status      int     `json:"status,omitempty"`
	Probability float64 `json:"probability"`
}

// ProxyReport is what a contract proxy (`partnersim proxy`) in front of this sandbox last
// reported of its rules and recent exchanges (PUT /_sandbox/proxy-report), for the console's
// Contract proxy page. The sandbox keeps the latest one only, bounded (MaxProxyRules,
// MaxProxyRecent, MaxProxyFindings, MaxProxyText), with secrets masked (MaskSecrets).
type ProxyReport struct {
	// ReportedAt is when the sandbox took the report (its own clock, not the proxy's).
	ReportedAt string `json:"reported_at"`
	// Proxy is the address the app calls the proxy at; Final says the proxy has stopped.
	Proxy string `json:"proxy"`
	Final bool   `json:"final"`
	ProxyUnchecked
	Rules  []ProxyRule     `json:"rules"`
	Recent []ProxyExchange `json:"recent"`
}

// The bounds of a ProxyReport (decisions D17): the sandbox keeps the first MaxProxyRules rules,
// MaxProxyRecent exchanges and MaxProxyFindings findings of each, texts cut to MaxProxyText
// bytes; a body is bounded as every control-plane body is.
const (
	MaxProxyRules    = 64
	MaxProxyRecent   = 100
	MaxProxyFindings = 8
	MaxProxyText     = 1024
)

// ProxyUnchecked counts the exchanges a proxy forwarded without any check, and without the
// document's, because its checks had fallen behind.
type ProxyUnchecked struct {
	Unchecked         int64 `json:"unchecked_exchanges"`
	UncheckedDocument int64 `json:"exchanges_unchecked_against_the_document"`
}

// ProxyRule is one rule's state in a ProxyReport.
type ProxyRule struct {
	ID     string `json:"id"`
	Kind   string `json:"kind"`   // violation (the deployment's) or lint (the app's)
	Says   string `json:"says"`   // what the rule holds
	Status string `json:"status"` // passed, failed or not observed
	ProxyTally
	Findings []string `json:"findings"` // the first few, newest last
}

// ProxyTally is how often a proxy saw a rule exercised, and broken.
type ProxyTally struct {
	Observed int `json:"observed"`
	Failed   int `json:"failed"`
}

// secretLike matches what a report must never show in clear: API keys (sbx_…) and signing
// secrets (whsec_…).
var secretLike = regexp.MustCompile(`\b(sbx|whsec)_[A-Za-z0-9_\-]{4,}`)

// MaskSecrets replaces every API key and signing secret in s by its prefix and "…" (the
// proxy masks them before it reports; the sandbox masks again before it keeps a report).
func MaskSecrets(s string) string {
	return secretLike.ReplaceAllStringFunc(s, func(m string) string { return m[:strings.IndexByte(m, '_')+1] + "…" })
}

// ProxyExchange is one recent exchange in a ProxyReport: "GET /v1/users/?… → 200" and what it
// broke.
type ProxyExchange struct {
	At       string   `json:"at"`
	Exchange string   `json:"exchange"`
	Findings []string `json:"findings"`
}
