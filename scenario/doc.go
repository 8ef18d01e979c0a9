// Package scenario plays fixture scenarios (fixtures/<set>/scenarios/*.json) through the
// control plane's own service, and keeps the records of their runs (GET
// /_sandbox/scenarios/runs). A scripted KYC move or fill goes through exactly the same domain
// rules, state machine and outbox as a person's request, without HTTP.
//
// It imports the domain and the fixtures (a scenario's step types and their args); the service
// comes in through the small interface declared here (Service). It must never import the store
// (simulator/bolt), echo, the HTTP layer, the dispatcher, the control service's package
// (control) or the sandbox; internal/layers holds these rules.
package scenario
