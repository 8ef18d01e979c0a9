package simulator

import (
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"io"
	"sync"
)

const base62 = "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"

// IDs issues identifiers and key material from one random source: crypto/rand normally, a
// seeded stream in deterministic mode so ids repeat across runs.
type IDs struct {
	mu  sync.Mutex
	src io.Reader
	// tag, when set, begins the random part of every id and key: a shard's name, so that a
	// proxy routes what a shard issued by prefix (decisions D20).
	tag string
}

// NewIDs returns a generator reading from src; nil means crypto/rand.
func NewIDs(src io.Reader) *IDs {
	if src == nil {
		src = rand.Reader
	}
	return &IDs{src: src}
}

// Read fills p from the generator's source (so IDs can serve as the entropy for secrets).
func (g *IDs) Read(p []byte) (int, error) {
	g.mu.Lock()
	defer g.mu.Unlock()
	return io.ReadFull(g.src, p)
}

// NewShardIDs returns a generator like NewIDs whose ids and keys begin, after their prefix,
// with tag — 1 to 8 base62 characters naming the shard that issues them — keeping their
// published lengths (decisions D20).
func NewShardIDs(src io.Reader, tag string) *IDs {
	g := NewIDs(src)
	g.tag = tag
	return g
}

// New returns prefix + "_" + 24 base62 characters (the shard's tag first, if any).
func (g *IDs) New(prefix string) string { return prefix + "_" + g.tag + g.base62(24-len(g.tag)) }

// NewKey returns an API key `<env>_<40 base62 chars>` (decisions D3; the shard's tag first,
// if any).
func (g *IDs) NewKey(env string) string { return env + "_" + g.tag + g.base62(40-len(g.tag)) }

func (g *IDs) base62(n int) string {
	buf := make([]byte, n)
	var b [1]byte
	for i := 0; i < n; {
		if _, err := g.Read(b[:]); err != nil {
			panic("simulator: random source failed: " + err.Error()) // crypto/rand never fails on Linux
		}
		if b[0] >= 248 { // 248 = 4*62: reject to keep the distribution uniform
			continue
		}
		buf[i] = base62[int(b[0])%62]
		i++
	}
	return string(buf)
}

// HashKey returns the stored form of an API key: hex SHA-256 of its plaintext.
func HashKey(plaintext string) string {
	sum := sha256.Sum256([]byte(plaintext))
	return hex.EncodeToString(sum[:])
}

// KeyLast4 is the displayable tail of a key: its last 4 characters, which tell apart keys
// whose prefixes are alike.
func KeyLast4(plaintext string) string {
	if len(plaintext) > 13 {
		return plaintext[len(plaintext)-4:]
	}
	return ""
}

// KeyPrefix is the displayable head of a key: env, underscore and 4 characters.
func KeyPrefix(plaintext string) string {
	if len(plaintext) > 9 {
		return plaintext[:9]
	}
	return plaintext
}

// ValidKeyShape reports whether s looks like `<env>_<40 base62>`.
func ValidKeyShape(s string) bool {
	i := len(s) - 41
	if i < 1 || s[i] != '_' {
		return false
	}
	for _, c := range s[i+1:] {
		if !isBase62(c) {
			return false
		}
	}
	return true
}

func isBase62(c rune) bool {
	return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z')
}

// NewSigningSecret returns a webhook signing secret: "whsec_" + 32 random bytes in base64url
// without padding (decisions D8).
func (g *IDs) NewSigningSecret() string {
	var b [32]byte
	if _, err := g.Read(b[:]); err != nil {
		panic("simulator: random source failed: " + err.Error())
	}
	return "whsec_" + base64.RawURLEncoding.EncodeToString(b[:])
}
