package httpapi

import (
	"slices"
	"strings"
)

// routeTable mirrors the routes registered with echo so that the error handler can answer as
// FastAPI does: 405 with every method of a known path, 307 to the trailing-slash twin.
type routeTable struct {
	routes []route
}

type route struct {
	method   string
	segments []string // ":" prefix marks a parameter
}

func (t *routeTable) add(method, pattern string) {
	t.routes = append(t.routes, route{method: method, segments: strings.Split(pattern, "/")})
}

// methods returns the methods of every route whose pattern matches path, in registration order.
func (t *routeTable) methods(path string) []string {
	segs, trimmed := splitPath(path)
	var out []string
	for _, r := range t.routes {
		if (r.match(segs) || trimmed != nil && r.match(trimmed)) && !slices.Contains(out, r.method) {
			out = append(out, r.method)
		}
	}
	return out
}

// beforeFinalNewline returns path without its one final newline when only that form is a route of
// method, as Starlette matches it: a route's pattern is "^…$" matched with re.match, and Python's
// "$" also matches before a final "\n" (starlette/routing.py, compile_path). Any other path is
// returned as it is.
func (t *routeTable) beforeFinalNewline(method, path string) string {
	n := len(path)
	if n < 2 || path[n-1] != '\n' {
		return path
	}
	full, trimmed := strings.Split(path, "/"), strings.Split(path[:n-1], "/")
	found := false
	for _, r := range t.routes {
		if r.method != method {
			continue
		}
		if r.match(full) {
			return path
		}
		found = found || r.match(trimmed)
	}
	if found {
		return path[:n-1]
	}
	return path
}

// splitPath returns path's segments and, when it ends in one newline, the segments without it.
func splitPath(path string) (segs, trimmed []string) {
	segs = strings.Split(path, "/")
	if n := len(path); n > 1 && path[n-1] == '\n' {
		trimmed = strings.Split(path[:n-1], "/")
	}
	return segs, trimmed
}

// slashAlternative returns the path Starlette's redirect_slashes tries, when it is a route:
// every trailing slash stripped (rstrip("/"), so /v1/orders// is not /v1/orders/), or one added.
func (t *routeTable) slashAlternative(path string) (string, bool) {
	alt := path + "/"
	if strings.HasSuffix(path, "/") {
		alt = strings.TrimRight(path, "/")
	}
	if alt == "" || path == "/" {
		return "", false
	}
	return alt, len(t.methods(alt)) > 0
}

func (r route) match(segs []string) bool {
	if len(segs) != len(r.segments) {
		return false
	}
	for i, s := range r.segments {
		if strings.HasPrefix(s, ":") {
			if segs[i] == "" {
				return false
			}
		} else if s != segs[i] {
			return false
		}
	}
	return true
}
