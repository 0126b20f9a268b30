package smtpmail_test

import (
	"context"
	"io"
	"mime"
	"net"
	"net/mail"
	"strings"
	"testing"
	"time"

	gosmtp "github.com/emersion/go-smtp"

	"github.com/atrium-hq/atrium/services/crm/internal/adapters/smtpmail"
)

// A real SMTP server (emersion/go-smtp) receives what the mailer sends.

type received struct {
	from, to string
	data     []byte
}

type backend chan received

func (b backend) NewSession(*gosmtp.Conn) (gosmtp.Session, error) { return &session{b: b}, nil }

type session struct {
	b   backend
	cur received
}

func (s *session) Mail(from string, _ *gosmtp.MailOptions) error { s.cur.from = from; return nil }
func (s *session) Rcpt(to string, _ *gosmtp.RcptOptions) error   { s.cur.to = to; return nil }
func (s *session) Data(r io.Reader) error {
	var err error
	s.cur.data, err = io.ReadAll(r)
	s.b <- s.cur
	return err
}
func (s *session) Reset()        {}
func (s *session) Logout() error { return nil }

func server(t *testing.T) (string, backend) {
	t.Helper()
	b := make(backend, 1)
	srv := gosmtp.NewServer(b)
	srv.Domain = "localhost"
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	go func() { _ = srv.Serve(l) }()
	t.Cleanup(func() { srv.Close() })
	return l.Addr().String(), b
}

func TestSendDeliversAPlainTextMessage(t *testing.T) {
	addr, b := server(t)
	m, err := smtpmail.New(smtpmail.Config{Addr: addr, From: "Atrium <noreply@atrium.example>", TLS: smtpmail.TLSNone})
	if err != nil {
		t.Fatal(err)
	}
	text := "Hello Zoë,\n\nAccept it here:\n\nhttps://atrium.example/studio/invitations/atr_inv_x\n"
	if err := m.Send(t.Context(), "zoe@example.com", "Your invitation to Café Crème on Atrium", text); err != nil {
		t.Fatal(err)
	}
	var got received
	select {
	case got = <-b:
	case <-time.After(10 * time.Second):
		t.Fatal("nothing received within 10s")
	}
	if got.from != "noreply@atrium.example" || got.to != "zoe@example.com" {
		t.Fatalf("envelope %s -> %s", got.from, got.to)
	}
	msg, err := mail.ReadMessage(strings.NewReader(string(got.data)))
	if err != nil {
		t.Fatal(err)
	}
	subject, err := new(mimeDecoder).decode(msg.Header.Get("Subject"))
	if err != nil || subject != "Your invitation to Café Crème on Atrium" {
		t.Fatalf("subject %q (%v)", msg.Header.Get("Subject"), err)
	}
	if msg.Header.Get("To") != "<zoe@example.com>" || !strings.Contains(msg.Header.Get("From"), "noreply@atrium.example") ||
		msg.Header.Get("Message-Id") == "" || !strings.HasPrefix(msg.Header.Get("Content-Type"), "text/plain; charset=utf-8") {
		t.Fatalf("headers %v", msg.Header)
	}
	body, _ := io.ReadAll(msg.Body)
	if strings.ReplaceAll(string(body), "\r\n", "\n") != text {
		t.Fatalf("body %q, want %q", body, text)
	}
}

func TestNewChecksTheSettings(t *testing.T) {
	for _, cfg := range []smtpmail.Config{
		{Addr: "mail.example.com", From: "a@example.com"},
		{Addr: "mail.example.com:587", From: "not an address"},
		{Addr: "mail.example.com:587", From: "a@example.com", TLS: "ssl"},
	} {
		if _, err := smtpmail.New(cfg); err == nil {
			t.Fatalf("New(%+v) accepted", cfg)
		}
	}
}

func TestSendToAClosedPortFails(t *testing.T) {
	l, _ := net.Listen("tcp", "127.0.0.1:0")
	addr := l.Addr().String()
	l.Close()
	m, _ := smtpmail.New(smtpmail.Config{Addr: addr, From: "a@example.com", TLS: smtpmail.TLSNone, Timeout: 5 * time.Second})
	ctx, cancel := context.WithTimeout(t.Context(), 10*time.Second)
	defer cancel()
	if err := m.Send(ctx, "b@example.com", "s", "t"); err == nil {
		t.Fatal("a send to a closed port succeeded")
	}
}

type mimeDecoder struct{}

func (mimeDecoder) decode(s string) (string, error) { return new(mime.WordDecoder).DecodeHeader(s) }
