// Command partnersim is the Partner Investing sandbox kit in one binary: the simulator (serve),
// the reference receiver (receive), event triggers and scenarios, the contract suites, receiver
// certification, signed sends, fixture tools and the load harness. Run `partnersim --help`.
//
// It owns the command line only: the command tree on cobra (root.go registers every command;
// one file and one newXCmd constructor per command), flags and their PARTNERSIM_<FLAG>
// environment twins, and what each command prints. The work is done by the packages it calls:
// sandbox, receiver, receiver/certify, features, fixtures, loadtest.
//
// It must never import the store (simulator/bolt), the HTTP layer (simulator/httpapi) or the
// test harness (internal/sandboxtest): serve starts the simulator through sandbox.Open like
// every test does, and the control-plane commands speak HTTP to a running sandbox.
package main
