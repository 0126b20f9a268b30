package netguard

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/netip"
	"net/url"
	"strconv"
	"syscall"
	"time"

	"github.com/atrium-hq/atrium/platform/apperr"
	"github.com/atrium-hq/atrium/platform/value"
)

// Guard applies the rule to the requests of one component. The zero value
// refuses every private address and resolves names with the system's
// resolver. It is safe for concurrent use once set up.
type Guard struct {
	// AllowPrivate lets requests reach private addresses, for local
	// testing only (the actions service's --allow-private-fetch).
	AllowPrivate bool
	// DialTimeout bounds each connection attempt; 0 is none beyond the
	// context's.
	DialTimeout time.Duration
	// Lookup resolves a name; nil is net.DefaultResolver.
	Lookup func(ctx context.Context, host string) ([]netip.Addr, error)
	// Exempt, when set, lets through the private addresses it is true for:
	// a test stands a loopback server for a site on the internet with it.
	// Nothing a deployment configures sets it.
	Exempt func(netip.AddrPort) bool
}

// Refused reports whether a request must not connect to ap.
func (g *Guard) Refused(ap netip.AddrPort) bool {
	return !g.AllowPrivate && Private(ap.Addr()) && (g.Exempt == nil || !g.Exempt(ap))
}

// URLError says why a request may not be sent to a URL. Private marks the
// refusals of private addresses, as against URLs that are not valid.
type URLError struct {
	Reason  string
	Private bool
}

func (e *URLError) Error() string { return e.Reason }

func privateHost(host string) *URLError {
	return &URLError{Private: true, Reason: "host " + host + " is a private network address"}
}

// CheckURL checks raw before anything is sent: an absolute http or https
// URL by value's URL rule whose host is not localhost nor a private
// address literal in any spelling. A host in a legacy numeric form
// (2130706433) is refused even where private addresses are allowed,
// asking for the dotted quad: resolvers disagree about what it means. A
// name that resolves to a private address passes here; DialContext
// refuses it. The error is a *URLError.
func (g *Guard) CheckURL(raw string) (*url.URL, error) {
	u, why := value.ParseURL(raw, 0)
	if why != "" {
		return nil, &URLError{Reason: why}
	}
	host := u.Hostname()
	if ip, err := netip.ParseAddr(host); err == nil {
		if g.Refused(netip.AddrPortFrom(ip, port(u))) {
			return nil, privateHost(host)
		}
		return u, nil
	}
	if ip, ok := ParseLegacyIPv4(host); ok {
		if g.Refused(netip.AddrPortFrom(ip, port(u))) {
			return nil, privateHost(host)
		}
		return nil, &URLError{Reason: fmt.Sprintf("host %s is a numeric address in a non-standard form; write it as %s", host, ip)}
	}
	if !g.AllowPrivate && LocalhostName(host) {
		return nil, privateHost(host)
	}
	return u, nil
}

// port is u's port, or its scheme's.
func port(u *url.URL) uint16 {
	if p, err := strconv.ParseUint(u.Port(), 10, 16); err == nil {
		return uint16(p)
	}
	if u.Scheme == "https" {
		return 443
	}
	return 80
}

// Field checks the URL a request field names, when the request is made:
// the 400 names the field, says what is allowed and why raw is not.
func (g *Guard) Field(field, raw string) error {
	if _, err := g.CheckURL(raw); err != nil {
		where := " on a public address"
		if g.AllowPrivate {
			where = ""
		}
		return apperr.Invalid("%s must be an absolute http or https URL%s; %s", field, where, err)
	}
	return nil
}

// RefusedError is a connection the guard would not make: every address of
// Host is private. Resolved says whether Host is a name that resolved to
// them, rather than an address.
type RefusedError struct {
	Host     string
	Resolved bool
}

func (e *RefusedError) Error() string {
	if e.Resolved {
		return "host " + e.Host + " resolves to a private network address"
	}
	return "host " + e.Host + " is a private network address"
}

// DialContext connects to addr ("host:port") as net.Dialer does, for an
// http.Transport (whose Proxy must be nil: through a proxy, the address
// checked would be the proxy's). It resolves the host itself and dials
// only the addresses that pass, in order, so the address checked is the
// address dialled. When every address is refused the error is a
// *RefusedError.
func (g *Guard) DialContext(ctx context.Context, network, addr string) (net.Conn, error) {
	host, portText, err := net.SplitHostPort(addr)
	if err != nil {
		return nil, err
	}
	p, err := strconv.ParseUint(portText, 10, 16)
	if err != nil {
		return nil, fmt.Errorf("invalid port %q", portText)
	}
	var ips []netip.Addr
	literal := false
	if ip, err := netip.ParseAddr(host); err == nil {
		ips, literal = []netip.Addr{ip}, true
	} else if ips, err = g.lookup(ctx, host); err != nil {
		return nil, err
	}
	if len(ips) == 0 {
		return nil, &net.DNSError{Err: "no addresses", Name: host, IsNotFound: true}
	}
	d := net.Dialer{Timeout: g.DialTimeout, Control: g.control}
	var lastErr error
	for _, ip := range ips {
		ap := netip.AddrPortFrom(ip, uint16(p))
		if g.Refused(ap) {
			continue
		}
		conn, err := d.DialContext(ctx, network, ap.String())
		if err == nil {
			return conn, nil
		}
		lastErr = err
		if ctx.Err() != nil {
			break
		}
	}
	if lastErr == nil {
		return nil, &RefusedError{Host: host, Resolved: !literal}
	}
	return nil, lastErr
}

func (g *Guard) lookup(ctx context.Context, host string) ([]netip.Addr, error) {
	if g.Lookup != nil {
		return g.Lookup(ctx, host)
	}
	return net.DefaultResolver.LookupNetIP(ctx, "ip", host)
}

// control checks the socket's address once more just before it connects:
// DialContext only passes checked addresses, and this keeps it so whatever
// DialContext becomes.
func (g *Guard) control(_, address string, _ syscall.RawConn) error {
	ap, err := netip.ParseAddrPort(address)
	if err != nil {
		return &RefusedError{Host: address, Resolved: true}
	}
	if g.Refused(ap) {
		return &RefusedError{Host: ap.Addr().String(), Resolved: true}
	}
	return nil
}

// IsRefused reports whether err is, or wraps, a connection the guard
// refused, and returns it.
func IsRefused(err error) (*RefusedError, bool) {
	var re *RefusedError
	ok := errors.As(err, &re)
	return re, ok
}
