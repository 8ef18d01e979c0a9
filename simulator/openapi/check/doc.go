// Package check validates HTTP exchanges against OpenAPI documents with kin-openapi: every
// request the document routes, every response's status, headers and body, and that a request
// the document accepts is not refused with 422. Tests wrap their HTTP clients' transports with it
// (internal/sandboxtest, the contract suite), and `partnersim contract --openapi` checks the
// implementation under test with it.
//
// It imports kin-openapi, gjson (to decode JSON bodies faster than kin-openapi does, jsonBody)
// and the standard library; never the simulator.
package check
