package features

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"regexp"
	"slices"
	"strings"
	"sync"

	"github.com/partnersim/partnersim/simulator/openapi"
)

// The state adapter (openapi/state-adapter.yaml, decisions D9) is the part of the control plane
// the @sandbox scenarios use to create state. An implementation declares the capabilities it
// offers at GET /_sandbox/capabilities; a scenario that needs one it lacks is skipped when it
// first asks for it, naming it. The sandbox offers all of them.

// capabilityOp is one operation of the adapter: the capability it belongs to, its method and
// its path as a pattern.
type capabilityOp struct {
	capability, method string
	path               *regexp.Regexp
}

var adapterOps = sync.OnceValues(func() ([]capabilityOp, error) {
	caps, err := openapi.StateAdapterCapabilities()
	if err != nil {
		return nil, err
	}
	var out []capabilityOp
	param := regexp.MustCompile(`\\\{[a-z_]+\\\}`)
	for _, c := range caps {
		for _, op := range c.Operations {
			method, path, _ := strings.Cut(op, " ")
			re := param.ReplaceAllString(regexp.QuoteMeta(path), `[^/]+`)
			out = append(out, capabilityOp{capability: c.Name, method: method, path: regexp.MustCompile("^" + re + "$")})
		}
	}
	return out, nil
})

// CapabilityOf is the capability a control-plane request needs (METHOD, /_sandbox/… path),
// "" for an operation outside the state adapter.
func CapabilityOf(method, path string) string { return capabilityOf(method, path) }

// capabilityOf is the capability a control-plane request needs ("" for an operation outside
// the adapter: the sandbox's own, which only its own scenarios call).
func capabilityOf(method, path string) string {
	ops, err := adapterOps()
	if err != nil {
		return ""
	}
	p, _, _ := strings.Cut(path, "?")
	for _, op := range ops {
		if op.method == method && op.path.MatchString(p) {
			return op.capability
		}
	}
	return ""
}

// CapabilitySkipReason is the skip reason of a scenario that needed a capability the adapter
// lacks.
func CapabilitySkipReason(capability string) string {
	return fmt.Sprintf("the state adapter lacks the capability %s (GET /_sandbox/capabilities)", capability)
}

// fetchCapabilities asks the control plane what it offers. A control plane that does not
// serve /_sandbox/capabilities (404) is taken to offer everything, as the sandbox does.
func fetchCapabilities(ctx context.Context, client *http.Client, root, token string) (map[string]bool, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, root+"/_sandbox/capabilities", nil)
	if err != nil {
		return nil, err
	}
	req.Header.Set("x-sandbox-token", token)
	res, err := client.Do(req)
	if err != nil {
		return nil, fmt.Errorf("state adapter: GET /_sandbox/capabilities: %w", err)
	}
	defer res.Body.Close()
	b, _ := io.ReadAll(io.LimitReader(res.Body, 1<<20))
	if res.StatusCode == http.StatusNotFound {
		return nil, nil
	}
	var body struct {
		Capabilities []string `json:"capabilities"`
	}
	if res.StatusCode != http.StatusOK || json.Unmarshal(b, &body) != nil {
		return nil, fmt.Errorf("state adapter: GET /_sandbox/capabilities: expected 200 {\"capabilities\": [...]}, got %d %s", res.StatusCode, truncate(string(b), 300))
	}
	if !slices.Contains(body.Capabilities, "tenants") {
		return nil, fmt.Errorf("state adapter: the capability tenants is required (institutions, keys, users); the adapter offers %v", body.Capabilities)
	}
	out := map[string]bool{}
	for _, c := range body.Capabilities {
		out[c] = true
	}
	return out, nil
}

// can reports whether the control plane offers a capability (nil capabilities: all).
func (rn *run) can(capability string) bool {
	return rn.sandbox() && (rn.caps == nil || rn.caps[capability])
}
