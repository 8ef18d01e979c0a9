package sandbox

import "github.com/partnersim/partnersim/simulator/httpapi"

// Metrics are the sandbox's Prometheus collectors (Config.Metrics). A command makes them
// before Open, so that a separate metrics listener answers, and counts the build, while a set
// builds.
type Metrics = httpapi.Metrics

// NewMetrics returns the collectors on a registry of their own.
func NewMetrics() *Metrics { return httpapi.NewMetrics() }
