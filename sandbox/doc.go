// Package sandbox wires the simulator together: it opens the bbolt store, loads a fixture set
// into an empty store, and builds the HTTP server (and, with webhooks, the dispatcher). The
// binary (cmd/partnersim) and the tests that self-host the simulator both start it through
// Open, so they run exactly the same thing. It implements the control plane's services over the
// store (control.go) and plays fixture scenarios through those same services (scenario.go).
package sandbox
