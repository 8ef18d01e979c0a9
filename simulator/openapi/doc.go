// Package openapi holds the OpenAPI 3.1 documents of the sandbox's two HTTP surfaces (decisions
// D16), written once as YAML and embedded: partner-api.yaml (the partner API, served at
// /openapi.json and /{version}/openapi.json) and control-plane.yaml (the control plane, served at
// /_sandbox/openapi.json). It renders them as the JSON the server sends, per mounted version, and
// carries the offline interactive reference served at /docs: Swagger UI, vendored from the npm
// package swagger-ui-dist (version in SwaggerUIVersion, Apache-2.0, docs/LICENSE and docs/NOTICE).
//
// Package check validates HTTP exchanges against these documents.
//
// It imports only the standard library and a YAML parser; never the simulator.
package openapi
