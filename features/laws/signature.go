package laws

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"regexp"
	"strconv"
	"strings"
	"time"
)

// The suite and the proxy verify signatures here, from the spec's words (§6.1), so that they
// check an implementation rather than agreeing with the simulator's own signing code.

// SignatureHeader is a parsed X-Partner-Webhook-Signature: one t, the digests per scheme tag.
type SignatureHeader struct {
	T       string
	Entries map[string][]string // tag → values, in header order
	Order   []string            // tags in header order (t included)
}

// WellFormed is the header's form: t first, then tag=value entries.
var WellFormed = regexp.MustCompile(`^t=[0-9]+(,[A-Za-z0-9_]+=[^,\s]+)+$`)

// ParseSignature splits the header into tag=value entries; exactly one t is required.
func ParseSignature(h string) (*SignatureHeader, error) {
	if h == "" {
		return nil, errors.New("expected an X-Partner-Webhook-Signature header, got none")
	}
	s := &SignatureHeader{Entries: map[string][]string{}}
	for part := range strings.SplitSeq(h, ",") {
		k, v, ok := strings.Cut(strings.TrimSpace(part), "=")
		if !ok || k == "" {
			return nil, fmt.Errorf("expected tag=value entries in the signature header, got %q", h)
		}
		if k == "t" {
			if s.T != "" {
				return nil, fmt.Errorf("expected one t entry in the signature header, got several in %q", h)
			}
			s.T = v
		}
		s.Entries[k] = append(s.Entries[k], v)
		s.Order = append(s.Order, k)
	}
	if s.T == "" {
		return nil, fmt.Errorf("expected a t entry in the signature header, got %q", h)
	}
	if _, err := strconv.ParseInt(s.T, 10, 64); err != nil {
		return nil, fmt.Errorf("expected t to be unix seconds, got %q", s.T)
	}
	return s, nil
}

// Time is t as a time.
func (s *SignatureHeader) Time() time.Time {
	n, _ := strconv.ParseInt(s.T, 10, 64)
	return time.Unix(n, 0)
}

// HMACHex is the hex HMAC-SHA256 of msg keyed by the secret.
func HMACHex(secret string, msg []byte) string {
	m := hmac.New(sha256.New, []byte(secret))
	m.Write(msg)
	return hex.EncodeToString(m.Sum(nil))
}

// SignedPayload is the string the spec signs: <t> + "." + raw body.
func SignedPayload(t string, body []byte) []byte {
	return append([]byte(t+"."), body...)
}

// MatchV1 reports which v1 entry (0-based) carries HMAC-SHA256(secret, t.body), comparing in
// constant time; -1 when none does. Receivers match on the tag: other tags are ignored and
// there may be several v1 entries.
func (s *SignatureHeader) MatchV1(secret string, body []byte) int {
	want, _ := hex.DecodeString(HMACHex(secret, SignedPayload(s.T, body)))
	for i, v := range s.Entries["v1"] {
		got, err := hex.DecodeString(v)
		if err == nil && hmac.Equal(got, want) {
			return i
		}
	}
	return -1
}

// VerifySignature checks a delivery's signature header against the secret as the spec states
// it, and words a failure so that the broken rule is named.
func VerifySignature(header string, body []byte, secret string) error {
	s, err := ParseSignature(header)
	if err != nil {
		return err
	}
	v1 := s.Entries["v1"]
	if len(v1) == 0 {
		return fmt.Errorf("expected a v1 entry in the signature header, got %q", header)
	}
	if s.MatchV1(secret, body) >= 0 {
		return nil
	}
	// Name the likely mistake.
	overBody := HMACHex(secret, body)
	for _, v := range v1 {
		switch {
		case strings.EqualFold(v, overBody):
			return errors.New("expected v1 = HMAC-SHA256 over t + \".\" + body, got an HMAC over the body alone (without \"t.\")")
		case strings.EqualFold(v, HMACHex(secret, append([]byte(s.T), body...))):
			return errors.New("expected v1 = HMAC-SHA256 over t + \".\" + body, got an HMAC over t + body without the \".\"")
		}
	}
	return fmt.Errorf("expected a v1 entry equal to HMAC-SHA256(secret, t.body) = %s, got %v", HMACHex(secret, SignedPayload(s.T, body)), v1)
}
