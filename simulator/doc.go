// Package simulator holds the domain of the Partner Investing sandbox: institutions, keys and
// scopes, members, users and their product accounts, orders and transactions, webhook
// subscriptions, events and deliveries, the KYC state machine, the market-value arithmetic and
// the one error type every layer speaks.
//
// It imports only the standard library and github.com/shopspring/decimal (money is exact
// decimal everywhere; decimal is a value type, not a dependency on any I/O). It must never import
// bbolt, echo, gjson or any other package of this module: storage (simulator/bolt), HTTP
// (simulator/httpapi) and delivery (simulator/webhook) depend on it, never the reverse.
package simulator
