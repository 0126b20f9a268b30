package smtpmail

import (
	"bytes"
	"context"
	"crypto/tls"
	"errors"
	"io"
	"mime"
	"mime/multipart"
	"mime/quotedprintable"
	"net"
	"net/mail"
	"net/smtp"
	"strings"
	"testing"
	"time"

	gosmtp "github.com/emersion/go-smtp"

	"github.com/atrium-hq/atrium/services/actions/internal/app/provider"
)

const testHTML = `<h2>Café &amp; Crème</h2>` +
	`<p>Hello&nbsp;Zoë,<br>here is the plan:</p>` +
	`<ul><li>audit</li><li>fix   the
	titles</li></ul>` +
	`<p>See <a href="https://agency.example/offer?a=1&amp;b=2">our offer</a>.</p>`

const testText = "Café & Crème\n\n" +
	"Hello Zoë,\nhere is the plan:\n\n" +
	"- audit\n- fix the titles\n\n" +
	"See our offer (https://agency.example/offer?a=1&b=2)."

func newMailer(t *testing.T, cfg Config) *Mailer {
	t.Helper()
	if cfg.From == "" {
		cfg.From = "Agency Team <noreply@agency.example>"
	}
	if cfg.Timeout == 0 {
		cfg.Timeout = 5 * time.Second
	}
	m, err := New(cfg)
	if err != nil {
		t.Fatalf("New: %v", err)
	}
	return m
}

func send(t *testing.T, m *Mailer, msg provider.Mail) (provider.SentMail, error) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	return m.Send(ctx, msg)
}

func providerError(t *testing.T, err error, status int) *provider.Error {
	t.Helper()
	var pe *provider.Error
	if !errors.As(err, &pe) {
		t.Fatalf("error = %v (%T), want a ProviderError %d", err, err, status)
	}
	if pe.StatusCode != status {
		t.Fatalf("status = %d (%s), want %d", pe.StatusCode, pe.Message, status)
	}
	return pe
}

// part is one part of a multipart message, its transfer encoding undone
// and its CRLF line endings read as LF.
type part struct {
	contentType, encoding string
	body                  string
}

func parseMessage(t *testing.T, data []byte) (*mail.Message, []part) {
	t.Helper()
	for i, line := range strings.SplitAfter(string(data), "\n") {
		if line != "" && !strings.HasSuffix(line, "\r\n") {
			t.Fatalf("line %d does not end in CRLF: %q", i+1, line)
		}
		if len(line) > 80 {
			t.Errorf("line %d is %d characters long: %q", i+1, len(line), line)
		}
	}
	msg, err := mail.ReadMessage(bytes.NewReader(data))
	if err != nil {
		t.Fatalf("parse message: %v", err)
	}
	mediaType, params, err := mime.ParseMediaType(msg.Header.Get("Content-Type"))
	if err != nil || mediaType != "multipart/alternative" {
		t.Fatalf("Content-Type = %q (%v), want multipart/alternative", msg.Header.Get("Content-Type"), err)
	}
	r := multipart.NewReader(msg.Body, params["boundary"])
	var parts []part
	for {
		p, err := r.NextRawPart()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			t.Fatalf("next part: %v", err)
		}
		enc := p.Header.Get("Content-Transfer-Encoding")
		var body io.Reader = p
		if enc == "quoted-printable" {
			body = quotedprintable.NewReader(p)
		}
		b, err := io.ReadAll(body)
		if err != nil {
			t.Fatalf("read part: %v", err)
		}
		if bytes.Contains(bytes.ReplaceAll(b, []byte("\r\n"), nil), []byte("\n")) {
			t.Errorf("part %d has a bare LF line ending", len(parts)+1)
		}
		text := strings.ReplaceAll(string(b), "\r\n", "\n")
		parts = append(parts, part{contentType: p.Header.Get("Content-Type"), encoding: enc, body: text})
	}
	return msg, parts
}

func TestSendDeliversAMultipartMessage(t *testing.T) {
	be := &backend{}
	addr := startServer(t, be, serverOptions{})
	m := newMailer(t, Config{Addr: addr})

	before := time.Now().Add(-time.Second)
	sent, err := send(t, m, provider.Mail{To: "zoe@client.example", Subject: "Your SEO plan", HTML: testHTML})
	if err != nil {
		t.Fatalf("Send: %v", err)
	}
	if sent.From != "noreply@agency.example" {
		t.Errorf("SentMail.From = %q", sent.From)
	}
	if !strings.HasPrefix(sent.MessageID, "<") || !strings.HasSuffix(sent.MessageID, "@agency.example>") || len(sent.MessageID) < 20 {
		t.Errorf("SentMail.MessageID = %q, want <random@agency.example>", sent.MessageID)
	}

	got := be.received()
	if len(got) != 1 {
		t.Fatalf("server received %d messages, want 1", len(got))
	}
	if got[0].from != "noreply@agency.example" {
		t.Errorf("MAIL FROM = %q", got[0].from)
	}
	if len(got[0].rcpts) != 1 || got[0].rcpts[0] != "zoe@client.example" {
		t.Errorf("RCPT TO = %q", got[0].rcpts)
	}

	msg, parts := parseMessage(t, got[0].data)
	from, err := mail.ParseAddress(msg.Header.Get("From"))
	if err != nil || from.Name != "Agency Team" || from.Address != "noreply@agency.example" {
		t.Errorf("From = %q (%v)", msg.Header.Get("From"), err)
	}
	to, err := mail.ParseAddress(msg.Header.Get("To"))
	if err != nil || to.Name != "" || to.Address != "zoe@client.example" {
		t.Errorf("To = %q (%v)", msg.Header.Get("To"), err)
	}
	if s := msg.Header.Get("Subject"); s != "Your SEO plan" {
		t.Errorf("Subject = %q", s)
	}
	if d, err := msg.Header.Date(); err != nil || d.Before(before) || d.After(time.Now().Add(time.Second)) {
		t.Errorf("Date = %q (%v)", msg.Header.Get("Date"), err)
	}
	if id := msg.Header.Get("Message-ID"); id != sent.MessageID {
		t.Errorf("Message-ID = %q, SentMail says %q", id, sent.MessageID)
	}
	if v := msg.Header.Get("MIME-Version"); v != "1.0" {
		t.Errorf("MIME-Version = %q", v)
	}

	if len(parts) != 2 {
		t.Fatalf("%d parts, want 2", len(parts))
	}
	for i, want := range []part{
		{contentType: "text/plain; charset=utf-8", encoding: "quoted-printable", body: testText},
		{contentType: "text/html; charset=utf-8", encoding: "quoted-printable", body: testHTML},
	} {
		if parts[i] != want {
			t.Errorf("part %d:\n got %+v\nwant %+v", i+1, parts[i], want)
		}
	}
}

func TestSendEncodesANonASCIISubject(t *testing.T) {
	be := &backend{}
	addr := startServer(t, be, serverOptions{})
	m := newMailer(t, Config{Addr: addr})

	subjects := []string{
		"Résumé — 東京 offer 🚀",
		strings.Repeat("Ünïcödé sübject wörds ", 15) + "end",
		"Looks =?utf-8?q?encoded?= but is not",
	}
	for _, subject := range subjects {
		if _, err := send(t, m, provider.Mail{To: "zoe@client.example", Subject: subject, HTML: "<p>x</p>"}); err != nil {
			t.Fatalf("Send(%q): %v", subject, err)
		}
	}
	got := be.received()
	if len(got) != len(subjects) {
		t.Fatalf("server received %d messages, want %d", len(got), len(subjects))
	}
	for i, subject := range subjects {
		msg, _ := parseMessage(t, got[i].data)
		raw := msg.Header.Get("Subject")
		for _, r := range raw {
			if r > 127 {
				t.Errorf("Subject header %q is not ASCII", raw)
				break
			}
		}
		decoded, err := (&mime.WordDecoder{}).DecodeHeader(raw)
		if err != nil || decoded != subject {
			t.Errorf("Subject %q decodes to %q (%v), want %q", raw, decoded, err, subject)
		}
	}
}

func TestSendUsesSTARTTLS(t *testing.T) {
	pki := newTestPKI(t)
	be := &backend{}
	addr := startServer(t, be, serverOptions{tls: pki.server})
	m := newMailer(t, Config{Addr: addr, TLSConfig: &tls.Config{RootCAs: pki.roots}})

	if _, err := send(t, m, provider.Mail{To: "zoe@client.example", Subject: "Hi", HTML: "<p>x</p>"}); err != nil {
		t.Fatalf("Send: %v", err)
	}
	got := be.received()
	if len(got) != 1 || !got[0].tls {
		t.Fatalf("received %+v, want one message over TLS", got)
	}
}

func TestSendRefusesAnUntrustedCertificate(t *testing.T) {
	pki := newTestPKI(t)
	be := &backend{}
	addr := startServer(t, be, serverOptions{tls: pki.server})
	m := newMailer(t, Config{Addr: addr}) // the system roots do not know the test CA

	_, err := send(t, m, provider.Mail{To: "zoe@client.example", Subject: "Hi", HTML: "<p>x</p>"})
	pe := providerError(t, err, 502)
	if !strings.Contains(pe.Message, "certificate") {
		t.Errorf("message %q does not mention the certificate", pe.Message)
	}
	if n := len(be.received()); n != 0 {
		t.Errorf("server received %d messages over an untrusted connection", n)
	}
}

func TestSendOverImplicitTLS(t *testing.T) {
	pki := newTestPKI(t)
	be := &backend{}
	addr := startServer(t, be, serverOptions{tls: pki.server, implicit: true})
	m := newMailer(t, Config{Addr: addr, TLS: TLSImplicit, TLSConfig: &tls.Config{RootCAs: pki.roots}})

	if _, err := send(t, m, provider.Mail{To: "zoe@client.example", Subject: "Hi", HTML: "<p>x</p>"}); err != nil {
		t.Fatalf("Send: %v", err)
	}
	if got := be.received(); len(got) != 1 || !got[0].tls {
		t.Fatalf("received %+v, want one message over TLS", got)
	}
}

func TestSendAuthenticatesOverSTARTTLS(t *testing.T) {
	pki := newTestPKI(t)
	be := &backend{users: map[string]string{"agency": "s3cret-pass"}}
	addr := startServer(t, be, serverOptions{tls: pki.server})
	tlsConfig := &tls.Config{RootCAs: pki.roots}

	m := newMailer(t, Config{Addr: addr, Username: "agency", Password: "s3cret-pass", TLSConfig: tlsConfig})
	if _, err := send(t, m, provider.Mail{To: "zoe@client.example", Subject: "Hi", HTML: "<p>x</p>"}); err != nil {
		t.Fatalf("Send: %v", err)
	}
	got := be.received()
	if len(got) != 1 || got[0].user != "agency" || !got[0].tls {
		t.Fatalf("received %+v, want one message from user agency over TLS", got)
	}

	wrong := newMailer(t, Config{Addr: addr, Username: "agency", Password: "wrong-pass", TLSConfig: tlsConfig})
	_, err := send(t, wrong, provider.Mail{To: "zoe@client.example", Subject: "Hi", HTML: "<p>x</p>"})
	pe := providerError(t, err, 502)
	if !strings.Contains(pe.Message, "credentials") || !strings.Contains(pe.Message, "535") {
		t.Errorf("message %q does not say the credentials were refused", pe.Message)
	}
	if strings.Contains(pe.Error(), "wrong-pass") {
		t.Errorf("error %q holds the password", pe.Error())
	}

	// Without credentials the server's MAIL FROM wants authentication.
	anon := newMailer(t, Config{Addr: addr, TLSConfig: tlsConfig})
	_, err = send(t, anon, provider.Mail{To: "zoe@client.example", Subject: "Hi", HTML: "<p>x</p>"})
	pe = providerError(t, err, 502)
	if !strings.Contains(pe.Message, "authenticate") {
		t.Errorf("message %q does not hold the server's reply", pe.Message)
	}
}

func TestSendKeepsCredentialsOffAConnectionWithoutSTARTTLS(t *testing.T) {
	// The server offers AUTH in clear text but not STARTTLS.
	be := &backend{users: map[string]string{"agency": "s3cret-pass"}}
	addr := startServer(t, be, serverOptions{insecureAuth: true})
	m := newMailer(t, Config{Addr: addr, Username: "agency", Password: "s3cret-pass"})

	_, err := send(t, m, provider.Mail{To: "zoe@client.example", Subject: "Hi", HTML: "<p>x</p>"})
	pe := providerError(t, err, 502)
	if !strings.Contains(pe.Message, "STARTTLS") {
		t.Errorf("message %q does not name STARTTLS", pe.Message)
	}
	if n := be.authAttempts(); n != 0 {
		t.Errorf("the server saw %d AUTH attempts", n)
	}
}

func TestSendAuthenticatesInClearTextOnlyToLoopback(t *testing.T) {
	be := &backend{users: map[string]string{"agency": "s3cret-pass"}}
	addr := startServer(t, be, serverOptions{insecureAuth: true})
	m := newMailer(t, Config{Addr: addr, TLS: TLSNone, Username: "agency", Password: "s3cret-pass"})
	if _, err := send(t, m, provider.Mail{To: "zoe@client.example", Subject: "Hi", HTML: "<p>x</p>"}); err != nil {
		t.Fatalf("Send to a loopback relay: %v", err)
	}
	if got := be.received(); len(got) != 1 || got[0].user != "agency" {
		t.Fatalf("received %+v, want one message from user agency", got)
	}

	// The same settings for a remote server are refused before anything
	// is sent.
	for _, remote := range []string{"smtp.example.com:25", "192.0.2.10:587", "[2001:db8::1]:25"} {
		_, err := New(Config{Addr: remote, From: "noreply@agency.example", TLS: TLSNone, Username: "agency", Password: "s3cret-pass"})
		if err == nil || !strings.Contains(err.Error(), "clear text") {
			t.Errorf("New(%s, TLS none, credentials) = %v, want a clear-text refusal", remote, err)
		}
	}
	// And the authenticator itself refuses, should it ever be reached.
	if _, _, err := (plainAuth{"u", "p"}).Start(&smtp.ServerInfo{Name: "smtp.example.com"}); err == nil {
		t.Error("plainAuth.Start without TLS to a remote server succeeded")
	}
}

func TestSendMapsServerReplies(t *testing.T) {
	for _, tc := range []struct {
		name       string
		be         *backend
		status     int
		wantInText []string
	}{
		{
			name:       "recipient rejected",
			be:         &backend{rcptErr: &gosmtp.SMTPError{Code: 550, EnhancedCode: gosmtp.EnhancedCode{5, 1, 1}, Message: "no such user here"}},
			status:     502,
			wantInText: []string{"recipient", "550", "no such user here"},
		},
		{
			name:       "recipient deferred",
			be:         &backend{rcptErr: &gosmtp.SMTPError{Code: 451, EnhancedCode: gosmtp.EnhancedCode{4, 3, 0}, Message: "greylisted, try again later"}},
			status:     503,
			wantInText: []string{"deferred", "451", "greylisted, try again later"},
		},
		{
			name:       "message rejected",
			be:         &backend{dataErr: &gosmtp.SMTPError{Code: 554, EnhancedCode: gosmtp.EnhancedCode{5, 7, 1}, Message: "looks like spam"}},
			status:     502,
			wantInText: []string{"message", "554", "looks like spam"},
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			addr := startServer(t, tc.be, serverOptions{})
			m := newMailer(t, Config{Addr: addr})
			_, err := send(t, m, provider.Mail{To: "zoe@client.example", Subject: "Hi", HTML: "<p>x</p>"})
			pe := providerError(t, err, tc.status)
			for _, s := range tc.wantInText {
				if !strings.Contains(pe.Message, s) {
					t.Errorf("message %q does not contain %q", pe.Message, s)
				}
			}
			if len(tc.be.received()) != 0 {
				t.Error("the server kept a message it refused")
			}
		})
	}
}

func TestSendTimesOutOnASilentServer(t *testing.T) {
	addr, _ := silentServer(t)
	for _, mode := range []string{TLSStartTLS, TLSImplicit} {
		m := newMailer(t, Config{Addr: addr, TLS: mode, Timeout: 200 * time.Millisecond})
		start := time.Now()
		_, err := send(t, m, provider.Mail{To: "zoe@client.example", Subject: "Hi", HTML: "<p>x</p>"})
		elapsed := time.Since(start)
		pe := providerError(t, err, 504)
		if !strings.Contains(pe.Message, "did not answer") {
			t.Errorf("%s: message %q", mode, pe.Message)
		}
		if elapsed > 2*time.Second {
			t.Errorf("%s: Send took %s with a 200ms timeout", mode, elapsed)
		}
	}
}

func TestSendReturnsTheCallersCancellation(t *testing.T) {
	addr, accepted := silentServer(t)
	m := newMailer(t, Config{Addr: addr, Timeout: 30 * time.Second})
	ctx, cancel := context.WithCancel(context.Background())
	go func() {
		<-accepted
		cancel()
	}()
	start := time.Now()
	_, err := m.Send(ctx, provider.Mail{To: "zoe@client.example", Subject: "Hi", HTML: "<p>x</p>"})
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("error = %v, want context.Canceled", err)
	}
	var pe *provider.Error
	if errors.As(err, &pe) {
		t.Errorf("a cancellation came back as a ProviderError: %v", pe)
	}
	if elapsed := time.Since(start); elapsed > 5*time.Second {
		t.Errorf("Send took %s to notice the cancellation", elapsed)
	}
}

func TestSendToAClosedPort(t *testing.T) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	l.Close()

	m := newMailer(t, Config{Addr: addr})
	_, err = send(t, m, provider.Mail{To: "zoe@client.example", Subject: "Hi", HTML: "<p>x</p>"})
	pe := providerError(t, err, 503)
	if !strings.Contains(pe.Message, "cannot reach the mail server") || !strings.Contains(pe.Message, addr) {
		t.Errorf("message %q", pe.Message)
	}
}

func TestSendRefusesHeaderInjection(t *testing.T) {
	be := &backend{}
	addr := startServer(t, be, serverOptions{})
	m := newMailer(t, Config{Addr: addr})
	for _, msg := range []provider.Mail{
		{To: "zoe@client.example", Subject: "Hi\r\nBcc: victim@else.example", HTML: "<p>x</p>"},
		{To: "zoe@client.example\r\nBcc: victim@else.example", Subject: "Hi", HTML: "<p>x</p>"},
		{To: "zoe@client.example, victim@else.example", Subject: "Hi", HTML: "<p>x</p>"},
	} {
		_, err := send(t, m, msg)
		if err == nil {
			t.Errorf("Send(%q, %q) succeeded", msg.To, msg.Subject)
			continue
		}
		var pe *provider.Error
		if errors.As(err, &pe) {
			t.Errorf("Send(%q, %q): bad input came back as a ProviderError: %v", msg.To, msg.Subject, err)
		}
	}
	if n := len(be.received()); n != 0 {
		t.Errorf("the server received %d messages", n)
	}
}
