// Package sandbox wires the simulator together, and does nothing else: it opens the bbolt store
// with what the store needs given at Open, has the store build a fixture set into an empty store
// (bolt's Build), and builds the HTTP server (and, with webhooks, the dispatcher). The
// binary (cmd/partnersim) and the tests that self-host the simulator both start it through
// Open, so they run exactly the same thing. It hands the control plane's service (control) and
// the scenario runner (scenario) to the server and the QA console through their interfaces.
//
// It imports the simulator's packages and fixtures. It must never import the command
// (cmd/partnersim), the suites (features), the reference receiver, the load harness or the test
// harness (internal/sandboxtest): they all start the simulator through it, never the reverse.
package sandbox
