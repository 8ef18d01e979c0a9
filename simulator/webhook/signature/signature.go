package signature

import (
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"
	"time"
)

// HeaderID names the delivery header carrying the event's id (equal to the body's event_id,
// the same on every retry). The signature does not cover it.
const HeaderID = "X-Partner-Webhook-Id"

// HeaderSignature names the delivery header carrying the signature.
const HeaderSignature = "X-Partner-Webhook-Signature"

// SecretPrefix starts every signing secret NewSecret issues.
const SecretPrefix = "whsec_"

// DefaultTolerance is how far a header's t may be from the verifier's clock, in either
// direction, when Verify is given no positive tolerance.
const DefaultTolerance = 5 * time.Minute

// Scheme is the tag of the one signature scheme defined: hex HMAC-SHA256. Entries under other
// tags are ignored, so a later scheme can be sent beside it.
const Scheme = "v1"

// Sentinel errors returned by Parse and Verify, possibly wrapped with detail; test with
// errors.Is.
var (
	// ErrNoHeader means the signature header is missing or empty.
	ErrNoHeader = errors.New("no signature header")
	// ErrMalformedHeader means the header is not a comma-separated list of tag=value entries,
	// or its t is not a single unix timestamp.
	ErrMalformedHeader = errors.New("malformed signature header")
	// ErrNoTimestamp means the header has no t entry.
	ErrNoTimestamp = errors.New("signature header has no timestamp (t=)")
	// ErrNoSignature means the header has no v1 entry.
	ErrNoSignature = errors.New("signature header has no v1 signature")
	// ErrNoSecret means Verify was given no non-empty secret to check against.
	ErrNoSecret = errors.New("no signing secret to verify against")
	// ErrTimestampTooOld means t is further in the past than the tolerance allows (a replay or
	// a delivery held too long).
	ErrTimestampTooOld = errors.New("signature timestamp is too old")
	// ErrTimestampInFuture means t is further in the future than the tolerance allows.
	ErrTimestampInFuture = errors.New("signature timestamp is too far in the future")
	// ErrSignatureMismatch means no v1 entry matches the body under any secret.
	ErrSignatureMismatch = errors.New("no v1 signature matches the body")
)

// Header is a parsed signature header.
type Header struct {
	// Timestamp is the header's t, whole seconds.
	Timestamp time.Time
	// Signatures holds every v1 value in the order sent, as sent (hex, not yet decoded).
	Signatures []string
}

// String renders h in the wire form: `t=<unix>,v1=<hex>[,v1=<hex>…]`, no spaces.
func (h Header) String() string {
	var b strings.Builder
	b.Grow(16 + len(h.Signatures)*(len(Scheme)+2+sha256.Size*2))
	b.WriteString("t=")
	b.WriteString(strconv.FormatInt(h.Timestamp.Unix(), 10))
	for _, s := range h.Signatures {
		b.WriteString("," + Scheme + "=")
		b.WriteString(s)
	}
	return b.String()
}

// Parse reads a signature header. Entries are comma-separated tag=value pairs (whitespace
// around an entry is tolerated); tags other than t and v1 are ignored. Exactly one t, a
// decimal unix timestamp, and at least one v1 are required. A v1 value is kept as sent: one
// that is not hex simply never matches in Verify, like any other wrong signature.
func Parse(header string) (Header, error) {
	var h Header
	header = strings.TrimSpace(header)
	if header == "" {
		return h, ErrNoHeader
	}
	seenT := false
	for entry := range strings.SplitSeq(header, ",") {
		tag, value, ok := strings.Cut(strings.TrimSpace(entry), "=")
		if !ok || tag == "" {
			return Header{}, fmt.Errorf("%w: entry %q is not tag=value", ErrMalformedHeader, entry)
		}
		switch tag {
		case "t":
			if seenT {
				return Header{}, fmt.Errorf("%w: more than one t entry", ErrMalformedHeader)
			}
			seenT = true
			sec, err := parseUnix(value)
			if err != nil {
				return Header{}, fmt.Errorf("%w: t=%q is not a unix timestamp", ErrMalformedHeader, value)
			}
			h.Timestamp = time.Unix(sec, 0)
		case Scheme:
			h.Signatures = append(h.Signatures, value)
		}
	}
	if !seenT {
		return Header{}, ErrNoTimestamp
	}
	if len(h.Signatures) == 0 {
		return Header{}, ErrNoSignature
	}
	return h, nil
}

// parseUnix accepts decimal digits with an optional minus (what Sign writes for a time before
// 1970): no plus, no spaces, no exponent.
func parseUnix(s string) (int64, error) {
	digits := strings.TrimPrefix(s, "-")
	if digits == "" || strings.TrimLeft(digits, "0123456789") != "" {
		return 0, strconv.ErrSyntax
	}
	return strconv.ParseInt(s, 10, 64)
}

// Sign returns the signature header value for body sent at t: one v1 entry per secret, in the
// order given (newest first during a rotation's overlap). t is truncated to whole seconds.
// Callers pass at least one secret; with none the header has no v1 entry and every verifier
// refuses it.
func Sign(t time.Time, body []byte, secrets ...string) string {
	// Rendered as Header.String renders it, into one buffer: a signature is made per attempt.
	ts := t.Unix()
	var b strings.Builder
	b.Grow(16 + len(secrets)*(len(Scheme)+2+sha256.Size*2))
	var num [20]byte
	b.WriteString("t=")
	b.Write(strconv.AppendInt(num[:0], ts, 10))
	var sum [sha256.Size]byte
	var hexed [sha256.Size * 2]byte
	for _, s := range secrets {
		b.WriteString("," + Scheme + "=")
		hex.Encode(hexed[:], appendDigest(sum[:0], ts, body, s))
		b.Write(hexed[:])
	}
	return b.String()
}

// digest is HMAC-SHA256, keyed by the secret's bytes, over "<t>.<body>".
func digest(t int64, body []byte, secret string) []byte { return appendDigest(nil, t, body, secret) }

// appendDigest appends digest's value to b.
func appendDigest(b []byte, t int64, body []byte, secret string) []byte {
	mac := hmac.New(sha256.New, []byte(secret))
	var buf [21]byte
	mac.Write(append(strconv.AppendInt(buf[:0], t, 10), '.'))
	mac.Write(body)
	return mac.Sum(b)
}

// Verify checks header against the raw body: some v1 entry must equal the digest under some
// secret (compared in constant time; empty secrets are skipped, never used as a key), and t
// must lie within tolerance of now on both sides, so a future-dated header is refused like a
// stale one. A tolerance of zero or less means DefaultTolerance. The signature is checked
// before the time, so a time error is only ever reported for an authentic header. Errors wrap
// the package's sentinels.
func Verify(header string, body []byte, secrets []string, tolerance time.Duration, now time.Time) error {
	h, err := Parse(header)
	if err != nil {
		return err
	}
	return h.Verify(body, secrets, tolerance, now)
}

// Verify is the package-level Verify on an already parsed header.
func (h Header) Verify(body []byte, secrets []string, tolerance time.Duration, now time.Time) error {
	if len(h.Signatures) == 0 {
		return ErrNoSignature
	}
	if tolerance <= 0 {
		tolerance = DefaultTolerance
	}
	keys := 0
	matched := false
	for _, secret := range secrets {
		if secret == "" {
			continue
		}
		keys++
		want := digest(h.Timestamp.Unix(), body, secret)
		for _, sig := range h.Signatures {
			got, err := hex.DecodeString(sig)
			if err == nil && hmac.Equal(got, want) {
				matched = true
			}
		}
	}
	if keys == 0 {
		return ErrNoSecret
	}
	if !matched {
		return fmt.Errorf("%w: %d v1 entr%s checked against %d secret%s", ErrSignatureMismatch,
			len(h.Signatures), plural(len(h.Signatures), "y", "ies"), keys, plural(keys, "", "s"))
	}
	// Each side is its own subtraction: Sub saturates, and negating a saturated duration would
	// overflow back into range.
	if age := now.Sub(h.Timestamp); age > tolerance {
		return fmt.Errorf("%w: t is %s old, tolerance %s", ErrTimestampTooOld, age.Truncate(time.Second), tolerance)
	}
	if ahead := h.Timestamp.Sub(now); ahead > tolerance {
		return fmt.Errorf("%w: t is %s ahead, tolerance %s", ErrTimestampInFuture, ahead.Truncate(time.Second), tolerance)
	}
	return nil
}

func plural(n int, one, many string) string {
	if n == 1 {
		return one
	}
	return many
}

// NewSecret issues a signing secret: "whsec_" followed by 32 bytes from r in unpadded base64url.
// A nil r means crypto/rand.
func NewSecret(r io.Reader) (string, error) {
	if r == nil {
		r = rand.Reader
	}
	var b [32]byte
	if _, err := io.ReadFull(r, b[:]); err != nil {
		return "", fmt.Errorf("signature: read secret bytes: %w", err)
	}
	return SecretPrefix + base64.RawURLEncoding.EncodeToString(b[:]), nil
}
