// Package httpapi is the sandbox's HTTP surface on echo v4: the partner API of the spec under
// every mounted version (/v1, and /v2 when enabled), the health endpoints and the control plane
// under /_sandbox/. routes.go lists every route; errors.go is the one mapping from errors to
// FastAPI-shaped responses.
//
// It depends on the domain (simulator) and on validate for request parsing; storage and delivery
// come in as constructor arguments through interfaces declared here. It must never import bbolt.
package httpapi
