package app

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"io"
	"net"
	"os"
	"regexp"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/atrium-hq/atrium/platform/netguard"
)

// attemptError says in plain words why an attempt got no answer, for the
// delivery log the tenant reads. Go's own texts name the deployment's
// inside: the DNS resolver ("lookup x on 10.0.0.10:53: no such host"),
// the local address a connection left from ("dial tcp
// 10.1.2.3:41234->203.0.113.5:443"). So every failure is named by its
// kind, with only what the tenant gave (its URL's host) and what it can
// act on: the netguard refusal's text; DNS lookup failed (no such host, or
// timed out); connection refused, reset or unreachable; TLS handshake
// failed with the reason (no addresses); timed out after the attempt's
// time-out; closed before an answer. Anything else is "the request failed"
// with the innermost error's text, any IP address in it left out.
func attemptError(err error, timeout time.Duration) string {
	if r, ok := netguard.IsRefused(err); ok {
		return r.Error()
	}
	var dns *net.DNSError
	if errors.As(err, &dns) {
		host := "the host"
		if dns.Name != "" && net.ParseIP(dns.Name) == nil {
			host = dns.Name
		}
		switch {
		case dns.IsNotFound:
			return "DNS lookup of " + host + " failed: no such host"
		case dns.IsTimeout:
			return "DNS lookup of " + host + " failed: timed out"
		}
		return "DNS lookup of " + host + " failed: the resolver gave no answer"
	}
	if why, ok := tlsFailure(err); ok {
		return "TLS handshake failed: " + why
	}
	switch {
	case errors.Is(err, syscall.ECONNREFUSED):
		return "connection refused"
	case errors.Is(err, syscall.ECONNRESET):
		return "connection reset by the endpoint before an answer"
	case errors.Is(err, syscall.EHOSTUNREACH), errors.Is(err, syscall.ENETUNREACH):
		return "the endpoint's address is unreachable"
	case isTimeout(err):
		return "timed out after " + seconds(timeout) + " without an answer"
	case errors.Is(err, io.EOF), errors.Is(err, io.ErrUnexpectedEOF):
		return "the connection closed before an answer"
	}
	return "the request failed: " + ipAddress.ReplaceAllString(cause(err).Error(), "(address)")
}

// tlsFailure is the reason a TLS handshake failed, without addresses.
func tlsFailure(err error) (string, bool) {
	var (
		unknown  x509.UnknownAuthorityError
		hostname x509.HostnameError
		invalid  x509.CertificateInvalidError
		alert    tls.AlertError
		header   tls.RecordHeaderError
		verify   *tls.CertificateVerificationError
	)
	switch {
	case errors.As(err, &unknown):
		return "the certificate is signed by an unknown authority", true
	case errors.As(err, &hostname):
		return "the certificate is not valid for " + hostname.Host, true
	case errors.As(err, &invalid):
		switch invalid.Reason {
		case x509.Expired:
			return "the certificate has expired or is not yet valid", true
		}
		return "the certificate is not valid: " + invalid.Error(), true
	case errors.As(err, &verify):
		return "the certificate could not be verified", true
	case errors.As(err, &alert):
		return "the endpoint sent the alert \"" + strings.TrimPrefix(alert.Error(), "tls: ") + "\"", true
	case errors.As(err, &header):
		return "the endpoint does not speak TLS (is the URL https:// on a plain http port?)", true
	}
	return "", false
}

func isTimeout(err error) bool {
	if errors.Is(err, context.DeadlineExceeded) || errors.Is(err, os.ErrDeadlineExceeded) {
		return true
	}
	var ne net.Error
	return errors.As(err, &ne) && ne.Timeout()
}

// cause is the innermost error: "Post ...: dial tcp ...: some failure"
// reads "some failure".
func cause(err error) error {
	for {
		next := errors.Unwrap(err)
		if next == nil {
			return err
		}
		err = next
	}
}

// seconds writes a duration in seconds: "15 s", "0.5 s".
func seconds(d time.Duration) string {
	return strconv.FormatFloat(d.Seconds(), 'f', -1, 64) + " s"
}

// ipAddress matches an IPv4 or IPv6 address, with a port or not, in an
// error's text.
var ipAddress = regexp.MustCompile(`\[?[0-9a-fA-F]*:[0-9a-fA-F:]*:[0-9a-fA-F.]*\]?(:\d+)?|\d{1,3}(\.\d{1,3}){3}(:\d+)?`)
