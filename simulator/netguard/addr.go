package netguard

import "net/netip"

// The tables below are read-only after package initialisation.

// nonPublic4 are the blocks of IANA's IPv4 special-purpose registry that are not globally
// reachable (the more specific reachable ones inside 192.0.0.0/24 are refused with it), and
// multicast (decisions D8, D18).
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

// verdict is how an IPv6 block of special6 judges an address in it.
type verdict uint8

const (
	refused   verdict = iota // not globally reachable (decisions D18)
	reachable                // globally reachable, though inside a refused block
	embeds                   // judged by the IPv4 address(es) it embeds
)

// special6 are the blocks of IANA's IPv6 special-purpose registry (and multicast, in a registry
// of its own), most specific first so that the first block holding an address decides
// (decisions D18): a block the registry calls not globally reachable is refused, a globally
// reachable block inside one is not, and a block whose addresses embed an IPv4 address is
// judged by that address, as a connection to it may end up there. The registry's CSVs are kept
// in testdata, and TestSpecialPurposeRegistriesAreRefused checks this table against them.
var special6 = [...]struct {
	block netip.Prefix
	is    verdict
}{
	{netip.MustParsePrefix("::/128"), refused},            // unspecified
	{netip.MustParsePrefix("::1/128"), refused},           // loopback
	{netip.MustParsePrefix("2001:1::1/128"), reachable},   // PCP anycast
	{netip.MustParsePrefix("2001:1::2/128"), reachable},   // TURN anycast
	{netip.MustParsePrefix("2001:1::3/128"), reachable},   // DNS-SD SRP anycast
	{netip.MustParsePrefix("::ffff:0:0:0/96"), embeds},    // IPv4-translated (RFC 2765): the low 32 bits
	{netip.MustParsePrefix("64:ff9b::/96"), embeds},       // NAT64 well-known prefix (RFC 6052): the low 32 bits
	{netip.MustParsePrefix("::/96"), embeds},              // IPv4-compatible (RFC 4291, deprecated): the low 32 bits
	{netip.MustParsePrefix("100::/64"), refused},          // discard-only
	{netip.MustParsePrefix("100:0:0:1::/64"), refused},    // dummy prefix
	{netip.MustParsePrefix("64:ff9b:1::/48"), refused},    // NAT64 local use (RFC 8215): an operator's own translator
	{netip.MustParsePrefix("2001:2::/48"), refused},       // benchmarking
	{netip.MustParsePrefix("2001:4:112::/48"), reachable}, // AS112
	{netip.MustParsePrefix("2001::/32"), embeds},          // Teredo (RFC 4380): server in bits 32-63, client inverted in the low 32
	{netip.MustParsePrefix("2001:3::/32"), reachable},     // AMT
	{netip.MustParsePrefix("2001:db8::/32"), refused},     // documentation
	{netip.MustParsePrefix("2001:10::/28"), refused},      // deprecated ORCHID
	{netip.MustParsePrefix("2001:20::/28"), reachable},    // ORCHIDv2
	{netip.MustParsePrefix("2001:30::/28"), reachable},    // drone remote ID
	{netip.MustParsePrefix("2001::/23"), refused},         // IETF protocol assignments
	{netip.MustParsePrefix("3fff::/20"), refused},         // documentation
	{netip.MustParsePrefix("2002::/16"), embeds},          // 6to4 (RFC 3056): bits 16-47
	{netip.MustParsePrefix("5f00::/16"), refused},         // SRv6 SIDs
	{netip.MustParsePrefix("fe80::/10"), refused},         // link-local
	{netip.MustParsePrefix("ff00::/8"), refused},          // multicast
	{netip.MustParsePrefix("fc00::/7"), refused},          // unique local
}

// IsPublic reports whether ip lies outside every special-purpose range that is not globally
// reachable (decisions D8, D18). An address that embeds IPv4 — IPv4-mapped (::ffff:0:0/96),
// IPv4-translated (::ffff:0:0:0/96), IPv4-compatible (::/96), 6to4 (2002::/16), NAT64
// (64:ff9b::/96) or Teredo (2001::/32) — is judged by every IPv4 address it embeds. The zero
// Addr and any address carrying an IPv6 zone (which only scoped, link-local addresses need) are
// never public.
func IsPublic(ip netip.Addr) bool {
	if !ip.IsValid() || ip.Zone() != "" {
		return false
	}
	if ip.Is4() || ip.Is4In6() {
		return !inAny(ip.Unmap(), nonPublic4[:])
	}
	for _, s := range special6 {
		if !s.block.Contains(ip) {
			continue
		}
		switch s.is {
		case refused:
			return false
		case reachable:
			return true
		}
		for _, a := range embedded(s.block, ip) {
			if a.IsValid() && inAny(a, nonPublic4[:]) {
				return false
			}
		}
		return true
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

// embedded returns the IPv4 addresses an address of an embedding block of special6 stands
// for: both of a Teredo address, one (the second invalid) of any other.
func embedded(block netip.Prefix, ip netip.Addr) [2]netip.Addr {
	b := ip.As16()
	low := netip.AddrFrom4([4]byte(b[12:]))
	switch block.Bits() {
	case 16: // 6to4
		return [2]netip.Addr{netip.AddrFrom4([4]byte(b[2:6]))}
	case 32: // Teredo
		client := netip.AddrFrom4([4]byte{^b[12], ^b[13], ^b[14], ^b[15]})
		return [2]netip.Addr{netip.AddrFrom4([4]byte(b[4:8])), client}
	}
	return [2]netip.Addr{low}
}

// IsLoopback reports whether ip reaches this machine's own loopback interface: 127.0.0.0/8,
// ::1, or 127.0.0.0/8 in IPv4-mapped form. Any other form embedding 127.x (NAT64, 6to4,
// Teredo, IPv4-compatible) is not loopback — a connection to it goes to a translator or relay
// elsewhere — and not public either, so it is refused under every setting.
func IsLoopback(ip netip.Addr) bool {
	return ip.IsValid() && ip.Zone() == "" && ip.Unmap().IsLoopback()
}
