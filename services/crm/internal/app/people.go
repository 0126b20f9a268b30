package app

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"strings"
	"time"

	"github.com/atrium-hq/atrium/platform/apperr"
	"github.com/atrium-hq/atrium/platform/audit"
	"github.com/atrium-hq/atrium/platform/events"
	"github.com/atrium-hq/atrium/platform/outbox"
	"github.com/atrium-hq/atrium/platform/pagination"
	"github.com/atrium-hq/atrium/platform/principal"
	"github.com/atrium-hq/atrium/platform/value"
)

// auditService names the CRM in the audit trail.
const auditService = "crm"

// maxMemberSites bounds an editor's list of sites.
const maxMemberSites = 100

// MaxInvitationsByEmail bounds the invitations a single sign-on accepts at
// once: one per agency that invited the email, and no person is invited by
// more agencies than this.
const MaxInvitationsByEmail = 100

// Token prefixes: a secret found in a log or a repository says what it
// is, and secret scanners can match it.
const (
	InvitationPrefix = "atr_inv_"
	SessionPrefix    = "atr_ses_"
	ResetPrefix      = "atr_rst_"
)

// Defaults of PeopleConfig.
const (
	DefaultInvitationTTL = 7 * 24 * time.Hour
	DefaultSessionTTL    = 7 * 24 * time.Hour
	// ResetTTL is how long a password reset works.
	ResetTTL = time.Hour
)

// PeopleStore is the store as People and Sessions use it.
type PeopleStore interface {
	PeopleReader
	InTx(ctx context.Context, fn func(PeopleTx) error) error
}

// PeopleReader is what People and Sessions read outside transactions.
type PeopleReader interface {
	// Agency is read for the agency's name in emails and memberships.
	Agency(ctx context.Context, id string) (Agency, error)
	// Members lists an agency's members by name, then id.
	Members(ctx context.Context, agencyID string, page pagination.Page) ([]Member, error)
	User(ctx context.Context, id string) (User, error)
	// UserByEmail finds a user by their (lower-case) email.
	UserByEmail(ctx context.Context, email string) (User, error)
	// Memberships lists the members a user is, with their agencies'
	// names, by agency name then member id.
	Memberships(ctx context.Context, userID string) ([]Membership, error)
	Session(ctx context.Context, id string) (Session, error)
	SessionBySecretSHA256(ctx context.Context, digest []byte) (Session, error)
	InvitationByTokenSHA256(ctx context.Context, digest []byte) (Invitation, error)
	// InvitationsByEmail lists the invitations to the (lower-case) email,
	// expired ones included, oldest first (then by id), at most
	// MaxInvitationsByEmail.
	InvitationsByEmail(ctx context.Context, email string) ([]Invitation, error)
	PasswordResetByTokenSHA256(ctx context.Context, digest []byte) (PasswordReset, error)
}

// PeopleTx is a transaction as People and Sessions use it (see Tx for what
// its getters lock).
type PeopleTx interface {
	PeopleReader
	// Link is read to check a client member's client.
	Link(ctx context.Context, agencyID, clientID string) (ClientLink, error)
	Member(ctx context.Context, agencyID, id string) (Member, error)
	InsertMember(ctx context.Context, m Member) error
	// UpdateMember stores m's name, role, site_ids, client_id, user_id
	// and updated_at.
	UpdateMember(ctx context.Context, m Member) error
	DeleteMember(ctx context.Context, agencyID, id string) error
	// Owners lists the ids of the agency's members with the owner role
	// (and, in PostgreSQL, locks them, so that two demotions cannot both
	// see the other owner).
	Owners(ctx context.Context, agencyID string) ([]string, error)
	// MemberOwnsDeals reports whether any deal names the member as its
	// owner.
	MemberOwnsDeals(ctx context.Context, agencyID, memberID string) (bool, error)
	// KeysIssuedBy lists the unrevoked keys the member issued.
	KeysIssuedBy(ctx context.Context, agencyID, memberID string) ([]APIKey, error)
	UpdateKey(ctx context.Context, k APIKey) error
	InsertInvitation(ctx context.Context, inv Invitation) error
	// DeleteInvitations deletes every invitation of the member.
	DeleteInvitations(ctx context.Context, memberID string) error
	// InsertUser adds a user; ErrDuplicate when the email is taken.
	InsertUser(ctx context.Context, u User) error
	// UpdateUser stores u's name, password_hash and updated_at.
	UpdateUser(ctx context.Context, u User) error
	InsertSession(ctx context.Context, s Session) error
	// DeleteSession deletes the user's session; ErrNotFound if none.
	DeleteSession(ctx context.Context, userID, id string) error
	// DeleteSessions deletes every session of the user and returns their
	// ids, sorted.
	DeleteSessions(ctx context.Context, userID string) ([]string, error)
	// DeleteExpiredSessions deletes the user's sessions that expired at
	// or before now (no gateway can use them: nothing to announce).
	DeleteExpiredSessions(ctx context.Context, userID string, now time.Time) error
	InsertPasswordReset(ctx context.Context, r PasswordReset) error
	// DeletePasswordResets deletes every password reset of the user.
	DeletePasswordResets(ctx context.Context, userID string) error
	outbox.Enqueuer
}

// Mailer sends an email. The SMTP adapter implements it; without one
// (no --smtp-addr) invitations and resets are only answered.
type Mailer interface {
	Send(ctx context.Context, to, subject, text string) error
}

// PeopleConfig configures People and Sessions.
type PeopleConfig struct {
	// PublicURL is the deployment's public base URL, which the links in
	// invitations and resets start with (read on every use: `atrium
	// serve` learns its listener's address after start).
	PublicURL     func() string
	InvitationTTL time.Duration
	SessionTTL    time.Duration
	// Mailer, when set, emails invitations and password resets.
	Mailer Mailer
	// Logger reports emails that could not be sent.
	Logger *slog.Logger
}

func (c PeopleConfig) url(path, token string) string {
	base := ""
	if c.PublicURL != nil {
		base = strings.TrimSuffix(c.PublicURL(), "/")
	}
	return base + path + token
}

func (c PeopleConfig) withDefaults() PeopleConfig {
	if c.InvitationTTL <= 0 {
		c.InvitationTTL = DefaultInvitationTTL
	}
	if c.SessionTTL <= 0 {
		c.SessionTTL = DefaultSessionTTL
	}
	if c.Logger == nil {
		c.Logger = slog.New(slog.DiscardHandler)
	}
	return c
}

// People is an agency's members, their invitations and the agency's keys,
// as owners (and, for members, operators) manage them.
type People struct {
	store PeopleStore
	keys  *Keys
	sites SiteDirectory
	clock Clock
	cfg   PeopleConfig
}

// NewPeople returns the people use cases.
func NewPeople(store PeopleStore, keys *Keys, sites SiteDirectory, clock Clock, cfg PeopleConfig) *People {
	return &People{store: store, keys: keys, sites: sites, clock: clock, cfg: cfg.withDefaults()}
}

// IssuedInvitation is an invitation with its token, which is shown once.
type IssuedInvitation struct {
	Invitation
	Token string
	URL   string
}

// newToken returns a random 256-bit secret with a prefix, and its SHA-256.
func newToken(prefix string) (string, []byte) {
	b := make([]byte, 32)
	if _, err := rand.Read(b); err != nil {
		panic(err) // crypto/rand never fails on supported platforms
	}
	t := prefix + base64.RawURLEncoding.EncodeToString(b)
	return t, digestOf(t)
}

func digestOf(token string) []byte {
	d := sha256.Sum256([]byte(token))
	return d[:]
}

// NewMember is the input of CreateMember.
type NewMember struct {
	AgencyID string
	Name     string
	Email    string
	Role     string
	SiteIDs  []string
	ClientID string
}

// CreateMember adds a member to an agency; a member given a role is
// invited.
func (p *People) CreateMember(ctx context.Context, in NewMember) (Member, *IssuedInvitation, error) {
	agencyID, err := value.PathID("agency", in.AgencyID)
	if err != nil {
		return Member{}, nil, err
	}
	email, err := emailAddress(in.Email)
	if err != nil {
		return Member{}, nil, err
	}
	if strings.TrimSpace(in.Name) == "" {
		in.Name = email[:strings.IndexByte(email, '@')]
	}
	name, err := value.Line("name", in.Name, maxName, false)
	if err != nil {
		return Member{}, nil, err
	}
	now := p.clock.Now()
	m := Member{ID: newID(), AgencyID: agencyID, Name: name, Email: email, CreatedAt: now, UpdatedAt: now}
	if in.Role != "" {
		if m.Role, err = principal.ParseRole(in.Role); err != nil {
			return Member{}, nil, err
		}
	}
	if err := sitesForRole(m.Role, in.SiteIDs); err != nil {
		return Member{}, nil, err
	}
	if m.SiteIDs, err = p.checkSites(ctx, agencyID, in.SiteIDs); err != nil {
		return Member{}, nil, err
	}
	if m.ClientID, err = memberClient(m.Role, in.ClientID, in.ClientID != ""); err != nil {
		return Member{}, nil, err
	}
	var inv *IssuedInvitation
	err = p.store.InTx(ctx, func(tx PeopleTx) error {
		if _, err := tx.Agency(ctx, agencyID); err != nil {
			return notFound(err, "agency %q not found", agencyID)
		}
		if err := checkClientLink(ctx, tx, m); err != nil {
			return err
		}
		if err := tx.InsertMember(ctx, m); err != nil {
			if errors.Is(err, ErrDuplicate) {
				return apperr.Conflict("agency %s already has a member with email %q", agencyID, email)
			}
			return err
		}
		if err := outbox.Add(ctx, tx, events.MemberCreated, events.RecordEvent{ID: m.ID, AgencyID: agencyID, At: now}, now); err != nil {
			return err
		}
		fields := []string{"name", "email"}
		if m.Role != "" {
			fields = append(fields, "role")
		}
		if len(m.SiteIDs) > 0 {
			fields = append(fields, "site_ids")
		}
		if m.ClientID != "" {
			fields = append(fields, "client_id")
		}
		if err := audit.Record(ctx, tx, auditService, audit.Change{Action: "member.created", ResourceType: "member", ResourceID: m.ID,
			Fields: fields, AgencyID: agencyID}, now); err != nil {
			return err
		}
		if m.Role != "" {
			inv, err = p.invite(ctx, tx, m, now)
		}
		return err
	})
	if err != nil {
		return Member{}, nil, err
	}
	p.mailInvitation(ctx, m, inv)
	return m, inv, nil
}

// checkSites checks the sites of an editor: at most maxMemberSites, each
// one the agency owns. It asks the collections service, so it runs before
// the transaction.
func (p *People) checkSites(ctx context.Context, agencyID string, ids []string) ([]string, error) {
	if len(ids) == 0 {
		return nil, nil
	}
	if len(ids) > maxMemberSites {
		return nil, apperr.Invalid("site_ids may name at most %d sites; got %d", maxMemberSites, len(ids))
	}
	out := make([]string, 0, len(ids))
	for _, id := range ids {
		id, err := value.BodyID("site_ids", id)
		if err != nil {
			return nil, err
		}
		if !slices.Contains(out, id) {
			out = append(out, id)
		}
	}
	for _, id := range out {
		owner, ok, err := p.sites.SiteOwner(ctx, id)
		if err != nil {
			return nil, apperr.Unavailable(err, "cannot check site_ids now: the collections service is unavailable; retry later")
		}
		if !ok || owner != agencyID {
			return nil, apperr.Invalid("site_ids: %q is not a site of this agency; an editor may be given only the agency's own sites", id)
		}
	}
	slices.Sort(out)
	return out, nil
}

// sitesForRole refuses sites for any role but editor.
func sitesForRole(role principal.Role, ids []string) error {
	if len(ids) > 0 && role != principal.RoleEditor {
		return apperr.Invalid("site_ids is only for the editor role (the sites they may edit); the %s role reaches every site of the agency its rights allow", roleName(role))
	}
	return nil
}

func roleName(r principal.Role) string {
	if r == "" {
		return "no"
	}
	return string(r)
}

// memberClient checks a client member's client: required for the client
// role, refused for the others.
func memberClient(role principal.Role, clientID string, given bool) (string, error) {
	if role != principal.RoleClient {
		if given && clientID != "" {
			return "", apperr.Invalid("client_id is only for the client role; the %s role is not limited to one client", roleName(role))
		}
		return "", nil
	}
	if clientID == "" {
		return "", apperr.Invalid("client_id is required for the client role: one of the agency's clients, whose results the member reads")
	}
	return value.BodyID("client_id", clientID)
}

func checkClientLink(ctx context.Context, tx PeopleTx, m Member) error {
	if m.ClientID == "" {
		return nil
	}
	if _, err := tx.Link(ctx, m.AgencyID, m.ClientID); err != nil {
		if errors.Is(err, ErrNotFound) {
			return apperr.Invalid("client_id %q is not a client of this agency (GET /admin/v1/clients?agency_id= lists them)", m.ClientID)
		}
		return err
	}
	return nil
}

// invite issues a new invitation of m in tx, voiding the earlier ones.
func (p *People) invite(ctx context.Context, tx PeopleTx, m Member, now time.Time) (*IssuedInvitation, error) {
	if err := tx.DeleteInvitations(ctx, m.ID); err != nil {
		return nil, err
	}
	token, digest := newToken(InvitationPrefix)
	inv := Invitation{ID: newID(), AgencyID: m.AgencyID, MemberID: m.ID, Email: m.Email, TokenSHA256: digest,
		ExpiresAt: now.Add(p.cfg.InvitationTTL), CreatedAt: now}
	if err := tx.InsertInvitation(ctx, inv); err != nil {
		return nil, err
	}
	if err := audit.Record(ctx, tx, auditService, audit.Change{Action: "invitation.created", ResourceType: "member", ResourceID: m.ID,
		AgencyID: m.AgencyID}, now); err != nil {
		return nil, err
	}
	return &IssuedInvitation{Invitation: inv, Token: token, URL: p.cfg.url("/studio/invitations/", token)}, nil
}

func (p *People) mailInvitation(ctx context.Context, m Member, inv *IssuedInvitation) {
	if inv == nil || p.cfg.Mailer == nil {
		return
	}
	agency := m.AgencyID
	if a, err := p.store.Agency(ctx, m.AgencyID); err == nil {
		agency = a.Name
	}
	text := fmt.Sprintf("Hello %s,\n\nYou are invited to join %s on Atrium as %s.\n\nAccept the invitation here (it works once, until %s):\n\n%s\n\nIf you did not expect this email, ignore it.\n",
		m.Name, agency, m.Role, inv.ExpiresAt.UTC().Format(time.RFC1123), inv.URL)
	if err := p.cfg.Mailer.Send(context.WithoutCancel(ctx), m.Email, "Your invitation to "+agency+" on Atrium", text); err != nil {
		p.cfg.Logger.Warn("the invitation could not be emailed; the answer carries it", "member_id", m.ID, "error", err)
	}
}

// ListMembers lists an agency's members by name.
func (p *People) ListMembers(ctx context.Context, agencyID string, limit, offset *int32) ([]Member, error) {
	page, err := listPolicy.Parse(limit, offset)
	if err != nil {
		return nil, err
	}
	return p.store.Members(ctx, agencyID, page)
}

// MemberChanges is the input of UpdateMember; nil fields are kept.
type MemberChanges struct {
	Name *string
	// Role "" takes the role away.
	Role *string
	// SiteIDs replaces the editor's sites when set or when ClearSiteIDs.
	SiteIDs      []string
	ClearSiteIDs bool
	ClientID     *string
}

// UpdateMember changes a member's name, role, sites or client. Giving a
// role to a member without one invites them; taking it away ends their
// sessions and revokes the keys they issued.
func (p *People) UpdateMember(ctx context.Context, agencyID, memberID string, in MemberChanges) (Member, *IssuedInvitation, error) {
	memberID, err := value.PathID("member", memberID)
	if err != nil {
		return Member{}, nil, err
	}
	var name string
	if in.Name != nil {
		if name, err = value.Line("name", *in.Name, maxName, false); err != nil {
			return Member{}, nil, err
		}
	}
	var role principal.Role
	if in.Role != nil && *in.Role != "" {
		if role, err = principal.ParseRole(*in.Role); err != nil {
			return Member{}, nil, err
		}
	}
	sites, err := p.checkSites(ctx, agencyID, in.SiteIDs)
	if err != nil {
		return Member{}, nil, err
	}
	var (
		m   Member
		inv *IssuedInvitation
	)
	err = p.store.InTx(ctx, func(tx PeopleTx) error {
		old, err := tx.Member(ctx, agencyID, memberID)
		if err != nil {
			return notFound(err, "member %q not found", memberID)
		}
		m = old
		m.SiteIDs = slices.Clone(old.SiteIDs)
		var fields []string
		if in.Name != nil && name != old.Name {
			m.Name = name
			fields = append(fields, "name")
		}
		if in.Role != nil {
			m.Role = role
		}
		// Sites belong to editors and a client to client members: a new
		// role drops what the old one had, unless the request sets it.
		if m.Role != principal.RoleEditor {
			m.SiteIDs = nil
		}
		if m.Role != principal.RoleClient {
			m.ClientID = ""
		}
		if len(in.SiteIDs) > 0 || in.ClearSiteIDs {
			if err := sitesForRole(m.Role, sites); err != nil {
				return err
			}
			m.SiteIDs = sites
		}
		if in.ClientID != nil {
			if m.ClientID, err = memberClient(m.Role, *in.ClientID, true); err != nil {
				return err
			}
		} else if m.Role == principal.RoleClient && m.ClientID == "" {
			if _, err := memberClient(m.Role, "", false); err != nil {
				return err
			}
		}
		if m.ClientID != old.ClientID {
			if err := checkClientLink(ctx, tx, m); err != nil {
				return err
			}
		}
		if m.Role != old.Role {
			fields = append(fields, "role")
		}
		if !slices.Equal(m.SiteIDs, old.SiteIDs) {
			fields = append(fields, "site_ids")
		}
		if m.ClientID != old.ClientID {
			fields = append(fields, "client_id")
		}
		if len(fields) == 0 {
			return nil
		}
		now := p.clock.Now()
		m.UpdatedAt = now
		if old.Role == principal.RoleOwner && m.Role != principal.RoleOwner {
			if err := p.keepAnOwner(ctx, tx, old, "take the owner role from"); err != nil {
				return err
			}
		}
		accessChanged := m.Role != old.Role || !slices.Equal(m.SiteIDs, old.SiteIDs) || m.ClientID != old.ClientID
		if old.Role != "" && m.Role == "" {
			// Without a role the member cannot sign in: the link to
			// their user goes, with their sessions and keys.
			m.UserID = ""
			if err := p.signOff(ctx, tx, old, now); err != nil {
				return err
			}
		}
		if err := tx.UpdateMember(ctx, m); err != nil {
			return err
		}
		if accessChanged {
			if err := outbox.Add(ctx, tx, events.MemberUpdated, events.MemberEvent{ID: m.ID, AgencyID: agencyID, UserID: old.UserID, At: now}, now); err != nil {
				return err
			}
		}
		if err := audit.Record(ctx, tx, auditService, audit.Change{Action: "member.updated", ResourceType: "member", ResourceID: m.ID,
			Fields: fields, AgencyID: agencyID}, now); err != nil {
			return err
		}
		if old.Role == "" && m.Role != "" {
			inv, err = p.invite(ctx, tx, m, now)
		}
		return err
	})
	if err != nil {
		return Member{}, nil, err
	}
	p.mailInvitation(ctx, m, inv)
	return m, inv, nil
}

// keepAnOwner refuses a change that would leave the agency without an
// owner (nobody could manage its members and keys again).
func (p *People) keepAnOwner(ctx context.Context, tx PeopleTx, m Member, what string) error {
	owners, err := tx.Owners(ctx, m.AgencyID)
	if err != nil {
		return err
	}
	if len(owners) <= 1 {
		return apperr.Conflict("cannot %s member %s: they are the agency's last owner, and an agency needs one to manage its members and keys; give another member the owner role first", what, m.ID)
	}
	return nil
}

// signOff ends the sessions of m's user, revokes the keys m issued and
// voids m's invitations, in tx, with the events every gateway evicts on.
func (p *People) signOff(ctx context.Context, tx PeopleTx, m Member, now time.Time) error {
	keys, err := tx.KeysIssuedBy(ctx, m.AgencyID, m.ID)
	if err != nil {
		return err
	}
	for _, k := range keys {
		k.RevokedAt = &now
		if err := tx.UpdateKey(ctx, k); err != nil {
			return err
		}
		if err := outbox.Add(ctx, tx, events.KeyRevoked, events.KeyEvent{KeyID: k.ID, SiteID: k.SiteID, AgencyID: k.AgencyID, RevokedAt: &now, At: now}, now); err != nil {
			return err
		}
		if err := audit.Record(ctx, tx, auditService, audit.Change{Action: "key.revoked", ResourceType: "key", ResourceID: k.ID, AgencyID: k.AgencyID}, now); err != nil {
			return err
		}
	}
	if err := tx.DeleteInvitations(ctx, m.ID); err != nil {
		return err
	}
	if m.UserID != "" {
		if _, err := endSessions(ctx, tx, m.UserID, now); err != nil {
			return err
		}
	}
	return nil
}

// endSessions deletes every session of the user, announcing them.
func endSessions(ctx context.Context, tx PeopleTx, userID string, now time.Time) (int, error) {
	ids, err := tx.DeleteSessions(ctx, userID)
	if err != nil || len(ids) == 0 {
		return 0, err
	}
	if err := outbox.Add(ctx, tx, events.SessionsEnded, events.SessionsEvent{UserID: userID, SessionIDs: ids, At: now}, now); err != nil {
		return 0, err
	}
	return len(ids), nil
}

// DeleteMember removes a member: their sessions end, the keys they issued
// are revoked and their invitations voided, in one transaction. A member
// who owns deals, or the agency's last owner, stays.
func (p *People) DeleteMember(ctx context.Context, agencyID, memberID string) (Member, error) {
	memberID, err := value.PathID("member", memberID)
	if err != nil {
		return Member{}, err
	}
	var m Member
	err = p.store.InTx(ctx, func(tx PeopleTx) error {
		if m, err = tx.Member(ctx, agencyID, memberID); err != nil {
			return notFound(err, "member %q not found", memberID)
		}
		if m.Role == principal.RoleOwner {
			if err := p.keepAnOwner(ctx, tx, m, "remove"); err != nil {
				return err
			}
		}
		owns, err := tx.MemberOwnsDeals(ctx, agencyID, memberID)
		if err != nil {
			return err
		}
		if owns {
			return apperr.Conflict("cannot remove member %s: they own deals; give the deals another owner first (owner_member_id)", memberID)
		}
		now := p.clock.Now()
		if err := p.signOff(ctx, tx, m, now); err != nil {
			return err
		}
		if err := tx.DeleteMember(ctx, agencyID, memberID); err != nil {
			return err
		}
		if err := outbox.Add(ctx, tx, events.MemberUpdated, events.MemberEvent{ID: m.ID, AgencyID: agencyID, UserID: m.UserID, Removed: true, At: now}, now); err != nil {
			return err
		}
		return audit.Record(ctx, tx, auditService, audit.Change{Action: "member.deleted", ResourceType: "member", ResourceID: m.ID, AgencyID: agencyID}, now)
	})
	return m, err
}

// CreateInvitation invites a member with a role again: a new token, and
// the earlier ones stop working.
func (p *People) CreateInvitation(ctx context.Context, agencyID, memberID string) (Member, *IssuedInvitation, error) {
	memberID, err := value.PathID("member", memberID)
	if err != nil {
		return Member{}, nil, err
	}
	var (
		m   Member
		inv *IssuedInvitation
	)
	err = p.store.InTx(ctx, func(tx PeopleTx) error {
		if m, err = tx.Member(ctx, agencyID, memberID); err != nil {
			return notFound(err, "member %q not found", memberID)
		}
		switch m.Status() {
		case MemberStatusNone:
			return apperr.Conflict("member %s has no role, so there is nothing to sign in for: give them a role (PATCH /api/v1/members/{id} with role), which invites them", memberID)
		case MemberStatusActive:
			return apperr.Conflict("member %s accepted an invitation already and signs in as %s; a forgotten password is reset with POST /api/v1/password-resets", memberID, m.Email)
		}
		inv, err = p.invite(ctx, tx, m, p.clock.Now())
		return err
	})
	if err != nil {
		return Member{}, nil, err
	}
	p.mailInvitation(ctx, m, inv)
	return m, inv, nil
}

// EndMemberSessions signs a member's user out everywhere and says how many
// sessions ended.
func (p *People) EndMemberSessions(ctx context.Context, agencyID, memberID string) (int, error) {
	memberID, err := value.PathID("member", memberID)
	if err != nil {
		return 0, err
	}
	n := 0
	err = p.store.InTx(ctx, func(tx PeopleTx) error {
		m, err := tx.Member(ctx, agencyID, memberID)
		if err != nil {
			return notFound(err, "member %q not found", memberID)
		}
		if m.UserID == "" {
			return nil
		}
		now := p.clock.Now()
		if n, err = endSessions(ctx, tx, m.UserID, now); err != nil {
			return err
		}
		return audit.Record(ctx, tx, auditService, audit.Change{Action: "member.sessions_ended", ResourceType: "member", ResourceID: m.ID, AgencyID: agencyID}, now)
	})
	return n, err
}

// ListAgencyKeys lists the agency's keys, newest first.
func (p *People) ListAgencyKeys(ctx context.Context, agencyID, siteID string, limit, offset *int32) ([]APIKey, error) {
	return p.keys.List(ctx, KeyFilter{AgencyID: agencyID, SiteID: siteID}, limit, offset)
}

// CreateAgencyKey issues a key of the agency, recording the member who
// issued it (their removal revokes it).
func (p *People) CreateAgencyKey(ctx context.Context, agencyID, memberID string, in NewKey) (APIKey, string, error) {
	in.AgencyID, in.CreatedByMemberID = agencyID, memberID
	if in.SiteID != "" {
		// An agency's key reaches only the agency's sites, never an
		// unowned one (which the admin API may bind a key to).
		id, err := value.BodyID("site_id", in.SiteID)
		if err != nil {
			return APIKey{}, "", err
		}
		owner, ok, err := p.sites.SiteOwner(ctx, id)
		if err != nil {
			return APIKey{}, "", apperr.Unavailable(err, "cannot check site_id now: the collections service is unavailable; retry later")
		}
		if !ok || owner != agencyID {
			return APIKey{}, "", apperr.Invalid("site_id %q is not a site of this agency; a key of the agency reaches only its own sites", id)
		}
	}
	return p.keys.Create(ctx, in)
}

// RevokeAgencyKey revokes one of the agency's keys; another agency's key
// is not found.
func (p *People) RevokeAgencyKey(ctx context.Context, agencyID, keyID string) (APIKey, error) {
	return p.keys.revoke(ctx, agencyID, keyID)
}
