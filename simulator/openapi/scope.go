package openapi

import (
	"bytes"
	"regexp"
)

// undocumented matches the sandbox's paths that no document describes, as FastAPI leaves
// /openapi.json and /docs out of its schema.
var undocumented = regexp.MustCompile(`^(/v[0-9]+|/_sandbox)?/openapi\.json$|^/_sandbox/state-adapter\.json$|^/docs(/|$)|^/_sandbox/ui(/|$)`)

// Undocumented reports whether path lies outside the documents: the documents themselves, the
// /docs viewer and the QA console's pages (decisions D15).
func Undocumented(path string) bool { return undocumented.MatchString(path) }

// InjectedFault reports whether a response body is a fault the control plane injected
// (decisions D12): any status, by design outside the document.
func InjectedFault(body []byte) bool {
	return bytes.HasPrefix(body, []byte(`{"detail":"Injected fault: `))
}

// Misdirected reports whether an answer is the Host check's 421 (decisions D18): given before
// routing to a request that names another server in its Host, so outside the documents, which
// describe the API as reached by its own name.
func Misdirected(status int, body []byte) bool {
	return status == 421 && bytes.Equal(body, []byte(`{"detail":"Misdirected Request"}`))
}
