package app

import (
	"context"
	"crypto/subtle"
	"errors"
	"fmt"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/atrium-hq/atrium/platform/apperr"
	"github.com/atrium-hq/atrium/platform/audit"
	"github.com/atrium-hq/atrium/platform/events"
	"github.com/atrium-hq/atrium/platform/outbox"
	"github.com/atrium-hq/atrium/platform/principal"
	"github.com/atrium-hq/atrium/platform/value"
)

// Sessions signs people in and out: sessions, accepted invitations and
// password resets.
type Sessions struct {
	store  PeopleStore
	hasher *Hasher
	clock  Clock
	cfg    PeopleConfig
	// resets bounds the password resets being looked up and emailed in
	// the background, so that a flood of requests cannot pile up
	// goroutines and mail.
	resets chan struct{}
}

// maxResetsInFlight bounds the background work of RequestPasswordReset.
const maxResetsInFlight = 16

// NewSessions returns the session use cases.
func NewSessions(store PeopleStore, hasher *Hasher, clock Clock, cfg PeopleConfig) *Sessions {
	return &Sessions{store: store, hasher: hasher, clock: clock, cfg: cfg.withDefaults(), resets: make(chan struct{}, maxResetsInFlight)}
}

// ErrWrongCredentials is the one answer to an unknown email and a wrong
// password alike, so that the answer does not tell which addresses have a
// sign-in.
var ErrWrongCredentials = apperr.Unauthenticated("the email or password is wrong")

// SignedIn is a session as its user sees it. Secret is set only when the
// session was just opened: the transport hands it to the gateway for the
// cookie, never in a body.
type SignedIn struct {
	User        User
	Memberships []Membership
	Session     Session
	Secret      string
}

// Origin is where a request came from, recorded with its session.
type Origin struct {
	ClientAddress, UserAgent string
}

// maxOriginField bounds what a client's headers put in a session row.
const maxOriginField = 256

func (o Origin) bounded() Origin {
	return Origin{truncateRunes(o.ClientAddress, maxOriginField), truncateRunes(o.UserAgent, maxOriginField)}
}

func truncateRunes(s string, n int) string {
	if len(s) <= n {
		return s
	}
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return s[:n]
}

// passwordField checks a password as a request sends it for sign-in.
func passwordField(pw string) error {
	if n := utf8.RuneCountInString(pw); n > MaxPasswordLength {
		return apperr.Invalid("password must be at most %d characters; got %d", MaxPasswordLength, n)
	}
	return nil
}

// CreateSession signs a person in. An unknown email and a wrong password
// get the same error after the same work (one argon2id verification).
func (s *Sessions) CreateSession(ctx context.Context, email, password string, origin Origin) (SignedIn, error) {
	if err := passwordField(password); err != nil {
		return SignedIn{}, err
	}
	email = strings.ToLower(strings.TrimSpace(email))
	var u User
	if value.EmailAddress(email, 0) {
		var err error
		if u, err = s.store.UserByEmail(ctx, email); err != nil && !errors.Is(err, ErrNotFound) {
			return SignedIn{}, err
		}
	}
	ok, err := s.hasher.Verify(ctx, u.PasswordHash, password)
	if err != nil {
		return SignedIn{}, err
	}
	if !ok {
		return SignedIn{}, ErrWrongCredentials
	}
	var out SignedIn
	err = s.store.InTx(ctx, func(tx PeopleTx) error {
		out, err = s.open(ctx, tx, u, origin, s.clock.Now())
		return err
	})
	if err != nil {
		return SignedIn{}, err
	}
	return s.withMemberships(ctx, out)
}

// actingAs is ctx whose caller, for the audit trail, is the user: a
// sign-in, an accepted invitation or a completed reset is called
// anonymously (CALLER_ANYONE), but the trail names who it was, from the
// client address and user agent of the call.
func actingAs(ctx context.Context, userID, sessionID string) context.Context {
	if p, ok := principal.FromContext(ctx); ok && p.Kind != principal.KindAnonymous && p.Kind != "" {
		return ctx
	}
	return principal.NewContext(ctx, principal.Principal{Kind: principal.KindUser, Subject: userID, SessionID: sessionID})
}

// open inserts a new session of u in tx.
func (s *Sessions) open(ctx context.Context, tx PeopleTx, u User, origin Origin, now time.Time) (SignedIn, error) {
	origin = origin.bounded()
	secret, digest := newToken(SessionPrefix)
	csrf, _ := newToken("")
	sess := Session{ID: newID(), UserID: u.ID, SecretSHA256: digest, CSRFToken: csrf, ClientAddress: origin.ClientAddress,
		UserAgent: origin.UserAgent, CreatedAt: now, ExpiresAt: now.Add(s.cfg.SessionTTL)}
	// Each sign-in clears the user's expired sessions, so that the rows
	// of a user are their live sessions and a few.
	if err := tx.DeleteExpiredSessions(ctx, u.ID, now); err != nil {
		return SignedIn{}, err
	}
	if err := tx.InsertSession(ctx, sess); err != nil {
		return SignedIn{}, err
	}
	if err := audit.Record(actingAs(ctx, u.ID, sess.ID), tx, auditService, audit.Change{Action: "session.created", ResourceType: "session", ResourceID: sess.ID}, now); err != nil {
		return SignedIn{}, err
	}
	return SignedIn{User: u, Session: sess, Secret: secret}, nil
}

func (s *Sessions) withMemberships(ctx context.Context, in SignedIn) (SignedIn, error) {
	ms, err := s.store.Memberships(ctx, in.User.ID)
	in.Memberships = ms
	return in, err
}

// current is the caller's live session: the principal's session of its
// user, not expired.
func (s *Sessions) current(ctx context.Context) (Session, error) {
	p, _ := principal.FromContext(ctx)
	sess, err := s.store.Session(ctx, p.SessionID)
	if err == nil && (sess.UserID != p.Subject || !s.clock.Now().Before(sess.ExpiresAt)) {
		err = ErrNotFound
	}
	if err != nil {
		return Session{}, notFound(err, "the session has ended: sign in again (POST /api/v1/sessions)")
	}
	return sess, nil
}

// Current answers the caller's session with their user, agencies and CSRF
// token.
func (s *Sessions) Current(ctx context.Context) (SignedIn, error) {
	sess, err := s.current(ctx)
	if err != nil {
		return SignedIn{}, err
	}
	u, err := s.store.User(ctx, sess.UserID)
	if err != nil {
		return SignedIn{}, notFound(err, "the session's user no longer exists")
	}
	return s.withMemberships(ctx, SignedIn{User: u, Session: sess})
}

// DeleteCurrent signs the caller out.
func (s *Sessions) DeleteCurrent(ctx context.Context) error {
	sess, err := s.current(ctx)
	if err != nil {
		return err
	}
	return s.store.InTx(ctx, func(tx PeopleTx) error {
		if err := tx.DeleteSession(ctx, sess.UserID, sess.ID); err != nil {
			return notFound(err, "the session has ended already")
		}
		now := s.clock.Now()
		if err := outbox.Add(ctx, tx, events.SessionsEnded, events.SessionsEvent{UserID: sess.UserID, SessionIDs: []string{sess.ID}, At: now}, now); err != nil {
			return err
		}
		return audit.Record(ctx, tx, auditService, audit.Change{Action: "session.ended", ResourceType: "session", ResourceID: sess.ID}, now)
	})
}

// Verify resolves a session by the SHA-256 of its secret; an unknown,
// ended or expired session is not found.
func (s *Sessions) Verify(ctx context.Context, digest []byte) (SignedIn, error) {
	if len(digest) != 32 {
		return SignedIn{}, apperr.Invalid("secret_sha256 must be 32 bytes; got %d", len(digest))
	}
	sess, err := s.store.SessionBySecretSHA256(ctx, digest)
	if err == nil && (subtle.ConstantTimeCompare(sess.SecretSHA256, digest) != 1 || !s.clock.Now().Before(sess.ExpiresAt)) {
		err = ErrNotFound
	}
	if err != nil {
		return SignedIn{}, notFound(err, "unknown session")
	}
	u, err := s.store.User(ctx, sess.UserID)
	if err != nil {
		return SignedIn{}, notFound(err, "unknown session")
	}
	return s.withMemberships(ctx, SignedIn{User: u, Session: sess})
}

var errInvitationGone = apperr.NotFound("invitation not found: it is unknown, was used already, was replaced by a newer one, or expired; ask the agency's owner to invite you again")

// liveInvitation finds an unexpired invitation of a member who still has a
// role.
func (s *Sessions) liveInvitation(ctx context.Context, r PeopleReader, token string) (Invitation, error) {
	if !strings.HasPrefix(token, InvitationPrefix) {
		return Invitation{}, errInvitationGone
	}
	inv, err := r.InvitationByTokenSHA256(ctx, digestOf(token))
	if errors.Is(err, ErrNotFound) || (err == nil && !s.clock.Now().Before(inv.ExpiresAt)) {
		return Invitation{}, errInvitationGone
	}
	return inv, err
}

// AcceptInvitation creates the invited person's user (or, when the
// member's email has a user already, checks that user's password and
// adds the membership to it) and signs them in. Works once.
func (s *Sessions) AcceptInvitation(ctx context.Context, token, password, name string, origin Origin) (SignedIn, error) {
	if err := passwordField(password); err != nil {
		return SignedIn{}, err
	}
	inv, err := s.liveInvitation(ctx, s.store, token)
	if err != nil {
		return SignedIn{}, err
	}
	existing, err := s.store.UserByEmail(ctx, inv.Email)
	if err != nil && !errors.Is(err, ErrNotFound) {
		return SignedIn{}, err
	}
	// The password is hashed or verified before the transaction, whose
	// locks must not wait on argon2id.
	var hash string
	if existing.ID != "" {
		ok, err := s.hasher.Verify(ctx, existing.PasswordHash, password)
		if err != nil {
			return SignedIn{}, err
		}
		if !ok {
			return SignedIn{}, apperr.Unauthenticated("%s has a sign-in already (a member of another agency): give its current password to add this agency to it", inv.Email)
		}
	} else {
		if err := CheckNewPassword("password", password); err != nil {
			return SignedIn{}, err
		}
		if name != "" {
			if name, err = value.Line("name", name, maxName, false); err != nil {
				return SignedIn{}, err
			}
		}
		if hash, err = s.hasher.Hash(ctx, password); err != nil {
			return SignedIn{}, err
		}
	}
	var out SignedIn
	err = s.store.InTx(ctx, func(tx PeopleTx) error {
		inv, err := s.liveInvitation(ctx, tx, token)
		if err != nil {
			return err
		}
		m, err := tx.Member(ctx, inv.AgencyID, inv.MemberID)
		if errors.Is(err, ErrNotFound) || (err == nil && m.Role == "") {
			return errInvitationGone
		} else if err != nil {
			return err
		}
		now := s.clock.Now()
		u, err := tx.UserByEmail(ctx, inv.Email)
		switch {
		case err != nil && !errors.Is(err, ErrNotFound):
			return err
		case (err == nil) != (existing.ID != ""):
			return apperr.Aborted(nil, "a sign-in for %s was created or removed meanwhile; accept the invitation again", inv.Email)
		case err != nil:
			if name == "" {
				name = m.Name
			}
			u = User{ID: newID(), Email: inv.Email, Name: name, PasswordHash: hash, CreatedAt: now, UpdatedAt: now}
			if err := tx.InsertUser(ctx, u); err != nil {
				if errors.Is(err, ErrDuplicate) {
					return apperr.Aborted(err, "a sign-in for %s was created meanwhile; accept the invitation again with its password", inv.Email)
				}
				return err
			}
			if err := audit.Record(actingAs(ctx, u.ID, ""), tx, auditService, audit.Change{Action: "user.created", ResourceType: "user", ResourceID: u.ID,
				Fields: []string{"email", "name", "password"}, AgencyID: m.AgencyID}, now); err != nil {
				return err
			}
		}
		if err := acceptAs(ctx, tx, m, u, now); err != nil {
			return err
		}
		out, err = s.open(ctx, tx, u, origin, now)
		return err
	})
	if err != nil {
		return SignedIn{}, err
	}
	return s.withMemberships(ctx, out)
}

// acceptAs makes member m user u's membership in tx: the member is linked
// to the user, its invitations are spent, and the trail says so. An
// invitation accepted with a password and one accepted through single
// sign-on end the same way.
func acceptAs(ctx context.Context, tx PeopleTx, m Member, u User, now time.Time) error {
	m.UserID, m.UpdatedAt = u.ID, now
	if err := tx.UpdateMember(ctx, m); err != nil {
		return err
	}
	if err := tx.DeleteInvitations(ctx, m.ID); err != nil {
		return err
	}
	return audit.Record(actingAs(ctx, u.ID, ""), tx, auditService, audit.Change{Action: "invitation.accepted", ResourceType: "member", ResourceID: m.ID,
		Fields: []string{"user_id"}, AgencyID: m.AgencyID}, now)
}

// IssuedReset is a password reset with its token, shown once.
type IssuedReset struct {
	Token     string
	URL       string
	ExpiresAt time.Time
}

// issueReset creates a reset of the user with email, voiding earlier
// ones; ErrNotFound when the email has no user.
func (s *Sessions) issueReset(ctx context.Context, email string) (User, IssuedReset, error) {
	u, err := s.store.UserByEmail(ctx, email)
	if err != nil {
		return User{}, IssuedReset{}, err
	}
	token, digest := newToken(ResetPrefix)
	now := s.clock.Now()
	r := PasswordReset{ID: newID(), UserID: u.ID, TokenSHA256: digest, ExpiresAt: now.Add(ResetTTL), CreatedAt: now}
	err = s.store.InTx(ctx, func(tx PeopleTx) error {
		if err := tx.DeletePasswordResets(ctx, u.ID); err != nil {
			return err
		}
		if err := tx.InsertPasswordReset(ctx, r); err != nil {
			return err
		}
		return audit.Record(ctx, tx, auditService, audit.Change{Action: "password_reset.created", ResourceType: "user", ResourceID: u.ID}, now)
	})
	return u, IssuedReset{Token: token, URL: s.cfg.url("/studio/password-resets/", token), ExpiresAt: r.ExpiresAt}, err
}

// CreatePasswordReset issues a reset for an operator to pass on.
func (s *Sessions) CreatePasswordReset(ctx context.Context, email string) (IssuedReset, error) {
	email, err := emailAddress(email)
	if err != nil {
		return IssuedReset{}, err
	}
	_, r, err := s.issueReset(ctx, email)
	if err != nil {
		return IssuedReset{}, notFound(err, "no user signs in with %q", email)
	}
	return r, nil
}

// RequestPasswordReset emails a reset when the address has a user and the
// deployment can send email. The answer is the same either way, and so is
// its time: the lookup and the email happen after it, in the background.
func (s *Sessions) RequestPasswordReset(ctx context.Context, email string) error {
	email, err := emailAddress(email)
	if err != nil {
		return err
	}
	if s.cfg.Mailer == nil {
		return nil
	}
	select {
	case s.resets <- struct{}{}:
	default:
		s.cfg.Logger.Warn("a password reset request was dropped: too many are being emailed at once", "in_flight", maxResetsInFlight)
		return nil
	}
	go func() {
		defer func() { <-s.resets }()
		ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), time.Minute)
		defer cancel()
		u, r, err := s.issueReset(ctx, email)
		if errors.Is(err, ErrNotFound) {
			return
		}
		if err == nil {
			text := fmt.Sprintf("Hello %s,\n\nSomeone asked to reset the password of your Atrium sign-in. Set a new one here (the link works once, for an hour):\n\n%s\n\nIf it was not you, ignore this email: your password stays as it is.\n", u.Name, r.URL)
			err = s.cfg.Mailer.Send(ctx, u.Email, "Reset your Atrium password", text)
		}
		if err != nil {
			s.cfg.Logger.Warn("a password reset could not be emailed", "error", err)
		}
	}()
	return nil
}

var errResetGone = apperr.NotFound("password reset not found: it is unknown, was used already, was replaced by a newer one, or expired (after an hour); ask for another")

func (s *Sessions) liveReset(ctx context.Context, r PeopleReader, token string) (PasswordReset, error) {
	if !strings.HasPrefix(token, ResetPrefix) {
		return PasswordReset{}, errResetGone
	}
	pr, err := r.PasswordResetByTokenSHA256(ctx, digestOf(token))
	if errors.Is(err, ErrNotFound) || (err == nil && !s.clock.Now().Before(pr.ExpiresAt)) {
		return PasswordReset{}, errResetGone
	}
	return pr, err
}

// CompletePasswordReset sets a new password with a reset's token (once)
// and ends every session of the user.
func (s *Sessions) CompletePasswordReset(ctx context.Context, token, password string) error {
	if err := CheckNewPassword("password", password); err != nil {
		return err
	}
	if _, err := s.liveReset(ctx, s.store, token); err != nil {
		return err
	}
	hash, err := s.hasher.Hash(ctx, password)
	if err != nil {
		return err
	}
	return s.store.InTx(ctx, func(tx PeopleTx) error {
		pr, err := s.liveReset(ctx, tx, token)
		if err != nil {
			return err
		}
		u, err := tx.User(ctx, pr.UserID)
		if err != nil {
			return notFound(err, "the reset's user no longer exists")
		}
		now := s.clock.Now()
		u.PasswordHash, u.UpdatedAt = hash, now
		if err := tx.UpdateUser(ctx, u); err != nil {
			return err
		}
		if err := tx.DeletePasswordResets(ctx, u.ID); err != nil {
			return err
		}
		if _, err := endSessions(ctx, tx, u.ID, now); err != nil {
			return err
		}
		return audit.Record(actingAs(ctx, u.ID, ""), tx, auditService, audit.Change{Action: "password_reset.completed", ResourceType: "user", ResourceID: u.ID,
			Fields: []string{"password"}}, now)
	})
}

// VerifiedIdentity is a person whose email a single sign-on provider has
// verified: the gateway checked the provider's ID token.
type VerifiedIdentity struct {
	Email, Name string
	// Issuer and Subject name the person at the provider, for the log.
	Issuer, Subject string
}

// CreateVerifiedSession signs in the person of a verified email, matched
// to Atrium by that email alone:
//
//   - a user with the email is signed in, with their memberships;
//   - else, when the email has live invitations, a user is created for it
//     without a password (an empty hash, which no password verifies; a
//     password reset can set one later);
//   - else the email is no member's: PERMISSION_DENIED.
//
// Either way every live invitation of the email is accepted: the provider
// proved the email, which is what an invitation's emailed link proves
// (and a user without a password could not accept one otherwise).
func (s *Sessions) CreateVerifiedSession(ctx context.Context, id VerifiedIdentity, origin Origin) (SignedIn, error) {
	email, err := emailAddress(id.Email)
	if err != nil {
		return SignedIn{}, err
	}
	// The provider's name is the person's own account's: kept if it is a
	// name Atrium accepts, else the member's name is used.
	name, err := value.Line("name", id.Name, maxName, false)
	if err != nil {
		name = ""
	}
	var out SignedIn
	err = s.store.InTx(ctx, func(tx PeopleTx) error {
		now := s.clock.Now()
		u, err := tx.UserByEmail(ctx, email)
		exists := err == nil
		if err != nil && !errors.Is(err, ErrNotFound) {
			return err
		}
		members, err := s.invitedMembers(ctx, tx, email, u.ID, now)
		if err != nil {
			return err
		}
		if !exists && len(members) == 0 {
			// A sign-in of the same email at once (a second tab) may have
			// accepted the invitations while this one waited on their
			// locks: its user is there now.
			if u, err = tx.UserByEmail(ctx, email); err == nil {
				exists = true
			} else if !errors.Is(err, ErrNotFound) {
				return err
			}
		}
		if !exists {
			if len(members) == 0 {
				return apperr.PermissionDenied("no member of any agency has the email %s (or their invitation expired): ask an owner to invite you", email)
			}
			if name == "" {
				name = members[0].Name
			}
			u = User{ID: newID(), Email: email, Name: name, CreatedAt: now, UpdatedAt: now}
			if err := tx.InsertUser(ctx, u); err != nil {
				if errors.Is(err, ErrDuplicate) {
					return apperr.Aborted(err, "a sign-in for %s was created meanwhile; sign in again", email)
				}
				return err
			}
			if err := audit.Record(actingAs(ctx, u.ID, ""), tx, auditService, audit.Change{Action: "user.created", ResourceType: "user", ResourceID: u.ID,
				Fields: []string{"email", "name"}, AgencyID: members[0].AgencyID}, now); err != nil {
				return err
			}
		}
		for _, m := range members {
			if err := acceptAs(ctx, tx, m, u, now); err != nil {
				return err
			}
		}
		out, err = s.open(ctx, tx, u, origin, now)
		return err
	})
	if err != nil {
		return SignedIn{}, err
	}
	// The provider's names of the person go to the log, never its tokens.
	s.cfg.Logger.Info("signed in with single sign-on", "user_id", out.User.ID, "session_id", out.Session.ID,
		"issuer", truncateRunes(id.Issuer, maxOriginField), "subject", truncateRunes(id.Subject, maxOriginField))
	return s.withMemberships(ctx, out)
}

// invitedMembers are the members with a role that live invitations of the
// email invite, one per agency, leaving out the agencies where the user
// (if any) is a member already.
func (s *Sessions) invitedMembers(ctx context.Context, tx PeopleTx, email, userID string, now time.Time) ([]Member, error) {
	invs, err := tx.InvitationsByEmail(ctx, email)
	if err != nil || len(invs) == 0 {
		return nil, err
	}
	agencies := map[string]bool{}
	if userID != "" {
		ms, err := tx.Memberships(ctx, userID)
		if err != nil {
			return nil, err
		}
		for _, m := range ms {
			agencies[m.Member.AgencyID] = true
		}
	}
	var out []Member
	for _, inv := range invs {
		if !now.Before(inv.ExpiresAt) || agencies[inv.AgencyID] {
			continue
		}
		m, err := tx.Member(ctx, inv.AgencyID, inv.MemberID)
		if errors.Is(err, ErrNotFound) || (err == nil && (m.Role == "" || m.UserID != "")) {
			continue
		} else if err != nil {
			return nil, err
		}
		agencies[m.AgencyID] = true
		out = append(out, m)
	}
	return out, nil
}
