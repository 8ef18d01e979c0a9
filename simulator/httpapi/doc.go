// Package httpapi is the sandbox's HTTP surface on echo v4: the partner API of the spec under
// every mounted version (/v1, and /v2 when enabled), the health endpoints and the control plane
// under /_sandbox/.
//
// routes.go lists every route. Each handler is made by a maker function that takes exactly the
// dependencies it uses (handleUserList(users UserReader)), in a file named for the resource it
// serves: users.go, orders.go, transactions.go, sessions.go, subscriptions.go, and control_*.go
// for the control plane by concern (tenants, institutions, trading, deliveries, sandbox,
// faults, scenarios). The small interfaces the partner API's handlers ask for are declared
// beside them; Store is their union, which the store fills. The control plane's interfaces by
// concern, its bounds and the list queries live in the leaf package surface, which the QA
// console (console/) imports too; the control service (package control) serves them.
// control.go holds the token guard. request.go holds the shared request helpers (bounded
// bodies, optional fields), respond.go the writers, errors.go the one mapping from errors to
// FastAPI-shaped responses, render.go the partner API's bodies, metrics.go the Prometheus
// collectors and their middleware.
//
// It depends on the domain (simulator), surface, validate for request parsing, netguard for the
// callback address rule and hostcheck for the Host check (host.go); storage and delivery come
// in as constructor arguments through interfaces declared here. It must never import bbolt, the store (simulator/bolt), the
// dispatcher (simulator/webhook), the control service (control) or the sandbox that wires them.
package httpapi
