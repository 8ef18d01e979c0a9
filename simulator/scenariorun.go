package simulator

// ScenarioRun reports a scenario run: the ids each step bound and what it did. The runner
// (simulator/scenario) plays it; the HTTP layer and the console only show it, so the type lives
// here, in the domain both already import.
type ScenarioRun struct {
	Scenario string            `json:"scenario"`
	RunID    string            `json:"run_id"`
	Status   string            `json:"status"` // running (waiting on the virtual clock), completed or failed
	Bound    map[string]string `json:"bound"`
	Steps    []ScenarioStep    `json:"steps"`
}

// ScenarioStep is one step's outcome.
type ScenarioStep struct {
	Action  string `json:"action"`
	DueAt   string `json:"due_at"`
	Status  string `json:"status"` // pending, done, failed, skipped
	Result  string `json:"result,omitempty"`
	EventID string `json:"event_id,omitempty"`
	Error   string `json:"error,omitempty"`
}

// ScenarioInfo describes a fixture scenario.
type ScenarioInfo struct {
	Name        string `json:"name"`
	Description string `json:"description"`
	Steps       int    `json:"steps"`
}
