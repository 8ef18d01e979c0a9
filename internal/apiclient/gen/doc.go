// Command gen writes the 3.0.3 view of the partner API's v1 document that oapi-codegen reads
// (see package apiclient). It imports only the openapi package and must never import the
// simulator.
package main
