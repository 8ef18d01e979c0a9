package netguard

import "net/netip"

// The tables below are read-only after package initialisation.

// nonPublic4 are IANA's special-purpose IPv4 ranges that decisions D8 lists; nothing else.
var nonPublic4 = [...]netip.Prefix{
	netip.MustParsePrefix("0.0.0.0/8"),       // "this network"
	netip.MustParsePrefix("10.0.0.0/8"),      // private
	netip.MustParsePrefix("100.64.0.0/10"),   // shared address space (CGNAT)
	netip.MustParsePrefix("127.0.0.0/8"),     // loopback
	netip.MustParsePrefix("169.254.0.0/16"),  // link-local (cloud metadata lives here)
	netip.MustParsePrefix("172.16.0.0/12"),   // private
	netip.MustParsePrefix("192.0.0.0/24"),    // IETF protocol assignments
	netip.MustParsePrefix("192.0.2.0/24"),    // TEST-NET-1
	netip.MustParsePrefix("192.88.99.0/24"),  // 6to4 relay anycast
	netip.MustParsePrefix("192.168.0.0/16"),  // private
	netip.MustParsePrefix("198.18.0.0/15"),   // benchmarking
	netip.MustParsePrefix("198.51.100.0/24"), // TEST-NET-2
	netip.MustParsePrefix("203.0.113.0/24"),  // TEST-NET-3
	netip.MustParsePrefix("224.0.0.0/4"),     // multicast
	netip.MustParsePrefix("240.0.0.0/4"),     // reserved, broadcast included
}

// nonPublic6 are the IPv6 ranges decisions D8 lists, apart from the two embedding IPv4 (judged
// by the embedded address instead).
var nonPublic6 = [...]netip.Prefix{
	netip.MustParsePrefix("::/128"),        // unspecified
	netip.MustParsePrefix("::1/128"),       // loopback
	netip.MustParsePrefix("fc00::/7"),      // unique local
	netip.MustParsePrefix("fe80::/10"),     // link-local
	netip.MustParsePrefix("ff00::/8"),      // multicast
	netip.MustParsePrefix("2001:db8::/32"), // documentation
	netip.MustParsePrefix("100::/64"),      // discard-only
}

// The IPv6 ranges whose addresses embed an IPv4 address (decisions D18): an address in one is
// judged by the IPv4 address(es) inside, as a connection to it may end up there.
var (
	// nat64 is the well-known NAT64 prefix (RFC 6052): the low 32 bits are an IPv4 address the
	// translator will connect to.
	nat64 = netip.MustParsePrefix("64:ff9b::/96")
	// nat64Local is the local-use NAT64 prefix (RFC 8215); an operator may use it as a /48 (the
	// IPv4 address in bits 48-63 and 72-87) or carve a /96 from it (the low 32 bits): both are
	// judged.
	nat64Local = netip.MustParsePrefix("64:ff9b:1::/48")
	// sixToFour is 6to4 (RFC 3056): bits 16-47 are the IPv4 address of the site's router.
	sixToFour = netip.MustParsePrefix("2002::/16")
	// teredo is Teredo (RFC 4380): bits 32-63 are the server's IPv4 address, the low 32 bits the
	// client's, inverted.
	teredo = netip.MustParsePrefix("2001::/32")
	// compat is IPv4-compatible IPv6 (RFC 4291, deprecated): the low 32 bits are an IPv4 address.
	compat = netip.MustParsePrefix("::/96")
)

// IsPublic reports whether ip lies outside every special-purpose range decisions D8 lists. An
// address that embeds IPv4 — IPv4-mapped (::ffff:0:0/96), IPv4-compatible (::/96), 6to4
// (2002::/16), NAT64 (64:ff9b::/96, 64:ff9b:1::/48) or Teredo (2001::/32) — is judged by
// every IPv4 address it embeds (decisions D18). The zero Addr and any address carrying an
// IPv6 zone (which only scoped, link-local addresses need) are never public.
func IsPublic(ip netip.Addr) bool {
	if !ip.IsValid() || ip.Zone() != "" {
		return false
	}
	v4, n := embedded(ip)
	if n == 0 {
		return !inAny(ip, nonPublic6[:])
	}
	for _, a := range v4[:n] {
		if inAny(a, nonPublic4[:]) {
			return false
		}
	}
	return true
}

func inAny(ip netip.Addr, ranges []netip.Prefix) bool {
	for _, p := range ranges {
		if p.Contains(ip) {
			return true
		}
	}
	return false
}

// embedded returns the IPv4 addresses ip stands for: ip itself when it is IPv4, the address
// inside an IPv4-mapped, IPv4-compatible, 6to4 or NAT64 address, both of a Teredo address or
// of a local-use NAT64 one (n = 2); n = 0 for any other IPv6 address.
func embedded(ip netip.Addr) (v4 [2]netip.Addr, n int) {
	if ip.Is4() || ip.Is4In6() {
		return [2]netip.Addr{ip.Unmap()}, 1
	}
	b := ip.As16()
	low := netip.AddrFrom4([4]byte(b[12:]))
	switch {
	case compat.Contains(ip), nat64.Contains(ip):
		return [2]netip.Addr{low}, 1
	case nat64Local.Contains(ip):
		return [2]netip.Addr{netip.AddrFrom4([4]byte{b[6], b[7], b[9], b[10]}), low}, 2
	case sixToFour.Contains(ip):
		return [2]netip.Addr{netip.AddrFrom4([4]byte(b[2:6]))}, 1
	case teredo.Contains(ip):
		client := netip.AddrFrom4([4]byte{^b[12], ^b[13], ^b[14], ^b[15]})
		return [2]netip.Addr{netip.AddrFrom4([4]byte(b[4:8])), client}, 2
	}
	return v4, 0
}

// IsLoopback reports whether ip reaches this machine's own loopback interface: 127.0.0.0/8,
// ::1, or 127.0.0.0/8 in IPv4-mapped form. Any other form embedding 127.x (NAT64, 6to4,
// Teredo, IPv4-compatible) is not loopback — a connection to it goes to a translator or relay
// elsewhere — and not public either, so it is refused under every setting.
func IsLoopback(ip netip.Addr) bool {
	return ip.IsValid() && ip.Zone() == "" && ip.Unmap().IsLoopback()
}
