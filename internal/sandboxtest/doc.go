// Package sandboxtest is the one test harness of the module: it starts a sandbox for a test on
// a temporary bbolt file behind a real HTTP server (MustServe), calls the partner API and the
// control plane, stands in for a partner's webhook endpoint (Callback), and waits for a condition
// with a deadline (Eventually). Tests of every package use it instead of keeping their own
// copy.
//
// It imports the sandbox (and so the whole simulator) and net/http/httptest. Production code
// must never import it (internal/layers refuses it): only tests may.
package sandboxtest
