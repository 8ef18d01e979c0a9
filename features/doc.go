// Package features is the contract suite: Gherkin features (*.feature, embedded) and their
// godog steps, run against any implementation of the partner API given a base URL
// (`partnersim contract`, decisions D14), or against a sandbox it starts itself in tests.
//
// It is black-box: the steps speak HTTP and read answers with gjson, and it must never import
// the simulator (partnersim/simulator/...: the domain, the store, the sandbox that wires them)
// or its fixtures, so that what it checks is the API as a partner sees it, whatever implements
// it. The one package under simulator/ it reads is simulator/openapi, the published document.
// The laws that span answers live in features/laws, which the steps call and the proxy shares.
package features
