// Package simulator holds the domain of the Partner Investing sandbox: institutions, keys and
// scopes, members, users and their product accounts, orders and transactions, webhook
// subscriptions, events and deliveries, the KYC state machine, the market-value arithmetic and
// the one error type every layer speaks. Some rules have a file of their own: money.go is
// money's one home (how amounts and quantities are written, market values in decimal and in
// whole cents), timefmt.go the one time format of every body, delivery.go the delivery
// lifecycle (an event's fan-out, an attempt's outcome, a deleted subscription's ending), kyc.go
// and trading.go the KYC and trading rules.
//
// It imports only the standard library, github.com/shopspring/decimal (money is exact decimal
// everywhere; decimal is a value type, not a dependency on any I/O) and simulator/wordwise (the
// word-at-a-time byte tests, a leaf of the standard library only). It must never import bbolt,
// echo, gjson or any other package of this module: storage (simulator/bolt), HTTP
// (simulator/httpapi) and delivery (simulator/webhook) depend on it, never the reverse.
package simulator
