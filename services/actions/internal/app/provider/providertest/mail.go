package providertest

import (
	"bytes"
	"context"
	"encoding/base64"
	"errors"
	"io"
	"mime"
	"mime/multipart"
	"mime/quotedprintable"
	"net"
	"net/mail"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	gosmtp "github.com/emersion/go-smtp"

	"github.com/atrium-hq/atrium/services/actions/internal/app/provider"
)

// RunMailer runs the mailer's contract against mailers made by newMailer,
// which must send to the SMTP server at addr (on the loopback interface,
// without TLS or authentication): a message reaches its one recipient with
// the subject and the HTML as given and the Message-ID and sender the
// mailer reports (send_prospect_email records both), nothing is sent to a
// recipient that is not an email address by the platform's rule (an
// address literal would let a caller choose where the relay delivers, a
// line break add a command), a server that refuses it or cannot be reached
// is a provider failure, and the caller's context ends a send.
func RunMailer(t *testing.T, newMailer func(t *testing.T, addr string) provider.Mailer) {
	msg := provider.Mail{To: "zoe@client.example", Subject: "Your SEO plan — café edition", HTML: "<h2>Hello Zoë</h2><p>Here is <b>the plan</b>.</p>"}

	t.Run("DeliversToTheRecipient", func(t *testing.T) {
		srv := startSMTP(t, nil)
		sent, err := newMailer(t, srv.addr).Send(t.Context(), msg)
		if err != nil {
			t.Fatalf("Send: %v", err)
		}
		if sent.MessageID == "" || sent.From == "" {
			t.Fatalf("sent = %+v, want its Message-ID and sender", sent)
		}
		got := srv.received()
		if len(got) != 1 {
			t.Fatalf("the server received %d messages, want 1", len(got))
		}
		if !slices.Equal(got[0].rcpts, []string{msg.To}) || got[0].from != sent.From {
			t.Errorf("envelope from %q to %v, want from %q to [%s]", got[0].from, got[0].rcpts, sent.From, msg.To)
		}
		m, err := mail.ReadMessage(bytes.NewReader(got[0].data))
		if err != nil {
			t.Fatalf("the message does not parse: %v\n%s", err, got[0].data)
		}
		subject, err := new(mime.WordDecoder).DecodeHeader(m.Header.Get("Subject"))
		if err != nil || subject != msg.Subject {
			t.Errorf("Subject %q (%v), want %q", subject, err, msg.Subject)
		}
		if id := m.Header.Get("Message-Id"); id != sent.MessageID {
			t.Errorf("Message-Id %q, want the reported %q", id, sent.MessageID)
		}
		if to, err := mail.ParseAddress(m.Header.Get("To")); err != nil || to.Address != msg.To {
			t.Errorf("To %q, want %s", m.Header.Get("To"), msg.To)
		}
		if html := htmlPart(t, m); html != msg.HTML {
			t.Errorf("HTML part %q, want %q", html, msg.HTML)
		}
	})
	t.Run("SendsNothingToAnAddressTheRuleRefuses", func(t *testing.T) {
		srv := startSMTP(t, nil)
		m := newMailer(t, srv.addr)
		for _, to := range []string{"", "Zoe <zoe@client.example>", "zoë@client.example", "zoe@clïent.example", "bob@[127.0.0.1]", "bob@127.0.0.1",
			"zoe@client.example\r\nRCPT TO:<victim@else.example>", "zoe@client.example, other@client.example", "zoe@client.example\x00"} {
			bad := msg
			bad.To = to
			if _, err := m.Send(t.Context(), bad); err == nil {
				t.Errorf("Send to %q succeeded, want an error", to)
			}
		}
		if got := srv.received(); len(got) != 0 {
			t.Errorf("the server received %d messages, want none", len(got))
		}
	})
	t.Run("ARefusalIsAFailure", func(t *testing.T) {
		srv := startSMTP(t, &gosmtp.SMTPError{Code: 550, EnhancedCode: gosmtp.EnhancedCode{5, 1, 1}, Message: "no such user"})
		_, err := newMailer(t, srv.addr).Send(t.Context(), msg)
		wantFailure(t, err, 0)
		if len(srv.received()) != 0 {
			t.Error("a refused message was delivered")
		}
	})
	t.Run("AnUnreachableServerIsAFailure", func(t *testing.T) {
		_, err := newMailer(t, closedAddr(t)).Send(t.Context(), msg)
		wantFailure(t, err, 503)
	})
	t.Run("TheCallersContextEndsTheSend", func(t *testing.T) {
		srv := startSMTP(t, nil)
		m := newMailer(t, srv.addr)
		callerContexts(t, func(ctx context.Context) error {
			_, err := m.Send(ctx, msg)
			return err
		})
	})
}

// htmlPart is the decoded text/html part of m, which may be the whole
// message or one part of a multipart one.
func htmlPart(t *testing.T, m *mail.Message) string {
	t.Helper()
	media, params, err := mime.ParseMediaType(m.Header.Get("Content-Type"))
	if err != nil {
		t.Fatalf("Content-Type %q: %v", m.Header.Get("Content-Type"), err)
	}
	decode := func(enc string, r io.Reader) string {
		switch strings.ToLower(enc) {
		case "quoted-printable":
			r = quotedprintable.NewReader(r)
		case "base64":
			r = base64.NewDecoder(base64.StdEncoding, r)
		}
		b, err := io.ReadAll(r)
		if err != nil {
			t.Fatal(err)
		}
		return string(b)
	}
	if media == "text/html" {
		return decode(m.Header.Get("Content-Transfer-Encoding"), m.Body)
	}
	mr := multipart.NewReader(m.Body, params["boundary"])
	for {
		p, err := mr.NextPart()
		if errors.Is(err, io.EOF) {
			t.Fatalf("the %s message has no text/html part", media)
		}
		if err != nil {
			t.Fatal(err)
		}
		if ct, _, _ := mime.ParseMediaType(p.Header.Get("Content-Type")); ct == "text/html" {
			// A multipart.Part has decoded quoted-printable itself and
			// removed the header.
			return decode(p.Header.Get("Content-Transfer-Encoding"), p)
		}
	}
}

// smtpServer is an SMTP server on the loopback interface that keeps what
// it accepts, or refuses every recipient with refuse.
type smtpServer struct {
	addr   string
	refuse error

	mu       sync.Mutex
	messages []delivery
}

type delivery struct {
	from  string
	rcpts []string
	data  []byte
}

func startSMTP(t *testing.T, refuse error) *smtpServer {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	srv := &smtpServer{addr: l.Addr().String(), refuse: refuse}
	s := gosmtp.NewServer(srv)
	s.Domain = "mx.test"
	s.ReadTimeout, s.WriteTimeout = 5*time.Second, 5*time.Second
	done := make(chan struct{})
	go func() {
		defer close(done)
		_ = s.Serve(l)
	}()
	t.Cleanup(func() {
		_ = s.Close()
		_ = l.Close()
		<-done
	})
	return srv
}

func (s *smtpServer) received() []delivery {
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.Clone(s.messages)
}

// NewSession implements gosmtp.Backend.
func (s *smtpServer) NewSession(*gosmtp.Conn) (gosmtp.Session, error) {
	return &smtpSession{srv: s}, nil
}

type smtpSession struct {
	srv *smtpServer
	cur delivery
}

func (s *smtpSession) Mail(from string, _ *gosmtp.MailOptions) error {
	s.cur = delivery{from: from}
	return nil
}

func (s *smtpSession) Rcpt(to string, _ *gosmtp.RcptOptions) error {
	if s.srv.refuse != nil {
		return s.srv.refuse
	}
	s.cur.rcpts = append(s.cur.rcpts, to)
	return nil
}

func (s *smtpSession) Data(r io.Reader) error {
	data, err := io.ReadAll(r)
	if err != nil {
		return err
	}
	s.cur.data = data
	s.srv.mu.Lock()
	s.srv.messages = append(s.srv.messages, s.cur)
	s.srv.mu.Unlock()
	return nil
}

func (s *smtpSession) Reset()        { s.cur = delivery{} }
func (s *smtpSession) Logout() error { return nil }
