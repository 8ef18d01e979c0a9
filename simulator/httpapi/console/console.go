package console

import (
	"bytes"
	"crypto/subtle"
	"embed"
	"errors"
	"fmt"
	"html/template"
	"io/fs"
	"log/slog"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/partnersim/partnersim/simulator"
	"github.com/partnersim/partnersim/simulator/httpapi/surface"
	"github.com/partnersim/partnersim/simulator/validate"
)

// Prefix is where the console is mounted.
const Prefix = "/_sandbox/ui/"

//go:embed templates/*.html
var templateFS embed.FS

//go:embed static
var staticFS embed.FS

// Traffic is what the console needs of the HTTP server it is mounted on: the request journal,
// the injected faults, the rate limit and the contract proxy's latest report the server keeps
// (httpapi.Server, which the sandbox hands it). None of them fails.
type Traffic interface {
	// Requests returns up to n journal entries, newest first.
	Requests(n int) []surface.JournalEntry
	// Faults returns the fault rules in force.
	Faults() []surface.FaultRule
	// SetFaults replaces the fault rules.
	SetFaults(rules []surface.FaultRule)
	// RateLimit returns the per-key rate limit (0: off) and its burst.
	RateLimit() (rps float64, burst int)
	// SetRateLimit sets the per-key rate limit; 0 switches it off.
	SetRateLimit(rps float64, burst int)
	// ProxyReport returns the latest report of a contract proxy in front of the sandbox, if
	// one has reported.
	ProxyReport() (surface.ProxyReport, bool)
}

// Config is what the console runs on.
type Config struct {
	// Token is the sandbox token a user signs in with.
	Token string
	// The control plane's services, the same the /_sandbox/ handlers call through the same
	// interfaces (declared in package surface, which both import).
	surface.Operations
	// Traffic is the server the console is mounted on; Clock the server's clock.
	Traffic Traffic
	Clock   *simulator.Clock
	// Throttle counts failed sign-ins with the control plane's failed token checks (decisions
	// D18); nil throttles nothing.
	Throttle *surface.TokenThrottle
	// Log receives the console's internal errors; nil discards them.
	Log *slog.Logger
}

// Console is the QA console's http.Handler.
type Console struct {
	cfg      Config
	sessions *sessions
	pages    map[string]*template.Template
	mux      *http.ServeMux
	static   http.Handler
}

// New builds the console.
func New(cfg Config) (*Console, error) {
	if cfg.Log == nil {
		cfg.Log = slog.New(slog.DiscardHandler)
	}
	c := &Console{cfg: cfg, sessions: newSessions(time.Now), pages: map[string]*template.Template{}, mux: http.NewServeMux()}
	names, err := fs.Glob(templateFS, "templates/*.html")
	if err != nil {
		return nil, err
	}
	for _, n := range names {
		base := strings.TrimSuffix(strings.TrimPrefix(n, "templates/"), ".html")
		if base == "layout" {
			continue
		}
		t, err := template.New(base).Funcs(funcs).ParseFS(templateFS, "templates/layout.html", n)
		if err != nil {
			return nil, fmt.Errorf("console template %s: %w", n, err)
		}
		c.pages[base] = t
	}
	sub, err := fs.Sub(staticFS, "static")
	if err != nil {
		return nil, err
	}
	c.static = http.StripPrefix(Prefix+"static/", http.FileServerFS(filesOnly{sub}))
	c.routes()
	return c, nil
}

// filesOnly is a file system whose folders do not exist, so that http.FileServerFS serves its
// files one by one and never a listing of a folder (decisions D18).
type filesOnly struct{ fs.FS }

func (f filesOnly) Open(name string) (fs.File, error) {
	file, err := f.FS.Open(name)
	if err != nil {
		return nil, err
	}
	if st, err := file.Stat(); err != nil || st.IsDir() {
		file.Close()
		return nil, fs.ErrNotExist
	}
	return file, nil
}

// ServeHTTP implements http.Handler.
func (c *Console) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	h := w.Header()
	h.Set("Content-Security-Policy", "default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self' data:; connect-src 'self'; "+
		"form-action 'self'; frame-ancestors 'none'; base-uri 'none'")
	h.Set("X-Frame-Options", "DENY")
	h.Set("X-Content-Type-Options", "nosniff")
	h.Set("Referrer-Policy", "same-origin")
	c.mux.ServeHTTP(w, r)
}

// page registers a page (GET) that needs a signed-in session: load reads what it shows, and a
// page that could not be loaded says why and what to do (fail).
func (c *Console) page(pattern string, load func(r *http.Request) (loaded, error)) {
	c.signedIn(pattern, func(w http.ResponseWriter, r *http.Request, sess *session) {
		p, err := load(r)
		if err != nil {
			c.fail(w, r, sess, err)
			return
		}
		c.show(w, r, sess, p)
	})
}

// signedIn registers a GET that needs a signed-in session: without one a page goes to the
// sign-in form and a live fragment answers 401.
func (c *Console) signedIn(pattern string, h func(w http.ResponseWriter, r *http.Request, sess *session)) {
	c.mux.HandleFunc("GET "+Prefix+pattern, func(w http.ResponseWriter, r *http.Request) {
		sess := c.sessions.get(r)
		if sess == nil {
			if strings.HasPrefix(r.URL.Path, Prefix+"live/") {
				http.Error(w, "signed out: reload the page and sign in again", http.StatusUnauthorized)
				return
			}
			http.Redirect(w, r, Prefix+"signin?next="+url.QueryEscape(r.URL.RequestURI()), http.StatusSeeOther)
			return
		}
		w.Header().Set("Cache-Control", "no-store")
		h(w, r, sess)
	})
}

// maxForm bounds an action's form body (decisions D17).
const maxForm = 64 << 10

// action registers a state-changing POST: same origin, a signed-in session and its CSRF token,
// in that order; any refusal changes nothing. The handler returns where to go next and the
// message to show there.
func (c *Console) action(pattern string, h func(r *http.Request) (next string, f *flash, err error)) {
	c.mux.HandleFunc("POST "+Prefix+pattern, func(w http.ResponseWriter, r *http.Request) {
		if !sameOrigin(r) {
			c.refuse(w, r, http.StatusForbidden, "Refused: this request came from another site. Use the console's own pages; nothing was changed.")
			return
		}
		sess := c.sessions.get(r)
		if sess == nil {
			c.refuse(w, r, http.StatusUnauthorized, "Your session has ended: sign in again with the sandbox token; nothing was changed.")
			return
		}
		r.Body = http.MaxBytesReader(w, r.Body, maxForm)
		if err := r.ParseForm(); err != nil {
			c.refuse(w, r, http.StatusBadRequest, "The form could not be read (at most 64 KiB): go back and try again; nothing was changed.")
			return
		}
		if !sess.validCSRF(r.PostForm.Get("csrf")) {
			c.refuse(w, r, http.StatusForbidden, "Refused: the form's security token is missing or stale. Reload the page and try again; nothing was changed.")
			return
		}
		back := safeBack(r.PostForm.Get("back"))
		next, f, err := h(r)
		if err != nil {
			f = c.errorFlash(err)
			next = back
		}
		if next == "" {
			next = back
		}
		c.sessions.setFlash(sess, f)
		http.Redirect(w, r, next, http.StatusSeeOther)
	})
}

// safeBack keeps a redirect inside the console (decisions D18): b is kept only when it is a
// path (no scheme or host) that starts with Prefix and stays under it however a browser reads
// it — no dot segments, empty segments, backslashes or control characters, encoded or not —
// else the console's home.
func safeBack(b string) string {
	if len(b) > 4096 || !strings.HasPrefix(b, Prefix) || strings.ContainsFunc(b, unsafeInPath) {
		return Prefix
	}
	u, err := url.Parse(b)
	if err != nil || u.Scheme != "" || u.Host != "" || u.Opaque != "" || u.User != nil {
		return Prefix
	}
	p := u.Path // decoded: %2e%2e is a dot segment to a browser, %2f%2f an empty one
	if !strings.HasPrefix(p, Prefix) || strings.ContainsFunc(p, unsafeInPath) {
		return Prefix
	}
	for seg := range strings.SplitSeq(strings.TrimSuffix(p[len(Prefix):], "/"), "/") {
		if seg == "." || seg == ".." || seg == "" && p != Prefix {
			return Prefix
		}
	}
	return b
}

// unsafeInPath reports a character a redirect path never keeps: a control character, or a
// backslash (a browser reads it as a slash).
func unsafeInPath(r rune) bool { return r < 0x20 || r == 0x7f || r == '\\' }

// refuse answers a refused request with a small page saying what to do.
func (c *Console) refuse(w http.ResponseWriter, r *http.Request, status int, msg string) {
	w.Header().Set("Cache-Control", "no-store")
	c.render(w, r, status, "refused", nil, msg)
}

// view is what every page template gets.
type view struct {
	Title  string
	Nav    string
	CSRF   string
	Flash  *flash
	Path   string // the request URI, for forms' back fields
	Prefix string
	Data   any
}

func (c *Console) render(w http.ResponseWriter, r *http.Request, status int, name string, sess *session, data any) {
	v := view{Nav: name, Path: r.URL.RequestURI(), Prefix: Prefix, Data: data}
	if sess != nil {
		v.CSRF = sess.csrf
		v.Flash = c.sessions.takeFlash(sess)
	}
	c.write(w, status, name, "layout", v)
}

// write executes one template of a page's set into a buffer first, so a template error is a
// 500 page rather than half a page.
func (c *Console) write(w http.ResponseWriter, status int, page, tmpl string, v any) {
	t := c.pages[page]
	var buf bytes.Buffer
	if t == nil {
		c.cfg.Log.Error("console: no such page", slog.String("page", page))
		http.Error(w, "internal error", http.StatusInternalServerError)
		return
	}
	if err := t.ExecuteTemplate(&buf, tmpl, v); err != nil {
		c.cfg.Log.Error("console: template", slog.String("page", page), slog.Any("err", err))
		http.Error(w, "internal error: the page could not be drawn", http.StatusInternalServerError)
		return
	}
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	w.WriteHeader(status)
	_, _ = w.Write(buf.Bytes())
}

// errorFlash words a failed action for a person: what happened and what to do.
func (c *Console) errorFlash(err error) *flash {
	var (
		verrs   validate.Errors
		noPrice *simulator.NoPriceError
		fe      formError
	)
	switch {
	case errors.As(err, &fe):
		return &flash{Kind: "error", Message: string(fe)}
	case errors.As(err, &verrs):
		parts := make([]string, 0, len(verrs))
		for _, it := range verrs {
			parts = append(parts, fmt.Sprintf("%s: %s", locString(it.Loc), it.Msg))
		}
		return &flash{Kind: "error", Message: "Check the form: " + strings.Join(parts, "; ")}
	case errors.As(err, &noPrice):
		return &flash{Kind: "error", Message: noPrice.Error() + ": set its price on the institution's page, then try again.",
			Link: Prefix + "institutions/" + url.PathEscape(noPrice.InstitutionID) + "#prices", LinkText: "Set prices"}
	}
	switch simulator.ErrorCode(err) {
	case simulator.ENOTFOUND:
		return &flash{Kind: "error", Message: simulator.ErrorMessage(err) + ": check the id, or pick it from the lists."}
	case simulator.EINTERNAL:
		c.cfg.Log.Error("console: internal error", slog.Any("err", err))
		return &flash{Kind: "error", Message: "Internal error: see the sandbox's log (serve --log-level debug); nothing was reported to the partner API."}
	}
	return &flash{Kind: "error", Message: simulator.ErrorMessage(err)}
}

// locString names a validation item's field without its "query." or "body." part.
func locString(l validate.Loc) string {
	s := l.String()
	for _, p := range []string{"query.", "body.", "path."} {
		s = strings.TrimPrefix(s, p)
	}
	return s
}

// formError is a console form's own validation failure, worded for a person.
type formError string

func (e formError) Error() string { return string(e) }

func invalid(format string, args ...any) error { return formError(fmt.Sprintf(format, args...)) }

// signIn serves the sign-in form and checks the token.
func (c *Console) signIn() {
	c.mux.HandleFunc("GET "+Prefix+"signin", func(w http.ResponseWriter, r *http.Request) {
		c.render(w, r, http.StatusOK, "signin", nil, signinData{Next: safeBack(r.URL.Query().Get("next"))})
	})
	c.mux.HandleFunc("POST "+Prefix+"signin", func(w http.ResponseWriter, r *http.Request) {
		if !sameOrigin(r) {
			c.refuse(w, r, http.StatusForbidden, "Refused: this sign-in came from another site. Open the console at "+Prefix+" and sign in there.")
			return
		}
		r.Body = http.MaxBytesReader(w, r.Body, maxForm)
		if err := r.ParseForm(); err != nil {
			c.refuse(w, r, http.StatusBadRequest, "The form could not be read: go back and try again.")
			return
		}
		next := safeBack(r.PostForm.Get("next"))
		tok := r.PostForm.Get("token")
		if wait := c.cfg.Throttle.RetryAfter(r.RemoteAddr); wait > 0 && tok != "" {
			w.Header().Set("Retry-After", surface.RetryAfterSeconds(wait))
			c.render(w, r, http.StatusTooManyRequests, "signin", nil, signinData{Next: next,
				Error: "Too many wrong tokens from this address: wait " + surface.RetryAfterSeconds(wait) + " seconds, then sign in with the sandbox token."})
			return
		}
		if tok == "" || subtle.ConstantTimeCompare([]byte(tok), []byte(c.cfg.Token)) != 1 {
			if tok != "" {
				c.cfg.Throttle.Fail(r.RemoteAddr)
			}
			c.render(w, r, http.StatusUnauthorized, "signin", nil, signinData{Next: next,
				Error: "That is not this sandbox's token. Use the value given to serve --sandbox-token (with the default fixtures: the token in fixtures/default/sandbox.json, shown in the README)."})
			return
		}
		id, _ := c.sessions.create()
		http.SetCookie(w, sessionCookie(r, id, int(sessionTTL.Seconds())))
		http.Redirect(w, r, next, http.StatusSeeOther)
	})
	c.mux.HandleFunc("POST "+Prefix+"signout", func(w http.ResponseWriter, r *http.Request) {
		sess := c.sessions.get(r)
		r.Body = http.MaxBytesReader(w, r.Body, maxForm)
		if sameOrigin(r) && sess != nil && r.ParseForm() != nil {
			c.refuse(w, r, http.StatusBadRequest, "The form could not be read (at most 64 KiB): sign out from the console's own pages.")
			return
		}
		if !sameOrigin(r) || sess == nil || !sess.validCSRF(r.PostForm.Get("csrf")) {
			c.refuse(w, r, http.StatusForbidden, "Refused: sign out from the console's own pages.")
			return
		}
		c.sessions.end(r)
		http.SetCookie(w, sessionCookie(r, "", -1))
		http.Redirect(w, r, Prefix+"signin", http.StatusSeeOther)
	})
}

type signinData struct {
	Next  string
	Error string
}
