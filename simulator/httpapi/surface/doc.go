// Package surface is what the sandbox's two front ends share: the HTTP API (httpapi) and its
// QA console (httpapi/console). It holds the control plane's operations by concern — the six
// small interfaces both call, each method commented with the errors it returns — the bounds
// of their input (decisions D17) and the list queries both read (Get User List's, Get Order
// List's, the delivery log's), and the traffic the server keeps and the console shows: journal
// entries, fault rules and the throttle of wrong sandbox tokens (decisions D18).
//
// It is a leaf beside the console rather than exports of the console's parent: httpapi and
// console both import it, and neither imports the other's internals. It imports the domain and
// validate only; it must never import echo, httpapi, the console, the store or the services
// that implement its interfaces (internal/layers holds these rules).
package surface
