// Package console is the QA console: the sandbox in a browser at /_sandbox/ui/ (decisions D15).
// It owns the console's pages and actions, its sign-in sessions and CSRF tokens, and its
// embedded templates and static files; nothing is fetched from anywhere but the sandbox.
//
// Every action is a control-plane operation: it calls the same services the /_sandbox/
// handlers call, through the same small interfaces (surface's Tenants, Institutions, Trading,
// Deliveries, SandboxOps and Scenarios), and the server's journal, faults and rate limit
// through Traffic, so there is one code path for the curl user and the browser user. The
// sandbox mounts it (httpapi's Server.Mount) only when the control plane is on.
//
// It imports the domain, surface, validate and the signature package's header names. It must
// never import its parent httpapi, bbolt, the store (simulator/bolt), the webhook dispatcher,
// the control service (control), the sandbox or the fixtures, even indirectly: storage and
// delivery reach it only through those interfaces. httpapi must never import it
// (internal/layers holds these rules).
package console
