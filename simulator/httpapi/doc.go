// Package httpapi is the sandbox's HTTP surface on echo v4: the partner API of the spec under
// every mounted version (/v1, and /v2 when enabled), the health endpoints and the control plane
// under /_sandbox/.
//
// routes.go lists every route. Each handler is made by a maker function that takes exactly the
// dependencies it uses (handleUserList(users UserReader)), in a file named for the resource it
// serves: users.go, orders.go, transactions.go, sessions.go, subscriptions.go, and control_*.go
// for the control plane by concern (tenants, institutions, trading, deliveries, sandbox,
// faults, scenarios). The small interfaces they ask for are declared beside them (control.go
// for the control plane's, with its bounds); Store is the partner API's union, which the store
// fills, and the control service (package control) serves the control plane's one interface
// per concern. request.go holds the shared request helpers (bounded bodies, enums, optional
// fields), respond.go the writers, metrics.go the Prometheus collectors and their middleware, errors.go the one mapping from errors to FastAPI-shaped
// responses, render.go the partner API's bodies.
//
// It depends on the domain (simulator), validate for request parsing and netguard for the
// callback address rule; storage and delivery come in as constructor arguments through
// interfaces declared here. It must never import bbolt, the store (simulator/bolt), the
// dispatcher (simulator/webhook), the control service (control) or the sandbox that wires them.
package httpapi
