package web

import (
	"context"
	"net"
	"net/netip"
)

// This file is compiled into the package's test binary only, so nothing a
// deployment configures can reach these hooks.

// MarkPublic makes f take addr ("127.0.0.1:8080") for a public address, so
// that a test server on loopback stands for a site on the internet while
// every other private address, the same IP on another port included, stays
// refused.
func MarkPublic(f *Fetcher, addr string) {
	ap := netip.MustParseAddrPort(addr)
	exempt := f.guard.Exempt
	f.guard.Exempt = func(a netip.AddrPort) bool { return a == ap || (exempt != nil && exempt(a)) }
}

// SetHosts makes f resolve names from hosts instead of DNS; a name not in
// hosts does not resolve.
func SetHosts(f *Fetcher, hosts map[string][]string) {
	f.guard.Lookup = func(_ context.Context, host string) ([]netip.Addr, error) {
		addrs, ok := hosts[host]
		if !ok {
			return nil, &net.DNSError{Err: "no such host", Name: host, IsNotFound: true}
		}
		var ips []netip.Addr
		for _, a := range addrs {
			ips = append(ips, netip.MustParseAddr(a))
		}
		return ips, nil
	}
}
