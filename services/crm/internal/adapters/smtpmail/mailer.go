package smtpmail

import (
	"context"
	"crypto/rand"
	"crypto/tls"
	"encoding/hex"
	"errors"
	"fmt"
	"mime"
	"net"
	"net/mail"
	"net/smtp"
	"strings"
	"time"
)

// TLS modes.
const (
	TLSStartTLS = "starttls"
	TLSImplicit = "tls"
	TLSNone     = "none"
)

// DefaultTimeout bounds a whole send.
const DefaultTimeout = 20 * time.Second

// Config configures a Mailer.
type Config struct {
	// Addr is the server's host:port. Required.
	Addr string
	// From is the sender, "noreply@agency.example" or "Atrium
	// <noreply@agency.example>". Required.
	From string
	// Username and Password, when set, are sent with AUTH PLAIN, only over
	// TLS or to a server on the loopback interface (net/smtp's rule).
	Username, Password string
	// TLS is one of TLSStartTLS (default), TLSImplicit, TLSNone.
	TLS string
	// Timeout bounds a whole send. Default DefaultTimeout.
	Timeout time.Duration
	// TLSConfig, when set, is used for TLS (tests set RootCAs).
	TLSConfig *tls.Config
}

// Mailer sends mail through one SMTP server.
type Mailer struct {
	cfg  Config
	host string
	from *mail.Address
}

// New checks cfg and returns a Mailer. It does not connect.
func New(cfg Config) (*Mailer, error) {
	host, _, err := net.SplitHostPort(cfg.Addr)
	if err != nil || host == "" {
		return nil, fmt.Errorf("smtp: address %q must be host:port", cfg.Addr)
	}
	from, err := mail.ParseAddress(cfg.From)
	if err != nil {
		return nil, fmt.Errorf("smtp: the sender (--smtp-from) %q must be an address such as noreply@example.com: %w", cfg.From, err)
	}
	switch cfg.TLS {
	case "":
		cfg.TLS = TLSStartTLS
	case TLSStartTLS, TLSImplicit, TLSNone:
	default:
		return nil, fmt.Errorf("smtp: TLS %q must be %s, %s or %s", cfg.TLS, TLSStartTLS, TLSImplicit, TLSNone)
	}
	if cfg.Password != "" && cfg.Username == "" {
		// The actions service's flags allow a password alone; AUTH PLAIN
		// then names the sender.
		cfg.Username = from.Address
	}
	if cfg.Timeout <= 0 {
		cfg.Timeout = DefaultTimeout
	}
	return &Mailer{cfg: cfg, host: host, from: from}, nil
}

func (m *Mailer) tlsConfig() *tls.Config {
	c := &tls.Config{ServerName: m.host, MinVersion: tls.VersionTLS12}
	if m.cfg.TLSConfig != nil {
		c = m.cfg.TLSConfig.Clone()
		if c.ServerName == "" {
			c.ServerName = m.host
		}
	}
	return c
}

// Send implements app.Mailer: one plain-text message to one recipient.
func (m *Mailer) Send(ctx context.Context, to, subject, text string) error {
	rcpt, err := mail.ParseAddress(to)
	if err != nil {
		return fmt.Errorf("smtp: recipient %q: %w", to, err)
	}
	if strings.ContainsAny(subject, "\r\n") {
		return errors.New("smtp: the subject must be one line")
	}
	ctx, cancel := context.WithTimeout(ctx, m.cfg.Timeout)
	defer cancel()
	var d net.Dialer
	conn, err := d.DialContext(ctx, "tcp", m.cfg.Addr)
	if err != nil {
		return fmt.Errorf("smtp: %w", err)
	}
	deadline, _ := ctx.Deadline()
	_ = conn.SetDeadline(deadline)
	stop := context.AfterFunc(ctx, func() { conn.Close() })
	defer stop()
	if m.cfg.TLS == TLSImplicit {
		conn = tls.Client(conn, m.tlsConfig())
	}
	c, err := smtp.NewClient(conn, m.host)
	if err != nil {
		conn.Close()
		return fmt.Errorf("smtp: %w", err)
	}
	defer c.Close()
	if m.cfg.TLS == TLSStartTLS {
		if ok, _ := c.Extension("STARTTLS"); ok {
			if err := c.StartTLS(m.tlsConfig()); err != nil {
				return fmt.Errorf("smtp: STARTTLS: %w", err)
			}
		}
	}
	if m.cfg.Username != "" {
		if err := c.Auth(smtp.PlainAuth("", m.cfg.Username, m.cfg.Password, m.host)); err != nil {
			return fmt.Errorf("smtp: AUTH: %w", err)
		}
	}
	if err := c.Mail(m.from.Address); err != nil {
		return fmt.Errorf("smtp: MAIL FROM: %w", err)
	}
	if err := c.Rcpt(rcpt.Address); err != nil {
		return fmt.Errorf("smtp: RCPT TO: %w", err)
	}
	w, err := c.Data()
	if err != nil {
		return fmt.Errorf("smtp: DATA: %w", err)
	}
	if _, err := w.Write(m.message(rcpt, subject, text)); err != nil {
		return fmt.Errorf("smtp: DATA: %w", err)
	}
	if err := w.Close(); err != nil {
		return fmt.Errorf("smtp: DATA: %w", err)
	}
	return c.Quit()
}

func (m *Mailer) message(to *mail.Address, subject, text string) []byte {
	id := make([]byte, 16)
	_, _ = rand.Read(id)
	domain := m.from.Address[strings.LastIndexByte(m.from.Address, '@')+1:]
	var b strings.Builder
	fmt.Fprintf(&b, "From: %s\r\n", m.from.String())
	fmt.Fprintf(&b, "To: %s\r\n", to.String())
	fmt.Fprintf(&b, "Subject: %s\r\n", mime.QEncoding.Encode("utf-8", subject))
	fmt.Fprintf(&b, "Date: %s\r\n", time.Now().UTC().Format(time.RFC1123Z))
	fmt.Fprintf(&b, "Message-ID: <%s@%s>\r\n", hex.EncodeToString(id), domain)
	b.WriteString("MIME-Version: 1.0\r\nContent-Type: text/plain; charset=utf-8\r\nContent-Transfer-Encoding: 8bit\r\n\r\n")
	// SMTP lines end in CRLF; a line of a lone dot is escaped by the
	// DATA writer.
	b.WriteString(strings.ReplaceAll(strings.ReplaceAll(text, "\r\n", "\n"), "\n", "\r\n"))
	return []byte(b.String())
}
