package memory

import (
	"cmp"
	"context"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/atrium-hq/atrium/platform/memdb"
	"github.com/atrium-hq/atrium/platform/pagination"
	"github.com/atrium-hq/atrium/platform/principal"
	"github.com/atrium-hq/atrium/services/crm/internal/app"
)

// People: members with roles, users, invitations, sessions and password
// resets. The Store's methods take the read lock; a transaction's call the
// unlocked ones, since it holds the write lock.

func cloneMember(m app.Member) app.Member {
	m.SiteIDs = slices.Clone(m.SiteIDs)
	return m
}

func notFound(what string) error { return fmt.Errorf("%s: %w", what, app.ErrNotFound) }

// Members implements app.PeopleReader. It scans the members: an agency's
// list is read by its owners now and then, never on a request's path.
func (s *Store) Members(_ context.Context, agencyID string, page pagination.Page) ([]app.Member, error) {
	s.db.RLock()
	var rows []app.Member
	for _, m := range s.members {
		if m.AgencyID == agencyID {
			rows = append(rows, cloneMember(m))
		}
	}
	s.db.RUnlock()
	slices.SortFunc(rows, func(a, b app.Member) int { return cmp.Or(strings.Compare(a.Name, b.Name), strings.Compare(a.ID, b.ID)) })
	return slices.Clone(window(rows, page)), nil
}

// User implements app.PeopleReader.
func (s *Store) User(_ context.Context, id string) (app.User, error) {
	s.db.RLock()
	defer s.db.RUnlock()
	return s.user(id)
}

func (s *Store) user(id string) (app.User, error) {
	u, ok := s.users[id]
	if !ok {
		return app.User{}, notFound("user " + id)
	}
	return u, nil
}

// UserByEmail implements app.PeopleReader.
func (s *Store) UserByEmail(_ context.Context, email string) (app.User, error) {
	s.db.RLock()
	defer s.db.RUnlock()
	return s.userByEmail(email)
}

func (s *Store) userByEmail(email string) (app.User, error) {
	id, ok := s.userEmails[email]
	if !ok {
		return app.User{}, notFound("user by email")
	}
	return s.users[id], nil
}

// Memberships implements app.PeopleReader.
func (s *Store) Memberships(_ context.Context, userID string) ([]app.Membership, error) {
	s.db.RLock()
	defer s.db.RUnlock()
	return s.memberships(userID), nil
}

func (s *Store) memberships(userID string) []app.Membership {
	out := []app.Membership{}
	for _, m := range s.members {
		if m.UserID == userID && userID != "" {
			out = append(out, app.Membership{Member: cloneMember(m), AgencyName: s.agencies[m.AgencyID].Name})
		}
	}
	slices.SortFunc(out, func(a, b app.Membership) int {
		return cmp.Or(strings.Compare(a.AgencyName, b.AgencyName), strings.Compare(a.Member.ID, b.Member.ID))
	})
	return out
}

// Session implements app.PeopleReader.
func (s *Store) Session(_ context.Context, id string) (app.Session, error) {
	s.db.RLock()
	defer s.db.RUnlock()
	return s.session(id)
}

func (s *Store) session(id string) (app.Session, error) {
	v, ok := s.sessions[id]
	if !ok {
		return app.Session{}, notFound("session " + id)
	}
	return v, nil
}

// SessionBySecretSHA256 implements app.PeopleReader.
func (s *Store) SessionBySecretSHA256(_ context.Context, digest []byte) (app.Session, error) {
	s.db.RLock()
	defer s.db.RUnlock()
	return s.sessionByDigest(digest)
}

func (s *Store) sessionByDigest(digest []byte) (app.Session, error) {
	id, ok := s.sesDigests[string(digest)]
	if !ok {
		return app.Session{}, notFound("session by digest")
	}
	return s.sessions[id], nil
}

// InvitationByTokenSHA256 implements app.PeopleReader.
func (s *Store) InvitationByTokenSHA256(_ context.Context, digest []byte) (app.Invitation, error) {
	s.db.RLock()
	defer s.db.RUnlock()
	return s.invitationByDigest(digest)
}

func (s *Store) invitationByDigest(digest []byte) (app.Invitation, error) {
	id, ok := s.invDigests[string(digest)]
	if !ok {
		return app.Invitation{}, notFound("invitation by digest")
	}
	return s.invitations[id], nil
}

// InvitationsByEmail implements app.PeopleReader. It scans the
// invitations, which are only the pending ones: few.
func (s *Store) InvitationsByEmail(_ context.Context, email string) ([]app.Invitation, error) {
	s.db.RLock()
	defer s.db.RUnlock()
	return s.invitationsByEmail(email), nil
}

func (s *Store) invitationsByEmail(email string) []app.Invitation {
	out := []app.Invitation{}
	for _, inv := range s.invitations {
		if inv.Email == email {
			out = append(out, inv)
		}
	}
	slices.SortFunc(out, func(a, b app.Invitation) int {
		return cmp.Or(a.CreatedAt.Compare(b.CreatedAt), strings.Compare(a.ID, b.ID))
	})
	return out[:min(len(out), app.MaxInvitationsByEmail)]
}

// PasswordResetByTokenSHA256 implements app.PeopleReader.
func (s *Store) PasswordResetByTokenSHA256(_ context.Context, digest []byte) (app.PasswordReset, error) {
	s.db.RLock()
	defer s.db.RUnlock()
	return s.resetByDigest(digest)
}

func (s *Store) resetByDigest(digest []byte) (app.PasswordReset, error) {
	id, ok := s.resetDigests[string(digest)]
	if !ok {
		return app.PasswordReset{}, notFound("password reset by digest")
	}
	return s.resets[id], nil
}

// The transaction's reads: the same, without the read lock.

func (t *tx) Members(_ context.Context, agencyID string, page pagination.Page) ([]app.Member, error) {
	var rows []app.Member
	for _, m := range t.s.members {
		if m.AgencyID == agencyID {
			rows = append(rows, cloneMember(m))
		}
	}
	slices.SortFunc(rows, func(a, b app.Member) int { return cmp.Or(strings.Compare(a.Name, b.Name), strings.Compare(a.ID, b.ID)) })
	return slices.Clone(window(rows, page)), nil
}

func (t *tx) User(_ context.Context, id string) (app.User, error) { return t.s.user(id) }

func (t *tx) UserByEmail(_ context.Context, email string) (app.User, error) {
	return t.s.userByEmail(email)
}

func (t *tx) Memberships(_ context.Context, userID string) ([]app.Membership, error) {
	return t.s.memberships(userID), nil
}

func (t *tx) Session(_ context.Context, id string) (app.Session, error) { return t.s.session(id) }

func (t *tx) SessionBySecretSHA256(_ context.Context, digest []byte) (app.Session, error) {
	return t.s.sessionByDigest(digest)
}

func (t *tx) InvitationByTokenSHA256(_ context.Context, digest []byte) (app.Invitation, error) {
	return t.s.invitationByDigest(digest)
}

func (t *tx) InvitationsByEmail(_ context.Context, email string) ([]app.Invitation, error) {
	return t.s.invitationsByEmail(email), nil
}

func (t *tx) PasswordResetByTokenSHA256(_ context.Context, digest []byte) (app.PasswordReset, error) {
	return t.s.resetByDigest(digest)
}

func (t *tx) UpdateMember(_ context.Context, m app.Member) error {
	old, ok := t.s.members[m.ID]
	if !ok || old.AgencyID != m.AgencyID {
		return notFound("member " + m.ID)
	}
	if m.UserID != "" {
		if _, ok := t.s.users[m.UserID]; !ok {
			return notFound("user " + m.UserID)
		}
		for _, o := range t.s.members {
			if o.ID != m.ID && o.AgencyID == m.AgencyID && o.UserID == m.UserID {
				return fmt.Errorf("user %s in agency %s: %w", m.UserID, m.AgencyID, app.ErrDuplicate)
			}
		}
	}
	// The email and creation are fixed, as in the PostgreSQL adapter.
	old.Name, old.Role, old.SiteIDs, old.ClientID, old.UserID, old.UpdatedAt = m.Name, m.Role, slices.Clone(m.SiteIDs), m.ClientID, m.UserID, m.UpdatedAt
	memdb.Put(t.Tx, t.s.members, m.ID, old)
	return nil
}

func (t *tx) DeleteMember(_ context.Context, agencyID, id string) error {
	m, ok := t.s.members[id]
	if !ok || m.AgencyID != agencyID {
		return notFound("member " + id)
	}
	for _, d := range t.s.deals {
		if d.OwnerMemberID == id {
			return fmt.Errorf("member %s owns deals: %w", id, app.ErrDuplicate)
		}
	}
	for invID, inv := range t.s.invitations {
		if inv.MemberID == id {
			t.deleteInvitation(invID, inv)
		}
	}
	memdb.Delete(t.Tx, t.s.members, id)
	memdb.Delete(t.Tx, t.s.memberEmails, pair{agencyID, m.Email})
	return nil
}

func (t *tx) Owners(_ context.Context, agencyID string) ([]string, error) {
	out := []string{}
	for _, m := range t.s.members {
		if m.AgencyID == agencyID && m.Role == principal.RoleOwner {
			out = append(out, m.ID)
		}
	}
	slices.Sort(out)
	return out, nil
}

func (t *tx) MemberOwnsDeals(_ context.Context, agencyID, memberID string) (bool, error) {
	for _, d := range t.s.deals {
		if d.AgencyID == agencyID && d.OwnerMemberID == memberID {
			return true, nil
		}
	}
	return false, nil
}

func (t *tx) KeysIssuedBy(_ context.Context, agencyID, memberID string) ([]app.APIKey, error) {
	out := []app.APIKey{}
	for _, k := range t.s.keys {
		if k.AgencyID == agencyID && k.CreatedByMemberID == memberID && k.RevokedAt == nil {
			out = append(out, cloneKey(k))
		}
	}
	slices.SortFunc(out, func(a, b app.APIKey) int { return strings.Compare(a.ID, b.ID) })
	return out, nil
}

func (t *tx) InsertInvitation(_ context.Context, inv app.Invitation) error {
	if _, err := t.s.member(inv.AgencyID, inv.MemberID); err != nil {
		return err
	}
	if _, taken := t.s.invDigests[string(inv.TokenSHA256)]; taken {
		return fmt.Errorf("invitation digest: %w", app.ErrDuplicate)
	}
	memdb.Put(t.Tx, t.s.invitations, inv.ID, inv)
	memdb.Put(t.Tx, t.s.invDigests, string(inv.TokenSHA256), inv.ID)
	return nil
}

func (t *tx) deleteInvitation(id string, inv app.Invitation) {
	memdb.Delete(t.Tx, t.s.invitations, id)
	memdb.Delete(t.Tx, t.s.invDigests, string(inv.TokenSHA256))
}

func (t *tx) DeleteInvitations(_ context.Context, memberID string) error {
	for id, inv := range t.s.invitations {
		if inv.MemberID == memberID {
			t.deleteInvitation(id, inv)
		}
	}
	return nil
}

func (t *tx) InsertUser(_ context.Context, u app.User) error {
	_, exists := t.s.users[u.ID]
	if err := t.duplicateID(exists, "user", u.ID); err != nil {
		return err
	}
	if _, taken := t.s.userEmails[u.Email]; taken {
		return fmt.Errorf("user email %s: %w", u.Email, app.ErrDuplicate)
	}
	memdb.Put(t.Tx, t.s.users, u.ID, u)
	memdb.Put(t.Tx, t.s.userEmails, u.Email, u.ID)
	return nil
}

func (t *tx) UpdateUser(_ context.Context, u app.User) error {
	old, ok := t.s.users[u.ID]
	if !ok {
		return notFound("user " + u.ID)
	}
	old.Name, old.PasswordHash, old.UpdatedAt = u.Name, u.PasswordHash, u.UpdatedAt
	memdb.Put(t.Tx, t.s.users, u.ID, old)
	return nil
}

func (t *tx) InsertSession(_ context.Context, v app.Session) error {
	if _, ok := t.s.users[v.UserID]; !ok {
		return notFound("user " + v.UserID)
	}
	_, exists := t.s.sessions[v.ID]
	if err := t.duplicateID(exists, "session", v.ID); err != nil {
		return err
	}
	if _, taken := t.s.sesDigests[string(v.SecretSHA256)]; taken {
		return fmt.Errorf("session digest: %w", app.ErrDuplicate)
	}
	memdb.Put(t.Tx, t.s.sessions, v.ID, v)
	memdb.Put(t.Tx, t.s.sesDigests, string(v.SecretSHA256), v.ID)
	return nil
}

func (t *tx) DeleteSession(_ context.Context, userID, id string) error {
	v, ok := t.s.sessions[id]
	if !ok || v.UserID != userID {
		return notFound("session " + id)
	}
	memdb.Delete(t.Tx, t.s.sessions, id)
	memdb.Delete(t.Tx, t.s.sesDigests, string(v.SecretSHA256))
	return nil
}

func (t *tx) DeleteSessions(_ context.Context, userID string) ([]string, error) {
	ids := []string{}
	for id, v := range t.s.sessions {
		if v.UserID == userID {
			ids = append(ids, id)
			memdb.Delete(t.Tx, t.s.sessions, id)
			memdb.Delete(t.Tx, t.s.sesDigests, string(v.SecretSHA256))
		}
	}
	slices.Sort(ids)
	return ids, nil
}

func (t *tx) DeleteExpiredSessions(_ context.Context, userID string, now time.Time) error {
	for id, v := range t.s.sessions {
		if v.UserID == userID && !now.Before(v.ExpiresAt) {
			memdb.Delete(t.Tx, t.s.sessions, id)
			memdb.Delete(t.Tx, t.s.sesDigests, string(v.SecretSHA256))
		}
	}
	return nil
}

func (t *tx) InsertPasswordReset(_ context.Context, r app.PasswordReset) error {
	if _, ok := t.s.users[r.UserID]; !ok {
		return notFound("user " + r.UserID)
	}
	if _, taken := t.s.resetDigests[string(r.TokenSHA256)]; taken {
		return fmt.Errorf("password reset digest: %w", app.ErrDuplicate)
	}
	memdb.Put(t.Tx, t.s.resets, r.ID, r)
	memdb.Put(t.Tx, t.s.resetDigests, string(r.TokenSHA256), r.ID)
	return nil
}

func (t *tx) DeletePasswordResets(_ context.Context, userID string) error {
	for id, r := range t.s.resets {
		if r.UserID == userID {
			memdb.Delete(t.Tx, t.s.resets, id)
			memdb.Delete(t.Tx, t.s.resetDigests, string(r.TokenSHA256))
		}
	}
	return nil
}
