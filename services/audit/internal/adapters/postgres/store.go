package postgres

import (
	"context"
	"embed"
	"strconv"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/atrium-hq/atrium/platform/pgdb"
	"github.com/atrium-hq/atrium/services/audit/internal/app"
)

//go:embed migrations/*.sql
var migrationFiles embed.FS

// Schema is the PostgreSQL schema the audit service owns.
const Schema = "audit"

// Migrations are the audit schema's migrations.
func Migrations() pgdb.Migrations {
	return pgdb.EmbeddedMigrations(Schema, migrationFiles)
}

// Store is the PostgreSQL audit store.
type Store struct {
	db *pgdb.DB
}

// New returns a store on db, whose pool's search path must be the audit
// schema (see pgdb.Open).
func New(db *pgdb.DB) *Store { return &Store{db: db} }

const cols = `id, at, service, action, method, resource_type, resource_id, fields, agency_id, site_id,
	actor_kind, actor_id, member_id, session_id, client_address, user_agent, trace_id`

// Add implements app.Store. Two replicas adding the same event race on
// the primary key; ON CONFLICT makes the loser's insert nothing.
func (s *Store) Add(ctx context.Context, e app.Event) (bool, error) {
	fields := e.Fields
	if fields == nil {
		fields = []string{}
	}
	tag, err := s.db.Pool().Exec(ctx, `INSERT INTO audit_events (`+cols+`)
		VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15, $16, $17)
		ON CONFLICT (id) DO NOTHING`,
		e.ID, e.At, e.Service, e.Action, e.Method, e.ResourceType, e.ResourceID, fields, e.AgencyID, e.SiteID,
		e.ActorKind, e.ActorID, e.MemberID, e.SessionID, e.ClientAddress, e.UserAgent, e.TraceID)
	if err != nil {
		return false, pgdb.Err(err, "audit event "+e.ID)
	}
	return tag.RowsAffected() == 1, nil
}

// Events implements app.Store.
func (s *Store) Events(ctx context.Context, f app.Filter) ([]app.Event, error) {
	var where []string
	var args []any
	arg := func(v any) string {
		args = append(args, v)
		return "$" + strconv.Itoa(len(args))
	}
	for _, c := range []struct{ col, v string }{
		{"agency_id", f.AgencyID}, {"site_id", f.SiteID}, {"actor_id", f.Actor},
		{"resource_type", f.ResourceType}, {"resource_id", f.ResourceID},
	} {
		if c.v != "" {
			where = append(where, c.col+" = "+arg(c.v))
		}
	}
	switch {
	case strings.HasSuffix(f.Action, "."):
		// A prefix: its LIKE pattern escapes the wildcards a filter may hold.
		where = append(where, "action LIKE "+arg(likePrefix(f.Action))+` ESCAPE '\'`)
	case f.Action != "":
		where = append(where, "action = "+arg(f.Action))
	}
	if !f.Since.IsZero() {
		where = append(where, "at >= "+arg(f.Since))
	}
	if !f.Until.IsZero() {
		where = append(where, "at < "+arg(f.Until))
	}
	if f.After != nil {
		where = append(where, "(at, id) < ("+arg(f.After.At)+", "+arg(f.After.ID)+")")
	}
	q := `SELECT ` + cols + ` FROM audit_events`
	if len(where) > 0 {
		q += ` WHERE ` + strings.Join(where, " AND ")
	}
	q += ` ORDER BY at DESC, id DESC LIMIT ` + arg(f.Limit)
	rows, err := s.db.Pool().Query(ctx, q, args...)
	if err != nil {
		return nil, pgdb.Err(err, "list audit events")
	}
	evs, err := pgdb.Collect(rows, min(f.Limit, 64), scan)
	return evs, pgdb.Err(err, "list audit events")
}

func scan(row pgx.Row) (app.Event, error) {
	var e app.Event
	err := row.Scan(&e.ID, &e.At, &e.Service, &e.Action, &e.Method, &e.ResourceType, &e.ResourceID, &e.Fields, &e.AgencyID, &e.SiteID,
		&e.ActorKind, &e.ActorID, &e.MemberID, &e.SessionID, &e.ClientAddress, &e.UserAgent, &e.TraceID)
	e.At = e.At.UTC()
	if len(e.Fields) == 0 {
		e.Fields = nil
	}
	return e, err
}

// DeleteBefore implements app.Store. Replicas pruning at once delete the
// same rows; whoever comes second finds fewer, which is the same end.
func (s *Store) DeleteBefore(ctx context.Context, cutoff time.Time, limit int) (int, error) {
	tag, err := s.db.Pool().Exec(ctx, `DELETE FROM audit_events WHERE id IN (
		SELECT id FROM audit_events WHERE at < $1 ORDER BY at, id LIMIT $2)`, cutoff, limit)
	if err != nil {
		return 0, pgdb.Err(err, "prune audit events")
	}
	return int(tag.RowsAffected()), nil
}

// likePrefix is the LIKE pattern of the values that begin with prefix.
func likePrefix(prefix string) string {
	return strings.NewReplacer(`\`, `\\`, "%", `\%`, "_", `\_`).Replace(prefix) + "%"
}
