package netguard

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/netip"
	"net/url"
	"strconv"
	"strings"
	"sync"
)

// Errors CheckURL and DialContext return, wrapped with detail; test with errors.Is.
var (
	// ErrInvalidURL means the callback is not an absolute http or https URL with a host.
	ErrInvalidURL = errors.New("callback URL must be an absolute http or https URL")
	// ErrHTTPSRequired means the URL is http but its host is not loopback (or loopback
	// callbacks are not allowed).
	ErrHTTPSRequired = errors.New("callback URL must use https")
	// ErrNotPublic means some address the host resolves to is not public (nor an allowed
	// loopback).
	ErrNotPublic = errors.New("callback URL does not resolve to a public address")
	// ErrNoAddress means the host does not resolve: the resolver failed or answered no
	// address.
	ErrNoAddress = errors.New("callback URL host does not resolve")
)

// Resolver answers the DNS questions the guard asks; *net.Resolver satisfies it.
type Resolver interface {
	LookupNetIP(ctx context.Context, network, host string) ([]netip.Addr, error)
}

// Options configures a Guard. The zero value refuses loopback and uses the system resolver.
type Options struct {
	// AllowLoopback admits loopback callbacks (the sandbox rule of decisions D8): http or https
	// to a host whose every address is loopback. Nothing else private is ever admitted.
	AllowLoopback bool
	// Resolver answers names without an override; nil is net.DefaultResolver.
	Resolver Resolver
	// Dial connects to an address the guard has already checked, always an "ip:port"
	// literal; nil is a zero net.Dialer. Tests wrap it to see what would be dialled.
	Dial func(ctx context.Context, network, address string) (net.Conn, error)
}

// Guard checks callback URLs and dials callback hosts by checked address only. It is safe for
// concurrent use.
type Guard struct {
	allowLoopback bool
	resolver      Resolver
	dial          func(ctx context.Context, network, address string) (net.Conn, error)

	mu        sync.RWMutex
	overrides map[string][]netip.Addr
}

// New returns a guard configured by opts.
func New(opts Options) *Guard {
	g := &Guard{allowLoopback: opts.AllowLoopback, resolver: opts.Resolver, dial: opts.Dial,
		overrides: map[string][]netip.Addr{}}
	if g.resolver == nil {
		g.resolver = net.DefaultResolver
	}
	if g.dial == nil {
		g.dial = (&net.Dialer{}).DialContext
	}
	return g
}

// SetOverride makes host resolve to addrs, ahead of the resolver, for CheckURL and
// DialContext alike (the control plane's DNS overrides, decisions D9); an empty addrs removes the
// override. Host names compare case-insensitively, a trailing dot ignored.
func (g *Guard) SetOverride(host string, addrs []netip.Addr) {
	host = normalizeHost(host)
	g.mu.Lock()
	defer g.mu.Unlock()
	if len(addrs) == 0 {
		delete(g.overrides, host)
		return
	}
	g.overrides[host] = append([]netip.Addr(nil), addrs...)
}

// The bounds of the override table (decisions D18).
const (
	// MaxOverrides is the most host names overridden at once.
	MaxOverrides = 1000
	// MaxOverrideAddrs is the most addresses one override gives.
	MaxOverrideAddrs = 16
)

// ErrNotHostName means an override names something other than a DNS host name.
var ErrNotHostName = errors.New("not a DNS host name")

// OverrideHost returns host as the override table keys it (lower case, no trailing dot), or
// ErrNotHostName unless it is a DNS host name (decisions D18): dot-separated labels of 1-63
// ASCII letters, digits, hyphens and underscores, no label starting or ending with a hyphen,
// 253 characters in all, not an IP address (a literal never reaches DNS) in any spelling —
// a last label of digits or 0x and hex digits makes the WHATWG URL parser and inet_aton read
// the whole name as IPv4 (127.1, 2130706433, 0x7f.1) — and not localhost or a name under it. An
// internationalized name is given in its xn-- form, as the URL parser turns it.
func OverrideHost(host string) (string, error) {
	name := normalizeHost(host)
	if name == "" || len(name) > 253 {
		return "", fmt.Errorf("%w: %q", ErrNotHostName, host)
	}
	if _, err := netip.ParseAddr(strings.Trim(name, "[]")); err == nil {
		return "", fmt.Errorf("%w: %q is an IP address, which never reaches DNS", ErrNotHostName, host)
	}
	if endsInNumber(name) {
		return "", fmt.Errorf("%w: %q is an IPv4 address as URL parsers and resolvers read it (127.1, 2130706433, 0x7f.1), which never reaches DNS", ErrNotHostName, host)
	}
	if name == "localhost" || strings.HasSuffix(name, ".localhost") {
		return "", fmt.Errorf("%w: %q is a loopback name (RFC 6761), which never reaches DNS", ErrNotHostName, host)
	}
	for label := range strings.SplitSeq(name, ".") {
		if label == "" || len(label) > 63 || label[0] == '-' || label[len(label)-1] == '-' {
			return "", fmt.Errorf("%w: %q", ErrNotHostName, host)
		}
		for i := 0; i < len(label); i++ {
			c := label[i]
			if !(c >= 'a' && c <= 'z' || c >= '0' && c <= '9' || c == '-' || c == '_') {
				return "", fmt.Errorf("%w: %q", ErrNotHostName, host)
			}
		}
	}
	return name, nil
}

// endsInNumber reports whether the WHATWG URL standard's host parser reads name as an IPv4
// address: its last label (a trailing dot ignored) is all decimal digits, or 0x followed by
// hex digits.
func endsInNumber(name string) bool {
	last := name[strings.LastIndexByte(name, '.')+1:]
	if last == "" {
		return false
	}
	if strings.HasPrefix(last, "0x") {
		last = last[2:]
		return strings.Trim(last, "0123456789abcdef") == ""
	}
	return strings.Trim(last, "0123456789") == ""
}

func normalizeHost(host string) string {
	return strings.TrimSuffix(strings.ToLower(host), ".")
}

// Resolve returns the addresses the guard judges host by: host itself when it is an IP
// literal, else its override, else the resolver's answer. A name that resolves to nothing is
// an error.
func (g *Guard) Resolve(ctx context.Context, host string) ([]netip.Addr, error) {
	return g.resolve(ctx, "ip", host)
}

func (g *Guard) resolve(ctx context.Context, family, host string) ([]netip.Addr, error) {
	if ip, err := netip.ParseAddr(host); err == nil {
		return []netip.Addr{ip}, nil
	}
	name := normalizeHost(host)
	g.mu.RLock()
	addrs, ok := g.overrides[name]
	g.mu.RUnlock()
	if !ok {
		var err error
		if addrs, err = g.resolver.LookupNetIP(ctx, family, name); err != nil {
			return nil, err
		}
	}
	if len(addrs) == 0 {
		return nil, fmt.Errorf("%s resolves to no address", host)
	}
	// The override table's slices are never modified in place, and a resolver's answer is
	// ours: no copy is needed.
	return addrs, nil
}

// Allowed reports whether the guard would connect to ip: a public address, or a loopback one
// when loopback callbacks are allowed.
func (g *Guard) Allowed(ip netip.Addr) bool {
	return IsPublic(ip) || (g.allowLoopback && IsLoopback(ip))
}

// CheckURL applies decisions D8's callback rule, in its order: the URL must be absolute http or
// https with a host (else ErrInvalidURL); http only when loopback callbacks are allowed and
// every address the host resolves to is loopback (else ErrHTTPSRequired); then every address
// must be allowed (else ErrNotPublic, naming the first refused address). An https host that
// does not resolve is ErrNoAddress wrapping the resolver's error (an http one is not a
// loopback host: ErrHTTPSRequired). Each refusal says what it refused. IP literals need no
// DNS; every name, localhost included, goes through the override table and the resolver.
func (g *Guard) CheckURL(ctx context.Context, raw string) error {
	u, err := url.Parse(raw)
	if err != nil {
		return fmt.Errorf("%w: %w", ErrInvalidURL, err)
	}
	scheme := strings.ToLower(u.Scheme)
	host := u.Hostname()
	if (scheme != "http" && scheme != "https") || host == "" {
		return fmt.Errorf("%w: %q", ErrInvalidURL, raw)
	}
	if scheme == "http" && !g.allowLoopback {
		return ErrHTTPSRequired
	}
	addrs, err := g.Resolve(ctx, host)
	if err != nil {
		if scheme == "http" {
			return fmt.Errorf("%w: %s is not a loopback host: %w", ErrHTTPSRequired, host, err)
		}
		return fmt.Errorf("%w: %w", ErrNoAddress, err)
	}
	if scheme == "http" {
		for _, a := range addrs {
			if !IsLoopback(a) {
				return fmt.Errorf("%w: %s resolves to %s, which is not loopback", ErrHTTPSRequired, host, a)
			}
		}
	}
	for _, a := range addrs {
		if !g.Allowed(a) {
			return fmt.Errorf("%w: %s resolves to %s", ErrNotPublic, host, a)
		}
	}
	return nil
}

// DialContext is an http.Transport dialer that resolves address's host (overrides first),
// refuses the whole dial if any of its addresses is not allowed (an error wrapping
// ErrNotPublic, returned before any connection is attempted), and otherwise connects to the
// checked IPs themselves, in order, never resolving again: a DNS answer that changes after the
// check cannot redirect the connection. Networks tcp, tcp4 and tcp6 are supported.
func (g *Guard) DialContext(ctx context.Context, network, address string) (net.Conn, error) {
	var family string
	switch network {
	case "tcp":
		family = "ip"
	case "tcp4":
		family = "ip4"
	case "tcp6":
		family = "ip6"
	default:
		return nil, fmt.Errorf("netguard: dial %s: unsupported network %q", address, network)
	}
	host, portText, err := net.SplitHostPort(address)
	if err != nil {
		return nil, fmt.Errorf("netguard: dial %s: %w", address, err)
	}
	port, err := strconv.ParseUint(portText, 10, 16)
	if err != nil {
		return nil, fmt.Errorf("netguard: dial %s: port %q is not a number", address, portText)
	}
	addrs, err := g.resolve(ctx, family, host)
	if err != nil {
		return nil, fmt.Errorf("netguard: dial %s: %w", address, err)
	}
	targets := make([]netip.AddrPort, 0, len(addrs))
	for _, a := range addrs {
		if !g.Allowed(a) {
			return nil, fmt.Errorf("netguard: dial %s: %w: refused %s", address, ErrNotPublic, a)
		}
		a = a.Unmap()
		if (family == "ip4" && !a.Is4()) || (family == "ip6" && !a.Is6()) {
			continue
		}
		targets = append(targets, netip.AddrPortFrom(a, uint16(port)))
	}
	if len(targets) == 0 {
		return nil, fmt.Errorf("netguard: dial %s: no %s address", address, network)
	}
	var errs []error
	for _, t := range targets {
		conn, err := g.dial(ctx, network, t.String())
		if err == nil {
			return conn, nil
		}
		errs = append(errs, err)
		if ctx.Err() != nil {
			break
		}
	}
	return nil, errors.Join(errs...)
}
