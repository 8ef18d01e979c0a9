package httpapi

import (
	"net"
	"net/http"
	"strings"
)

// redirectLocation is the Location of Starlette's trailing-slash redirect: Router.app builds
// URL(scope=redirect_scope) — the Host header when it is a plain host[:port] (else the address
// the request came in on), the decoded path, the query string as sent — and RedirectResponse
// quotes it whole with urllib.parse.quote, safe=":/%#?=@[]!$&'()*+,;" (starlette/routing.py,
// starlette/datastructures.py URL.__init__, starlette/responses.py RedirectResponse).
func redirectLocation(r *http.Request, path string) string {
	scheme := "http"
	if r.TLS != nil {
		scheme = "https"
	}
	netloc := r.Host
	if !isStarletteHost(netloc) {
		netloc = serverNetloc(r, scheme)
	}
	var b strings.Builder
	b.Grow(len(scheme) + 3 + len(netloc) + len(path) + len(r.URL.RawQuery) + 16)
	quoteURL(&b, scheme)
	b.WriteString("://")
	quoteURL(&b, netloc)
	quoteURL(&b, path)
	if r.URL.RawQuery != "" {
		b.WriteByte('?')
		quoteURL(&b, r.URL.RawQuery)
	}
	return b.String()
}

// serverNetloc is Starlette's netloc from the ASGI server tuple: the local host and port, the
// port left out when it is the scheme's default (an IPv6 host unbracketed, as Starlette writes it).
func serverNetloc(r *http.Request, scheme string) string {
	addr, _ := r.Context().Value(http.LocalAddrContextKey).(net.Addr)
	if addr == nil {
		return ""
	}
	host, port, err := net.SplitHostPort(addr.String())
	if err != nil {
		return addr.String()
	}
	if scheme == "http" && port == "80" || scheme == "https" && port == "443" {
		return host
	}
	return host + ":" + port
}

// isStarletteHost reports whether a Host header matches Starlette's _HOST_RE,
// ^([a-z0-9.-]+|\[[a-f0-9]*:[a-f0-9.:]+\])(?::[0-9]+)?$ (case-insensitive).
func isStarletteHost(h string) bool {
	i := 0
	if strings.HasPrefix(h, "[") {
		end := strings.IndexByte(h, ']')
		if end < 0 {
			return false
		}
		inner := h[1:end]
		colon := strings.IndexByte(inner, ':')
		if colon < 0 || colon == len(inner)-1 || !allIn(inner[:colon], "abcdef0123456789") || !allIn(inner[colon+1:], "abcdef0123456789.:") {
			return false
		}
		i = end + 1
	} else {
		for i < len(h) && (isAlnum(h[i]) || h[i] == '.' || h[i] == '-') {
			i++
		}
		if i == 0 {
			return false
		}
	}
	if i == len(h) {
		return true
	}
	return h[i] == ':' && i+1 < len(h) && allIn(h[i+1:], "0123456789")
}

func allIn(s, set string) bool {
	for i := 0; i < len(s); i++ {
		if !strings.ContainsRune(set, rune(lower(s[i]))) {
			return false
		}
	}
	return true
}

func isAlnum(c byte) bool { c = lower(c); return c >= 'a' && c <= 'z' || c >= '0' && c <= '9' }

func lower(c byte) byte {
	if c >= 'A' && c <= 'Z' {
		return c + 'a' - 'A'
	}
	return c
}

// quoteURL appends s as Python's urllib.parse.quote(s, safe=":/%#?=@[]!$&'()*+,;") does: its
// UTF-8 bytes, each one outside the unreserved characters and that safe set as %XX.
func quoteURL(b *strings.Builder, s string) {
	const hex = "0123456789ABCDEF"
	for i := 0; i < len(s); i++ {
		c := s[i]
		if isAlnum(c) || strings.IndexByte("_.-~:/%#?=@[]!$&'()*+,;", c) >= 0 {
			b.WriteByte(c)
			continue
		}
		b.WriteByte('%')
		b.WriteByte(hex[c>>4])
		b.WriteByte(hex[c&15])
	}
}
