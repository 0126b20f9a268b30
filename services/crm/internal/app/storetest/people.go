package storetest

import (
	"slices"
	"testing"
	"time"

	"github.com/atrium-hq/atrium/platform/pagination"
	"github.com/atrium-hq/atrium/platform/principal"
	"github.com/atrium-hq/atrium/services/crm/internal/app"
)

// The people part of the contract: members with roles, users and their
// memberships, invitations, sessions, password resets, and the keys a
// member issued.

func peopleTests() []struct {
	name string
	fn   func(*testing.T, Store)
} {
	return []struct {
		name string
		fn   func(*testing.T, Store)
	}{
		{"MemberRolesRoundTripListAndDelete", testMemberRoles},
		{"UsersAndMemberships", testUsersAndMemberships},
		{"InvitationsByDigestAndVoided", testInvitations},
		{"InvitationsByEmail", testInvitationsByEmail},
		{"SessionsByDigestAndEnded", testSessions},
		{"PasswordResets", testPasswordResets},
		{"OwnersDealsAndIssuedKeys", testOwnersDealsAndIssuedKeys},
	}
}

func readMember(t *testing.T, s Store, agencyID, memberID string) (app.Member, error) {
	t.Helper()
	var m app.Member
	err := s.InTx(ctx(t), func(tx app.Tx) (err error) {
		m, err = tx.Member(ctx(t), agencyID, memberID)
		return err
	})
	return m, err
}

// fakeHash is a password hash's shape; no password hashes to it.
const fakeHash = "$argon2id$v=19$m=19456,t=2,p=1$c2FsdA$a2V5" //nolint:gosec // G101: not a credential

func newUser(t *testing.T, s Store, email string) app.User {
	t.Helper()
	u := app.User{ID: id(), Email: email, Name: "Uma", PasswordHash: fakeHash, CreatedAt: base, UpdatedAt: base}
	mustTx(t, s, func(tx app.Tx) error { return tx.InsertUser(ctx(t), u) })
	return u
}

func memberIDs(ms []app.Member) []string {
	out := []string{}
	for _, m := range ms {
		out = append(out, m.ID)
	}
	return out
}

func testMemberRoles(t *testing.T, s Store) {
	a, b := newAgency(t, s), newAgency(t, s)
	c := app.Client{ID: id(), Name: "Bakery", Domain: "bakery.example", Status: "active", CreatedAt: base, UpdatedAt: base}
	mustTx(t, s, func(tx app.Tx) error { return tx.InsertClient(ctx(t), c) })
	sites := []string{id(), id()}
	slices.Sort(sites)
	editor := app.Member{ID: id(), AgencyID: a.ID, Name: "Zoe", Email: "zoe@example.com", Role: principal.RoleEditor, SiteIDs: sites,
		CreatedAt: base, UpdatedAt: base}
	client := app.Member{ID: id(), AgencyID: a.ID, Name: "Carl", Email: "carl@example.com", Role: principal.RoleClient, ClientID: c.ID,
		CreatedAt: base, UpdatedAt: base}
	plain := newMember(t, s, a.ID) // "Ana": a deals' owner without a role
	mustTx(t, s, func(tx app.Tx) error {
		if err := tx.InsertMember(ctx(t), editor); err != nil {
			return err
		}
		return tx.InsertMember(ctx(t), client)
	})
	for _, want := range []app.Member{editor, client, plain} {
		got, err := readMember(t, s, a.ID, want.ID)
		if err != nil {
			t.Fatal(err)
		}
		wantEqual(t, got, want)
	}
	if plain.Status() != app.MemberStatusNone || editor.Status() != app.MemberStatusInvited {
		t.Fatalf("statuses %q, %q; want none, invited", plain.Status(), editor.Status())
	}

	// The list: by name, one agency only, paged.
	list, err := s.Members(ctx(t), a.ID, pagination.Page{Limit: 10})
	if err != nil {
		t.Fatal(err)
	}
	wantEqual(t, memberIDs(list), []string{plain.ID, client.ID, editor.ID})
	wantEqual(t, list[2], editor)
	list, _ = s.Members(ctx(t), a.ID, pagination.Page{Limit: 1, Offset: 1})
	wantEqual(t, memberIDs(list), []string{client.ID})
	list, _ = s.Members(ctx(t), b.ID, pagination.Page{Limit: 10})
	wantEqual(t, memberIDs(list), []string{})

	// An update changes the role, sites, client and name, never the email.
	changed := editor
	changed.Name, changed.Role, changed.SiteIDs, changed.UpdatedAt = "Zoé", principal.RoleViewer, nil, base.Add(time.Minute)
	changed.Email = "other@example.com"
	mustTx(t, s, func(tx app.Tx) error { return tx.UpdateMember(ctx(t), changed) })
	got, _ := readMember(t, s, a.ID, editor.ID)
	changed.Email = editor.Email
	wantEqual(t, got, changed)
	// Another agency's id reaches nothing.
	wrong := changed
	wrong.AgencyID = b.ID
	wantErr(t, s.InTx(ctx(t), func(tx app.Tx) error { return tx.UpdateMember(ctx(t), wrong) }), app.ErrNotFound)
	wantErr(t, s.InTx(ctx(t), func(tx app.Tx) error { return tx.DeleteMember(ctx(t), b.ID, editor.ID) }), app.ErrNotFound)

	// A deletion frees the email.
	mustTx(t, s, func(tx app.Tx) error { return tx.DeleteMember(ctx(t), a.ID, editor.ID) })
	_, err = readMember(t, s, a.ID, editor.ID)
	wantErr(t, err, app.ErrNotFound)
	again := editor
	again.ID = id()
	mustTx(t, s, func(tx app.Tx) error { return tx.InsertMember(ctx(t), again) })
}

func testUsersAndMemberships(t *testing.T, s Store) {
	a, b := newAgency(t, s), newAgency(t, s)
	u := newUser(t, s, "uma@example.com")
	got, err := s.UserByEmail(ctx(t), "uma@example.com")
	if err != nil {
		t.Fatal(err)
	}
	wantEqual(t, got, u)
	if got, err = s.User(ctx(t), u.ID); err != nil {
		t.Fatal(err)
	}
	wantEqual(t, got, u)
	_, err = s.UserByEmail(ctx(t), "nobody@example.com")
	wantErr(t, err, app.ErrNotFound)
	_, err = s.User(ctx(t), id())
	wantErr(t, err, app.ErrNotFound)
	dup := u
	dup.ID = id()
	wantErr(t, s.InTx(ctx(t), func(tx app.Tx) error { return tx.InsertUser(ctx(t), dup) }), app.ErrDuplicate)

	changed := u
	changed.PasswordHash, changed.Name, changed.UpdatedAt = "$argon2id$new", "Uma B.", base.Add(time.Hour)
	mustTx(t, s, func(tx app.Tx) error { return tx.UpdateUser(ctx(t), changed) })
	got, _ = s.User(ctx(t), u.ID)
	wantEqual(t, got, changed)

	// A user is a member of two agencies; memberships carry the agencies'
	// names, sorted by them.
	ms, err := s.Memberships(ctx(t), u.ID)
	if err != nil || ms == nil || len(ms) != 0 {
		t.Fatalf("memberships before any: %#v, %v; want an empty list", ms, err)
	}
	var members []app.Member
	for _, ag := range []app.Agency{a, b} {
		m := app.Member{ID: id(), AgencyID: ag.ID, Name: "Uma", Email: u.Email, Role: principal.RoleOwner, UserID: u.ID, CreatedAt: base, UpdatedAt: base}
		mustTx(t, s, func(tx app.Tx) error { return tx.InsertMember(ctx(t), m) })
		members = append(members, m)
	}
	ms, err = s.Memberships(ctx(t), u.ID)
	if err != nil {
		t.Fatal(err)
	}
	want := []app.Membership{{Member: members[0], AgencyName: a.Name}, {Member: members[1], AgencyName: b.Name}}
	slices.SortFunc(want, func(x, y app.Membership) int {
		if x.AgencyName < y.AgencyName {
			return -1
		}
		return 1
	})
	wantEqual(t, ms, want)
	// The same user twice in one agency is refused.
	twice := app.Member{ID: id(), AgencyID: a.ID, Name: "Uma", Email: "uma2@example.com", Role: principal.RoleViewer, CreatedAt: base, UpdatedAt: base}
	mustTx(t, s, func(tx app.Tx) error { return tx.InsertMember(ctx(t), twice) })
	twice.UserID = u.ID
	wantErr(t, s.InTx(ctx(t), func(tx app.Tx) error { return tx.UpdateMember(ctx(t), twice) }), app.ErrDuplicate)
}

func testInvitations(t *testing.T, s Store) {
	a := newAgency(t, s)
	m := newMember(t, s, a.ID)
	inv := app.Invitation{ID: id(), AgencyID: a.ID, MemberID: m.ID, Email: m.Email, TokenSHA256: digest("inv-1"),
		ExpiresAt: base.Add(time.Hour), CreatedAt: base}
	mustTx(t, s, func(tx app.Tx) error { return tx.InsertInvitation(ctx(t), inv) })
	got, err := s.InvitationByTokenSHA256(ctx(t), digest("inv-1"))
	if err != nil {
		t.Fatal(err)
	}
	wantEqual(t, got, inv)
	_, err = s.InvitationByTokenSHA256(ctx(t), digest("inv-2"))
	wantErr(t, err, app.ErrNotFound)

	// Voided: every invitation of the member goes.
	inv2 := inv
	inv2.ID, inv2.TokenSHA256 = id(), digest("inv-2")
	mustTx(t, s, func(tx app.Tx) error { return tx.InsertInvitation(ctx(t), inv2) })
	mustTx(t, s, func(tx app.Tx) error { return tx.DeleteInvitations(ctx(t), m.ID) })
	for _, d := range []string{"inv-1", "inv-2"} {
		_, err = s.InvitationByTokenSHA256(ctx(t), digest(d))
		wantErr(t, err, app.ErrNotFound)
	}

	// A member's removal takes its invitations with it.
	inv3 := inv
	inv3.ID, inv3.TokenSHA256 = id(), digest("inv-3")
	mustTx(t, s, func(tx app.Tx) error { return tx.InsertInvitation(ctx(t), inv3) })
	mustTx(t, s, func(tx app.Tx) error { return tx.DeleteMember(ctx(t), a.ID, m.ID) })
	_, err = s.InvitationByTokenSHA256(ctx(t), digest("inv-3"))
	wantErr(t, err, app.ErrNotFound)
}

// testInvitationsByEmail: the invitations of one email, across agencies,
// oldest first, in a transaction too; another email's are not listed.
func testInvitationsByEmail(t *testing.T, s Store) {
	email := "sso-" + id()[:8] + "@example.com"
	var want []app.Invitation
	for i, tok := range []string{"by-email-2", "by-email-1"} {
		a := newAgency(t, s)
		m := app.Member{ID: id(), AgencyID: a.ID, Name: "Ana", Email: email, CreatedAt: base, UpdatedAt: base}
		mustTx(t, s, func(tx app.Tx) error { return tx.InsertMember(ctx(t), m) })
		inv := app.Invitation{ID: id(), AgencyID: a.ID, MemberID: m.ID, Email: email, TokenSHA256: digest(tok + email),
			ExpiresAt: base.Add(time.Hour), CreatedAt: base.Add(time.Duration(1-i) * time.Minute)}
		mustTx(t, s, func(tx app.Tx) error { return tx.InsertInvitation(ctx(t), inv) })
		want = append([]app.Invitation{inv}, want...)
	}
	other := newMember(t, s, newAgency(t, s).ID)
	mustTx(t, s, func(tx app.Tx) error {
		return tx.InsertInvitation(ctx(t), app.Invitation{ID: id(), AgencyID: other.AgencyID, MemberID: other.ID, Email: other.Email,
			TokenSHA256: digest("by-email-other" + email), ExpiresAt: base.Add(time.Hour), CreatedAt: base})
	})
	got, err := s.InvitationsByEmail(ctx(t), email)
	if err != nil {
		t.Fatal(err)
	}
	wantEqual(t, got, want)
	mustTx(t, s, func(tx app.Tx) error {
		got, err := tx.InvitationsByEmail(ctx(t), email)
		wantEqual(t, got, want)
		return err
	})
	got, err = s.InvitationsByEmail(ctx(t), "nobody-"+email)
	if err != nil {
		t.Fatal(err)
	}
	wantEqual(t, got, []app.Invitation{})
}

func testSessions(t *testing.T, s Store) {
	u, other := newUser(t, s, id()[24:]+"@example.com"), newUser(t, s, id()[24:]+"@example.com")
	var sessions []app.Session
	for i := range 3 {
		v := app.Session{ID: id(), UserID: u.ID, SecretSHA256: digest("ses-" + string(rune('a'+i))), CSRFToken: "csrf", ClientAddress: "203.0.113.7",
			UserAgent: "Mozilla/5.0", CreatedAt: base, ExpiresAt: base.Add(time.Hour)}
		mustTx(t, s, func(tx app.Tx) error { return tx.InsertSession(ctx(t), v) })
		sessions = append(sessions, v)
	}
	got, err := s.SessionBySecretSHA256(ctx(t), digest("ses-a"))
	if err != nil {
		t.Fatal(err)
	}
	wantEqual(t, got, sessions[0])
	if got, err = s.Session(ctx(t), sessions[1].ID); err != nil {
		t.Fatal(err)
	}
	wantEqual(t, got, sessions[1])
	_, err = s.Session(ctx(t), "not-a-uuid")
	wantErr(t, err, app.ErrNotFound)

	// One session ends; another user's id cannot end it.
	wantErr(t, s.InTx(ctx(t), func(tx app.Tx) error { return tx.DeleteSession(ctx(t), other.ID, sessions[0].ID) }), app.ErrNotFound)
	mustTx(t, s, func(tx app.Tx) error { return tx.DeleteSession(ctx(t), u.ID, sessions[0].ID) })
	_, err = s.SessionBySecretSHA256(ctx(t), digest("ses-a"))
	wantErr(t, err, app.ErrNotFound)

	// Every session of the user ends, and says which.
	var ended []string
	mustTx(t, s, func(tx app.Tx) (err error) {
		ended, err = tx.DeleteSessions(ctx(t), u.ID)
		return err
	})
	want := []string{sessions[1].ID, sessions[2].ID}
	slices.Sort(want)
	wantEqual(t, ended, want)
	_, err = s.Session(ctx(t), sessions[2].ID)
	wantErr(t, err, app.ErrNotFound)
	mustTx(t, s, func(tx app.Tx) (err error) {
		ended, err = tx.DeleteSessions(ctx(t), u.ID)
		return err
	})
	wantEqual(t, ended, []string{})

	// Expired sessions go; live ones stay.
	for i, exp := range []time.Time{base, base.Add(time.Hour)} {
		v := app.Session{ID: id(), UserID: u.ID, SecretSHA256: digest("exp-" + string(rune('a'+i))), CSRFToken: "c", CreatedAt: base.Add(-time.Hour), ExpiresAt: exp}
		mustTx(t, s, func(tx app.Tx) error { return tx.InsertSession(ctx(t), v) })
	}
	mustTx(t, s, func(tx app.Tx) error { return tx.DeleteExpiredSessions(ctx(t), u.ID, base) })
	_, err = s.SessionBySecretSHA256(ctx(t), digest("exp-a"))
	wantErr(t, err, app.ErrNotFound)
	if _, err := s.SessionBySecretSHA256(ctx(t), digest("exp-b")); err != nil {
		t.Fatalf("a live session was deleted with the expired ones: %v", err)
	}
}

func testPasswordResets(t *testing.T, s Store) {
	u := newUser(t, s, id()[24:]+"@example.com")
	r := app.PasswordReset{ID: id(), UserID: u.ID, TokenSHA256: digest("rst-1"), ExpiresAt: base.Add(time.Hour), CreatedAt: base}
	mustTx(t, s, func(tx app.Tx) error { return tx.InsertPasswordReset(ctx(t), r) })
	got, err := s.PasswordResetByTokenSHA256(ctx(t), digest("rst-1"))
	if err != nil {
		t.Fatal(err)
	}
	wantEqual(t, got, r)
	mustTx(t, s, func(tx app.Tx) error { return tx.DeletePasswordResets(ctx(t), u.ID) })
	_, err = s.PasswordResetByTokenSHA256(ctx(t), digest("rst-1"))
	wantErr(t, err, app.ErrNotFound)
	orphan := r
	orphan.ID, orphan.UserID, orphan.TokenSHA256 = id(), id(), digest("rst-2")
	wantErr(t, s.InTx(ctx(t), func(tx app.Tx) error { return tx.InsertPasswordReset(ctx(t), orphan) }), app.ErrNotFound)
}

func testOwnersDealsAndIssuedKeys(t *testing.T, s Store) {
	a, b := newAgency(t, s), newAgency(t, s)
	owner := app.Member{ID: id(), AgencyID: a.ID, Name: "Olga", Email: "olga@example.com", Role: principal.RoleOwner, CreatedAt: base, UpdatedAt: base}
	mustTx(t, s, func(tx app.Tx) error { return tx.InsertMember(ctx(t), owner) })
	seller := newMember(t, s, a.ID)
	newDeal(t, s, seller, base)
	mustTx(t, s, func(tx app.Tx) error {
		owners, err := tx.Owners(ctx(t), a.ID)
		if err != nil {
			return err
		}
		wantEqual(t, owners, []string{owner.ID})
		if owners, _ = tx.Owners(ctx(t), b.ID); len(owners) != 0 {
			t.Fatalf("agency B's owners: %v", owners)
		}
		for m, want := range map[string]bool{seller.ID: true, owner.ID: false} {
			if owns, err := tx.MemberOwnsDeals(ctx(t), a.ID, m); err != nil || owns != want {
				t.Fatalf("MemberOwnsDeals(%s) = %v, %v; want %v", m, owns, err, want)
			}
		}
		return nil
	})

	// Keys the owner issued, unrevoked, in its agency.
	var issued []app.APIKey
	for i, k := range []app.APIKey{
		{AgencyID: a.ID, CreatedByMemberID: owner.ID},
		{AgencyID: a.ID, CreatedByMemberID: owner.ID},
		{AgencyID: a.ID},
	} {
		k.ID, k.Name, k.Prefix, k.SecretSHA256, k.Scopes, k.CreatedAt = id(), "k", "atr_x", digest("issued-"+string(rune('a'+i))), []principal.Scope{principal.ScopeRead}, base
		mustTx(t, s, func(tx app.Tx) error { return tx.InsertKey(ctx(t), k) })
		issued = append(issued, k)
	}
	got, err := s.KeyBySecretSHA256(ctx(t), digest("issued-a"))
	if err != nil {
		t.Fatal(err)
	}
	wantEqual(t, got, issued[0])
	revoked := issued[1]
	at := base.Add(time.Minute)
	revoked.RevokedAt = &at
	mustTx(t, s, func(tx app.Tx) error { return tx.UpdateKey(ctx(t), revoked) })
	mustTx(t, s, func(tx app.Tx) error {
		ks, err := tx.KeysIssuedBy(ctx(t), a.ID, owner.ID)
		if err != nil {
			return err
		}
		wantEqual(t, ks, []app.APIKey{issued[0]})
		if ks, _ = tx.KeysIssuedBy(ctx(t), b.ID, owner.ID); len(ks) != 0 {
			t.Fatalf("keys of the owner under agency B: %v", ks)
		}
		return nil
	})
}
