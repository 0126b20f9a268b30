package service

import (
	"context"
	"crypto/sha256"
	"strings"
	"testing"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/metadata"

	"github.com/atrium-hq/atrium/platform/pgtest"
	"github.com/atrium-hq/atrium/platform/principal"
	crmv1 "github.com/atrium-hq/atrium/proto/atrium/crm/v1"
)

// TestVerifiedSessionOverGRPC: the gateway signs in a person whose email
// a single sign-on provider verified. An invited email becomes a member
// with a session whose secret is in the response header, as a
// password sign-in's; two at once make one user; an uninvited email is
// refused; only the gateway (an
// internal caller) may ask; on the memory store and on PostgreSQL.
func TestVerifiedSessionOverGRPC(t *testing.T) {
	t.Run("Memory", func(t *testing.T) { testVerifiedSessionOverGRPC(t, "") })
	t.Run("PostgreSQL", func(t *testing.T) {
		testVerifiedSessionOverGRPC(t, pgtest.NewDatabase(t, "crm_service", func(context.Context, string) error { return nil }))
	})
}

func testVerifiedSessionOverGRPC(t *testing.T, databaseURL string) {
	smtpAddr, _ := startSMTP(t)
	c := startPeople(t, smtpAddr, databaseURL)
	ctx := t.Context()
	a, err := c.admin.CreateAgency(c.as(ctx, admin), &crmv1.CreateAgencyRequest{Name: "Acme"})
	if err != nil {
		t.Fatal(err)
	}
	_, err = c.admin.CreateMember(c.as(ctx, admin), &crmv1.CreateMemberRequest{AgencyId: a.Agency.Id, Email: "ada@example.com", Role: "editor"})
	if err != nil {
		t.Fatal(err)
	}
	gateway := principal.Principal{Kind: principal.KindService, Subject: "gateway"}
	from := metadata.AppendToOutgoingContext(c.as(ctx, gateway), "x-forwarded-for", "203.0.113.7", "grpcgateway-user-agent", "Mozilla/5.0")
	req := &crmv1.CreateVerifiedSessionRequest{Email: "Ada@Example.com", Name: "Ada Lovelace", Issuer: "https://id.example/", Subject: "u1"}

	_, err = c.auth.CreateVerifiedSession(c.as(ctx, admin), req)
	wantCode(t, err, codes.PermissionDenied, "internal")

	var header metadata.MD
	in, err := c.auth.CreateVerifiedSession(from, req, grpc.Header(&header))
	if err != nil {
		t.Fatal(err)
	}
	secret := header.Get("atrium-session")
	if len(secret) != 1 || !strings.HasPrefix(secret[0], "atr_ses_") || len(header.Get("atrium-session-expires")) != 1 {
		t.Fatalf("response header %v; want atrium-session and atrium-session-expires", header)
	}
	if in.User.Email != "ada@example.com" || in.User.Name != "Ada Lovelace" || len(in.Memberships) != 1 || in.Memberships[0].Role != "editor" ||
		in.Session.ClientAddress != "203.0.113.7" || in.CsrfToken == "" {
		t.Fatalf("CreateVerifiedSession: %v", in)
	}
	digest := sha256.Sum256([]byte(secret[0]))
	if v, err := c.auth.VerifySession(c.as(ctx, gateway), &crmv1.VerifySessionRequest{SecretSha256: digest[:]}); err != nil || v.User.Id != in.User.Id {
		t.Fatalf("VerifySession of the new session: %v, %v", v, err)
	}
	again, err := c.auth.CreateVerifiedSession(from, req)
	if err != nil || again.User.Id != in.User.Id || again.Session.Id == in.Session.Id {
		t.Fatalf("second single sign-on: %v, %v", again, err)
	}
	// Two sign-ins of a newly invited email at once (two tabs): both are
	// signed in, as one user.
	if _, err := c.admin.CreateMember(c.as(ctx, admin), &crmv1.CreateMemberRequest{AgencyId: a.Agency.Id, Email: "grace@example.com", Role: "viewer"}); err != nil {
		t.Fatal(err)
	}
	type result struct {
		userID string
		err    error
	}
	results := make(chan result, 2)
	for range 2 {
		go func() {
			in, err := c.auth.CreateVerifiedSession(from, &crmv1.CreateVerifiedSessionRequest{Email: "grace@example.com"})
			results <- result{in.GetUser().GetId(), err}
		}()
	}
	r1, r2 := <-results, <-results
	if r1.err != nil || r2.err != nil || r1.userID == "" || r1.userID != r2.userID {
		t.Fatalf("two single sign-ons at once: %+v and %+v; want both signed in as one user", r1, r2)
	}

	_, err = c.auth.CreateVerifiedSession(from, &crmv1.CreateVerifiedSessionRequest{Email: "eve@example.com"})
	wantCode(t, err, codes.PermissionDenied, "no member of any agency has the email eve@example.com")
}
