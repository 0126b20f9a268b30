package app

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/atrium-hq/atrium/platform/netguard"
)

// post wraps a failure as http.Client.Do returns it: a *url.Error around
// the dial's *net.OpError, which names the local and remote addresses.
func post(err error) error {
	return &url.Error{Op: "Post", URL: "https://hooks.example.com/in", Err: &net.OpError{
		Op: "dial", Net: "tcp", Source: &net.TCPAddr{IP: net.IPv4(10, 1, 2, 3), Port: 41234},
		Addr: &net.TCPAddr{IP: net.IPv4(203, 0, 113, 5), Port: 443}, Err: err,
	}}
}

// TestAttemptErrorSaysWhatFailedWithoutAddresses: each kind of failure an
// attempt meets reads as plain words in the tenant's delivery log, and none
// names the deployment's resolver or its own addresses.
func TestAttemptErrorSaysWhatFailedWithoutAddresses(t *testing.T) {
	for _, tc := range []struct {
		name string
		err  error
		want string
	}{
		{"no such host", post(&net.DNSError{Err: "no such host", Name: "hooks.example.com", Server: "10.0.0.10:53", IsNotFound: true}),
			"DNS lookup of hooks.example.com failed: no such host"},
		{"DNS timed out", post(&net.DNSError{Err: "i/o timeout", Name: "hooks.example.com", Server: "10.0.0.10:53", IsTimeout: true}),
			"DNS lookup of hooks.example.com failed: timed out"},
		{"DNS server failure", post(&net.DNSError{Err: "server misbehaving", Name: "hooks.example.com", Server: "[fd00::a]:53", IsTemporary: true}),
			"DNS lookup of hooks.example.com failed: the resolver gave no answer"},
		{"connection refused", post(os.NewSyscallError("connect", syscall.ECONNREFUSED)), "connection refused"},
		{"connection reset", post(os.NewSyscallError("read", syscall.ECONNRESET)), "connection reset by the endpoint before an answer"},
		{"unreachable", post(os.NewSyscallError("connect", syscall.EHOSTUNREACH)), "the endpoint's address is unreachable"},
		{"the attempt's time-out", &url.Error{Op: "Post", URL: "https://hooks.example.com/in", Err: context.DeadlineExceeded},
			"timed out after 15 s without an answer"},
		{"a read deadline", post(os.ErrDeadlineExceeded), "timed out after 15 s without an answer"},
		{"unknown authority", post(&tls.CertificateVerificationError{Err: x509.UnknownAuthorityError{}}),
			"TLS handshake failed: the certificate is signed by an unknown authority"},
		{"certificate for another host", post(&tls.CertificateVerificationError{Err: x509.HostnameError{Host: "hooks.example.com", Certificate: &x509.Certificate{}}}),
			"TLS handshake failed: the certificate is not valid for hooks.example.com"},
		{"expired certificate", post(&tls.CertificateVerificationError{Err: x509.CertificateInvalidError{Reason: x509.Expired}}),
			"TLS handshake failed: the certificate has expired or is not yet valid"},
		{"TLS to a plain port", post(tls.RecordHeaderError{Msg: "first record does not look like a TLS handshake"}),
			"TLS handshake failed: the endpoint does not speak TLS (is the URL https:// on a plain http port?)"},
		{"an alert", post(tls.AlertError(40)), `TLS handshake failed: the endpoint sent the alert "handshake failure"`},
		{"closed early", &url.Error{Op: "Post", URL: "https://hooks.example.com/in", Err: io.EOF}, "the connection closed before an answer"},
		{"refused by the guard", post(&netguard.RefusedError{Host: "hooks.example.com", Resolved: true}),
			"host hooks.example.com resolves to a private network address"},
		{"anything else, its addresses left out", post(fmt.Errorf("proxy 10.0.0.99:3128 and [fd00::1]:8080 said no")),
			"the request failed: proxy (address) and (address) said no"},
	} {
		got := attemptError(tc.err, 15*time.Second)
		if got != tc.want {
			t.Errorf("%s: %q\nwant %q", tc.name, got, tc.want)
		}
		for _, internal := range []string{"10.0.0.10", "10.1.2.3", "fd00", "41234", ":53"} {
			if strings.Contains(got, internal) {
				t.Errorf("%s: %q shows the internal %s", tc.name, got, internal)
			}
		}
	}
}

// TestAttemptErrorOfRealFailures: the same words for what the deployment's
// client really returns, over loopback: a closed port, a certificate no
// one trusts, an endpoint that never answers.
func TestAttemptErrorOfRealFailures(t *testing.T) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	closed := "http://" + l.Addr().String() + "/in"
	_ = l.Close()
	untrusted := httptest.NewTLSServer(http.HandlerFunc(func(http.ResponseWriter, *http.Request) {}))
	defer untrusted.Close()
	answer := make(chan struct{})
	silent := httptest.NewServer(http.HandlerFunc(func(http.ResponseWriter, *http.Request) { <-answer }))
	defer silent.Close()
	defer close(answer)

	client := &http.Client{}
	for _, tc := range []struct {
		name, url, want string
		timeout         time.Duration
	}{
		{"a closed port", closed, "connection refused", 10 * time.Second},
		{"an untrusted certificate", untrusted.URL, "TLS handshake failed: the certificate is signed by an unknown authority", 10 * time.Second},
		// The time-out is what is tested: the endpoint never answers.
		{"no answer", silent.URL, "timed out after 0.2 s without an answer", 200 * time.Millisecond},
	} {
		ctx, cancel := context.WithTimeout(context.Background(), tc.timeout)
		req, _ := http.NewRequestWithContext(ctx, http.MethodPost, tc.url, strings.NewReader("{}"))
		resp, err := client.Do(req)
		cancel()
		if err == nil {
			_ = resp.Body.Close()
			t.Fatalf("%s: the request succeeded", tc.name)
		}
		if got := attemptError(err, tc.timeout); got != tc.want || strings.Contains(got, "127.0.0.1") {
			t.Errorf("%s: %q (from %v)\nwant %q", tc.name, got, err, tc.want)
		}
	}
}
