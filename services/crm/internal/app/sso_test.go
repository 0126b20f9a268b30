package app_test

import (
	"encoding/json"
	"testing"
	"time"

	"github.com/atrium-hq/atrium/platform/apperr"
	"github.com/atrium-hq/atrium/platform/events"
	"github.com/atrium-hq/atrium/services/crm/internal/app"
)

// TestVerifiedSession: single sign-on matches a person by their verified
// email. An invited email gets a user without a password, who joins every
// agency that invited it; the next sign-in finds that user; an email
// nobody invited, or whose invitation expired, is refused and creates
// nothing; a password user's own invitations are accepted too.
func TestVerifiedSession(t *testing.T) {
	f := newPeople(t)
	ctx := t.Context()
	origin := app.Origin{ClientAddress: "203.0.113.9", UserAgent: "browser"}
	beta, err := f.dir.CreateAgency(ctx, "Beta")
	if err != nil {
		t.Fatal(err)
	}
	for _, a := range []string{f.agency.ID, beta.ID} {
		if _, _, err := f.people.CreateMember(ctx, app.NewMember{AgencyID: a, Email: "sam@example.com", Name: "Sam", Role: "viewer"}); err != nil {
			t.Fatal(err)
		}
	}
	f.drain(t)

	in, err := f.sessions.CreateVerifiedSession(ctx, app.VerifiedIdentity{Email: " Sam@Example.com ", Name: "Sam Provider",
		Issuer: "https://id.example/", Subject: "u-1"}, origin)
	if err != nil {
		t.Fatal(err)
	}
	if in.User.Email != "sam@example.com" || in.User.Name != "Sam Provider" || in.Secret == "" || in.Session.ClientAddress != "203.0.113.9" ||
		len(in.Memberships) != 2 || in.Memberships[0].AgencyName != "Acme" || in.Memberships[1].AgencyName != "Beta" {
		t.Fatalf("first single sign-on: %+v", in)
	}
	actions := map[string]int{}
	for _, e := range f.drain(t) {
		var rec events.AuditEvent
		if json.Unmarshal(e.Payload, &rec) == nil && rec.Action != "" {
			actions[rec.Action]++
		}
	}
	if actions["user.created"] != 1 || actions["invitation.accepted"] != 2 || actions["session.created"] != 1 {
		t.Fatalf("audit of the first single sign-on: %v", actions)
	}
	// No password signs the new user in: they have none.
	_, err = f.sessions.CreateSession(ctx, "sam@example.com", "", origin)
	wantKind(t, err, apperr.KindUnauthenticated, "the email or password is wrong")
	_, err = f.sessions.CreateSession(ctx, "sam@example.com", goodPassword, origin)
	wantKind(t, err, apperr.KindUnauthenticated, "the email or password is wrong")

	again, err := f.sessions.CreateVerifiedSession(ctx, app.VerifiedIdentity{Email: "sam@example.com"}, origin)
	if err != nil || again.User.ID != in.User.ID || again.Session.ID == in.Session.ID || len(again.Memberships) != 2 {
		t.Fatalf("second single sign-on: %+v, %v", again, err)
	}

	// A password user invited by another agency joins it on signing in
	// with the provider.
	if _, _, err := f.people.CreateMember(ctx, app.NewMember{AgencyID: beta.ID, Email: "olga@example.com", Role: "viewer"}); err != nil {
		t.Fatal(err)
	}
	olga, err := f.sessions.CreateVerifiedSession(ctx, app.VerifiedIdentity{Email: "olga@example.com"}, origin)
	if err != nil || olga.User.ID != f.owner.UserID || len(olga.Memberships) != 2 {
		t.Fatalf("password user's single sign-on: %+v, %v", olga, err)
	}
	if _, err := f.sessions.CreateSession(ctx, "olga@example.com", goodPassword, origin); err != nil {
		t.Fatalf("the password still works after a single sign-on: %v", err)
	}

	f.drain(t)
	_, err = f.sessions.CreateVerifiedSession(ctx, app.VerifiedIdentity{Email: "nobody@example.com"}, origin)
	wantKind(t, err, apperr.KindPermissionDenied, "no member of any agency has the email nobody@example.com", "ask an owner to invite you")
	_, err = f.sessions.CreateVerifiedSession(ctx, app.VerifiedIdentity{Email: "not an email"}, origin)
	wantKind(t, err, apperr.KindInvalid, "email")

	if _, _, err := f.people.CreateMember(ctx, app.NewMember{AgencyID: f.agency.ID, Email: "late@example.com", Role: "viewer"}); err != nil {
		t.Fatal(err)
	}
	f.drain(t)
	f.clock.advance(49 * time.Hour) // the invitations last 48h here
	_, err = f.sessions.CreateVerifiedSession(ctx, app.VerifiedIdentity{Email: "late@example.com"}, origin)
	wantKind(t, err, apperr.KindPermissionDenied, "late@example.com")
	if es := f.drain(t); len(es) != 0 {
		t.Fatalf("a refused single sign-on wrote %d events (%v)", len(es), subjects(es))
	}
}
