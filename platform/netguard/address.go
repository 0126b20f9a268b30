package netguard

import (
	"net/netip"
	"strconv"
	"strings"
)

// refusedPrefixes are the networks that are not the public internet.
var refusedPrefixes = []netip.Prefix{
	netip.MustParsePrefix("0.0.0.0/8"),      // "this network"; 0.0.0.0 reaches the local host
	netip.MustParsePrefix("10.0.0.0/8"),     // private
	netip.MustParsePrefix("100.64.0.0/10"),  // carrier-grade NAT, also some clouds' metadata (100.100.100.200)
	netip.MustParsePrefix("127.0.0.0/8"),    // loopback
	netip.MustParsePrefix("169.254.0.0/16"), // link-local, the cloud metadata service at 169.254.169.254
	netip.MustParsePrefix("172.16.0.0/12"),  // private
	netip.MustParsePrefix("192.0.0.0/24"),   // IETF protocol assignments
	netip.MustParsePrefix("192.168.0.0/16"), // private
	netip.MustParsePrefix("198.18.0.0/15"),  // benchmarking, used inside some data centres
	netip.MustParsePrefix("224.0.0.0/4"),    // multicast
	netip.MustParsePrefix("240.0.0.0/4"),    // reserved, and the broadcast address
	netip.MustParsePrefix("::/96"),          // unspecified, loopback and the deprecated IPv4-compatible forms
	netip.MustParsePrefix("64:ff9b:1::/48"), // local-use NAT64
	netip.MustParsePrefix("fc00::/7"),       // unique-local
	netip.MustParsePrefix("fe80::/10"),      // link-local
	netip.MustParsePrefix("fec0::/10"),      // deprecated site-local
	netip.MustParsePrefix("ff00::/8"),       // multicast
}

// Prefixes whose addresses carry an IPv4 address that the traffic ends up
// at: well-known NAT64 (the last 32 bits) and 6to4 (bits 16 to 48).
var (
	nat64Prefix = netip.MustParsePrefix("64:ff9b::/96")
	sixToFour   = netip.MustParsePrefix("2002::/16")
)

// Private reports whether a is outside the public internet, in any of its
// spellings (IPv4-mapped IPv6, NAT64, 6to4, with a zone). An invalid
// address is private: nothing is known to be public about it.
func Private(a netip.Addr) bool {
	a = a.WithZone("").Unmap()
	if !a.IsValid() {
		return true
	}
	switch {
	case nat64Prefix.Contains(a):
		b := a.As16()
		return Private(netip.AddrFrom4([4]byte{b[12], b[13], b[14], b[15]}))
	case sixToFour.Contains(a):
		b := a.As16()
		return Private(netip.AddrFrom4([4]byte{b[2], b[3], b[4], b[5]}))
	}
	for _, p := range refusedPrefixes {
		if p.Contains(a) {
			return true
		}
	}
	return false
}

// LocalhostName reports whether host is a name that always means this
// machine (RFC 6761), whatever DNS says.
func LocalhostName(host string) bool {
	host = strings.TrimSuffix(strings.ToLower(host), ".")
	return host == "localhost" || strings.HasSuffix(host, ".localhost")
}

// ParseLegacyIPv4 reads the numeric host forms inet_aton accepts besides
// the dotted quad: 2130706433, 0x7f000001, 0x7f.1, 0177.0.0.1, 127.1. Go's
// URL parser keeps them as names, and a C resolver turns them into
// addresses.
func ParseLegacyIPv4(host string) (netip.Addr, bool) {
	parts := strings.Split(host, ".")
	if len(parts) > 4 {
		return netip.Addr{}, false
	}
	vals := make([]uint64, len(parts))
	for i, p := range parts {
		base := 10
		switch {
		case len(p) > 2 && (p[:2] == "0x" || p[:2] == "0X"):
			base, p = 16, p[2:]
		case len(p) > 1 && p[0] == '0':
			base, p = 8, p[1:]
		}
		v, err := strconv.ParseUint(p, base, 32)
		if err != nil {
			return netip.Addr{}, false
		}
		vals[i] = v
	}
	var n uint64
	for i, v := range vals[:len(vals)-1] {
		if v > 255 {
			return netip.Addr{}, false
		}
		n |= v << (8 * (3 - i))
	}
	last := vals[len(vals)-1]
	if last >= 1<<(8*(5-len(vals))) {
		return netip.Addr{}, false
	}
	n |= last
	return netip.AddrFrom4([4]byte{byte(n >> 24), byte(n >> 16), byte(n >> 8), byte(n)}), true //nolint:gosec // G115: the four bytes of n, which the checks above keep within 32 bits
}
