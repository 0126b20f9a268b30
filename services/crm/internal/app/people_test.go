package app_test

import (
	"context"
	"crypto/sha256"
	"encoding/json"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/atrium-hq/atrium/platform/apperr"
	"github.com/atrium-hq/atrium/platform/events"
	"github.com/atrium-hq/atrium/platform/memdb"
	"github.com/atrium-hq/atrium/platform/outbox"
	"github.com/atrium-hq/atrium/platform/principal"
	"github.com/atrium-hq/atrium/services/crm/internal/adapters/memory"
	"github.com/atrium-hq/atrium/services/crm/internal/app"
)

// The people rules on the memory store with a clock the test moves.

type movingClock struct {
	mu sync.Mutex
	t  time.Time
}

func (c *movingClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.t
}

func (c *movingClock) advance(d time.Duration) {
	c.mu.Lock()
	c.t = c.t.Add(d)
	c.mu.Unlock()
}

type peopleFixture struct {
	db       *memdb.DB
	clock    *movingClock
	dir      *app.Directory
	people   *app.People
	sessions *app.Sessions
	pipeline *app.Pipeline
	sites    sites
	agency   app.Agency
	owner    app.Member
	// ownerPassword signs the owner in.
	ownerPassword string
}

const goodPassword = "correct horse battery staple"

func newPeople(t *testing.T) *peopleFixture {
	t.Helper()
	db := memdb.New(nil)
	st := memory.New(db)
	f := &peopleFixture{db: db, clock: &movingClock{t: now}, sites: sites{}}
	clock := app.Clock(f.clock.Now)
	keys := app.NewKeys(app.KeyStoreOf(st), f.sites, clock)
	cfg := app.PeopleConfig{PublicURL: func() string { return "https://atrium.example/" }, InvitationTTL: 48 * time.Hour, SessionTTL: 24 * time.Hour}
	f.dir = app.NewDirectory(app.DirectoryStoreOf(st), clock)
	f.people = app.NewPeople(app.PeopleStoreOf(st), keys, f.sites, clock, cfg)
	f.sessions = app.NewSessions(app.PeopleStoreOf(st), app.NewHasher(0), clock, cfg)
	f.pipeline = app.NewPipeline(app.PipelineStoreOf(st), clock)
	var err error
	if f.agency, err = f.dir.CreateAgency(t.Context(), "Acme"); err != nil {
		t.Fatal(err)
	}
	f.owner, _ = f.join(t, f.agency.ID, "olga@example.com", "owner", goodPassword)
	f.ownerPassword = goodPassword
	f.drain(t)
	return f
}

// join invites a member with a role and accepts the invitation.
func (f *peopleFixture) join(t *testing.T, agencyID, email, role, password string) (app.Member, app.SignedIn) {
	t.Helper()
	m, inv, err := f.people.CreateMember(t.Context(), app.NewMember{AgencyID: agencyID, Email: email, Role: role})
	if err != nil {
		t.Fatal(err)
	}
	in, err := f.sessions.AcceptInvitation(t.Context(), inv.Token, password, "", app.Origin{ClientAddress: "203.0.113.7", UserAgent: "test"})
	if err != nil {
		t.Fatal(err)
	}
	m.UserID = in.User.ID
	return m, in
}

// drain returns the subjects of the events enqueued since the last drain.
func (f *peopleFixture) drain(t *testing.T) []outbox.Event {
	t.Helper()
	var out []outbox.Event
	err := f.db.Outbox().Claim(t.Context(), 1000, func(_ context.Context, es []outbox.Event) int {
		out = append(out, es...)
		return len(es)
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

func subjects(es []outbox.Event) []string {
	out := []string{}
	for _, e := range es {
		if !strings.HasPrefix(e.Subject, "atrium.audit.") {
			out = append(out, e.Subject)
		}
	}
	return out
}

func wantKind(t *testing.T, err error, kind apperr.Kind, words ...string) {
	t.Helper()
	if apperr.KindOf(err) != kind {
		t.Fatalf("got %v (kind %v), want kind %v mentioning %q", err, apperr.KindOf(err), kind, words)
	}
	for _, w := range words {
		if !strings.Contains(err.Error(), w) {
			t.Fatalf("error %q does not mention %q", err, w)
		}
	}
}

func asOwner(ctx context.Context, f *peopleFixture) context.Context {
	return principal.NewContext(ctx, principal.Principal{Kind: principal.KindUser, Subject: f.owner.UserID, AgencyID: f.agency.ID,
		Role: principal.RoleOwner, MemberID: f.owner.ID})
}

func TestInvitationAnswersATokenOnceWithItsURL(t *testing.T) {
	f := newPeople(t)
	ctx := t.Context()
	m, inv, err := f.people.CreateMember(ctx, app.NewMember{AgencyID: f.agency.ID, Email: " Vic@Example.com ", Role: "viewer"})
	if err != nil {
		t.Fatal(err)
	}
	if m.Email != "vic@example.com" || m.Name != "vic" || m.Status() != app.MemberStatusInvited {
		t.Fatalf("member %+v; want the email lower-cased, the name its local part, invited", m)
	}
	if !strings.HasPrefix(inv.Token, "atr_inv_") || inv.URL != "https://atrium.example/studio/invitations/"+inv.Token ||
		!inv.ExpiresAt.Equal(now.Add(48*time.Hour)) {
		t.Fatalf("invitation %+v", inv)
	}
	// The same email again, in any case: a conflict.
	_, _, err = f.people.CreateMember(ctx, app.NewMember{AgencyID: f.agency.ID, Email: "VIC@example.com"})
	wantKind(t, err, apperr.KindConflict, "vic@example.com")

	// A new invitation voids the first.
	_, inv2, err := f.people.CreateInvitation(ctx, f.agency.ID, m.ID)
	if err != nil {
		t.Fatal(err)
	}
	_, err = f.sessions.AcceptInvitation(ctx, inv.Token, goodPassword, "", app.Origin{})
	wantKind(t, err, apperr.KindNotFound, "invitation")

	// It works once.
	in, err := f.sessions.AcceptInvitation(ctx, inv2.Token, goodPassword, "Victor", app.Origin{})
	if err != nil {
		t.Fatal(err)
	}
	if in.User.Name != "Victor" || len(in.Memberships) != 1 || in.Memberships[0].AgencyName != "Acme" ||
		in.Memberships[0].Member.Role != principal.RoleViewer || !strings.HasPrefix(in.Secret, "atr_ses_") {
		t.Fatalf("signed in %+v", in)
	}
	_, err = f.sessions.AcceptInvitation(ctx, inv2.Token, goodPassword, "", app.Origin{})
	wantKind(t, err, apperr.KindNotFound, "invitation")
	_, _, err = f.people.CreateInvitation(ctx, f.agency.ID, m.ID)
	wantKind(t, err, apperr.KindConflict, "accepted")
}

func TestInvitationExpires(t *testing.T) {
	f := newPeople(t)
	_, inv, err := f.people.CreateMember(t.Context(), app.NewMember{AgencyID: f.agency.ID, Email: "late@example.com", Role: "editor"})
	if err != nil {
		t.Fatal(err)
	}
	f.clock.advance(48 * time.Hour)
	_, err = f.sessions.AcceptInvitation(t.Context(), inv.Token, goodPassword, "", app.Origin{})
	wantKind(t, err, apperr.KindNotFound, "expired")
}

func TestPasswordRule(t *testing.T) {
	for _, tc := range []struct {
		pw    string
		words []string
	}{
		{"short", []string{"12 to 1024", "got 5"}},
		{strings.Repeat("é", 1025), []string{"12 to 1024"}},
		{"Password1234", []string{"common"}},
		{"qwertyuiop123", []string{"common"}},
	} {
		wantKind(t, app.CheckNewPassword("password", tc.pw), apperr.KindInvalid, tc.words...)
	}
	if err := app.CheckNewPassword("password", "ünïcode 12 chars"); err != nil {
		t.Fatal(err)
	}
	// Accepting an invitation applies it and changes nothing.
	f := newPeople(t)
	_, inv, _ := f.people.CreateMember(t.Context(), app.NewMember{AgencyID: f.agency.ID, Email: "weak@example.com", Role: "viewer"})
	_, err := f.sessions.AcceptInvitation(t.Context(), inv.Token, "password1234", "", app.Origin{})
	wantKind(t, err, apperr.KindInvalid, "common")
	if _, err := f.sessions.AcceptInvitation(t.Context(), inv.Token, goodPassword, "", app.Origin{}); err != nil {
		t.Fatalf("the invitation after a refused password: %v", err)
	}
}

func TestHashIsArgon2idWithItsParameters(t *testing.T) {
	h := app.NewHasher(0)
	enc, err := h.Hash(t.Context(), goodPassword)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(enc, "$argon2id$v=19$m=19456,t=2,p=1$") {
		t.Fatalf("hash %q; want a PHC string of argon2id with m=19456, t=2, p=1", enc)
	}
	for pw, want := range map[string]bool{goodPassword: true, goodPassword + "!": false} {
		if ok, err := h.Verify(t.Context(), enc, pw); err != nil || ok != want {
			t.Fatalf("Verify(%q) = %v, %v; want %v", pw, ok, err, want)
		}
	}
}

// TestUnknownEmailAndWrongPasswordAnswerAlike: the same error, and an
// unknown email costs an argon2id verification as a wrong password does.
func TestUnknownEmailAndWrongPasswordAnswerAlike(t *testing.T) {
	f := newPeople(t)
	ctx := t.Context()
	timed := func(email, pw string) (time.Duration, error) {
		start := time.Now()
		_, err := f.sessions.CreateSession(ctx, email, pw, app.Origin{})
		return time.Since(start), err
	}
	var wrong, unknown []time.Duration
	for range 3 {
		dW, errW := timed("olga@example.com", "not the password at all")
		dU, errU := timed("nobody@example.com", "not the password at all")
		if errW == nil || errU == nil || errW.Error() != errU.Error() || apperr.KindOf(errW) != apperr.KindUnauthenticated ||
			errW.Error() != "the email or password is wrong" {
			t.Fatalf("wrong password: %v; unknown email: %v; want the same Unauthenticated error", errW, errU)
		}
		wrong, unknown = append(wrong, dW), append(unknown, dU)
	}
	// The fastest of three of each, so that a busy machine's pauses do not
	// decide: within a factor of two (a skipped hash is 1000 times faster).
	w, u := slices.Min(wrong), slices.Min(unknown)
	if u < w/2 || u > w*2 {
		t.Fatalf("wrong password took %v, unknown email %v: an attacker can tell them apart", w, u)
	}
	// The right one signs in, whatever the email's case; the audit trail
	// names the user and the session, never the password.
	f.drain(t)
	in, err := f.sessions.CreateSession(ctx, "OLGA@example.com", goodPassword, app.Origin{ClientAddress: "198.51.100.1", UserAgent: "UA"})
	if err != nil || in.User.ID != f.owner.UserID || in.Session.ClientAddress != "198.51.100.1" || in.Session.CSRFToken == "" {
		t.Fatalf("sign-in: %+v, %v", in, err)
	}
	es := f.drain(t)
	if len(es) != 1 || es[0].Subject != "atrium.audit.crm.recorded" {
		t.Fatalf("events of a sign-in: %v, want one audit event", subjects(es))
	}
	var rec events.AuditEvent
	if err := json.Unmarshal(es[0].Payload, &rec); err != nil {
		t.Fatal(err)
	}
	if rec.Action != "session.created" || rec.ActorKind != "user" || rec.ActorID != in.User.ID || rec.SessionID != in.Session.ID ||
		strings.Contains(string(es[0].Payload), goodPassword) || strings.Contains(string(es[0].Payload), in.Secret) {
		t.Fatalf("audit event %s", es[0].Payload)
	}
}

func TestSessionVerifyCurrentAndSignOut(t *testing.T) {
	f := newPeople(t)
	ctx := t.Context()
	in, err := f.sessions.CreateSession(ctx, "olga@example.com", goodPassword, app.Origin{})
	if err != nil {
		t.Fatal(err)
	}
	digest := sha256Of(in.Secret)
	got, err := f.sessions.Verify(ctx, digest)
	if err != nil || got.Session.ID != in.Session.ID || len(got.Memberships) != 1 || got.Session.CSRFToken != in.Session.CSRFToken {
		t.Fatalf("Verify: %+v, %v", got, err)
	}
	me := principal.NewContext(ctx, principal.Principal{Kind: principal.KindUser, Subject: in.User.ID, SessionID: in.Session.ID})
	if cur, err := f.sessions.Current(me); err != nil || cur.Session.CSRFToken != in.Session.CSRFToken || cur.Secret != "" {
		t.Fatalf("Current: %+v, %v", cur, err)
	}
	// Another user's principal naming this session finds nothing.
	other := principal.NewContext(ctx, principal.Principal{Kind: principal.KindUser, Subject: "someone-else", SessionID: in.Session.ID})
	_, err = f.sessions.Current(other)
	wantKind(t, err, apperr.KindNotFound)
	f.drain(t)
	if err := f.sessions.DeleteCurrent(me); err != nil {
		t.Fatal(err)
	}
	if got := subjects(f.drain(t)); !slices.Equal(got, []string{"atrium.crm.session.ended"}) {
		t.Fatalf("events %v, want one session ended", got)
	}
	_, err = f.sessions.Verify(ctx, digest)
	wantKind(t, err, apperr.KindNotFound)

	// An expired session is simply not found.
	in, _ = f.sessions.CreateSession(ctx, "olga@example.com", goodPassword, app.Origin{})
	f.clock.advance(24 * time.Hour)
	_, err = f.sessions.Verify(ctx, sha256Of(in.Secret))
	wantKind(t, err, apperr.KindNotFound)
}

func TestLastOwnerStays(t *testing.T) {
	f := newPeople(t)
	ctx := t.Context()
	_, err := f.people.DeleteMember(ctx, f.agency.ID, f.owner.ID)
	wantKind(t, err, apperr.KindConflict, "last owner")
	_, _, err = f.people.UpdateMember(ctx, f.agency.ID, f.owner.ID, app.MemberChanges{Role: new("manager")})
	wantKind(t, err, apperr.KindConflict, "last owner")
	_, _, err = f.people.UpdateMember(ctx, f.agency.ID, f.owner.ID, app.MemberChanges{Role: new("")})
	wantKind(t, err, apperr.KindConflict, "last owner")
	// With a second owner, the first may step down.
	f.join(t, f.agency.ID, "otto@example.com", "owner", goodPassword)
	m, _, err := f.people.UpdateMember(ctx, f.agency.ID, f.owner.ID, app.MemberChanges{Role: new("manager")})
	if err != nil || m.Role != principal.RoleManager || m.Status() != app.MemberStatusActive {
		t.Fatalf("step down: %+v, %v", m, err)
	}
}

func TestMemberWithDealsStays(t *testing.T) {
	f := newPeople(t)
	ctx := t.Context()
	seller, _, err := f.people.CreateMember(ctx, app.NewMember{AgencyID: f.agency.ID, Email: "sam@example.com"})
	if err != nil {
		t.Fatal(err)
	}
	if seller.Status() != app.MemberStatusNone {
		t.Fatalf("a member without a role: status %q, want none", seller.Status())
	}
	_, err = f.pipeline.CreateDeal(ctx, f.agency.ID, app.DealFields{OwnerMemberID: new(seller.ID), Title: new("Retainer"),
		Currency: new("usd"), ExpectedCloseDate: new("2026-06-30")})
	if err != nil {
		t.Fatal(err)
	}
	_, err = f.people.DeleteMember(ctx, f.agency.ID, seller.ID)
	wantKind(t, err, apperr.KindConflict, "own deals")
}

func sha256Of(s string) []byte {
	d := sha256.Sum256([]byte(s))
	return d[:]
}

// TestRemovalEndsSessionsAndRevokesKeys: a member's removal, and taking
// their role away, end their sessions and revoke the keys they issued in
// the same transaction, with the events the gateways evict on.
func TestRemovalEndsSessionsAndRevokesKeys(t *testing.T) {
	f := newPeople(t)
	ctx := t.Context()
	site := "0190b7a8-3c1e-7d2f-9a4b-5c6d7e8f9a0b"
	f.sites[site] = f.agency.ID
	second, in := f.join(t, f.agency.ID, "otto@example.com", "owner", goodPassword)
	key, secret, err := f.people.CreateAgencyKey(ctx, f.agency.ID, second.ID, app.NewKey{Name: "site", Scopes: []string{"read"}, SiteID: site})
	if err != nil || secret == "" || key.CreatedByMemberID != second.ID || key.AgencyID != f.agency.ID {
		t.Fatalf("agency key: %+v, %v", key, err)
	}
	kept, _, err := f.people.CreateAgencyKey(ctx, f.agency.ID, f.owner.ID, app.NewKey{Name: "kept", Scopes: []string{"read"}})
	if err != nil {
		t.Fatal(err)
	}
	f.drain(t)

	removed, err := f.people.DeleteMember(asOwner(ctx, f), f.agency.ID, second.ID)
	if err != nil || removed.ID != second.ID {
		t.Fatalf("delete: %+v, %v", removed, err)
	}
	es := f.drain(t)
	want := []string{"atrium.crm.key.revoked", "atrium.crm.session.ended", "atrium.crm.member.updated"}
	if got := subjects(es); !slices.Equal(got, want) {
		t.Fatalf("events %v, want %v", got, want)
	}
	var me events.MemberEvent
	for _, e := range es {
		if e.Subject == "atrium.crm.member.updated" {
			_ = json.Unmarshal(e.Payload, &me)
		}
	}
	if !me.Removed || me.UserID != in.User.ID {
		t.Fatalf("member event %+v, want removed with the user", me)
	}
	_, err = f.sessions.Verify(ctx, sha256Of(in.Secret))
	wantKind(t, err, apperr.KindNotFound)
	ks, err := f.people.ListAgencyKeys(ctx, f.agency.ID, "", nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, k := range ks {
		if (k.ID == key.ID) != (k.RevokedAt != nil) {
			t.Fatalf("key %s revoked at %v; want only the removed member's key revoked (kept: %s)", k.ID, k.RevokedAt, kept.ID)
		}
	}

	// An owner signs a member out everywhere.
	_, ms1 := f.join(t, f.agency.ID, "mia@example.com", "manager", goodPassword)
	ms2, err := f.sessions.CreateSession(ctx, "mia@example.com", goodPassword, app.Origin{})
	if err != nil {
		t.Fatal(err)
	}
	mia, _ := f.people.ListMembers(ctx, f.agency.ID, nil, nil)
	var miaID string
	for _, m := range mia {
		if m.Email == "mia@example.com" {
			miaID = m.ID
		}
	}
	if n, err := f.people.EndMemberSessions(ctx, f.agency.ID, miaID); err != nil || n != 2 {
		t.Fatalf("EndMemberSessions = %d, %v; want 2 sessions ended", n, err)
	}
	for _, in := range []app.SignedIn{ms1, ms2} {
		_, err = f.sessions.Verify(ctx, sha256Of(in.Secret))
		wantKind(t, err, apperr.KindNotFound)
	}

	// Taking a role away does the same, and the member stays, without a
	// sign-in.
	editor, ein := f.join(t, f.agency.ID, "eve@example.com", "editor", "another good passphrase")
	f.drain(t)
	m, _, err := f.people.UpdateMember(ctx, f.agency.ID, editor.ID, app.MemberChanges{Role: new("")})
	if err != nil || m.Status() != app.MemberStatusNone || m.UserID != "" {
		t.Fatalf("role taken away: %+v, %v", m, err)
	}
	if got := subjects(f.drain(t)); !slices.Equal(got, []string{"atrium.crm.session.ended", "atrium.crm.member.updated"}) {
		t.Fatalf("events %v", got)
	}
	_, err = f.sessions.Verify(ctx, sha256Of(ein.Secret))
	wantKind(t, err, apperr.KindNotFound)
	// Given a role again, they are invited again.
	m, inv, err := f.people.UpdateMember(ctx, f.agency.ID, editor.ID, app.MemberChanges{Role: new("viewer")})
	if err != nil || inv == nil || m.Status() != app.MemberStatusInvited {
		t.Fatalf("role given again: %+v %+v %v", m, inv, err)
	}
	// Their user exists: accepting needs its current password.
	_, err = f.sessions.AcceptInvitation(ctx, inv.Token, "a brand new passphrase", "", app.Origin{})
	wantKind(t, err, apperr.KindUnauthenticated, "current password")
	if _, err := f.sessions.AcceptInvitation(ctx, inv.Token, "another good passphrase", "", app.Origin{}); err != nil {
		t.Fatal(err)
	}
}

func TestMemberRulesAndTenancy(t *testing.T) {
	f := newPeople(t)
	ctx := t.Context()
	mine, other := "0190b7a8-3c1e-7d2f-9a4b-000000000001", "0190b7a8-3c1e-7d2f-9a4b-000000000002"
	otherAgency, _ := f.dir.CreateAgency(ctx, "Other")
	f.sites[mine], f.sites[other] = f.agency.ID, otherAgency.ID
	client, _ := f.dir.CreateClient(ctx, app.NewClient{Name: "Bakery", Domain: "bakery.example"})
	unlinked, _ := f.dir.CreateClient(ctx, app.NewClient{Name: "Florist", Domain: "florist.example"})
	if _, err := f.dir.LinkClient(ctx, f.agency.ID, client.ID); err != nil {
		t.Fatal(err)
	}
	add := func(in app.NewMember) error {
		in.AgencyID = f.agency.ID
		_, _, err := f.people.CreateMember(ctx, in)
		return err
	}
	wantKind(t, add(app.NewMember{Email: "a@example.com", Role: "admin"}), apperr.KindInvalid, "owner, manager, editor, viewer, client")
	wantKind(t, add(app.NewMember{Email: "a@example.com", Role: "viewer", SiteIDs: []string{mine}}), apperr.KindInvalid, "editor")
	wantKind(t, add(app.NewMember{Email: "a@example.com", Role: "editor", SiteIDs: []string{other}}), apperr.KindInvalid, other)
	wantKind(t, add(app.NewMember{Email: "a@example.com", Role: "editor", SiteIDs: make([]string, 101)}), apperr.KindInvalid, "at most 100")
	wantKind(t, add(app.NewMember{Email: "a@example.com", Role: "client"}), apperr.KindInvalid, "client_id is required")
	wantKind(t, add(app.NewMember{Email: "a@example.com", Role: "client", ClientID: unlinked.ID}), apperr.KindInvalid, "not a client of this agency")
	wantKind(t, add(app.NewMember{Email: "a@example.com", Role: "manager", ClientID: client.ID}), apperr.KindInvalid, "only for the client role")
	if err := add(app.NewMember{Email: "ed@example.com", Role: "editor", SiteIDs: []string{mine, mine}}); err != nil {
		t.Fatal(err)
	}
	if err := add(app.NewMember{Email: "cl@example.com", Role: "client", ClientID: client.ID}); err != nil {
		t.Fatal(err)
	}
	ms, err := f.people.ListMembers(ctx, f.agency.ID, nil, nil)
	if err != nil || len(ms) != 3 {
		t.Fatalf("members %+v, %v", ms, err)
	}
	byEmail := map[string]app.Member{}
	for _, m := range ms {
		byEmail[m.Email] = m
	}
	if ed := byEmail["ed@example.com"]; !slices.Equal(ed.SiteIDs, []string{mine}) {
		t.Fatalf("editor's sites %v, want [%s]", ed.SiteIDs, mine)
	}
	// A new role drops the old one's sites; a client member gets a client.
	ed, _, err := f.people.UpdateMember(ctx, f.agency.ID, byEmail["ed@example.com"].ID, app.MemberChanges{Role: new("viewer")})
	if err != nil || len(ed.SiteIDs) != 0 {
		t.Fatalf("editor made viewer: %+v, %v", ed, err)
	}
	_, _, err = f.people.UpdateMember(ctx, f.agency.ID, ed.ID, app.MemberChanges{Role: new("client")})
	wantKind(t, err, apperr.KindInvalid, "client_id is required")

	// Another agency's ids reach nothing.
	for name, err := range map[string]error{
		"update": func() error {
			_, _, err := f.people.UpdateMember(ctx, otherAgency.ID, ed.ID, app.MemberChanges{Name: new("X")})
			return err
		}(),
		"delete":     func() error { _, err := f.people.DeleteMember(ctx, otherAgency.ID, ed.ID); return err }(),
		"invitation": func() error { _, _, err := f.people.CreateInvitation(ctx, otherAgency.ID, ed.ID); return err }(),
		"sessions":   func() error { _, err := f.people.EndMemberSessions(ctx, otherAgency.ID, f.owner.ID); return err }(),
	} {
		if apperr.KindOf(err) != apperr.KindNotFound {
			t.Fatalf("%s under another agency: %v, want not found", name, err)
		}
	}
	if ms, _ := f.people.ListMembers(ctx, otherAgency.ID, nil, nil); len(ms) != 0 {
		t.Fatalf("another agency lists %v", ms)
	}
	key, _, err := f.people.CreateAgencyKey(ctx, f.agency.ID, f.owner.ID, app.NewKey{Name: "k", Scopes: []string{"read"}})
	if err != nil {
		t.Fatal(err)
	}
	_, err = f.people.RevokeAgencyKey(ctx, otherAgency.ID, key.ID)
	wantKind(t, err, apperr.KindNotFound, key.ID)
	_, _, err = f.people.CreateAgencyKey(ctx, f.agency.ID, f.owner.ID, app.NewKey{Name: "k", Scopes: []string{"read"}, SiteID: other})
	wantKind(t, err, apperr.KindInvalid, "not a site of this agency")
	if ks, _ := f.people.ListAgencyKeys(ctx, otherAgency.ID, "", nil, nil); len(ks) != 0 {
		t.Fatalf("another agency lists keys %v", ks)
	}
	if k, err := f.people.RevokeAgencyKey(ctx, f.agency.ID, key.ID); err != nil || k.RevokedAt == nil {
		t.Fatalf("revoke: %+v, %v", k, err)
	}
}

func TestPasswordResetWorksOnceAndEndsSessions(t *testing.T) {
	f := newPeople(t)
	ctx := t.Context()
	in, _ := f.sessions.CreateSession(ctx, "olga@example.com", goodPassword, app.Origin{})
	_, err := f.sessions.CreatePasswordReset(ctx, "nobody@example.com")
	wantKind(t, err, apperr.KindNotFound)
	r, err := f.sessions.CreatePasswordReset(ctx, "Olga@example.com")
	if err != nil || !strings.HasPrefix(r.Token, "atr_rst_") || r.URL != "https://atrium.example/studio/password-resets/"+r.Token ||
		!r.ExpiresAt.Equal(now.Add(time.Hour)) {
		t.Fatalf("reset %+v, %v", r, err)
	}
	wantKind(t, f.sessions.CompletePasswordReset(ctx, r.Token, "short"), apperr.KindInvalid, "12 to 1024")
	f.drain(t)
	if err := f.sessions.CompletePasswordReset(ctx, r.Token, "a fresh new passphrase"); err != nil {
		t.Fatal(err)
	}
	if got := subjects(f.drain(t)); !slices.Equal(got, []string{"atrium.crm.session.ended"}) {
		t.Fatalf("events %v, want the sessions ended", got)
	}
	_, err = f.sessions.Verify(ctx, sha256Of(in.Secret))
	wantKind(t, err, apperr.KindNotFound)
	wantKind(t, f.sessions.CompletePasswordReset(ctx, r.Token, "yet another passphrase"), apperr.KindNotFound, "used already")
	if _, err := f.sessions.CreateSession(ctx, "olga@example.com", "a fresh new passphrase", app.Origin{}); err != nil {
		t.Fatalf("sign-in with the new password: %v", err)
	}
	_, err = f.sessions.CreateSession(ctx, "olga@example.com", goodPassword, app.Origin{})
	wantKind(t, err, apperr.KindUnauthenticated)
	// An hour later a reset no longer works.
	r, _ = f.sessions.CreatePasswordReset(ctx, "olga@example.com")
	f.clock.advance(time.Hour)
	wantKind(t, f.sessions.CompletePasswordReset(ctx, r.Token, "yet another passphrase"), apperr.KindNotFound, "expired")
	// Without SMTP a request answers alike for any address.
	for _, e := range []string{"olga@example.com", "nobody@example.com"} {
		if err := f.sessions.RequestPasswordReset(ctx, e); err != nil {
			t.Fatal(err)
		}
	}
}
