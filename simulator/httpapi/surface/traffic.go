package surface

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
