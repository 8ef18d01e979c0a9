package netguard_test

import (
	"context"
	"encoding/csv"
	"errors"
	"net/netip"
	"os"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/partnersim/partnersim/simulator/netguard"
)

// registryRow is one address block of an IANA special-purpose registry and its "Globally
// Reachable" cell, footnote marks removed ("False", "True", "N/A" or "" for a terminated block).
type registryRow struct {
	block     netip.Prefix
	name      string
	reachable string
}

// readRegistry reads a registry as IANA publishes it (testdata holds the CSVs of
// https://www.iana.org/assignments/iana-ipv4-special-registry/ and …/iana-ipv6-special-registry/):
// a cell may hold two blocks, a block or flag may carry a footnote mark ("192.0.0.0/24 [2]",
// "False [1]"), and a quoted cell may break across lines.
func readRegistry(t *testing.T, path string) []registryRow {
	t.Helper()
	f, err := os.Open(path)
	require.NoError(t, err)
	defer f.Close()
	records, err := csv.NewReader(f).ReadAll()
	require.NoError(t, err)
	require.Equal(t, "Globally Reachable", records[0][8], "the registry's columns")
	noMark := func(s string) string {
		if i := strings.IndexByte(s, '['); i >= 0 {
			s = s[:i]
		}
		return strings.TrimSpace(s)
	}
	var rows []registryRow
	for _, r := range records[1:] {
		for _, b := range strings.Split(r[0], ",") {
			rows = append(rows, registryRow{block: netip.MustParsePrefix(noMark(b)), name: r[1], reachable: noMark(r[8])})
		}
	}
	return rows
}

// lastAddr is the highest address of p.
func lastAddr(p netip.Prefix) netip.Addr {
	b := p.Masked().Addr().AsSlice()
	for i := p.Bits(); i < len(b)*8; i++ {
		b[i/8] |= 0x80 >> (i % 8)
	}
	a, _ := netip.AddrFromSlice(b)
	return a
}

// midAddr is an address inside p with its host bits a fixed pattern (0x5a…).
func midAddr(p netip.Prefix) netip.Addr {
	b := p.Masked().Addr().AsSlice()
	for i := p.Bits(); i < len(b)*8; i++ {
		if 0x5a&(0x80>>(i%8)) != 0 {
			b[i/8] |= 0x80 >> (i % 8)
		}
	}
	a, _ := netip.AddrFromSlice(b)
	return a
}

// Every block of IANA's IPv4 and IPv6 special-purpose registries that is not globally
// reachable is refused beyond loopback (decisions D18): its first, last and a middle address,
// where no more specific block the registry calls globally reachable holds them. A block whose
// reachability depends on the IPv4 address it embeds (IPv4-mapped, 6to4, Teredo; "N/A" in the
// registry) is checked at its first and last address, which embed 0.0.0.0 and
// 255.255.255.255; its middle is the embedded address's (TestIsPublic).
func TestSpecialPurposeRegistriesAreRefused(t *testing.T) {
	embeds := map[string]bool{"::ffff:0.0.0.0/96": true, "2002::/16": true, "2001::/32": true}
	guard := netguard.New(netguard.Options{Resolver: newResolver(), Dial: noDial(t)})
	for _, file := range []string{"testdata/iana-ipv4-special-registry-1.csv", "testdata/iana-ipv6-special-registry-1.csv"} {
		rows := readRegistry(t, file)
		require.Greater(t, len(rows), 20, file)
		for _, r := range rows {
			if r.reachable == "True" {
				continue
			}
			addrs := []netip.Addr{r.block.Addr(), lastAddr(r.block)}
			if !embeds[r.block.String()] {
				addrs = append(addrs, midAddr(r.block))
			}
			for _, a := range addrs {
				if heldByReachable(rows, r.block, a) {
					continue
				}
				assert.False(t, netguard.IsPublic(a), "%s (%s, %s, globally reachable %q): IsPublic(%s) = true, want false", file, r.block, r.name, r.reachable, a)
				u := "https://" + a.String() + "/hook"
				if a.Is6() {
					u = "https://[" + a.String() + "]/hook"
				}
				err := guard.CheckURL(context.Background(), u)
				assert.True(t, errors.Is(err, netguard.ErrNotPublic), "beyond loopback, %s (%s): got %v, want ErrNotPublic", u, r.name, err)
			}
		}
	}
}

// heldByReachable reports whether a lies in a block more specific than within that the
// registry calls globally reachable (2001:20::/28 inside 2001::/23).
func heldByReachable(rows []registryRow, within netip.Prefix, a netip.Addr) bool {
	for _, r := range rows {
		if r.reachable == "True" && r.block.Bits() > within.Bits() && r.block.Contains(a) {
			return true
		}
	}
	return false
}
