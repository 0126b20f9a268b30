package postgres

import (
	"context"
	"embed"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/atrium-hq/atrium/platform/outbox"
	"github.com/atrium-hq/atrium/platform/pgdb"
	"github.com/atrium-hq/atrium/platform/store"
	"github.com/atrium-hq/atrium/services/webhooks/internal/app"
	"github.com/atrium-hq/atrium/services/webhooks/internal/eventtypes"
	"github.com/atrium-hq/atrium/services/webhooks/internal/signing"
)

//go:embed migrations/*.sql
var migrationFiles embed.FS

// Schema is the PostgreSQL schema the webhooks service owns.
const Schema = "webhooks"

// Migrations are the webhooks schema's migrations.
func Migrations() pgdb.Migrations {
	return pgdb.EmbeddedMigrations(Schema, migrationFiles)
}

// Store is the PostgreSQL webhooks store.
type Store struct {
	reader
	db *pgdb.DB
}

// New returns a store on db, whose pool's search path must be the webhooks
// schema (see pgdb.Open).
func New(db *pgdb.DB) *Store { return &Store{reader: reader{q: db.Pool()}, db: db} }

// InTx implements app.EndpointStore.
func (s *Store) InTx(ctx context.Context, fn func(app.EndpointTx) error) error {
	return s.db.InTx(ctx, func(t *pgdb.Tx) error { return fn(&tx{reader: reader{q: t, lock: " FOR UPDATE"}, t: t}) })
}

const endpointCols = `id, tenant_kind, tenant_id, url, events, description, enabled, secret, previous_secret,
	previous_until, disabled_reason, failing_since, created_at, updated_at`

// reader holds the queries shared by the store and its transactions; in a
// transaction, single-row reads lock the row.
type reader struct {
	q    pgdb.Querier
	lock string
}

// Endpoint implements app.EndpointStore.
func (r reader) Endpoint(ctx context.Context, t app.Tenant, id string) (app.Endpoint, error) {
	e, err := scanEndpoint(r.q.QueryRow(ctx, `SELECT `+endpointCols+` FROM endpoints
		WHERE id = $1 AND tenant_kind = $2 AND tenant_id = $3`+r.lock, id, string(t.Kind), t.ID))
	return e, pgdb.Err(err, "webhook "+id)
}

// Endpoints implements app.EndpointStore.
func (r reader) Endpoints(ctx context.Context, t app.Tenant) ([]app.Endpoint, error) {
	rows, err := r.q.Query(ctx, `SELECT `+endpointCols+` FROM endpoints
		WHERE tenant_kind = $1 AND tenant_id = $2 ORDER BY created_at DESC, id DESC`, string(t.Kind), t.ID)
	if err != nil {
		return nil, pgdb.Err(err, "list webhooks")
	}
	eps, err := pgdb.Collect(rows, 8, scanEndpoint)
	return eps, pgdb.Err(err, "list webhooks")
}

// Subscribers implements app.EndpointStore. The patterns are matched here,
// not in SQL: a tenant has few endpoints, and the rule stays in one place
// (eventtypes.Matches).
func (r reader) Subscribers(ctx context.Context, t app.Tenant, eventType string) ([]app.Endpoint, error) {
	rows, err := r.q.Query(ctx, `SELECT `+endpointCols+` FROM endpoints
		WHERE tenant_kind = $1 AND tenant_id = $2 AND enabled ORDER BY created_at DESC, id DESC`, string(t.Kind), t.ID)
	if err != nil {
		return nil, pgdb.Err(err, "webhook subscribers")
	}
	eps, err := pgdb.Collect(rows, 8, scanEndpoint)
	if err != nil {
		return nil, pgdb.Err(err, "webhook subscribers")
	}
	out := eps[:0]
	for _, e := range eps {
		if e.Subscribes(eventType) {
			out = append(out, e)
		}
	}
	return out, nil
}

func scanEndpoint(row pgx.Row) (app.Endpoint, error) {
	var es endpointScan
	if err := row.Scan(es.dest()...); err != nil {
		return app.Endpoint{}, err
	}
	return es.finish()
}

// endpointScan scans endpointCols: the endpoint, and the columns that
// need converting once scanned.
type endpointScan struct {
	e                      app.Endpoint
	kind, secret, previous string
	previousUntil, failing *time.Time
}

// dest returns the scan destinations of endpointCols.
func (s *endpointScan) dest() []any {
	e := &s.e
	return []any{&e.ID, &s.kind, &e.Tenant.ID, &e.URL, &e.Events, &e.Description, &e.Enabled, &s.secret, &s.previous,
		&s.previousUntil, &e.DisabledReason, &s.failing, &e.CreatedAt, &e.UpdatedAt}
}

// finish converts what was scanned into the endpoint.
func (s *endpointScan) finish() (app.Endpoint, error) {
	e := s.e
	e.Tenant.Kind = eventtypes.Owner(s.kind)
	var err error
	if e.Secret, err = signing.ParseSecret(s.secret); err != nil {
		return app.Endpoint{}, fmt.Errorf("webhook %s: stored secret: %w", e.ID, err)
	}
	if s.previous != "" {
		if e.Previous, err = signing.ParseSecret(s.previous); err != nil {
			return app.Endpoint{}, fmt.Errorf("webhook %s: stored previous secret: %w", e.ID, err)
		}
	}
	if s.previousUntil != nil {
		e.PreviousUntil = *s.previousUntil
	}
	if s.failing != nil {
		e.FailingSince = *s.failing
	}
	return e, nil
}

// tx is a transaction.
type tx struct {
	reader
	t *pgdb.Tx
}

// Enqueue implements outbox.Enqueuer: the event is inserted in the
// transaction.
func (t *tx) Enqueue(ctx context.Context, e outbox.Event) error { return t.t.Enqueue(ctx, e) }

func (t *tx) CountEndpoints(ctx context.Context, tenant app.Tenant) (int, error) {
	var n int
	err := t.t.QueryRow(ctx, `SELECT count(*) FROM endpoints WHERE tenant_kind = $1 AND tenant_id = $2`, string(tenant.Kind), tenant.ID).Scan(&n)
	return n, pgdb.Err(err, "count webhooks")
}

// args are an endpoint's columns in endpointCols' order.
func args(e app.Endpoint) []any {
	previous := ""
	if !e.Previous.IsZero() {
		previous = e.Previous.String()
	}
	return []any{e.ID, string(e.Tenant.Kind), e.Tenant.ID, e.URL, e.Events, e.Description, e.Enabled, e.Secret.String(), previous,
		optional(e.PreviousUntil), e.DisabledReason, optional(e.FailingSince), e.CreatedAt, e.UpdatedAt}
}

func optional(t time.Time) *time.Time {
	if t.IsZero() {
		return nil
	}
	return &t
}

func (t *tx) InsertEndpoint(ctx context.Context, e app.Endpoint) error {
	_, err := t.t.Exec(ctx, `INSERT INTO endpoints (`+endpointCols+`)
		VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14)`, args(e)...)
	return pgdb.Err(err, "insert webhook "+e.ID)
}

func (t *tx) UpdateEndpoint(ctx context.Context, e app.Endpoint) error {
	a := args(e)
	tag, err := t.t.Exec(ctx, `UPDATE endpoints SET url = $4, events = $5, description = $6, enabled = $7, secret = $8,
		previous_secret = $9, previous_until = $10, disabled_reason = $11, failing_since = $12, updated_at = $13
		WHERE id = $1 AND tenant_kind = $2 AND tenant_id = $3`, append(a[:12:12], a[13])...)
	if err != nil {
		return pgdb.Err(err, "update webhook "+e.ID)
	}
	if tag.RowsAffected() == 0 {
		return fmt.Errorf("webhook %s: %w", e.ID, store.ErrNotFound)
	}
	return nil
}

func (t *tx) DeleteEndpoint(ctx context.Context, tenant app.Tenant, id string) error {
	tag, err := t.t.Exec(ctx, `DELETE FROM endpoints WHERE id = $1 AND tenant_kind = $2 AND tenant_id = $3`, id, string(tenant.Kind), tenant.ID)
	if err != nil {
		return pgdb.Err(err, "delete webhook "+id)
	}
	if tag.RowsAffected() == 0 {
		return fmt.Errorf("webhook %s: %w", id, store.ErrNotFound)
	}
	return nil
}
