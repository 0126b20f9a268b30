// Package smtpmail is the actions service's Mailer over SMTP: it hands one
// message at a time to a mail server (a submission server such as a
// provider's smtp.example.com:587, or a local relay), with STARTTLS or
// implicit TLS, optional AUTH PLAIN, and a deadline on the whole
// conversation. Server replies are turned into provider.Errors that say
// whether the server deferred (4xx) or rejected (5xx) the message.
package smtpmail

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"net"
	"net/mail"
	"net/smtp"
	"net/textproto"
	"os"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/atrium-hq/atrium/platform/value"
	"github.com/atrium-hq/atrium/services/actions/internal/app/provider"
)

// TLS modes.
const (
	// TLSStartTLS upgrades the connection with STARTTLS when the server
	// offers it, and requires it when credentials are configured.
	TLSStartTLS = "starttls"
	// TLSImplicit speaks TLS from the first byte (port 465).
	TLSImplicit = "tls"
	// TLSNone never encrypts; credentials are then only sent to a server on
	// the loopback interface.
	TLSNone = "none"
)

// DefaultTimeout bounds a whole send: dial, TLS and the conversation.
const DefaultTimeout = 20 * time.Second

const providerName = "mail server"

// Config configures a Mailer.
type Config struct {
	// Addr is the server's host:port. Required.
	Addr string
	// From is the sender, "noreply@agency.example" or
	// "Agency <noreply@agency.example>". Required. Its domain names the
	// Message-IDs.
	From string
	// Username and Password, when set, are sent with AUTH PLAIN, and only
	// over TLS or to a server on the loopback interface.
	Username, Password string
	// TLS is one of TLSStartTLS (default), TLSImplicit, TLSNone.
	TLS string
	// HELO is the name the client gives in EHLO. Default: the machine's
	// host name, or "localhost" when it has none.
	HELO string
	// Timeout bounds a whole send. Default DefaultTimeout.
	Timeout time.Duration
	// TLSConfig, when set, is used for TLS (tests set RootCAs); ServerName
	// defaults to Addr's host.
	TLSConfig *tls.Config
}

// Mailer sends mail through one SMTP server.
type Mailer struct {
	addr      string
	host      string
	from      string // the envelope and header address, bare
	fromHdr   string // the From header's value
	fromHost  string // Message-ID domain
	username  string
	password  string
	tlsMode   string
	helo      string
	timeout   time.Duration
	tlsConfig *tls.Config
}

var _ provider.Mailer = (*Mailer)(nil)

// New validates cfg and returns a Mailer. It does not connect.
func New(cfg Config) (*Mailer, error) {
	host, port, err := net.SplitHostPort(cfg.Addr)
	if err != nil || host == "" {
		return nil, fmt.Errorf("smtp: Addr %q must be host:port", cfg.Addr)
	}
	if n, err := strconv.Atoi(port); err != nil || n < 1 || n > 65535 {
		return nil, fmt.Errorf("smtp: Addr %q: the port must be a number from 1 to 65535", cfg.Addr)
	}
	from, err := parseFrom(cfg.From)
	if err != nil {
		return nil, fmt.Errorf("smtp: From: %w", err)
	}
	m := &Mailer{
		addr:     cfg.Addr,
		host:     host,
		from:     from.Address,
		fromHdr:  from.String(),
		fromHost: from.Address[strings.LastIndexByte(from.Address, '@')+1:],
		username: cfg.Username,
		password: cfg.Password,
		tlsMode:  cfg.TLS,
		helo:     cfg.HELO,
		timeout:  cfg.Timeout,
	}
	switch m.tlsMode {
	case "":
		m.tlsMode = TLSStartTLS
	case TLSStartTLS, TLSImplicit, TLSNone:
	default:
		return nil, fmt.Errorf("smtp: TLS %q must be %q, %q or %q", cfg.TLS, TLSStartTLS, TLSImplicit, TLSNone)
	}
	if (m.username == "") != (m.password == "") {
		return nil, errors.New("smtp: Username and Password must be set together")
	}
	if strings.ContainsRune(m.username, 0) || strings.ContainsRune(m.password, 0) {
		return nil, errors.New("smtp: Username and Password must not contain NUL characters")
	}
	if m.username != "" && m.tlsMode == TLSNone && !isLoopback(host) {
		return nil, fmt.Errorf("smtp: credentials would be sent in clear text to %s: use TLS %q or %q, or a server on the loopback interface", host, TLSStartTLS, TLSImplicit)
	}
	if m.helo == "" {
		m.helo = defaultHELO()
	} else if !validHELO(m.helo) {
		return nil, fmt.Errorf("smtp: HELO %q must be a domain name or an address literal such as [192.0.2.1]", cfg.HELO)
	}
	switch {
	case m.timeout < 0:
		return nil, fmt.Errorf("smtp: Timeout %s must not be negative", cfg.Timeout)
	case m.timeout == 0:
		m.timeout = DefaultTimeout
	}
	if cfg.TLSConfig != nil {
		m.tlsConfig = cfg.TLSConfig.Clone()
	} else {
		m.tlsConfig = &tls.Config{}
	}
	if m.tlsConfig.ServerName == "" {
		m.tlsConfig.ServerName = host
	}
	if m.tlsConfig.MinVersion == 0 {
		m.tlsConfig.MinVersion = tls.VersionTLS12
	}
	return m, nil
}

// Send delivers msg to the server. A reply of the server becomes a
// provider.Error: 4xx is 503 (deferred, try later), 5xx is 502 with the
// server's text. An unreachable server is 503, no answer in time 504. A
// canceled ctx returns ctx's error.
//
// The recipient must be an email address by the platform's rule
// (value.EmailAddress: ASCII, at a domain name, no display name, no
// address literal), which the request was checked by; one that is not is
// never handed to the server, so no caller can make the relay deliver to
// an address of its choice or add a command or header with a line break.
func (m *Mailer) Send(ctx context.Context, msg provider.Mail) (provider.SentMail, error) {
	if !value.EmailAddress(msg.To, 0) {
		return provider.SentMail{}, fmt.Errorf("smtp: the recipient %q must be %s", msg.To, value.Rule{Kind: value.Email}.Expected())
	}
	if err := checkSubject(msg.Subject); err != nil {
		return provider.SentMail{}, err
	}
	to := &mail.Address{Address: msg.To}
	id, err := m.newMessageID()
	if err != nil {
		return provider.SentMail{}, err
	}
	body, err := m.build(to, msg.Subject, msg.HTML, id, time.Now())
	if err != nil {
		return provider.SentMail{}, err
	}
	if err := m.deliver(ctx, to.Address, body); err != nil {
		return provider.SentMail{}, err
	}
	return provider.SentMail{MessageID: id, From: m.from}, nil
}

// deliver runs one SMTP conversation. Every step of it is bounded by one
// deadline on the connection, and a canceled ctx moves that deadline to the
// past so a blocked read returns at once.
func (m *Mailer) deliver(ctx context.Context, rcpt string, body []byte) error {
	deadline := time.Now().Add(m.timeout)
	dialCtx, cancel := context.WithDeadline(ctx, deadline)
	defer cancel()

	conn, err := m.dial(dialCtx)
	if err != nil {
		return m.failure(ctx, "connect", err)
	}
	defer conn.Close()
	if err := conn.SetDeadline(deadline); err != nil {
		return m.failure(ctx, "connect", err)
	}
	stop := context.AfterFunc(ctx, func() { _ = conn.SetDeadline(time.Unix(1, 0)) }) // a past deadline ends the exchange
	defer stop()

	c, err := smtp.NewClient(conn, m.host)
	if err != nil {
		return m.failure(ctx, "greeting", err)
	}
	defer c.Close()
	if err := c.Hello(m.helo); err != nil {
		return m.failure(ctx, "hello", err)
	}
	if m.tlsMode == TLSStartTLS {
		if ok, _ := c.Extension("STARTTLS"); ok {
			if err := c.StartTLS(m.tlsConfig); err != nil {
				return m.failure(ctx, "starttls", err)
			}
		} else if m.username != "" {
			return provider.Failure(providerName, 502, nil,
				"the mail server at %s does not offer STARTTLS, and credentials are never sent in clear text (use TLS %q for implicit TLS)", m.addr, TLSImplicit)
		}
	}
	if m.username != "" {
		ok, mechs := c.Extension("AUTH")
		if !ok || !slices.Contains(strings.Fields(strings.ToUpper(mechs)), "PLAIN") {
			return provider.Failure(providerName, 502, nil,
				"the mail server at %s does not offer AUTH PLAIN (it offers %q)", m.addr, mechs)
		}
		if err := c.Auth(plainAuth{username: m.username, password: m.password}); err != nil {
			return m.failure(ctx, "auth", err)
		}
	}
	if err := c.Mail(m.from); err != nil {
		return m.failure(ctx, "mail", err)
	}
	if err := c.Rcpt(rcpt); err != nil {
		return m.failure(ctx, "rcpt", err)
	}
	w, err := c.Data()
	if err != nil {
		return m.failure(ctx, "data", err)
	}
	if _, err := w.Write(body); err != nil {
		return m.failure(ctx, "data", err)
	}
	if err := w.Close(); err != nil {
		return m.failure(ctx, "data", err)
	}
	// The message is accepted; a failed QUIT changes nothing for it.
	_ = c.Quit()
	return nil
}

func (m *Mailer) dial(ctx context.Context) (net.Conn, error) {
	d := &net.Dialer{}
	if m.tlsMode == TLSImplicit {
		td := &tls.Dialer{NetDialer: d, Config: m.tlsConfig}
		return td.DialContext(ctx, "tcp", m.addr)
	}
	return d.DialContext(ctx, "tcp", m.addr)
}

// refusals say what a 5xx reply refused, by the command it answered.
var refusals = map[string]string{
	"greeting": "the mail server refused the connection",
	"hello":    "the mail server refused EHLO",
	"starttls": "the mail server refused STARTTLS",
	"auth":     "the mail server refused the credentials",
	"mail":     "the mail server refused the sender",
	"rcpt":     "the mail server rejected the recipient",
	"data":     "the mail server rejected the message",
}

// failure turns an error of one stage of the conversation into the error
// Send returns.
func (m *Mailer) failure(ctx context.Context, stage string, err error) error {
	if ctxErr := ctx.Err(); ctxErr != nil {
		return ctxErr
	}
	var reply *textproto.Error
	if errors.As(err, &reply) {
		text := replyText(reply)
		switch {
		case reply.Code >= 400 && reply.Code < 500:
			return provider.Failure(providerName, 503, err, "the mail server deferred the message: %s", text)
		case reply.Code >= 500:
			return provider.Failure(providerName, 502, err, "%s: %s", refusals[stage], text)
		}
		return provider.Failure(providerName, 502, err, "the mail server gave an unexpected reply: %s", text)
	}
	if isTimeout(err) {
		return provider.Failure(providerName, 504, err, "the mail server at %s did not answer within %s", m.addr, m.timeout)
	}
	var certErr *tls.CertificateVerificationError
	if errors.As(err, &certErr) {
		return provider.Failure(providerName, 502, err, "the mail server's TLS certificate was not accepted: %v", certErr.Err)
	}
	if op := (*net.OpError)(nil); errors.As(err, &op) && op.Op == "dial" {
		return provider.Failure(providerName, 503, err, "cannot reach the mail server at %s: %v", m.addr, cause(err))
	}
	if stage == "connect" || stage == "starttls" {
		return provider.Failure(providerName, 502, err, "the TLS handshake with the mail server at %s failed: %v", m.addr, err)
	}
	return provider.Failure(providerName, 502, err, "the connection to the mail server at %s broke: %v", m.addr, err)
}

// replyText is a server reply on one line, with its code, at most 300 bytes.
func replyText(e *textproto.Error) string {
	s := strconv.Itoa(e.Code) + " " + strings.Join(strings.Fields(e.Msg), " ")
	if len(s) > 300 {
		s = strings.ToValidUTF8(s[:300], "") + "..."
	}
	return s
}

func isTimeout(err error) bool {
	if errors.Is(err, os.ErrDeadlineExceeded) || errors.Is(err, context.DeadlineExceeded) {
		return true
	}
	var ne net.Error
	return errors.As(err, &ne) && ne.Timeout()
}

// cause is the innermost error, so "dial tcp 127.0.0.1:25: connect:
// connection refused" reads "connection refused".
func cause(err error) error {
	for {
		next := errors.Unwrap(err)
		if next == nil {
			return err
		}
		err = next
	}
}

// plainAuth is AUTH PLAIN (RFC 4616). net/smtp's PlainAuth would do, but
// it only knows "localhost" and the literal loopback addresses as local;
// this one uses the same rule as New.
type plainAuth struct{ username, password string }

func (a plainAuth) Start(server *smtp.ServerInfo) (string, []byte, error) {
	if !server.TLS && !isLoopback(server.Name) {
		return "", nil, errors.New("credentials are never sent in clear text to a remote server")
	}
	return "PLAIN", []byte("\x00" + a.username + "\x00" + a.password), nil
}

func (a plainAuth) Next(_ []byte, more bool) ([]byte, error) {
	if more {
		return nil, errors.New("unexpected challenge after AUTH PLAIN")
	}
	return nil, nil
}

func isLoopback(host string) bool {
	if strings.EqualFold(host, "localhost") {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}

func defaultHELO() string {
	if h, err := os.Hostname(); err == nil && validHELO(h) {
		return h
	}
	return "localhost"
}

// validHELO accepts a domain name or an address literal in brackets.
func validHELO(s string) bool {
	if len(s) > 255 || s == "" {
		return false
	}
	if strings.HasPrefix(s, "[") && strings.HasSuffix(s, "]") {
		lit := strings.TrimPrefix(s[1:len(s)-1], "IPv6:")
		return net.ParseIP(lit) != nil
	}
	for _, label := range strings.Split(s, ".") {
		if label == "" || len(label) > 63 || label[0] == '-' || label[len(label)-1] == '-' {
			return false
		}
		for _, r := range label {
			if !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '-') {
				return false
			}
		}
	}
	return true
}
