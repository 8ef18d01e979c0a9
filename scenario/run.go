package scenario

// Run reports a scenario run: the ids each step bound and what it did.
type Run struct {
	Scenario string            `json:"scenario"`
	RunID    string            `json:"run_id"`
	Status   string            `json:"status"` // running (waiting on the virtual clock), completed or failed
	Bound    map[string]string `json:"bound"`
	Steps    []StepOutcome     `json:"steps"`
}

// StepOutcome is one step's outcome.
type StepOutcome struct {
	Action  string `json:"action"`
	DueAt   string `json:"due_at"`
	Status  string `json:"status"` // pending, done, failed, skipped
	Result  string `json:"result,omitempty"`
	EventID string `json:"event_id,omitempty"`
	Error   string `json:"error,omitempty"`
}

// Info describes a fixture scenario.
type Info struct {
	Name        string `json:"name"`
	Description string `json:"description"`
	Steps       int    `json:"steps"`
}
