package postgres

import (
	"context"

	"github.com/jackc/pgx/v5"

	"github.com/atrium-hq/atrium/platform/pgdb"
	"github.com/atrium-hq/atrium/platform/principal"
	"github.com/atrium-hq/atrium/services/crm/internal/app"
)

// tx is a transaction; its reader locks the rows its getters return. Its
// Enqueue is pgdb's.
type tx struct {
	*pgdb.Tx
	reader
}

func (t *tx) exec(ctx context.Context, what, sql string, args ...any) error {
	_, err := t.Tx.Exec(ctx, sql, args...)
	return storeErr(err, what)
}

// execOne runs an UPDATE or DELETE that must touch exactly one row.
func (t *tx) execOne(ctx context.Context, what, sql string, args ...any) error {
	tag, err := t.Tx.Exec(ctx, sql, args...)
	if err != nil {
		return storeErr(err, what)
	}
	if tag.RowsAffected() == 0 {
		return storeErr(pgx.ErrNoRows, what)
	}
	return nil
}

func (t *tx) Link(ctx context.Context, agencyID, clientID string) (app.ClientLink, error) {
	l := app.ClientLink{}
	err := t.Tx.QueryRow(ctx, `SELECT agency_id, client_id, created_at FROM agency_clients
		WHERE agency_id = $1 AND client_id = $2 FOR UPDATE`, agencyID, clientID).Scan(&l.AgencyID, &l.ClientID, &l.CreatedAt)
	l.CreatedAt = l.CreatedAt.UTC()
	return l, storeErr(err, "link")
}

func (t *tx) Key(ctx context.Context, id string) (app.APIKey, error) {
	k, err := scanKey(t.Tx.QueryRow(ctx, `SELECT `+keyCols+` FROM api_keys WHERE id = $1 FOR UPDATE`, id))
	return k, storeErr(err, "key "+id)
}

func (t *tx) Prospect(ctx context.Context, agencyID, id string) (app.Prospect, error) {
	p, err := newProspectScanner().scan(t.Tx.QueryRow(ctx, `SELECT `+prospectCols+` FROM prospects WHERE agency_id = $1 AND id = $2 FOR UPDATE`, agencyID, id))
	return p, storeErr(err, "prospect "+id)
}

func (t *tx) Deal(ctx context.Context, agencyID, id string) (app.Deal, error) {
	d, err := newDealScanner().scan(t.Tx.QueryRow(ctx, `SELECT `+dealCols+` FROM deals WHERE agency_id = $1 AND id = $2 FOR UPDATE`, agencyID, id))
	return d, storeErr(err, "deal "+id)
}

func (t *tx) InsertAgency(ctx context.Context, a app.Agency) error {
	return t.exec(ctx, "insert agency", `INSERT INTO agencies (`+agencyCols+`) VALUES ($1, $2, $3, $4)`,
		a.ID, a.Name, a.CreatedAt, a.UpdatedAt)
}

func (t *tx) InsertMember(ctx context.Context, m app.Member) error {
	return t.exec(ctx, "insert member", `INSERT INTO members (id, agency_id, name, email, role, site_ids, client_id, user_id, created_at, updated_at)
		VALUES ($1, $2, $3, $4, $5, $6::uuid[], $7, $8, $9, $10)`,
		m.ID, m.AgencyID, m.Name, m.Email, nullable(string(m.Role)), siteIDs(m.SiteIDs), nullable(m.ClientID), nullable(m.UserID), m.CreatedAt, m.UpdatedAt)
}

func siteIDs(ids []string) []string {
	if ids == nil {
		return []string{}
	}
	return ids
}

func (t *tx) InsertClient(ctx context.Context, c app.Client) error {
	return t.exec(ctx, "insert client", `INSERT INTO clients (`+clientCols+`) VALUES ($1, $2, $3, $4, $5, $6, $7)`,
		c.ID, c.Name, c.Domain, c.Status, c.AutoDeploy, c.CreatedAt, c.UpdatedAt)
}

func (t *tx) UpdateClient(ctx context.Context, c app.Client) error {
	return t.exec(ctx, "update client", `UPDATE clients SET status = $2, auto_deploy = $3, updated_at = $4 WHERE id = $1`,
		c.ID, c.Status, c.AutoDeploy, c.UpdatedAt)
}

func (t *tx) InsertLink(ctx context.Context, l app.ClientLink) error {
	return t.exec(ctx, "insert link", `INSERT INTO agency_clients (agency_id, client_id, created_at) VALUES ($1, $2, $3)`,
		l.AgencyID, l.ClientID, l.CreatedAt)
}

func (t *tx) DeleteLink(ctx context.Context, agencyID, clientID string) error {
	return t.execOne(ctx, "delete link", `DELETE FROM agency_clients WHERE agency_id = $1 AND client_id = $2`, agencyID, clientID)
}

func (t *tx) InsertKey(ctx context.Context, k app.APIKey) error {
	return t.exec(ctx, "insert key", `INSERT INTO api_keys (`+keyCols+`) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12)`,
		k.ID, k.Name, k.Prefix, k.SecretSHA256, principal.ScopeStrings(k.Scopes), nullable(k.SiteID), nullable(k.AgencyID), k.ExpiresAt, k.RevokedAt, k.CreatedAt, k.PublishedOnly,
		nullable(k.CreatedByMemberID))
}

func (t *tx) UpdateKey(ctx context.Context, k app.APIKey) error {
	return t.execOne(ctx, "update key", `UPDATE api_keys SET name = $2, revoked_at = $3 WHERE id = $1`, k.ID, k.Name, k.RevokedAt)
}

func (t *tx) InsertProspect(ctx context.Context, p app.Prospect) error {
	return t.exec(ctx, "insert prospect", `INSERT INTO prospects (`+prospectCols+`) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11)`,
		p.ID, p.AgencyID, p.BusinessName, p.WebsiteURL, p.Domain, p.Industry, p.HealthScore, p.LeadScore, p.PipelineStage, p.CreatedAt, p.UpdatedAt)
}

func (t *tx) UpdateProspect(ctx context.Context, p app.Prospect) error {
	return t.execOne(ctx, "update prospect", `UPDATE prospects SET business_name = $3, website_url = $4, domain = $5,
		industry = $6, health_score = $7, lead_score = $8, pipeline_stage = $9, updated_at = $10
		WHERE agency_id = $1 AND id = $2`,
		p.AgencyID, p.ID, p.BusinessName, p.WebsiteURL, p.Domain, p.Industry, p.HealthScore, p.LeadScore, p.PipelineStage, p.UpdatedAt)
}

func (t *tx) InsertDeal(ctx context.Context, d app.Deal) error {
	return t.exec(ctx, "insert deal", `INSERT INTO deals (id, agency_id, owner_member_id, title, stage, value, currency,
		expected_close_date, closed_at, created_at, updated_at) VALUES ($1, $2, $3, $4, $5, $6, $7, $8::date, $9, $10, $11)`,
		d.ID, d.AgencyID, d.OwnerMemberID, d.Title, d.Stage, d.Value, d.Currency, d.ExpectedCloseDate, d.ClosedAt, d.CreatedAt, d.UpdatedAt)
}

func (t *tx) UpdateDeal(ctx context.Context, d app.Deal) error {
	return t.execOne(ctx, "update deal", `UPDATE deals SET owner_member_id = $3, title = $4, stage = $5, value = $6,
		currency = $7, expected_close_date = $8::date, closed_at = $9, updated_at = $10
		WHERE agency_id = $1 AND id = $2`,
		d.AgencyID, d.ID, d.OwnerMemberID, d.Title, d.Stage, d.Value, d.Currency, d.ExpectedCloseDate, d.ClosedAt, d.UpdatedAt)
}
