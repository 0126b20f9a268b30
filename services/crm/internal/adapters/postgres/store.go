package postgres

import (
	"context"
	"embed"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/atrium-hq/atrium/platform/pagination"
	"github.com/atrium-hq/atrium/platform/pgdb"
	"github.com/atrium-hq/atrium/platform/principal"
	"github.com/atrium-hq/atrium/services/crm/internal/app"
)

//go:embed migrations/*.sql
var migrationFiles embed.FS

// Schema is the PostgreSQL schema the CRM service owns.
const Schema = "crm"

// Migrations are the CRM schema's migrations.
func Migrations() pgdb.Migrations {
	return pgdb.EmbeddedMigrations(Schema, migrationFiles)
}

// Store is the PostgreSQL CRM store.
type Store struct {
	reader
	db *pgdb.DB
}

// New returns a store on db, whose pool's search path must be the crm
// schema (see pgdb.Open).
func New(db *pgdb.DB) *Store {
	return &Store{reader: reader{q: db.Pool()}, db: db}
}

// InTx implements app.Store.
func (s *Store) InTx(ctx context.Context, fn func(app.Tx) error) error {
	return s.db.InTx(ctx, func(t *pgdb.Tx) error {
		return fn(&tx{Tx: t, reader: reader{q: t, lock: " FOR UPDATE"}})
	})
}

// reader holds the queries shared by the store and its transactions; in a
// transaction, single-row getters lock the row they read.
type reader struct {
	q    pgdb.Querier
	lock string
}

// storeErr translates driver errors into the port's errors.
func storeErr(err error, what string) error { return pgdb.Err(err, what) }

const agencyCols = `id, name, created_at, updated_at`

func scanAgency(row pgx.Row) (app.Agency, error) {
	var a app.Agency
	err := row.Scan(&a.ID, &a.Name, &a.CreatedAt, &a.UpdatedAt)
	a.CreatedAt, a.UpdatedAt = a.CreatedAt.UTC(), a.UpdatedAt.UTC()
	return a, err
}

func (r reader) Agency(ctx context.Context, id string) (app.Agency, error) {
	a, err := scanAgency(r.q.QueryRow(ctx, `SELECT `+agencyCols+` FROM agencies WHERE id = $1`+r.lock, id))
	return a, storeErr(err, "agency "+id)
}

const memberCols = `id, agency_id, name, email, role, site_ids::text[], client_id::text, user_id::text, created_at, updated_at`

func scanMember(row pgx.Row) (app.Member, error) {
	var (
		m                      app.Member
		role, clientID, userID *string
	)
	err := row.Scan(&m.ID, &m.AgencyID, &m.Name, &m.Email, &role, &m.SiteIDs, &clientID, &userID, &m.CreatedAt, &m.UpdatedAt)
	m.Role, m.ClientID, m.UserID = principal.Role(deref(role)), deref(clientID), deref(userID)
	if len(m.SiteIDs) == 0 {
		m.SiteIDs = nil
	}
	m.CreatedAt, m.UpdatedAt = m.CreatedAt.UTC(), m.UpdatedAt.UTC()
	return m, err
}

func (r reader) Member(ctx context.Context, agencyID, id string) (app.Member, error) {
	m, err := scanMember(r.q.QueryRow(ctx, `SELECT `+memberCols+` FROM members WHERE agency_id = $1 AND id = $2`+r.lock, agencyID, id))
	return m, storeErr(err, "member "+id)
}

const clientCols = `id, name, domain, status, auto_deploy, created_at, updated_at`

func scanClient(row pgx.Row) (app.Client, error) {
	var c app.Client
	err := row.Scan(&c.ID, &c.Name, &c.Domain, &c.Status, &c.AutoDeploy, &c.CreatedAt, &c.UpdatedAt)
	c.CreatedAt, c.UpdatedAt = c.CreatedAt.UTC(), c.UpdatedAt.UTC()
	return c, err
}

func (r reader) Client(ctx context.Context, id string) (app.Client, error) {
	c, err := scanClient(r.q.QueryRow(ctx, `SELECT `+clientCols+` FROM clients WHERE id = $1`+r.lock, id))
	return c, storeErr(err, "client "+id)
}

func (r reader) Agencies(ctx context.Context, page pagination.Page) ([]app.Agency, error) {
	rows, err := r.q.Query(ctx, `SELECT `+agencyCols+` FROM agencies ORDER BY created_at DESC, id DESC LIMIT $1 OFFSET $2`, page.Limit, page.Offset)
	if err != nil {
		return nil, storeErr(err, "list agencies")
	}
	out, err := pgdb.Collect(rows, int(page.Limit), scanAgency)
	return out, storeErr(err, "list agencies")
}

func (r reader) Clients(ctx context.Context, f app.ClientFilter, page pagination.Page) ([]app.Client, error) {
	var (
		rows pgx.Rows
		err  error
	)
	if f.AgencyID == "" {
		rows, err = r.q.Query(ctx, `SELECT `+clientCols+` FROM clients ORDER BY created_at DESC, id DESC LIMIT $1 OFFSET $2`, page.Limit, page.Offset)
	} else {
		rows, err = r.q.Query(ctx, `SELECT c.id, c.name, c.domain, c.status, c.auto_deploy, c.created_at, c.updated_at
			FROM agency_clients l JOIN clients c ON c.id = l.client_id WHERE l.agency_id = $1
			ORDER BY c.created_at DESC, c.id DESC LIMIT $2 OFFSET $3`, f.AgencyID, page.Limit, page.Offset)
	}
	if err != nil {
		return nil, storeErr(err, "list clients")
	}
	out, err := pgdb.Collect(rows, int(page.Limit), scanClient)
	return out, storeErr(err, "list clients")
}

func (r reader) Linked(ctx context.Context, agencyID, clientID string) (bool, error) {
	var ok bool
	err := r.q.QueryRow(ctx, `SELECT EXISTS (SELECT 1 FROM agency_clients WHERE agency_id = $1 AND client_id = $2)`, agencyID, clientID).Scan(&ok)
	return ok, storeErr(err, "client link")
}

func (r reader) ClientAgencies(ctx context.Context, clientID string) ([]string, error) {
	rows, err := r.q.Query(ctx, `SELECT agency_id::text FROM agency_clients WHERE client_id = $1 ORDER BY agency_id`, clientID)
	if err != nil {
		return nil, storeErr(err, "client agencies")
	}
	ids, err := pgx.CollectRows(rows, pgx.RowTo[string])
	if ids == nil {
		ids = []string{}
	}
	return ids, storeErr(err, "client agencies")
}

func (r reader) LinkedClient(ctx context.Context, agencyID, clientID string) (app.Client, error) {
	c, err := scanClient(r.q.QueryRow(ctx, `SELECT c.id, c.name, c.domain, c.status, c.auto_deploy, c.created_at, c.updated_at
		FROM agency_clients l JOIN clients c ON c.id = l.client_id WHERE l.agency_id = $1 AND l.client_id = $2`, agencyID, clientID))
	return c, storeErr(err, "linked client "+clientID)
}

func (r reader) LinkedClients(ctx context.Context, agencyID string) ([]app.Client, error) {
	rows, err := r.q.Query(ctx, `SELECT c.id, c.name, c.domain, c.status, c.auto_deploy, c.created_at, c.updated_at
		FROM agency_clients l JOIN clients c ON c.id = l.client_id WHERE l.agency_id = $1 ORDER BY c.id`, agencyID)
	if err != nil {
		return nil, storeErr(err, "linked clients")
	}
	cs, err := pgx.CollectRows(rows, func(row pgx.CollectableRow) (app.Client, error) { return scanClient(row) })
	if cs == nil {
		cs = []app.Client{}
	}
	return cs, storeErr(err, "linked clients")
}

const prospectCols = `id, agency_id, business_name, website_url, domain, industry, health_score, lead_score, pipeline_stage, created_at, updated_at`

// prospectScanner scans rows of prospectCols into one variable whose
// strings live in an arena (pgdb.Arena), so a page of prospects costs a few
// allocations rather than eight per row.
type prospectScanner struct {
	p    app.Prospect
	dest []any
}

func newProspectScanner() *prospectScanner {
	s := &prospectScanner{}
	a := &pgdb.Arena{}
	p := &s.p
	s.dest = []any{a.Text(&p.ID), a.Text(&p.AgencyID), a.Text(&p.BusinessName), a.Text(&p.WebsiteURL), a.Text(&p.Domain),
		a.Text(&p.Industry), &p.HealthScore, &p.LeadScore, a.Text(&p.PipelineStage), &p.CreatedAt, &p.UpdatedAt}
	return s
}

func (s *prospectScanner) scan(row pgx.Row) (app.Prospect, error) {
	err := row.Scan(s.dest...)
	p := s.p
	p.CreatedAt, p.UpdatedAt = p.CreatedAt.UTC(), p.UpdatedAt.UTC()
	return p, err
}

func (r reader) Prospects(ctx context.Context, agencyID string, page pagination.Page) ([]app.Prospect, error) {
	rows, err := r.q.Query(ctx, `SELECT `+prospectCols+` FROM prospects WHERE agency_id = $1
		ORDER BY updated_at DESC, id DESC LIMIT $2 OFFSET $3`, agencyID, page.Limit, page.Offset)
	if err != nil {
		return nil, storeErr(err, "list prospects")
	}
	out, err := pgdb.Collect(rows, int(page.Limit), newProspectScanner().scan)
	return out, storeErr(err, "list prospects")
}

const dealCols = `id, agency_id, owner_member_id, title, stage, value, currency, to_char(expected_close_date, 'YYYY-MM-DD'), closed_at, created_at, updated_at`

// dealScanner scans rows of dealCols like prospectScanner does.
type dealScanner struct {
	d    app.Deal
	dest []any
}

func newDealScanner() *dealScanner {
	s := &dealScanner{}
	a := &pgdb.Arena{}
	d := &s.d
	s.dest = []any{a.Text(&d.ID), a.Text(&d.AgencyID), a.Text(&d.OwnerMemberID), a.Text(&d.Title), a.Text(&d.Stage), &d.Value,
		a.Text(&d.Currency), a.Text(&d.ExpectedCloseDate), &d.ClosedAt, &d.CreatedAt, &d.UpdatedAt}
	return s
}

func (s *dealScanner) scan(row pgx.Row) (app.Deal, error) {
	s.d.ClosedAt = nil // a NULL leaves the pointer as it was
	err := row.Scan(s.dest...)
	d := s.d
	d.ClosedAt = utc(d.ClosedAt)
	d.CreatedAt, d.UpdatedAt = d.CreatedAt.UTC(), d.UpdatedAt.UTC()
	return d, err
}

func (r reader) Deals(ctx context.Context, agencyID string, page pagination.Page) ([]app.Deal, error) {
	rows, err := r.q.Query(ctx, `SELECT `+dealCols+` FROM deals WHERE agency_id = $1
		ORDER BY updated_at DESC, id DESC LIMIT $2 OFFSET $3`, agencyID, page.Limit, page.Offset)
	if err != nil {
		return nil, storeErr(err, "list deals")
	}
	out, err := pgdb.Collect(rows, int(page.Limit), newDealScanner().scan)
	return out, storeErr(err, "list deals")
}

const keyCols = `id, name, prefix, secret_sha256, scopes, site_id, agency_id, expires_at, revoked_at, created_at, published_only, created_by_member_id`

func scanKey(row pgx.Row) (app.APIKey, error) {
	var (
		k                app.APIKey
		scopes           []string
		siteID, agencyID *string
		createdBy        *string
	)
	err := row.Scan(&k.ID, &k.Name, &k.Prefix, &k.SecretSHA256, &scopes, &siteID, &agencyID, &k.ExpiresAt, &k.RevokedAt, &k.CreatedAt, &k.PublishedOnly, &createdBy)
	k.CreatedByMemberID = deref(createdBy)
	k.Scopes = principal.ScopesFrom(scopes)
	if siteID != nil {
		k.SiteID = *siteID
	}
	if agencyID != nil {
		k.AgencyID = *agencyID
	}
	k.ExpiresAt, k.RevokedAt, k.CreatedAt = utc(k.ExpiresAt), utc(k.RevokedAt), k.CreatedAt.UTC()
	return k, err
}

func (r reader) KeyBySecretSHA256(ctx context.Context, digest []byte) (app.APIKey, error) {
	k, err := scanKey(r.q.QueryRow(ctx, `SELECT `+keyCols+` FROM api_keys WHERE secret_sha256 = $1`, digest))
	return k, storeErr(err, "key by digest")
}

func (r reader) Keys(ctx context.Context, f app.KeyFilter, page pagination.Page) ([]app.APIKey, error) {
	rows, err := r.q.Query(ctx, `SELECT `+keyCols+` FROM api_keys
		WHERE ($1 = '' OR agency_id = nullif($1, '')::uuid) AND ($2 = '' OR site_id = nullif($2, '')::uuid)
		ORDER BY created_at DESC, id DESC LIMIT $3 OFFSET $4`, f.AgencyID, f.SiteID, page.Limit, page.Offset)
	if err != nil {
		return nil, storeErr(err, "list keys")
	}
	out, err := pgdb.Collect(rows, int(page.Limit), scanKey)
	return out, storeErr(err, "list keys")
}

func utc(t *time.Time) *time.Time {
	if t == nil {
		return nil
	}
	u := t.UTC()
	return &u
}

func deref(s *string) string {
	if s == nil {
		return ""
	}
	return *s
}

func nullable(s string) *string {
	if s == "" {
		return nil
	}
	return &s
}
