package hostcheck

import (
	"net/netip"
	"net/url"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
)

// The Host check runs before every request is routed: it must not allocate.
func TestHostCheckAllocatesNothing(t *testing.T) {
	p := New(true, []string{"sandbox.test", ".dev.internal"})
	for _, h := range []string{"127.0.0.1:8080", "[::1]:8080", "localhost:8080", "app.localhost", "a.dev.internal:80", "rebind.attacker.example:8080"} {
		allocs := testing.AllocsPerRun(100, func() { p.Allows(h) })
		assert.Zero(t, allocs, "Host %q: got %v allocations a check, want 0", h, allocs)
	}
}

func TestIsLoopback4(t *testing.T) {
	for s, want := range map[string]bool{
		"127.0.0.1": true, "127.255.255.255": true, "127.0.0.0": true, "127.1.2.3": true,
		"127.0.0": false, "127.0.0.1.": false, "127.0.0.256": false, "127.00.0.1": false, "127.0.0.01": false,
		"127..0.1": false, "127.0.0.1.nip.io": false, "128.0.0.1": false, "127.0.0.1000": false, "127.0.0.a": false,
	} {
		assert.Equal(t, want, isLoopback4(s), s)
	}
}

func BenchmarkHostCheck(b *testing.B) {
	p := New(true, []string{"sandbox.test"})
	for _, h := range []string{"127.0.0.1:8080", "localhost:8080", "rebind.attacker.example:8080"} {
		b.Run(h, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				p.Allows(h)
			}
		})
	}
}

// FuzzHostCheck: a loopback-bound sandbox with no allowed host answers a Host only when its
// name, as net/url reads it, is localhost (or under it) or a loopback address.
func FuzzHostCheck(f *testing.F) {
	for _, s := range []string{"127.0.0.1:8080", "[::1]:80", "localhost", "a.localhost.", "LOCALHOST:1", "127.0.0.1.nip.io", "[::ffff:127.0.0.1]",
		"evil.example", "[::1]x", "127.0.0.1:", ":80", "[", "]", "localhost:8080:80", "127.1", "0x7f.1", "localhost@evil", "[fe80::1%25lo]", "[127.0.0.1]", "[127.0.0.0]:80"} {
		f.Add(s)
	}
	p := New(true, nil)
	f.Fuzz(func(t *testing.T, host string) {
		if !p.Allows(host) {
			return
		}
		u, err := url.Parse("http://" + host + "/")
		if err != nil || u.Host != host {
			t.Fatalf("allowed Host %q, which is not a plain host[:port]", host)
		}
		name := strings.TrimSuffix(strings.ToLower(u.Hostname()), ".")
		if name == "localhost" || strings.HasSuffix(name, ".localhost") {
			return
		}
		ip, err := netip.ParseAddr(name)
		if err != nil || !ip.Unmap().IsLoopback() {
			t.Fatalf("allowed Host %q, whose name %q is not loopback", host, name)
		}
	})
}

// CheckName takes names, addresses and .suffixes; it refuses what would answer every Host and
// what is no Host name (a scheme, a port, a path, userinfo, a wildcard).
func TestCheckName(t *testing.T) {
	for _, h := range []string{"sandbox.test", ".dev.internal", "10.0.0.5", "[::1]", "app.localhost.", "sandbox_ci"} {
		assert.NoError(t, CheckName(h), h)
	}
	for _, h := range []string{"", " ", ".", "..", "*", "*.example.test", ".example..test", "http://app.test", "app.test:8080", "a@b", "a/b", "a b", "a\tb", "::1"} {
		assert.ErrorIs(t, CheckName(h), ErrName, h)
	}
}

// Allows remembers the Host it allowed last, and answers every Host as judge does whatever it
// remembers: a refused Host after an allowed one, an allowed one after a refused one.
func TestAllowsAnswersAsJudgeWhateverItRemembers(t *testing.T) {
	p := New(true, []string{".dev.internal"})
	hosts := []string{"127.0.0.1:8080", "127.0.0.1:8080", "rebind.attacker.example:8080", "127.0.0.1:8080", "a.dev.internal",
		"127.0.0.1:8081", "evil.example", "evil.example", "localhost", "127.0.0.1:8080", "127.0.0.1.nip.io"}
	for i, h := range hosts {
		assert.Equal(t, p.judge(h), p.Allows(h), "request %d, Host %q", i, h)
	}
}
