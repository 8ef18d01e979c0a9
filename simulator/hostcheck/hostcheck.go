package hostcheck

import (
	"errors"
	"net/netip"
	"strings"
	"sync/atomic"
)

// ErrName is CheckName's refusal.
var ErrName = errors.New(`a host name, an address or a .suffix naming a domain, without scheme, port, path or wildcard, ` +
	`e.g. sandbox.internal, 10.0.0.5 or .example.test ("." "*" and an empty value would answer every Host)`)

// CheckName refuses a name given to allow (an --allowed-host value) that is not a host name,
// an IP address or a .suffix naming a domain (decisions D18): an empty value, ".", "*" or a
// wildcard would answer every Host, and a scheme, port or path is not part of a Host name.
func CheckName(h string) error {
	name := strings.TrimSuffix(strings.TrimPrefix(h, "."), ".")
	if strings.HasPrefix(h, "[") && strings.HasSuffix(h, "]") {
		name = "ip6"
	}
	if name == "" || strings.ContainsAny(h, "/@*: \t") && !strings.HasPrefix(h, "[") || strings.Contains(name, "..") || strings.HasPrefix(name, ".") {
		return ErrName
	}
	return nil
}

// Policy decides which Host headers a server answers (decisions D18). It runs on every request:
// work bounded by the (operator-given) list, and no allocation but one when a Host it allows is
// not the one it allowed last. Its zero value answers any Host.
type Policy struct {
	// loopbackOnly answers only loopback Hosts and allowed; otherwise an empty allowed means
	// any Host.
	loopbackOnly bool
	// allowed are lower-case names without a trailing dot; ".name" matches name and every
	// name under it.
	allowed []string
	// last is the Host header allowed last: a client sends the same one with every request,
	// and the answer for it cannot change (the policy is fixed at New).
	last atomic.Pointer[string]
}

// New returns the policy of a server: loopbackOnly for one listening on loopback only (it then
// answers loopback Hosts and allowed), allowed the names given with --allowed-host (".name"
// matches name and every name under it; case, brackets and a trailing dot are ignored).
func New(loopbackOnly bool, allowed []string) *Policy {
	p := &Policy{loopbackOnly: loopbackOnly}
	for _, h := range allowed {
		h = strings.TrimSuffix(strings.ToLower(strings.Trim(strings.TrimSpace(h), "[]")), ".")
		if h != "" && h != "." {
			p.allowed = append(p.allowed, h)
		}
	}
	return p
}

// Allows reports whether a request with this Host header is answered.
func (p *Policy) Allows(hostHeader string) bool {
	if !p.loopbackOnly && len(p.allowed) == 0 {
		return true
	}
	if last := p.last.Load(); last != nil && *last == hostHeader {
		return true
	}
	if !p.judge(hostHeader) {
		return false
	}
	last := hostHeader // a copy of the header's string, so that only this path allocates
	p.last.Store(&last)
	return true
}

// judge is Allows without the memory of the Host allowed last.
func (p *Policy) judge(hostHeader string) bool {
	host, ok := hostName(hostHeader)
	if !ok {
		return false
	}
	if isLoopbackHost(host) {
		return true
	}
	for _, a := range p.allowed {
		if a[0] == '.' {
			if strings.EqualFold(host, a[1:]) || len(host) > len(a) && strings.EqualFold(host[len(host)-len(a):], a) {
				return true
			}
		} else if strings.EqualFold(host, a) {
			return true
		}
	}
	return false
}

// hostName returns the name or address of a Host header without its port, brackets and
// trailing dot; ok is false for a header no browser sends (empty, a malformed port or bracket,
// a character no host name has).
func hostName(h string) (string, bool) {
	if strings.HasPrefix(h, "[") {
		end := strings.IndexByte(h, ']')
		if end < 0 || !validPort(h[end+1:]) {
			return "", false
		}
		// Brackets hold an IPv6 address only (RFC 3986's IP-literal): net/url refuses "[127.0.0.1]".
		return h[1:end], end > 1 && strings.IndexByte(h[1:end], ':') >= 0
	}
	if i := strings.LastIndexByte(h, ':'); i >= 0 {
		if !validPort(h[i:]) {
			return "", false
		}
		h = h[:i]
	}
	h = strings.TrimSuffix(h, ".")
	for i := 0; i < len(h); i++ {
		if c := h[i]; !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '-' || c == '.' || c == '_') {
			return "", false
		}
	}
	return h, h != ""
}

// validPort reports whether s is empty or ":" followed by digits.
func validPort(s string) bool {
	if s == "" {
		return true
	}
	if s[0] != ':' {
		return false
	}
	for i := 1; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return false
		}
	}
	return true
}

// isLoopbackHost reports whether host names this machine: "localhost" and names under it
// (RFC 6761 reserves them for loopback), 127.0.0.0/8 and ::1 (IPv4-mapped forms included).
func isLoopbackHost(host string) bool {
	const lh = "localhost"
	if strings.EqualFold(host, lh) || len(host) > len(lh) && host[len(host)-len(lh)-1] == '.' && strings.EqualFold(host[len(host)-len(lh):], lh) {
		return true
	}
	if strings.IndexByte(host, ':') < 0 {
		return isLoopback4(host)
	}
	// Only a bracketed Host has a colon; netip allocates only for one it refuses.
	ip, err := netip.ParseAddr(host)
	return err == nil && ip.Zone() == "" && ip.Unmap().IsLoopback()
}

// isLoopback4 reports whether s is a dotted-quad address in 127.0.0.0/8, as netip reads one
// (four decimal octets, no leading zeros), without netip's error allocation for a name.
func isLoopback4(s string) bool {
	if !strings.HasPrefix(s, "127.") {
		return false
	}
	parts, n, digits := 0, 0, 0
	for i := 0; i <= len(s); i++ {
		if i == len(s) || s[i] == '.' {
			if digits == 0 || n > 255 || digits > 1 && s[i-digits] == '0' {
				return false
			}
			parts, n, digits = parts+1, 0, 0
			continue
		}
		if s[i] < '0' || s[i] > '9' || digits == 3 {
			return false
		}
		n, digits = n*10+int(s[i]-'0'), digits+1
	}
	return parts == 4
}
