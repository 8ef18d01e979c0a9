package netguard_test

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"net/url"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/partnersim/partnersim/simulator/netguard"
)

// fakeResolver answers from a table; any other name is NXDOMAIN. It counts queries so tests
// can see that IP literals and overridden names never reach DNS.
type fakeResolver struct {
	answers map[string][]string
	queries atomic.Int32
}

func (r *fakeResolver) LookupNetIP(_ context.Context, network, host string) ([]netip.Addr, error) {
	r.queries.Add(1)
	answer, ok := r.answers[host]
	if !ok {
		return nil, &net.DNSError{Err: "no such host", Name: host, IsNotFound: true}
	}
	var out []netip.Addr
	for _, s := range answer {
		a := netip.MustParseAddr(s)
		if network == "ip" || (network == "ip4") == a.Is4() {
			out = append(out, a)
		}
	}
	return out, nil
}

func newResolver() *fakeResolver {
	return &fakeResolver{answers: map[string][]string{
		"hooks.partner.example": {"93.184.216.34", "2606:2800:220:1::1"},
		"localhost":             {"127.0.0.1", "::1"},
		"private.example":       {"10.1.2.3"},
		"mixed.example":         {"93.184.216.34", "10.0.0.5"},
		"mixedloop.example":     {"93.184.216.34", "127.0.0.1"},
		"metadata.example":      {"169.254.169.254"},
		"mapped.example":        {"::ffff:192.168.1.1"},
		"empty.example":         {},
	}}
}

// noDial fails the test if the guard ever tries to connect.
func noDial(t *testing.T) func(context.Context, string, string) (net.Conn, error) {
	return func(_ context.Context, _, address string) (net.Conn, error) {
		t.Errorf("unexpected dial of %s", address)
		return nil, errors.New("test: dial not allowed")
	}
}

func TestCheckURL(t *testing.T) {
	type want struct{ loopbackAllowed, loopbackRefused error }
	ok := want{nil, nil}
	https := want{netguard.ErrHTTPSRequired, netguard.ErrHTTPSRequired}
	private := want{netguard.ErrNotPublic, netguard.ErrNotPublic}
	loopHTTPS := want{nil, netguard.ErrNotPublic}
	loopHTTP := want{nil, netguard.ErrHTTPSRequired}
	invalid := want{netguard.ErrInvalidURL, netguard.ErrInvalidURL}
	unresolved := want{netguard.ErrNoAddress, netguard.ErrNoAddress}
	cases := []struct {
		url  string
		want want
	}{
		{"https://hooks.partner.example/webhooks", ok},
		{"https://HOOKS.Partner.Example./webhooks", ok},
		{"https://93.184.216.34:8443/x", ok},
		{"https://[2606:4700:4700::1111]/x", ok},
		{"https://[::ffff:8.8.8.8]/x", ok},
		{"http://hooks.partner.example/webhooks", https},
		{"http://93.184.216.34/x", https},
		{"https://localhost:9000/hook", loopHTTPS},
		{"http://localhost:9000/hook", loopHTTP},
		{"http://127.0.0.1:8080/hook", loopHTTP},
		{"http://127.9.9.9/hook", loopHTTP},
		{"http://[::1]:8080/hook", loopHTTP},
		{"https://[::1]:8080/hook", loopHTTPS},
		{"http://[::ffff:127.0.0.1]/hook", loopHTTP},
		{"https://10.0.0.1/", private},
		{"http://10.0.0.1/", https}, // https is checked before the address rule
		{"https://private.example/", private},
		{"https://metadata.example/latest/meta-data", private},
		{"https://169.254.169.254/latest/meta-data", private},
		{"https://mapped.example/", private},
		{"https://[::ffff:10.0.0.1]/", private},
		{"https://[64:ff9b::10.0.0.1]/", private},
		{"https://[fe80::1%25eth0]/", private},
		{"https://[64:ff9b::127.0.0.1]/", private}, // not loopback either
		{"http://[64:ff9b::127.0.0.1]/", https},
		{"https://mixed.example/", private},
		{"https://mixedloop.example/", loopHTTPS},
		{"http://mixedloop.example/", https}, // http needs every address loopback
		{"https://nxdomain.example/", unresolved},
		{"http://nxdomain.example/", https},
		{"https://empty.example/", unresolved},
		{"http://empty.example/", https},
		{"ftp://hooks.partner.example/", invalid},
		{"/relative/path", invalid},
		{"https://", invalid},
		{"https:///path-only", invalid},
		{"::not a url", invalid},
	}
	for _, allow := range []bool{true, false} {
		g := netguard.New(netguard.Options{AllowLoopback: allow, Resolver: newResolver(), Dial: noDial(t)})
		for _, c := range cases {
			want := c.want.loopbackRefused
			if allow {
				want = c.want.loopbackAllowed
			}
			err := g.CheckURL(context.Background(), c.url)
			if want == nil {
				assert.NoError(t, err, "allowLoopback=%v CheckURL(%q)", allow, c.url)
				continue
			}
			assert.ErrorIs(t, err, want, "allowLoopback=%v CheckURL(%q): got %v", allow, c.url, err)
		}
	}
}

func TestCheckURLMessages(t *testing.T) {
	g := netguard.New(netguard.Options{Resolver: newResolver(), Dial: noDial(t)})
	assert.EqualError(t, g.CheckURL(context.Background(), "http://hooks.partner.example/"), "callback URL must use https")
	assert.EqualError(t, g.CheckURL(context.Background(), "https://mixed.example/"),
		"callback URL does not resolve to a public address: mixed.example resolves to 10.0.0.5")

	// Each refusal names what it refused: the scheme, an address, or a host without any.
	err := g.CheckURL(context.Background(), "https://nxdomain.example/")
	assert.ErrorContains(t, err, "callback URL host does not resolve: lookup nxdomain.example: ")
	assert.NotErrorIs(t, err, netguard.ErrNotPublic, "a host that does not resolve is not a private address")
	assert.EqualError(t, g.CheckURL(context.Background(), "https://empty.example/"),
		"callback URL host does not resolve: empty.example resolves to no address")
	assert.EqualError(t, g.CheckURL(context.Background(), "ftp://hooks.partner.example/"),
		`callback URL must be an absolute http or https URL: "ftp://hooks.partner.example/"`)
	var dnsErr *net.DNSError
	require.ErrorAs(t, err, &dnsErr, "the resolver's error is wrapped: got %v", err)
	assert.True(t, dnsErr.IsNotFound)
}

func TestLiteralsNeverReachDNS(t *testing.T) {
	r := newResolver()
	g := netguard.New(netguard.Options{AllowLoopback: true, Resolver: r, Dial: noDial(t)})
	g.SetOverride("127.0.0.1", []netip.Addr{netip.MustParseAddr("10.0.0.1")}) // a literal is not a name
	for _, u := range []string{"http://127.0.0.1:1/", "https://8.8.8.8/", "http://[::1]/", "https://[2606:4700:4700::1111]/"} {
		assert.NoError(t, g.CheckURL(context.Background(), u), u)
	}
	assert.Zero(t, r.queries.Load(), "DNS queries for IP literals")
}

func TestCheckURLOverrides(t *testing.T) {
	ctx := context.Background()
	for _, allow := range []bool{true, false} {
		r := newResolver()
		g := netguard.New(netguard.Options{AllowLoopback: allow, Resolver: r, Dial: noDial(t)})
		require.NoError(t, g.CheckURL(ctx, "https://hooks.partner.example/"))

		// A public name overridden to loopback counts as loopback.
		g.SetOverride("Hooks.Partner.Example.", []netip.Addr{netip.MustParseAddr("127.0.0.1")})
		queries := r.queries.Load()
		if allow {
			assert.NoError(t, g.CheckURL(ctx, "http://hooks.partner.example:9000/"))
			assert.NoError(t, g.CheckURL(ctx, "https://hooks.partner.example/"))
		} else {
			assert.ErrorIs(t, g.CheckURL(ctx, "http://hooks.partner.example:9000/"), netguard.ErrHTTPSRequired)
			assert.ErrorIs(t, g.CheckURL(ctx, "https://hooks.partner.example/"), netguard.ErrNotPublic)
		}
		assert.Equal(t, queries, r.queries.Load(), "an overridden name is not looked up")

		// Overridden to a private address: refused under every setting.
		g.SetOverride("hooks.partner.example", []netip.Addr{netip.MustParseAddr("10.0.0.1")})
		assert.ErrorIs(t, g.CheckURL(ctx, "https://hooks.partner.example/"), netguard.ErrNotPublic)
		assert.ErrorIs(t, g.CheckURL(ctx, "http://hooks.partner.example/"), netguard.ErrHTTPSRequired)

		// localhost is a name like any other.
		g.SetOverride("localhost", []netip.Addr{netip.MustParseAddr("192.168.0.10")})
		assert.ErrorIs(t, g.CheckURL(ctx, "https://localhost/"), netguard.ErrNotPublic)
		if allow {
			assert.ErrorIs(t, g.CheckURL(ctx, "http://localhost/"), netguard.ErrHTTPSRequired)
		}

		// An override can make an unknown name resolve.
		g.SetOverride("new.example", []netip.Addr{netip.MustParseAddr("93.184.216.34")})
		assert.NoError(t, g.CheckURL(ctx, "https://new.example/"))

		// An empty list removes the override: the resolver answers again.
		g.SetOverride("hooks.partner.example", nil)
		assert.NoError(t, g.CheckURL(ctx, "https://hooks.partner.example/"))
		g.SetOverride("new.example", []netip.Addr{})
		assert.ErrorIs(t, g.CheckURL(ctx, "https://new.example/"), netguard.ErrNoAddress)
	}
}

func TestSetOverrideCopiesItsArgument(t *testing.T) {
	g := netguard.New(netguard.Options{Resolver: newResolver(), Dial: noDial(t)})
	addrs := []netip.Addr{netip.MustParseAddr("93.184.216.34")}
	g.SetOverride("x.example", addrs)
	addrs[0] = netip.MustParseAddr("10.0.0.1")
	assert.NoError(t, g.CheckURL(context.Background(), "https://x.example/"))
}

func TestOverridesConcurrent(t *testing.T) {
	g := netguard.New(netguard.Options{AllowLoopback: true, Resolver: newResolver(), Dial: noDial(t)})
	var wg sync.WaitGroup
	for i := range 8 {
		wg.Go(func() {
			for j := range 200 {
				host := fmt.Sprintf("h%d.example", j%5)
				if (i+j)%2 == 0 {
					g.SetOverride(host, []netip.Addr{netip.MustParseAddr("93.184.216.34")})
				} else {
					g.SetOverride(host, nil)
				}
				err := g.CheckURL(context.Background(), "https://"+host+"/")
				if err != nil && !errors.Is(err, netguard.ErrNoAddress) {
					t.Errorf("CheckURL: %v", err)
				}
			}
		})
	}
	wg.Wait()
}

// loopbackServer is a real server on 127.0.0.1 that counts the requests reaching it.
func loopbackServer(t *testing.T) (port string, hits *atomic.Int32) {
	t.Helper()
	hits = new(atomic.Int32)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		hits.Add(1)
		w.WriteHeader(http.StatusNoContent)
	}))
	t.Cleanup(srv.Close)
	u, err := url.Parse(srv.URL)
	require.NoError(t, err)
	require.Equal(t, "127.0.0.1", u.Hostname(), "httptest listens on loopback")
	return u.Port(), hits
}

// loopbackDialer dials for real, but only loopback addresses; it records every address the
// guard asked for. Anything else fails the test without leaving the machine.
type loopbackDialer struct {
	t       *testing.T
	mu      sync.Mutex
	dialled []string
}

func (d *loopbackDialer) dial(ctx context.Context, network, address string) (net.Conn, error) {
	d.mu.Lock()
	d.dialled = append(d.dialled, address)
	d.mu.Unlock()
	ap, err := netip.ParseAddrPort(address)
	if err != nil || !ap.Addr().IsLoopback() {
		d.t.Errorf("guard asked to dial %q, which is not a loopback ip:port", address)
		return nil, errors.New("test: non-loopback dial refused")
	}
	return (&net.Dialer{}).DialContext(ctx, network, address)
}

// asked returns the addresses the guard asked to dial so far.
func (d *loopbackDialer) asked() []string {
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.dialled
}

// dialGuard is a guard on a resolver of its own that dials through a loopbackDialer.
func dialGuard(t *testing.T, allowLoopback bool) (*netguard.Guard, *fakeResolver, *loopbackDialer) {
	d := &loopbackDialer{t: t}
	r := newResolver()
	return netguard.New(netguard.Options{AllowLoopback: allowLoopback, Resolver: r, Dial: d.dial}), r, d
}

func TestDialRefusesRebinding(t *testing.T) {
	port, hits := loopbackServer(t)
	g, r, d := dialGuard(t, false)
	host := "rebind.partner.example"

	// At subscription time the name answers with a public address: the check passes.
	g.SetOverride(host, []netip.Addr{netip.MustParseAddr("93.184.216.34")})
	require.NoError(t, g.CheckURL(context.Background(), "https://"+host+":"+port+"/hook"))

	// Then the answer changes to the loopback address where our server listens.
	g.SetOverride(host, []netip.Addr{netip.MustParseAddr("127.0.0.1")})
	client := &http.Client{Transport: &http.Transport{DialContext: g.DialContext}}
	resp, err := client.Get("http://" + host + ":" + port + "/hook")
	if resp != nil {
		resp.Body.Close()
	}
	require.Error(t, err, "the request must not reach the server")
	assert.ErrorIs(t, err, netguard.ErrNotPublic, "got %v", err)
	assert.Zero(t, hits.Load(), "requests that reached the server")
	assert.Empty(t, d.asked(), "the guard refused before connecting")
	assert.Zero(t, r.queries.Load(), "the overridden name was never looked up")

	// Rebinding to a private address elsewhere is refused the same way, before any connect.
	g.SetOverride(host, []netip.Addr{netip.MustParseAddr("93.184.216.34"), netip.MustParseAddr("10.0.0.7")})
	_, err = g.DialContext(context.Background(), "tcp", host+":"+port)
	assert.ErrorIs(t, err, netguard.ErrNotPublic)
	assert.Empty(t, d.asked())
}

func TestDialConnectsToTheCheckedAddress(t *testing.T) {
	port, hits := loopbackServer(t)
	g, r, d := dialGuard(t, true)
	host := "receiver.partner.example" // not in DNS at all: only the override makes it resolve
	g.SetOverride(host, []netip.Addr{netip.MustParseAddr("127.0.0.1")})

	client := &http.Client{Transport: &http.Transport{DialContext: g.DialContext}}
	resp, err := client.Get("http://" + host + ":" + port + "/hook")
	require.NoError(t, err)
	resp.Body.Close()
	assert.Equal(t, http.StatusNoContent, resp.StatusCode)
	assert.EqualValues(t, 1, hits.Load())
	assert.Equal(t, []string{"127.0.0.1:" + port}, d.asked())
	assert.Zero(t, r.queries.Load())
}

func TestDialFamiliesAndFallback(t *testing.T) {
	ctx := context.Background()
	var dialled []string
	failFirst := func(_ context.Context, _, address string) (net.Conn, error) {
		dialled = append(dialled, address)
		if len(dialled) == 1 {
			return nil, errors.New("connection refused")
		}
		c1, c2 := net.Pipe()
		c2.Close()
		return c1, nil
	}
	g := netguard.New(netguard.Options{AllowLoopback: true, Resolver: newResolver(), Dial: failFirst})
	g.SetOverride("two.example", []netip.Addr{netip.MustParseAddr("::1"), netip.MustParseAddr("::ffff:127.0.0.1")})

	conn, err := g.DialContext(ctx, "tcp", "two.example:8080")
	require.NoError(t, err)
	conn.Close()
	assert.Equal(t, []string{"[::1]:8080", "127.0.0.1:8080"}, dialled, "tries each checked address in order, mapped ones unmapped")

	dialled = []string{"(pretend a first attempt failed)"}
	conn, err = g.DialContext(ctx, "tcp4", "two.example:8080")
	require.NoError(t, err)
	conn.Close()
	assert.Equal(t, []string{"(pretend a first attempt failed)", "127.0.0.1:8080"}, dialled, "tcp4 dials only IPv4")

	dialled = []string{"(pretend a first attempt failed)"}
	conn, err = g.DialContext(ctx, "tcp6", "[::1]:8080")
	require.NoError(t, err)
	conn.Close()
	assert.Equal(t, []string{"(pretend a first attempt failed)", "[::1]:8080"}, dialled)

	_, err = g.DialContext(ctx, "tcp6", "127.0.0.1:8080")
	assert.ErrorContains(t, err, "no tcp6 address")
	_, err = g.DialContext(ctx, "udp", "two.example:53")
	assert.ErrorContains(t, err, "unsupported network")
	_, err = g.DialContext(ctx, "tcp", "two.example")
	assert.Error(t, err)
	_, err = g.DialContext(ctx, "tcp", "nxdomain.example:443")
	var dnsErr *net.DNSError
	assert.ErrorAs(t, err, &dnsErr)
}

// An IPv6 address that embeds a loopback or private IPv4 address is refused at check and at
// dial time alike, loopback callbacks allowed or not, as a literal or behind a name (decisions
// D18): the one rule is IsPublic's.
func TestEmbeddedIPv4IsRefusedEverywhere(t *testing.T) {
	embeds := []string{"2002:7f00:1::", "::127.0.0.1", "2002:c0a8:101::", "64:ff9b::a9fe:a9fe", "64:ff9b:1:a00:0:100::",
		"2001:0:4136:e378:8000:63bf:80ff:fffe", "::ffff:10.0.0.1"}
	for _, loopback := range []bool{false, true} {
		g, _, d := dialGuard(t, loopback)
		for _, ip := range embeds {
			assert.ErrorIs(t, g.CheckURL(context.Background(), "https://["+ip+"]/h"), netguard.ErrNotPublic, "literal %s (loopback %v)", ip, loopback)
			g.SetOverride("embed.partner.example", []netip.Addr{netip.MustParseAddr(ip)})
			assert.ErrorIs(t, g.CheckURL(context.Background(), "https://embed.partner.example/h"), netguard.ErrNotPublic, "name -> %s", ip)
			_, err := g.DialContext(context.Background(), "tcp", "embed.partner.example:443")
			assert.ErrorIs(t, err, netguard.ErrNotPublic, "dial name -> %s", ip)
			_, err = g.DialContext(context.Background(), "tcp", "["+ip+"]:443")
			assert.ErrorIs(t, err, netguard.ErrNotPublic, "dial %s", ip)
		}
		assert.Empty(t, d.asked(), "nothing was dialled")
	}
}

// DNS overrides take host names only (decisions D18): not an IPv4 address in any spelling a
// resolver reads as one (127.1, 2130706433, 0x7f.1, 0177.0.0.1), and not localhost or a name
// under it (RFC 6761 keeps them off DNS).
func TestOverrideHostRefusesNumbersAndLocalhost(t *testing.T) {
	for _, h := range []string{"127.1", "2130706433", "0x7f.1", "0x7f000001", "0177.0.0.1", "127.0.0.1", "10.1", "1.2.3.4.",
		"localhost", "LocalHost.", "app.localhost", "9", "0x1"} {
		_, err := netguard.OverrideHost(h)
		assert.ErrorIs(t, err, netguard.ErrNotHostName, "OverrideHost(%q)", h)
	}
	for _, h := range []string{"hooks.example", "1.example", "example.123x", "0x7f.example", "123.example.com", "a1", "x--y.test"} {
		_, err := netguard.OverrideHost(h)
		assert.NoError(t, err, "OverrideHost(%q)", h)
	}
}
