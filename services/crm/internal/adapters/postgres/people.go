package postgres

import (
	"context"
	"slices"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/atrium-hq/atrium/platform/pagination"
	"github.com/atrium-hq/atrium/platform/pgdb"
	"github.com/atrium-hq/atrium/platform/value"
	"github.com/atrium-hq/atrium/services/crm/internal/app"
)

// People: members with roles, users, invitations, sessions and password
// resets.

func (r reader) Members(ctx context.Context, agencyID string, page pagination.Page) ([]app.Member, error) {
	rows, err := r.q.Query(ctx, `SELECT `+memberCols+` FROM members WHERE agency_id = $1
		ORDER BY name, id LIMIT $2 OFFSET $3`, agencyID, page.Limit, page.Offset)
	if err != nil {
		return nil, storeErr(err, "list members")
	}
	out, err := pgdb.Collect(rows, int(page.Limit), scanMember)
	return out, storeErr(err, "list members")
}

const userCols = `id, email, name, password_hash, created_at, updated_at`

func scanUser(row pgx.Row) (app.User, error) {
	var u app.User
	err := row.Scan(&u.ID, &u.Email, &u.Name, &u.PasswordHash, &u.CreatedAt, &u.UpdatedAt)
	u.CreatedAt, u.UpdatedAt = u.CreatedAt.UTC(), u.UpdatedAt.UTC()
	return u, err
}

func (r reader) User(ctx context.Context, id string) (app.User, error) {
	u, err := scanUser(r.q.QueryRow(ctx, `SELECT `+userCols+` FROM users WHERE id = $1`+r.lock, id))
	return u, storeErr(err, "user "+id)
}

func (r reader) UserByEmail(ctx context.Context, email string) (app.User, error) {
	u, err := scanUser(r.q.QueryRow(ctx, `SELECT `+userCols+` FROM users WHERE email = $1`+r.lock, email))
	return u, storeErr(err, "user by email")
}

func (r reader) Memberships(ctx context.Context, userID string) ([]app.Membership, error) {
	rows, err := r.q.Query(ctx, `SELECT m.id, m.agency_id, m.name, m.email, m.role, m.site_ids::text[], m.client_id::text, m.user_id::text,
		m.created_at, m.updated_at, a.name FROM members m JOIN agencies a ON a.id = m.agency_id
		WHERE m.user_id = $1 ORDER BY a.name, m.id`, userID)
	if err != nil {
		return nil, storeErr(err, "memberships")
	}
	out, err := pgx.CollectRows(rows, func(row pgx.CollectableRow) (app.Membership, error) {
		var ms app.Membership
		var name string
		m, err := scanMember(scanTail{row, &name})
		ms.Member, ms.AgencyName = m, name
		return ms, err
	})
	if out == nil {
		out = []app.Membership{}
	}
	return out, storeErr(err, "memberships")
}

// scanTail scans a member's columns followed by more.
type scanTail struct {
	row  pgx.Row
	more *string
}

func (s scanTail) Scan(dest ...any) error { return s.row.Scan(append(dest, s.more)...) }

const sessionCols = `id, user_id, secret_sha256, csrf_token, client_address, user_agent, created_at, expires_at`

func scanSession(row pgx.Row) (app.Session, error) {
	var v app.Session
	err := row.Scan(&v.ID, &v.UserID, &v.SecretSHA256, &v.CSRFToken, &v.ClientAddress, &v.UserAgent, &v.CreatedAt, &v.ExpiresAt)
	v.CreatedAt, v.ExpiresAt = v.CreatedAt.UTC(), v.ExpiresAt.UTC()
	return v, err
}

func (r reader) Session(ctx context.Context, id string) (app.Session, error) {
	if _, ok := value.ParseID(id); !ok {
		return app.Session{}, storeErr(pgx.ErrNoRows, "session")
	}
	v, err := scanSession(r.q.QueryRow(ctx, `SELECT `+sessionCols+` FROM sessions WHERE id = $1`+r.lock, id))
	return v, storeErr(err, "session "+id)
}

func (r reader) SessionBySecretSHA256(ctx context.Context, digest []byte) (app.Session, error) {
	v, err := scanSession(r.q.QueryRow(ctx, `SELECT `+sessionCols+` FROM sessions WHERE secret_sha256 = $1`, digest))
	return v, storeErr(err, "session by digest")
}

const invitationCols = `id, agency_id, member_id, email, token_sha256, expires_at, created_at`

func (r reader) InvitationByTokenSHA256(ctx context.Context, digest []byte) (app.Invitation, error) {
	var v app.Invitation
	err := r.q.QueryRow(ctx, `SELECT `+invitationCols+` FROM invitations WHERE token_sha256 = $1`+r.lock, digest).
		Scan(&v.ID, &v.AgencyID, &v.MemberID, &v.Email, &v.TokenSHA256, &v.ExpiresAt, &v.CreatedAt)
	v.ExpiresAt, v.CreatedAt = v.ExpiresAt.UTC(), v.CreatedAt.UTC()
	return v, storeErr(err, "invitation by digest")
}

// InvitationsByEmail scans the invitations, which are only the pending
// ones: few, so the email needs no index.
func (r reader) InvitationsByEmail(ctx context.Context, email string) ([]app.Invitation, error) {
	rows, err := r.q.Query(ctx, `SELECT `+invitationCols+` FROM invitations WHERE email = $1
		ORDER BY created_at, id LIMIT $2`+r.lock, email, app.MaxInvitationsByEmail)
	if err != nil {
		return nil, storeErr(err, "invitations by email")
	}
	out, err := pgdb.Collect(rows, app.MaxInvitationsByEmail, func(row pgx.Row) (app.Invitation, error) {
		var v app.Invitation
		err := row.Scan(&v.ID, &v.AgencyID, &v.MemberID, &v.Email, &v.TokenSHA256, &v.ExpiresAt, &v.CreatedAt)
		v.ExpiresAt, v.CreatedAt = v.ExpiresAt.UTC(), v.CreatedAt.UTC()
		return v, err
	})
	if out == nil {
		out = []app.Invitation{}
	}
	return out, storeErr(err, "invitations by email")
}

func (r reader) PasswordResetByTokenSHA256(ctx context.Context, digest []byte) (app.PasswordReset, error) {
	var v app.PasswordReset
	err := r.q.QueryRow(ctx, `SELECT id, user_id, token_sha256, expires_at, created_at FROM password_resets WHERE token_sha256 = $1`+r.lock, digest).
		Scan(&v.ID, &v.UserID, &v.TokenSHA256, &v.ExpiresAt, &v.CreatedAt)
	v.ExpiresAt, v.CreatedAt = v.ExpiresAt.UTC(), v.CreatedAt.UTC()
	return v, storeErr(err, "password reset by digest")
}

func (t *tx) UpdateMember(ctx context.Context, m app.Member) error {
	return t.execOne(ctx, "update member", `UPDATE members SET name = $3, role = $4, site_ids = $5::uuid[], client_id = $6, user_id = $7, updated_at = $8
		WHERE agency_id = $1 AND id = $2`,
		m.AgencyID, m.ID, m.Name, nullable(string(m.Role)), siteIDs(m.SiteIDs), nullable(m.ClientID), nullable(m.UserID), m.UpdatedAt)
}

func (t *tx) DeleteMember(ctx context.Context, agencyID, id string) error {
	return t.execOne(ctx, "delete member", `DELETE FROM members WHERE agency_id = $1 AND id = $2`, agencyID, id)
}

func (t *tx) Owners(ctx context.Context, agencyID string) ([]string, error) {
	rows, err := t.Tx.Query(ctx, `SELECT id::text FROM members WHERE agency_id = $1 AND role = 'owner' ORDER BY id FOR UPDATE`, agencyID)
	if err != nil {
		return nil, storeErr(err, "owners")
	}
	ids, err := pgx.CollectRows(rows, pgx.RowTo[string])
	if ids == nil {
		ids = []string{}
	}
	return ids, storeErr(err, "owners")
}

func (t *tx) MemberOwnsDeals(ctx context.Context, agencyID, memberID string) (bool, error) {
	var ok bool
	err := t.Tx.QueryRow(ctx, `SELECT EXISTS (SELECT 1 FROM deals WHERE agency_id = $1 AND owner_member_id = $2)`, agencyID, memberID).Scan(&ok)
	return ok, storeErr(err, "member's deals")
}

func (t *tx) KeysIssuedBy(ctx context.Context, agencyID, memberID string) ([]app.APIKey, error) {
	rows, err := t.Tx.Query(ctx, `SELECT `+keyCols+` FROM api_keys WHERE agency_id = $1 AND created_by_member_id = $2 AND revoked_at IS NULL
		ORDER BY id FOR UPDATE`, agencyID, memberID)
	if err != nil {
		return nil, storeErr(err, "member's keys")
	}
	out, err := pgx.CollectRows(rows, func(row pgx.CollectableRow) (app.APIKey, error) { return scanKey(row) })
	if out == nil {
		out = []app.APIKey{}
	}
	return out, storeErr(err, "member's keys")
}

func (t *tx) InsertInvitation(ctx context.Context, v app.Invitation) error {
	return t.exec(ctx, "insert invitation", `INSERT INTO invitations (`+invitationCols+`) VALUES ($1, $2, $3, $4, $5, $6, $7)`,
		v.ID, v.AgencyID, v.MemberID, v.Email, v.TokenSHA256, v.ExpiresAt, v.CreatedAt)
}

func (t *tx) DeleteInvitations(ctx context.Context, memberID string) error {
	return t.exec(ctx, "delete invitations", `DELETE FROM invitations WHERE member_id = $1`, memberID)
}

func (t *tx) InsertUser(ctx context.Context, u app.User) error {
	return t.exec(ctx, "insert user", `INSERT INTO users (`+userCols+`) VALUES ($1, $2, $3, $4, $5, $6)`,
		u.ID, u.Email, u.Name, u.PasswordHash, u.CreatedAt, u.UpdatedAt)
}

func (t *tx) UpdateUser(ctx context.Context, u app.User) error {
	return t.execOne(ctx, "update user", `UPDATE users SET name = $2, password_hash = $3, updated_at = $4 WHERE id = $1`,
		u.ID, u.Name, u.PasswordHash, u.UpdatedAt)
}

func (t *tx) InsertSession(ctx context.Context, v app.Session) error {
	return t.exec(ctx, "insert session", `INSERT INTO sessions (`+sessionCols+`) VALUES ($1, $2, $3, $4, $5, $6, $7, $8)`,
		v.ID, v.UserID, v.SecretSHA256, v.CSRFToken, v.ClientAddress, v.UserAgent, v.CreatedAt, v.ExpiresAt)
}

func (t *tx) DeleteSession(ctx context.Context, userID, id string) error {
	return t.execOne(ctx, "delete session", `DELETE FROM sessions WHERE user_id = $1 AND id = $2`, userID, id)
}

func (t *tx) DeleteSessions(ctx context.Context, userID string) ([]string, error) {
	rows, err := t.Tx.Query(ctx, `DELETE FROM sessions WHERE user_id = $1 RETURNING id::text`, userID)
	if err != nil {
		return nil, storeErr(err, "delete sessions")
	}
	ids, err := pgx.CollectRows(rows, pgx.RowTo[string])
	if ids == nil {
		ids = []string{}
	}
	slices.Sort(ids)
	return ids, storeErr(err, "delete sessions")
}

func (t *tx) DeleteExpiredSessions(ctx context.Context, userID string, now time.Time) error {
	return t.exec(ctx, "delete expired sessions", `DELETE FROM sessions WHERE user_id = $1 AND expires_at <= $2`, userID, now)
}

func (t *tx) InsertPasswordReset(ctx context.Context, v app.PasswordReset) error {
	return t.exec(ctx, "insert password reset", `INSERT INTO password_resets (id, user_id, token_sha256, expires_at, created_at) VALUES ($1, $2, $3, $4, $5)`,
		v.ID, v.UserID, v.TokenSHA256, v.ExpiresAt, v.CreatedAt)
}

func (t *tx) DeletePasswordResets(ctx context.Context, userID string) error {
	return t.exec(ctx, "delete password resets", `DELETE FROM password_resets WHERE user_id = $1`, userID)
}
