// Package scenario plays fixture scenarios (fixtures/<set>/scenarios/*.json) through the
// control plane's own service, and keeps the records of their runs (GET
// /_sandbox/scenarios/runs). A scripted KYC move or fill goes through exactly the same domain
// rules, state machine and outbox as a person's request, without HTTP.
//
// A scenario's file format — Scenario, Step, the actions and their args — and its check live in
// package fixtures (fixtures/scenarios.go), beside the set's other records, not here, because
// moving the format here closes an import cycle:
//
//   - fixtures → scenario: fixtures.Open checks scenarios/*.json in its one pass over a set,
//     which reports every problem before anything is loaded (decisions D10), and keeps the
//     checked ones in Set.Scenarios. The check needs the set — the users a step names (the index
//     Open builds from users.json), the prices of prices.json and of earlier set_prices steps,
//     create_user's accounts checked exactly as users.json's (Set.checkAccounts), the reporter
//     that places a problem at file: JSON path — so it stays in fixtures and decodes each step
//     into the format's types, wherever they live.
//   - scenario → fixtures: create_user's args carry users.json's records
//     (fixtures.AccountRecord, fixtures.TermsRecord), which args.go turns into the service's
//     request.
//
// Breaking the cycle would mean exporting about twenty of fixtures' checking helpers so that the
// check could move here too, or moving users.json's records to a third package and making the
// set depend on the runner that plays it. Neither reads better than the format among the set's
// records (docs/decisions.md, "How the code is arranged").
//
// It imports the domain and the fixtures (a scenario's step types and their args); the service
// comes in through the small interface declared here (Service). It must never import the store
// (simulator/bolt), echo, the HTTP layer, the dispatcher, the control service's package
// (control) or the sandbox; internal/layers holds these rules.
package scenario
