package sandbox

import (
	"context"
	"io/fs"

	"github.com/partnersim/partnersim/fixtures"
	"github.com/partnersim/partnersim/simulator/bolt"
	"github.com/partnersim/partnersim/simulator/httpapi"
)

// The names below are the parts' own, given again here because the binary and the load tools
// reach the store and the HTTP layer only through the sandbox (internal/layers): what they need
// of them to make a sandbox and serve it, and nothing more.

// Progress reports a long load (bolt.Progress): phase "read" counts the records checked and
// spooled, phase "write" the store entries written of total.
type Progress = bolt.Progress

// BuildFile builds the set in fsys into a new store file at path, written beside it and
// renamed into place once complete (bolt.BuildFile: `partnersim fixtures build`).
func BuildFile(ctx context.Context, fsys fs.FS, path string, progress Progress) (*fixtures.Set, int64, error) {
	return bolt.BuildFile(ctx, fsys, path, progress)
}

// ConnLimits bound the served connections in time and number (decisions D18); serve builds its
// http.Server and listener with them.
type ConnLimits = httpapi.ConnLimits

// DefaultConnLimits are 2 minutes idle, 30 seconds a request and 4,096 open connections.
func DefaultConnLimits() ConnLimits { return httpapi.DefaultConnLimits() }

// Metrics are the sandbox's Prometheus collectors (Config.Metrics). A command makes them
// before Open, so that a separate metrics listener answers, and counts the build, while a set
// builds.
type Metrics = httpapi.Metrics

// NewMetrics returns the collectors on a registry of their own.
func NewMetrics() *Metrics { return httpapi.NewMetrics() }
