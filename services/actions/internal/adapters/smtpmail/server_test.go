package smtpmail

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"io"
	"math/big"
	"net"
	"sync"
	"testing"
	"time"

	"github.com/emersion/go-sasl"
	gosmtp "github.com/emersion/go-smtp"
)

// This file holds the test's SMTP server: go-smtp on 127.0.0.1 with a
// backend that records what it is sent and can be told to refuse.

// received is one message as the server got it.
type received struct {
	from  string
	rcpts []string
	data  []byte
	tls   bool   // the connection was encrypted when MAIL FROM came
	user  string // the authenticated user, if any
}

type backend struct {
	// users, when set, are the accounts AUTH PLAIN accepts, and MAIL FROM
	// then requires one.
	users map[string]string
	// rcptErr and dataErr, when set, are the replies to RCPT TO and DATA.
	rcptErr, dataErr error

	mu        sync.Mutex
	messages  []received
	authTries int
}

func (b *backend) NewSession(c *gosmtp.Conn) (gosmtp.Session, error) {
	return &session{b: b, c: c}, nil
}

func (b *backend) received() []received {
	b.mu.Lock()
	defer b.mu.Unlock()
	return append([]received(nil), b.messages...)
}

func (b *backend) authAttempts() int {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.authTries
}

type session struct {
	b    *backend
	c    *gosmtp.Conn
	user string
	cur  received
}

func (s *session) AuthMechanisms() []string {
	if s.b.users == nil {
		return nil
	}
	return []string{sasl.Plain}
}

func (s *session) Auth(string) (sasl.Server, error) {
	return sasl.NewPlainServer(func(_, username, password string) error {
		s.b.mu.Lock()
		s.b.authTries++
		want, ok := s.b.users[username]
		s.b.mu.Unlock()
		if !ok || password != want {
			return gosmtp.ErrAuthFailed
		}
		s.user = username
		return nil
	}), nil
}

func (s *session) Mail(from string, _ *gosmtp.MailOptions) error {
	if s.b.users != nil && s.user == "" {
		return gosmtp.ErrAuthRequired
	}
	_, isTLS := s.c.TLSConnectionState()
	s.cur = received{from: from, tls: isTLS, user: s.user}
	return nil
}

func (s *session) Rcpt(to string, _ *gosmtp.RcptOptions) error {
	if s.b.rcptErr != nil {
		return s.b.rcptErr
	}
	s.cur.rcpts = append(s.cur.rcpts, to)
	return nil
}

func (s *session) Data(r io.Reader) error {
	data, err := io.ReadAll(r)
	if err != nil {
		return err
	}
	if s.b.dataErr != nil {
		return s.b.dataErr
	}
	s.cur.data = data
	s.b.mu.Lock()
	s.b.messages = append(s.b.messages, s.cur)
	s.b.mu.Unlock()
	return nil
}

func (s *session) Reset()        { s.cur = received{} }
func (s *session) Logout() error { return nil }

type serverOptions struct {
	tls          *tls.Config // offered with STARTTLS, or spoken at once with implicit
	implicit     bool
	insecureAuth bool // AUTH offered without TLS
}

// startServer serves be on 127.0.0.1 until the test ends and returns its
// address.
func startServer(t *testing.T, be *backend, opts serverOptions) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	s := gosmtp.NewServer(be)
	s.Domain = "mx.test"
	s.ReadTimeout = 5 * time.Second
	s.WriteTimeout = 5 * time.Second
	s.AllowInsecureAuth = opts.insecureAuth
	s.ErrorLog = testLogger{t}
	if opts.implicit {
		l = tls.NewListener(l, opts.tls)
	} else {
		s.TLSConfig = opts.tls
	}
	done := make(chan struct{})
	go func() {
		defer close(done)
		_ = s.Serve(l)
	}()
	t.Cleanup(func() {
		// Close the listener too: Serve may not have registered it with
		// the server yet when no client came.
		_ = s.Close()
		_ = l.Close()
		<-done
	})
	return l.Addr().String()
}

type testLogger struct{ t *testing.T }

func (l testLogger) Printf(format string, v ...any) { l.t.Logf("smtp server: "+format, v...) }
func (l testLogger) Println(v ...any)               { l.t.Log(append([]any{"smtp server:"}, v...)...) }

// silentServer accepts connections and never says a word. It returns its
// address and a channel that receives each accepted connection.
func silentServer(t *testing.T) (string, <-chan struct{}) {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	accepted := make(chan struct{}, 16)
	var mu sync.Mutex
	var conns []net.Conn
	done := make(chan struct{})
	go func() {
		defer close(done)
		for {
			c, err := l.Accept()
			if err != nil {
				return
			}
			mu.Lock()
			conns = append(conns, c)
			mu.Unlock()
			accepted <- struct{}{}
		}
	}()
	t.Cleanup(func() {
		l.Close()
		<-done
		mu.Lock()
		defer mu.Unlock()
		for _, c := range conns {
			c.Close()
		}
	})
	return l.Addr().String(), accepted
}

// testPKI is a CA and a certificate it signed for 127.0.0.1 and localhost.
type testPKI struct {
	server *tls.Config // presents the certificate
	roots  *x509.CertPool
}

func newTestPKI(t *testing.T) testPKI {
	t.Helper()
	caKey, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	now := time.Now()
	caTmpl := &x509.Certificate{
		SerialNumber:          big.NewInt(1),
		Subject:               pkix.Name{CommonName: "Atrium test CA"},
		NotBefore:             now.Add(-time.Hour),
		NotAfter:              now.Add(time.Hour),
		IsCA:                  true,
		BasicConstraintsValid: true,
		KeyUsage:              x509.KeyUsageCertSign | x509.KeyUsageDigitalSignature,
	}
	caDER, err := x509.CreateCertificate(rand.Reader, caTmpl, caTmpl, &caKey.PublicKey, caKey)
	if err != nil {
		t.Fatal(err)
	}
	ca, err := x509.ParseCertificate(caDER)
	if err != nil {
		t.Fatal(err)
	}
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	leafTmpl := &x509.Certificate{
		SerialNumber: big.NewInt(2),
		Subject:      pkix.Name{CommonName: "mx.test"},
		DNSNames:     []string{"localhost"},
		IPAddresses:  []net.IP{net.IPv4(127, 0, 0, 1)},
		NotBefore:    now.Add(-time.Hour),
		NotAfter:     now.Add(time.Hour),
		KeyUsage:     x509.KeyUsageDigitalSignature,
		ExtKeyUsage:  []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
	}
	leafDER, err := x509.CreateCertificate(rand.Reader, leafTmpl, ca, &key.PublicKey, caKey)
	if err != nil {
		t.Fatal(err)
	}
	roots := x509.NewCertPool()
	roots.AddCert(ca)
	return testPKI{
		server: &tls.Config{Certificates: []tls.Certificate{{Certificate: [][]byte{leafDER}, PrivateKey: key}}},
		roots:  roots,
	}
}
