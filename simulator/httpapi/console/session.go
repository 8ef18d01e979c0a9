package console

import (
	"crypto/rand"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/base64"
	"net/http"
	"sync"
	"time"
)

// Sessions are kept in memory, server-side: a restart signs everybody out, and the cookie holds
// only a random id (decisions D15).
const (
	cookieName = "partnersim_console"
	// sessionTTL is how long a sign-in lasts.
	sessionTTL = 12 * time.Hour
	// maxSessions bounds the sessions kept (decisions D17); a sign-in beyond it ends the oldest.
	maxSessions = 256
)

// session is one signed-in browser.
type session struct {
	csrf    string
	expires time.Time
	flash   *flash
}

// flash is a message shown once, on the page after an action.
type flash struct {
	Kind    string // ok or error
	Message string
	// Secret is a value shown only this once (an issued key, a rotated signing secret).
	Secret string
	// Link and LinkText point at what the action made (an event's deliveries, a run).
	Link, LinkText string
}

type sessions struct {
	mu  sync.Mutex
	now func() time.Time
	m   map[[32]byte]*session // by the SHA-256 of the cookie's id
}

func newSessions(now func() time.Time) *sessions {
	return &sessions{now: now, m: map[[32]byte]*session{}}
}

func randomToken() string {
	var b [32]byte
	_, _ = rand.Read(b[:])
	return base64.RawURLEncoding.EncodeToString(b[:])
}

// create starts a session and returns its cookie id.
func (s *sessions) create() (string, *session) {
	id := randomToken()
	sess := &session{csrf: randomToken(), expires: s.now().Add(sessionTTL)}
	s.mu.Lock()
	defer s.mu.Unlock()
	now := s.now()
	var oldest [32]byte
	var oldestAt time.Time
	for k, v := range s.m {
		if !now.Before(v.expires) {
			delete(s.m, k)
			continue
		}
		if oldestAt.IsZero() || v.expires.Before(oldestAt) {
			oldest, oldestAt = k, v.expires
		}
	}
	if len(s.m) >= maxSessions {
		delete(s.m, oldest)
	}
	s.m[sha256.Sum256([]byte(id))] = sess
	return id, sess
}

// get returns the request's live session, or nil.
func (s *sessions) get(r *http.Request) *session {
	c, err := r.Cookie(cookieName)
	if err != nil || c.Value == "" || len(c.Value) > 100 {
		return nil
	}
	key := sha256.Sum256([]byte(c.Value))
	s.mu.Lock()
	defer s.mu.Unlock()
	sess := s.m[key]
	if sess == nil {
		return nil
	}
	if !s.now().Before(sess.expires) {
		delete(s.m, key)
		return nil
	}
	return sess
}

// end signs the request's session out.
func (s *sessions) end(r *http.Request) {
	if c, err := r.Cookie(cookieName); err == nil {
		s.mu.Lock()
		delete(s.m, sha256.Sum256([]byte(c.Value)))
		s.mu.Unlock()
	}
}

// setFlash and takeFlash pass one message from an action to the page it redirects to.
func (s *sessions) setFlash(sess *session, f *flash) {
	s.mu.Lock()
	sess.flash = f
	s.mu.Unlock()
}

func (s *sessions) takeFlash(sess *session) *flash {
	s.mu.Lock()
	defer s.mu.Unlock()
	f := sess.flash
	sess.flash = nil
	return f
}

// validCSRF compares a submitted CSRF token with the session's in constant time.
func (sess *session) validCSRF(got string) bool {
	return got != "" && subtle.ConstantTimeCompare([]byte(got), []byte(sess.csrf)) == 1
}

// sameOrigin reports whether a state-changing request comes from the console's own pages: a
// browser says so in Sec-Fetch-Site (same-origin; a page of another port of the same host is
// "same-site" and refused) or, failing that, in Origin. A request with neither is not a
// browser's cross-site request (browsers send Origin on every POST); the CSRF token still
// guards it.
func sameOrigin(r *http.Request) bool {
	if site := r.Header.Get("Sec-Fetch-Site"); site != "" {
		return site == "same-origin" || site == "none"
	}
	origin := r.Header.Get("Origin")
	if origin == "" {
		return true
	}
	scheme := "http"
	if r.TLS != nil {
		scheme = "https"
	}
	return origin == scheme+"://"+r.Host
}

func sessionCookie(r *http.Request, value string, maxAge int) *http.Cookie {
	return &http.Cookie{Name: cookieName, Value: value, Path: Prefix, MaxAge: maxAge, HttpOnly: true,
		SameSite: http.SameSiteStrictMode, Secure: r.TLS != nil}
}
