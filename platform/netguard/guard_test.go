package netguard

import (
	"context"
	"net"
	"net/netip"
	"sync/atomic"
	"testing"

	"github.com/atrium-hq/atrium/platform/apperr"
)

// The forms the probe found let through by a request-time check that was
// not this one, each with the address it reaches.
var probeForms = []struct{ url, host, addr string }{
	{"http://2130706433/", "2130706433", "127.0.0.1"},
	{"http://0x7f000001/", "0x7f000001", "127.0.0.1"},
	{"http://127.1/", "127.1", "127.0.0.1"},
	{"http://[::127.0.0.1]/", "::127.0.0.1", "::127.0.0.1"},
	{"http://[64:ff9b::127.0.0.1]/", "64:ff9b::127.0.0.1", "64:ff9b::127.0.0.1"},
	{"http://198.18.0.1/", "198.18.0.1", "198.18.0.1"},
	{"http://255.255.255.255/", "255.255.255.255", "255.255.255.255"},
	{"http://[fec0::1]/", "fec0::1", "fec0::1"},
}

func TestPrivate(t *testing.T) {
	for _, s := range []string{"127.0.0.1", "10.1.2.3", "172.16.5.4", "192.168.1.1", "100.64.0.1", "100.100.100.200", "169.254.169.254",
		"0.0.0.0", "192.0.0.8", "198.18.0.1", "198.19.255.255", "224.0.0.1", "240.0.0.1", "255.255.255.255",
		"::", "::1", "::127.0.0.1", "::ffff:127.0.0.1", "::ffff:169.254.169.254", "64:ff9b::a00:1", "64:ff9b::127.0.0.1",
		"64:ff9b:1::1", "2002:a00:1::1", "2002:7f00:1::", "fc00::1", "fd00::1", "fe80::1", "fe80::1%eth0", "fec0::1", "ff02::1"} {
		if !Private(netip.MustParseAddr(s)) {
			t.Errorf("Private(%s) = false", s)
		}
	}
	for _, s := range []string{"8.8.8.8", "93.184.216.34", "198.20.0.1", "100.128.0.1", "2001:4860:4860::8888", "64:ff9b::808:808", "2002:808:808::1"} {
		if Private(netip.MustParseAddr(s)) {
			t.Errorf("Private(%s) = true", s)
		}
	}
	if !Private(netip.Addr{}) {
		t.Error("the invalid address is public")
	}
}

// TestRequestTimeCheck pins the 400 an interface answers for a URL that
// an outbound request would be sent to, every probe form included.
func TestRequestTimeCheck(t *testing.T) {
	strict, allowing := &Guard{}, &Guard{AllowPrivate: true}
	for _, f := range probeForms {
		err := strict.Field("seo_audit.url", f.url)
		want := "seo_audit.url must be an absolute http or https URL on a public address; host " + f.host + " is a private network address"
		if err == nil || err.Error() != want || apperr.KindOf(err) != apperr.KindInvalid {
			t.Errorf("%s: %v\nwant 400 %q", f.url, err, want)
		}
	}
	for _, tc := range []struct{ url, want string }{
		{"", "the URL is empty"},
		{"example.com/page", "the URL has no scheme; write it with http:// or https://"},
		{"ftp://example.com/", `the URL's scheme "ftp" is not allowed; only http and https URLs are`},
		{"http:///path", "the URL has no host; write it as https://host/path"},
		{"http://user:pw@example.com/", "the URL must not contain a user name or password (user:password@); remove them"},
		{"https://exa mple.com/", "the URL must not contain spaces or control characters; percent-encode them (a space is %20)"},
		{"http://localhost/", "host localhost is a private network address"},
		{"http://app.localhost:3000/", "host app.localhost is a private network address"},
		{"http://[fe80::1%25eth0]/", "host fe80::1%eth0 is a private network address"},
		{"http://134744072/", "host 134744072 is a numeric address in a non-standard form; write it as 8.8.8.8"},
	} {
		_, err := strict.CheckURL(tc.url)
		if err == nil || err.Error() != tc.want {
			t.Errorf("CheckURL(%q) = %v, want %q", tc.url, err, tc.want)
		}
	}
	for _, ok := range []string{"https://example.com/", "HTTP://Example.COM:8080/a?b=c#d", "https://8.8.8.8/", "https://[2001:4860:4860::8888]/",
		"https://localhost.example.com/", "http://1.2.3.4.example/"} {
		if _, err := strict.CheckURL(ok); err != nil {
			t.Errorf("CheckURL(%q) = %v, want accepted", ok, err)
		}
	}
	// Allowed private addresses, but still no legacy spelling.
	if err := allowing.Field("seo_audit.url", "http://127.0.0.1:8080/"); err != nil {
		t.Errorf("AllowPrivate: %v", err)
	}
	err := allowing.Field("seo_audit.url", "http://2130706433/")
	if want := "seo_audit.url must be an absolute http or https URL; host 2130706433 is a numeric address in a non-standard form; write it as 127.0.0.1"; err == nil || err.Error() != want {
		t.Errorf("AllowPrivate, legacy form: %v\nwant %q", err, want)
	}
}

// TestDialTimeCheck dials every probe form, as an address and as a name
// that resolves to it, with a server listening on loopback: the guard
// refuses them all before any connection reaches it.
func TestDialTimeCheck(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	var accepted atomic.Int32
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			accepted.Add(1)
			c.Close()
		}
	}()
	_, port, _ := net.SplitHostPort(ln.Addr().String())
	hosts := map[string][]netip.Addr{}
	g := &Guard{Lookup: func(_ context.Context, host string) ([]netip.Addr, error) {
		if a, ok := hosts[host]; ok {
			return a, nil
		}
		return nil, &net.DNSError{Err: "no such host", Name: host, IsNotFound: true}
	}}
	for i, f := range probeForms {
		addr := netip.MustParseAddr(f.addr)
		name := "probe" + string(rune('a'+i)) + ".test"
		hosts[name] = []netip.Addr{addr}
		hosts[f.host] = []netip.Addr{addr} // a resolver that reads the legacy forms, as C's does
		for _, target := range []string{net.JoinHostPort(f.host, port), net.JoinHostPort(name, port)} {
			conn, err := g.DialContext(t.Context(), "tcp", target)
			if conn != nil {
				conn.Close()
			}
			re, ok := IsRefused(err)
			if !ok {
				t.Errorf("dial %s: %v, want refused", target, err)
				continue
			}
			host, _, _ := net.SplitHostPort(target)
			if re.Host != host {
				t.Errorf("dial %s: refusal names %q", target, re.Host)
			}
		}
	}
	if n := accepted.Load(); n != 0 {
		t.Fatalf("the loopback server was reached %d times", n)
	}
	// The message says whether the host is or resolves to the address.
	_, err = g.DialContext(t.Context(), "tcp", "probea.test:80")
	if err == nil || err.Error() != "host probea.test resolves to a private network address" {
		t.Errorf("resolved: %v", err)
	}
	_, err = g.DialContext(t.Context(), "tcp", "10.0.0.1:80")
	if err == nil || err.Error() != "host 10.0.0.1 is a private network address" {
		t.Errorf("literal: %v", err)
	}

	// A name with a private and a public address reaches only the public
	// one; the exempt loopback server stands for it.
	server := netip.MustParseAddrPort(ln.Addr().String())
	g.Exempt = func(ap netip.AddrPort) bool { return ap == server }
	hosts["mixed.test"] = []netip.Addr{netip.MustParseAddr("10.0.0.1"), server.Addr()}
	conn, err := g.DialContext(t.Context(), "tcp", net.JoinHostPort("mixed.test", port))
	if err != nil {
		t.Fatalf("mixed.test: %v", err)
	}
	conn.Close()
	// The exemption is of one address and port, not of the address.
	if _, err := g.DialContext(t.Context(), "tcp", "127.0.0.1:1"); err == nil {
		t.Error("another port of the exempt address was dialled")
	}
}

// The dialler only passes checked addresses to the socket; control is the
// check that stays if that ever changes, so it is tested on its own.
func TestControlRefusesPrivateAddresses(t *testing.T) {
	g := &Guard{}
	for _, addr := range []string{"127.0.0.1:80", "[::1]:443", "169.254.169.254:80", "10.0.0.1:8080", "[::ffff:192.168.0.1]:80",
		"198.18.0.1:80", "[fec0::1]:80", "[::127.0.0.1]:80", "not an address"} {
		if err := g.control("tcp", addr, nil); err == nil {
			t.Errorf("control(%q) let the connection through", addr)
		} else if _, ok := IsRefused(err); !ok {
			t.Errorf("control(%q) = %v, not a refusal", addr, err)
		}
	}
	if err := g.control("tcp", "93.184.216.34:443", nil); err != nil {
		t.Errorf("control(public address) = %v, want nil", err)
	}
	if err := (&Guard{AllowPrivate: true}).control("tcp", "127.0.0.1:80", nil); err != nil {
		t.Errorf("AllowPrivate: control(127.0.0.1:80) = %v, want nil", err)
	}
}

func TestParseLegacyIPv4(t *testing.T) {
	for host, want := range map[string]string{"2130706433": "127.0.0.1", "0x7f000001": "127.0.0.1", "127.1": "127.0.0.1",
		"0x7f.1": "127.0.0.1", "0177.0.0.1": "127.0.0.1", "017700000001": "127.0.0.1", "10.1.1": "10.1.0.1", "134744072": "8.8.8.8"} {
		if ip, ok := ParseLegacyIPv4(host); !ok || ip.String() != want {
			t.Errorf("ParseLegacyIPv4(%q) = %v %v, want %s", host, ip, ok, want)
		}
	}
	for _, host := range []string{"example.com", "1.2.3.4.5", "256.1", "0x", "1.2.3.256", "99999999999"} {
		if _, ok := ParseLegacyIPv4(host); ok {
			t.Errorf("ParseLegacyIPv4(%q) accepted", host)
		}
	}
}
