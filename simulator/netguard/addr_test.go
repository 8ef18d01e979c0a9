package netguard_test

import (
	"net/netip"
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/partnersim/partnersim/simulator/netguard"
)

func TestIsPublic(t *testing.T) {
	notPublic := []string{
		// IPv4, both edges of every range D8 lists (and a well-known member).
		"0.0.0.0", "0.255.255.255",
		"10.0.0.0", "10.255.255.255",
		"100.64.0.0", "100.127.255.255",
		"127.0.0.0", "127.0.0.1", "127.255.255.255",
		"169.254.0.0", "169.254.169.254", "169.254.255.255",
		"172.16.0.0", "172.31.255.255",
		"192.0.0.0", "192.0.0.255",
		"192.0.2.0", "192.0.2.255",
		"192.88.99.0", "192.88.99.255",
		"192.168.0.0", "192.168.255.255",
		"198.18.0.0", "198.19.255.255",
		"198.51.100.0", "198.51.100.255",
		"203.0.113.0", "203.0.113.255",
		"224.0.0.0", "239.255.255.255",
		"240.0.0.0", "255.255.255.255",
		// IPv6.
		"::", "::1",
		"fc00::", "fdff:ffff:ffff:ffff:ffff:ffff:ffff:ffff",
		"fe80::", "fe80::1", "febf:ffff:ffff:ffff:ffff:ffff:ffff:ffff",
		"ff00::", "ff02::1", "ffff:ffff:ffff:ffff:ffff:ffff:ffff:ffff",
		"2001:db8::", "2001:db8:ffff:ffff:ffff:ffff:ffff:ffff",
		"100::", "100::ffff:ffff:ffff:ffff",
		// IPv4-mapped and NAT64 forms, judged by the IPv4 inside.
		"::ffff:0.0.0.0", "::ffff:10.0.0.1", "::ffff:127.0.0.1", "::ffff:169.254.169.254", "::ffff:255.255.255.255",
		"64:ff9b::10.0.0.1", "64:ff9b::127.0.0.1", "64:ff9b::192.168.1.1", "64:ff9b::224.0.0.1",
		// Every other IPv6 form that embeds an IPv4 address, judged by it (decisions D18).
		// IPv4-compatible (::/96, deprecated but still parsed and routed by some stacks).
		"::127.0.0.1", "::10.0.0.1", "::169.254.169.254", "::192.168.0.1",
		// 6to4 (2002::/16): the IPv4 address is bits 16-47.
		"2002:7f00:1::", "2002:7f00:1::1", "2002:a00:1::", "2002:c0a8:101::", "2002:a9fe:a9fe::", "2002:ac10::",
		// NAT64 local-use (64:ff9b:1::/48), at the /48 position (bits 48-63 and 72-87) and at the
		// /96 one an operator may use inside it.
		"64:ff9b:1:7f00:0:100::", "64:ff9b:1:a00:0:100::", "64:ff9b:1::a00:1", "64:ff9b:1::7f00:1", "64:ff9b:1:808:8:800:a00:1",
		// Teredo (2001::/32): the server's IPv4 in bits 32-63, the client's inverted in the last 32.
		"2001:0:4136:e378:8000:63bf:80ff:fffe", // client 127.0.0.1 behind a public server
		"2001:0:4136:e378:8000:63bf:f5ff:fffe", // client 10.0.0.1
		"2001:0:a00:1:8000:63bf:f7f7:f7f7",     // server 10.0.0.1, client 8.8.8.8
		// IPv4-translated (::ffff:0:0:0/96, RFC 2765 SIIT): the low 32 bits.
		"::ffff:0:7f00:1", "::ffff:0:a9fe:a9fe", "::ffff:0:a00:1", "::ffff:0:0:0",
		// The registry's newer blocks (decisions D18, second pass), and the local-use NAT64
		// prefix, which the registry calls not globally reachable whatever it embeds.
		"3fff::1", "3fff:fff:ffff::1", "5f00::1", "2001:2::1", "2001:10::1", "100:0:0:1::", "2001:1::4", "2001:1ff::1",
		"64:ff9b:1:808:8:800:808:808",
		// A zone only scopes link-local addresses: never public.
		"fe80::1%eth0", "2606:4700::1%eth0",
	}
	public := []string{
		// The neighbours just outside each IPv4 range.
		"1.0.0.0", "9.255.255.255", "11.0.0.0",
		"100.63.255.255", "100.128.0.0",
		"126.255.255.255", "128.0.0.0",
		"169.253.255.255", "169.255.0.0",
		"172.15.255.255", "172.32.0.0",
		"191.255.255.255", "192.0.1.0", "192.0.3.0",
		"192.88.98.255", "192.88.100.0",
		"192.167.255.255", "192.169.0.0",
		"198.17.255.255", "198.20.0.0",
		"198.51.99.255", "198.51.101.0",
		"203.0.112.255", "203.0.114.0",
		"223.255.255.255",
		// Ordinary public addresses.
		"8.8.8.8", "1.1.1.1", "93.184.216.34",
		"2606:4700:4700::1111", "2001:4860:4860::8888",
		// The neighbours of the IPv6 ranges.
		"fbff:ffff:ffff:ffff:ffff:ffff:ffff:ffff", "2001:db7:ffff:ffff:ffff:ffff:ffff:ffff", "2001:db9::",
		"100:0:0:2::", "fec0::", "3fff:1000::", "5eff:ffff::1", "5f01::",
		// Globally reachable blocks inside 2001::/23.
		"2001:1::1", "2001:3::1", "2001:4:112::1", "2001:20::1", "2001:30::1",
		// Embedded public IPv4; and just outside the NAT64 /96.
		"::ffff:8.8.8.8", "64:ff9b::8.8.8.8", "::8.8.8.8", "2002:808:808::", "2002:808:808:1::1",
		"::ffff:0:808:808", "2001:0:4136:e378:8000:63bf:f7f7:f7f7",
	}
	for _, s := range notPublic {
		ip := netip.MustParseAddr(s)
		assert.False(t, netguard.IsPublic(ip), "IsPublic(%s): got true, want false", s)
	}
	for _, s := range public {
		ip := netip.MustParseAddr(s)
		assert.True(t, netguard.IsPublic(ip), "IsPublic(%s): got false, want true", s)
	}
	assert.False(t, netguard.IsPublic(netip.Addr{}), "the zero Addr is not public")
}

func TestIsLoopback(t *testing.T) {
	for s, want := range map[string]bool{
		"127.0.0.1": true, "127.0.0.0": true, "127.255.255.255": true, "::1": true, "::ffff:127.0.0.1": true,
		"128.0.0.1": false, "10.0.0.1": false, "::": false, "::2": false, "8.8.8.8": false,
		"64:ff9b::127.0.0.1": false,                                                                        // names a NAT64 translator, not this machine
		"::127.0.0.1":        false, "2002:7f00:1::": false, "2001:0:4136:e378:8000:63bf:80ff:fffe": false, // likewise
	} {
		assert.Equal(t, want, netguard.IsLoopback(netip.MustParseAddr(s)), "IsLoopback(%s)", s)
	}
	assert.False(t, netguard.IsLoopback(netip.Addr{}))
}
