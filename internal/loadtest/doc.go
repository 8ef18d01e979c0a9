// Package loadtest drives the partner API over loopback HTTP and measures it against its
// ceiling: a bare echo v4 handler on the same loopback, answering each URL of the run with the
// exact bytes (and headers) the target answered to that URL (a run walks a pool of requests
// drawn once, and each is captured from the target before the runs), driven by the same client at the same connection
// count in the same run, and served as the target is: from this process for a sandbox this
// process hosts, from a process of its own (`partnersim ceiling`) for a target in its own
// process, so the two pay the same switches between processes on the same cores. Every throughput and latency figure is reported with its ratio to that
// ceiling, so a number means the same thing on a laptop and on a CI runner.
//
// The driver is a stdlib net/http client with one idle connection per worker and N workers
// doing closed-loop requests, for a duration, a request count, or at a steady rate (the soak).
// Every latency is recorded (percentiles are exact, not estimated). Scenarios: "detail" (Get
// User Detail of random existing users), "users" and "orders" (random filtered list pages) and
// "mix" (detail, filtered user and order lists, deep pages). SelfHost starts a sandbox on 127.0.0.1:0 for the command and the soak test.
//
// It imports the sandbox (to self-host), fixtures (to know which users exist) and the domain's
// types; it must never import the simulator's internals (the store, the HTTP layer, delivery). It is a load generator: `partnersim load` refuses targets that are not
// loopback unless told otherwise.
package loadtest
