// Command kubeschema writes the JSON schemas kubeconform validates Kubernetes manifests
// against, from the OpenAPI document Kubernetes publishes for one release.
//
// kubeconform reads its schemas from yannh/kubernetes-json-schema on the web by default; a CI
// job that can reach only the Go module proxy cannot. The Kubernetes module
// (k8s.io/kubernetes@vX.Y.Z, served by the proxy) carries the release's own
// api/openapi-spec/swagger.json, so `make lint-chart` turns that into one file per kind, named
// as kubeconform's default layout names them (statefulset-apps-v1.json, service-v1.json):
//
//	go run ./internal/kubeschema -kubernetes 1.37.2 -out DIR
//	kubeconform -strict -schema-location DIR ...
//
// The conversion is openapi2jsonschema's "standalone strict" form, which kubeconform's own
// schemas use:
//   - each kind's file holds the kind's definition at its root and every definition it reaches
//     under "definitions", so the document's "#/definitions/…" references resolve in the file;
//   - every object with properties refuses properties it does not name (kubectl's strict
//     validation);
//   - apiVersion and kind accept only the kind's own;
//   - IntOrString accepts a string or an integer, and Quantity a string or a number, as every
//     Kubernetes client does although the document types both as strings.
//
// It never reaches the web: the only network it uses is `go mod download`'s, through GOPROXY.
package main
