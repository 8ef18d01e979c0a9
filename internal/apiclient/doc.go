// Package apiclient is a Go client of the partner API generated from the sandbox's own OpenAPI
// document by oapi-codegen (decisions D16): the proof that the document serves partners'
// generators. Its test lists users through it against a running sandbox and fails when the
// committed code differs from a fresh generation.
//
// oapi-codegen v2.8 does not read OpenAPI 3.1 (it refuses a `type` list), so it generates from
// openapi-3.0.json, the 3.0.3 view of /v1/openapi.json that openapi.PartnerVersion30 renders.
// Regenerate with `go generate ./internal/apiclient` (the module proxy must be reachable).
//
// Only tests use it; it imports the oapi-codegen runtime and the standard library, and must
// never import anything of this module (it is a partner's view of the API).
package apiclient

//go:generate go run ./gen openapi-3.0.json
//go:generate go run github.com/oapi-codegen/oapi-codegen/v2/cmd/oapi-codegen@v2.8.2 -config oapi-codegen.yaml openapi-3.0.json
