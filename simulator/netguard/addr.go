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

// nat64 is the well-known NAT64 prefix (RFC 6052): the low 32 bits are an IPv4 address the
// translator will connect to.
var nat64 = netip.MustParsePrefix("64:ff9b::/96")

// IsPublic reports whether ip lies outside every special-purpose range decisions D8 lists. An
// IPv4-mapped (::ffff:0:0/96) or NAT64-translated (64:ff9b::/96) address is judged by the IPv4
// address it embeds. The zero Addr and any address carrying an IPv6 zone (which only scoped,
// link-local addresses need) are never public.
func IsPublic(ip netip.Addr) bool {
	if !ip.IsValid() || ip.Zone() != "" {
		return false
	}
	ip = embedded(ip)
	ranges := nonPublic6[:]
	if ip.Is4() {
		ranges = nonPublic4[:]
	}
	for _, p := range ranges {
		if p.Contains(ip) {
			return false
		}
	}
	return true
}

// embedded returns the IPv4 address inside an IPv4-mapped or NAT64 address, else ip.
func embedded(ip netip.Addr) netip.Addr {
	if ip.Is4In6() {
		return ip.Unmap()
	}
	if nat64.Contains(ip) {
		b := ip.As16()
		return netip.AddrFrom4([4]byte(b[12:]))
	}
	return ip
}

// IsLoopback reports whether ip reaches this machine's own loopback interface: 127.0.0.0/8,
// ::1, or 127.0.0.0/8 in IPv4-mapped form. A NAT64 form of 127.x is not loopback (it names a
// translator elsewhere) and not public either, so it is refused under every setting.
func IsLoopback(ip netip.Addr) bool {
	return ip.IsValid() && ip.Zone() == "" && ip.Unmap().IsLoopback()
}
