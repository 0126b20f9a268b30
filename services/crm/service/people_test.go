package service

import (
	"context"
	"crypto/sha256"
	"io"
	"log/slog"
	"net"
	"regexp"
	"strings"
	"testing"
	"time"

	gosmtp "github.com/emersion/go-smtp"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/encoding/protojson"

	"github.com/atrium-hq/atrium/platform/natstest"
	"github.com/atrium-hq/atrium/platform/pgtest"
	"github.com/atrium-hq/atrium/platform/principal"
	"github.com/atrium-hq/atrium/platform/rpc"
	"github.com/atrium-hq/atrium/platform/runner"
	crmv1 "github.com/atrium-hq/atrium/proto/atrium/crm/v1"
)

// A real SMTP server (emersion/go-smtp) that hands every message it
// receives to the test.
type mailbox chan string

func (b mailbox) NewSession(*gosmtp.Conn) (gosmtp.Session, error) { return &mailSession{box: b}, nil }

type mailSession struct {
	box mailbox
	to  string
}

func (s *mailSession) Mail(string, *gosmtp.MailOptions) error { return nil }
func (s *mailSession) Rcpt(to string, _ *gosmtp.RcptOptions) error {
	s.to = to
	return nil
}
func (s *mailSession) Data(r io.Reader) error {
	b, err := io.ReadAll(r)
	if err != nil {
		return err
	}
	s.box <- "To-Envelope: " + s.to + "\r\n" + string(b)
	return nil
}
func (s *mailSession) Reset()        {}
func (s *mailSession) Logout() error { return nil }

func startSMTP(t *testing.T) (string, mailbox) {
	t.Helper()
	box := make(mailbox, 10)
	srv := gosmtp.NewServer(box)
	srv.Domain = "localhost"
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	go func() { _ = srv.Serve(l) }()
	t.Cleanup(func() { srv.Close() })
	return l.Addr().String(), box
}

func (b mailbox) next(t *testing.T, to string) string {
	t.Helper()
	select {
	case m := <-b:
		if !strings.Contains(m, "To-Envelope: "+to+"\r\n") {
			t.Fatalf("mail to another recipient than %s:\n%s", to, m)
		}
		return m
	case <-time.After(10 * time.Second):
		t.Fatalf("no mail to %s within 10s", to)
	}
	return ""
}

type peopleClients struct {
	clients
	people   crmv1.PeopleServiceClient
	sessions crmv1.SessionServiceClient
	auth     crmv1.SessionAuthServiceClient
}

func startPeople(t *testing.T, smtpAddr, databaseURL string) peopleClients {
	t.Helper()
	l, _ := net.Listen("tcp", "127.0.0.1:0")
	collections := l.Addr().String() // nothing answers there
	l.Close()
	svc, err := New(t.Context(), Config{
		Config: runner.Config{
			GRPCAddr: "127.0.0.1:0", Backing: runner.Backing{NATSURL: natstest.URL(t), DatabaseURL: databaseURL, Migrate: true},
			InternalSecret: secret, Logger: slog.New(slog.DiscardHandler),
		},
		CollectionsAddr: collections,
		PublicURL:       "https://atrium.example/",
		Mail:            Mail{Addr: smtpAddr, From: "Atrium <noreply@atrium.example>", TLS: "none"},
	})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- svc.Run(ctx) }()
	t.Cleanup(func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("Run after cancel: %v", err)
		}
	})
	conn, err := rpc.Dial(svc.Addr())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { conn.Close() })
	signer, _ := principal.NewSigner(secret)
	return peopleClients{
		clients:  clients{svc.Addr(), crmv1.NewCRMServiceClient(conn), crmv1.NewCRMAdminServiceClient(conn), crmv1.NewAPIKeyServiceClient(conn), signer},
		people:   crmv1.NewPeopleServiceClient(conn),
		sessions: crmv1.NewSessionServiceClient(conn),
		auth:     crmv1.NewSessionAuthServiceClient(conn),
	}
}

func TestMain(m *testing.M) { pgtest.Main(m) }

var anonymous = principal.Principal{Kind: principal.KindAnonymous}

var tokenIn = regexp.MustCompile(`https://atrium\.example/studio/(invitations|password-resets)/(atr_(inv|rst)_[A-Za-z0-9_-]{43})`)

// TestPeopleOverGRPC: an operator invites an owner, who gets the
// invitation by email, accepts it and is signed in (the secret only in the
// response metadata), manages the agency's members but never another
// agency's, and resets a forgotten password by email, which ends the
// sessions; on the memory store and on PostgreSQL.
func TestPeopleOverGRPC(t *testing.T) {
	t.Run("Memory", func(t *testing.T) { testPeopleOverGRPC(t, "") })
	t.Run("PostgreSQL", func(t *testing.T) {
		// An empty database: the service applies its migrations at start.
		testPeopleOverGRPC(t, pgtest.NewDatabase(t, "crm_service", func(context.Context, string) error { return nil }))
	})
}

func testPeopleOverGRPC(t *testing.T, databaseURL string) {
	smtpAddr, box := startSMTP(t)
	c := startPeople(t, smtpAddr, databaseURL)
	ctx := t.Context()
	a, err := c.admin.CreateAgency(c.as(ctx, admin), &crmv1.CreateAgencyRequest{Name: "Acme"})
	if err != nil {
		t.Fatal(err)
	}
	b, err := c.admin.CreateAgency(c.as(ctx, admin), &crmv1.CreateAgencyRequest{Name: "Beta"})
	if err != nil {
		t.Fatal(err)
	}
	created, err := c.admin.CreateMember(c.as(ctx, admin), &crmv1.CreateMemberRequest{AgencyId: a.Agency.Id, Email: "Olga@Example.com", Role: "owner"})
	if err != nil {
		t.Fatal(err)
	}
	inv := created.Invitation
	if created.Member.GetRole().GetValue() != "owner" || created.Member.Status != "invited" || inv.GetToken() == "" ||
		inv.GetUrl() != "https://atrium.example/studio/invitations/"+inv.GetToken() {
		t.Fatalf("admin CreateMember: %v", created)
	}
	mail := box.next(t, "olga@example.com")
	if m := tokenIn.FindStringSubmatch(mail); m == nil || m[2] != inv.GetToken() || !strings.Contains(mail, "Acme") {
		t.Fatalf("the invitation email does not carry its link:\n%s", mail)
	}

	// Accepting it signs in: the secret travels in the response header.
	from := metadata.AppendToOutgoingContext(c.as(ctx, anonymous), "x-forwarded-for", "203.0.113.7, 10.0.0.1", "grpcgateway-user-agent", "Mozilla/5.0")
	var header metadata.MD
	_, err = c.sessions.AcceptInvitation(from, &crmv1.AcceptInvitationRequest{Token: inv.GetToken(), Password: "short"})
	wantCode(t, err, codes.InvalidArgument, "12 to 1024")
	acc, err := c.sessions.AcceptInvitation(from, &crmv1.AcceptInvitationRequest{Token: inv.GetToken(), Password: "correct horse battery staple"}, grpc.Header(&header))
	if err != nil {
		t.Fatal(err)
	}
	secret := header.Get("atrium-session")
	expires := header.Get("atrium-session-expires")
	if len(secret) != 1 || !strings.HasPrefix(secret[0], "atr_ses_") || len(expires) != 1 {
		t.Fatalf("response header %v; want atrium-session and atrium-session-expires", header)
	}
	if exp, err := time.Parse(time.RFC3339, expires[0]); err != nil || exp.Before(time.Now().Add(167*time.Hour)) {
		t.Fatalf("atrium-session-expires %q (%v); want RFC 3339, 168h ahead", expires[0], err)
	}
	if body, _ := protojson.Marshal(acc); strings.Contains(string(body), secret[0]) {
		t.Fatalf("the session's secret is in the body: %s", body)
	}
	if acc.Session.ClientAddress != "203.0.113.7" || acc.Session.UserAgent != "Mozilla/5.0" || acc.CsrfToken == "" ||
		len(acc.Memberships) != 1 || acc.Memberships[0].AgencyName != "Acme" || acc.Memberships[0].Role != "owner" {
		t.Fatalf("accepted: %v", acc)
	}

	// The gateway resolves the cookie; nobody else may ask.
	digest := sha256.Sum256([]byte(secret[0]))
	gateway := principal.Principal{Kind: principal.KindService, Subject: "gateway"}
	v, err := c.auth.VerifySession(c.as(ctx, gateway), &crmv1.VerifySessionRequest{SecretSha256: digest[:]})
	if err != nil {
		t.Fatal(err)
	}
	csrf := sha256.Sum256([]byte(acc.CsrfToken))
	if v.User.Id != acc.User.Id || string(v.CsrfSha256) != string(csrf[:]) || v.CsrfToken != acc.CsrfToken || len(v.Memberships) != 1 {
		t.Fatalf("VerifySession: %v", v)
	}
	_, err = c.auth.VerifySession(c.as(ctx, admin), &crmv1.VerifySessionRequest{SecretSha256: digest[:]})
	wantCode(t, err, codes.PermissionDenied, "internal")
	unknown := sha256.Sum256([]byte("atr_ses_unknown"))
	_, err = c.auth.VerifySession(c.as(ctx, gateway), &crmv1.VerifySessionRequest{SecretSha256: unknown[:]})
	wantCode(t, err, codes.NotFound)

	// The owner, signed in.
	owner := principal.Principal{Kind: principal.KindUser, Subject: acc.User.Id, AgencyID: a.Agency.Id, Role: principal.RoleOwner,
		MemberID: created.Member.Id, SessionID: acc.Session.Id}
	cur, err := c.sessions.GetCurrentSession(c.as(ctx, owner), &crmv1.GetCurrentSessionRequest{})
	if err != nil || cur.CsrfToken != acc.CsrfToken || cur.User.Email != "olga@example.com" {
		t.Fatalf("GetCurrentSession: %v, %v", cur, err)
	}
	viewer, err := c.people.CreateMember(c.as(ctx, owner), &crmv1.PeopleServiceCreateMemberRequest{Email: "vic@example.com", Role: "viewer"})
	if err != nil || viewer.Invitation.GetToken() == "" {
		t.Fatalf("owner's CreateMember: %v, %v", viewer, err)
	}
	box.next(t, "vic@example.com")
	// Accepted twice at once, an invitation still works once.
	results := make(chan error, 2)
	for range 2 {
		go func() {
			_, err := c.sessions.AcceptInvitation(c.as(ctx, anonymous), &crmv1.AcceptInvitationRequest{Token: viewer.Invitation.GetToken(),
				Password: "viewer's own passphrase"})
			results <- err
		}()
	}
	e1, e2 := <-results, <-results
	if (e1 == nil) == (e2 == nil) {
		t.Fatalf("two accepts at once: %v and %v; want exactly one to succeed", e1, e2)
	}
	if e1 == nil {
		e1 = e2
	}
	if status.Code(e1) != codes.NotFound && status.Code(e1) != codes.Aborted {
		t.Fatalf("the second accept: %v, want NotFound (or Aborted)", e1)
	}
	list, err := c.people.ListMembers(c.as(ctx, owner), &crmv1.ListMembersRequest{})
	if err != nil || len(list.Members) != 2 || list.Members[0].Email != "olga@example.com" || list.Members[0].Status != "active" ||
		list.Members[1].Status != "active" {
		t.Fatalf("ListMembers: %v, %v", list, err)
	}
	_, err = c.people.DeleteMember(c.as(ctx, owner), &crmv1.DeleteMemberRequest{MemberId: created.Member.Id})
	wantCode(t, err, codes.AlreadyExists, "last owner")

	// Another agency's members and keys are not found; no key may manage
	// members.
	other, err := c.admin.CreateMember(c.as(ctx, admin), &crmv1.CreateMemberRequest{AgencyId: b.Agency.Id, Email: "bob@example.com"})
	if err != nil {
		t.Fatal(err)
	}
	_, err = c.people.UpdateMember(c.as(ctx, owner), &crmv1.UpdateMemberRequest{MemberId: other.Member.Id, Name: new("Hacked")})
	wantCode(t, err, codes.NotFound, other.Member.Id)
	_, err = c.people.DeleteMember(c.as(ctx, owner), &crmv1.DeleteMemberRequest{MemberId: other.Member.Id})
	wantCode(t, err, codes.NotFound)
	bKey, err := c.admin.CreateKey(c.as(ctx, admin), &crmv1.CreateKeyRequest{Name: "b", Scopes: []string{"read"}, AgencyId: b.Agency.Id})
	if err != nil {
		t.Fatal(err)
	}
	_, err = c.people.RevokeAgencyKey(c.as(ctx, owner), &crmv1.RevokeAgencyKeyRequest{KeyId: bKey.Key.Id})
	wantCode(t, err, codes.NotFound, bKey.Key.Id)
	aKey, err := c.people.CreateAgencyKey(c.as(ctx, owner), &crmv1.CreateAgencyKeyRequest{Name: "reports", Scopes: []string{"read"}})
	if err != nil || aKey.Key.GetSecret() == "" || aKey.Key.AgencyId.GetValue() != a.Agency.Id {
		t.Fatalf("CreateAgencyKey: %v, %v", aKey, err)
	}
	keys, err := c.people.ListAgencyKeys(c.as(ctx, owner), &crmv1.ListAgencyKeysRequest{})
	if err != nil || len(keys.Keys) != 1 || keys.Keys[0].Id != aKey.Key.Id {
		t.Fatalf("ListAgencyKeys: %v, %v", keys, err)
	}
	_, err = c.people.ListMembers(c.as(ctx, keyOf(a.Agency.Id, principal.ScopeRead, principal.ScopeWrite)), &crmv1.ListMembersRequest{})
	wantCode(t, err, codes.PermissionDenied, "only people")
	_, err = c.sessions.GetCurrentSession(c.as(ctx, keyOf(a.Agency.Id, principal.ScopeRead)), &crmv1.GetCurrentSessionRequest{})
	wantCode(t, err, codes.PermissionDenied, "signed-in person")

	// A wrong password and an unknown email: one answer.
	_, errW := c.sessions.CreateSession(c.as(ctx, anonymous), &crmv1.CreateSessionRequest{Email: "olga@example.com", Password: "wrong password!"})
	_, errU := c.sessions.CreateSession(c.as(ctx, anonymous), &crmv1.CreateSessionRequest{Email: "nobody@example.com", Password: "wrong password!"})
	wantCode(t, errW, codes.Unauthenticated, "the email or password is wrong")
	if errW.Error() != errU.Error() {
		t.Fatalf("wrong password: %v; unknown email: %v", errW, errU)
	}

	// A reset by email: the same answer for anyone; the email's link sets
	// a new password and ends every session.
	for _, e := range []string{"nobody@example.com", "olga@example.com"} {
		if _, err := c.sessions.RequestPasswordReset(c.as(ctx, anonymous), &crmv1.RequestPasswordResetRequest{Email: e}); err != nil {
			t.Fatal(err)
		}
	}
	mail = box.next(t, "olga@example.com")
	m := tokenIn.FindStringSubmatch(mail)
	if m == nil || m[1] != "password-resets" {
		t.Fatalf("the reset email does not carry its link:\n%s", mail)
	}
	if _, err := c.sessions.CompletePasswordReset(c.as(ctx, anonymous), &crmv1.CompletePasswordResetRequest{Token: m[2], Password: "a fresh new passphrase"}); err != nil {
		t.Fatal(err)
	}
	_, err = c.auth.VerifySession(c.as(ctx, gateway), &crmv1.VerifySessionRequest{SecretSha256: digest[:]})
	wantCode(t, err, codes.NotFound)

	// Sign in with the new password, then out.
	header = nil
	in, err := c.sessions.CreateSession(c.as(ctx, anonymous), &crmv1.CreateSessionRequest{Email: "olga@example.com", Password: "a fresh new passphrase"}, grpc.Header(&header))
	if err != nil || len(header.Get("atrium-session")) != 1 {
		t.Fatalf("CreateSession: %v, %v (header %v)", in, err, header)
	}
	owner.SessionID = in.Session.Id
	if _, err := c.sessions.DeleteCurrentSession(c.as(ctx, owner), &crmv1.DeleteCurrentSessionRequest{}); err != nil {
		t.Fatal(err)
	}
	_, err = c.sessions.GetCurrentSession(c.as(ctx, owner), &crmv1.GetCurrentSessionRequest{})
	wantCode(t, err, codes.NotFound, "sign in again")

	// The operator's reset, for a deployment without SMTP.
	r, err := c.admin.CreatePasswordReset(c.as(ctx, admin), &crmv1.CreatePasswordResetRequest{Email: "olga@example.com"})
	if err != nil || !strings.HasPrefix(r.Token, "atr_rst_") || r.Url != "https://atrium.example/studio/password-resets/"+r.Token {
		t.Fatalf("admin CreatePasswordReset: %v, %v", r, err)
	}
	_, err = c.admin.CreatePasswordReset(c.as(ctx, admin), &crmv1.CreatePasswordResetRequest{Email: "nobody@example.com"})
	wantCode(t, err, codes.NotFound)
}
