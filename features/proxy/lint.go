package proxy

import (
	"fmt"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/tidwall/gjson"
)

// ignoredPaging are query parameters apps page with elsewhere, which this API ignores (decisions
// D4: unknown query parameters are ignored), so such an app reads its first page again.
var ignoredPaging = []string{"page", "offset", "limit", "skip", "cursor", "start", "page_size", "pagesize", "page_number", "next", "after"}

// lint judges the partner's side of an API exchange.
func (p *Proxy) lint(x *exchange, j gjson.Result) {
	b, at, ex := p.book, x.end, x.String()
	s := p.state
	if x.key != "" {
		// Retries after a 429: the key's next call waits Retry-After.
		if until, ok := s.backoff[x.key]; ok {
			delete(s.backoff, x.key)
			if x.start.Before(until) {
				b.observe(RetryBackoff, ex, fmt.Sprintf("expected no call with this key before %s (Retry-After), got one %s early", until.UTC().Format(time.RFC3339Nano), until.Sub(x.start).Round(time.Millisecond)), at)
			} else {
				b.observe(RetryBackoff, ex, "", at)
			}
		}
		if x.status == http.StatusTooManyRequests {
			wait := time.Second
			if n, err := strconv.Atoi(x.resHdr.Get("Retry-After")); err == nil {
				wait = time.Duration(n) * time.Second
			}
			s.backoff[x.key] = x.end.Add(wait)
		}
	}
	if x.status == http.StatusTemporaryRedirect {
		loc, err := url.Parse(x.resHdr.Get("Location"))
		if err == nil && strings.TrimSuffix(loc.Path, "/") == strings.TrimSuffix(x.url.Path, "/") && loc.Path != x.url.Path {
			b.observe(TrailingSlash, ex, fmt.Sprintf("expected the app to call %s, got %s, which costs a 307 and a second round trip", loc.Path, x.url.Path), at)
		} else {
			b.observe(TrailingSlash, ex, "", at)
		}
	} else {
		b.observe(TrailingSlash, ex, "", at)
	}
	if x.status == http.StatusUnprocessableEntity {
		var items []string
		for _, it := range j.Get("detail").Array() {
			var loc []string
			for _, l := range it.Get("loc").Array() {
				loc = append(loc, l.String())
			}
			items = append(items, strings.Join(loc, ".")+": "+it.Get("msg").String())
		}
		b.observe(App422, ex, "expected a request the API accepts, got 422: "+strings.Join(items, "; "), at)
	} else {
		b.observe(App422, ex, "", at)
	}
	if x.status == http.StatusForbidden && strings.HasPrefix(j.Get("detail").String(), "key does not have the required scope") {
		b.observe(ScopeMissing, ex, "expected calls within the key's scopes, got 403: "+j.Get("detail").String(), at)
	} else if x.key != "" {
		b.observe(ScopeMissing, ex, "", at)
	}
	if r, _ := routeOf(x.url.Path); (r == userList || r == orderList) && x.method == http.MethodGet {
		q := x.url.Query()
		var bad []string
		for _, k := range ignoredPaging {
			if q.Has(k) {
				bad = append(bad, k+"="+q.Get(k))
			}
		}
		if len(bad) > 0 {
			b.observe(WalkCursor, ex, fmt.Sprintf("expected pages asked with last_record_number, got %s, which the API ignores (it answers the first page again)", strings.Join(bad, ", ")), at)
		} else {
			b.observe(WalkCursor, ex, "", at)
		}
	}
	if p.cfg.PollInterval > 0 && x.method == http.MethodGet && x.key != "" {
		k := x.key + "\x00" + x.url.RequestURI()
		if last, ok := s.polls[k]; ok {
			if d := x.start.Sub(last); d < p.cfg.PollInterval {
				b.observe(PollRate, ex, fmt.Sprintf("expected the same GET at most once every %s, got it again after %s", p.cfg.PollInterval, d.Round(time.Millisecond)), at)
			} else {
				b.observe(PollRate, ex, "", at)
			}
		}
		if len(s.polls) > 100000 {
			clear(s.polls)
		}
		s.polls[k] = x.start
	}
}

// finish ends what only the end decides: walks left before their last page.
func (p *Proxy) finish() {
	for _, w := range p.state.walks {
		p.state.stopped(p, w)
	}
	clear(p.state.walks)
}
