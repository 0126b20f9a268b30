// Package postgres is the collections store on PostgreSQL through pgx. It
// owns the collections schema; transactions and the outbox are
// platform/pgdb's.
package postgres

import (
	"context"
	"embed"
	"io/fs"

	"github.com/atrium-hq/atrium/platform/pgdb"
	"github.com/atrium-hq/atrium/services/collections/internal/app"
)

//go:embed migrations/*.sql
var migrationFiles embed.FS

// Schema is the PostgreSQL schema the collections service owns.
const Schema = "collections"

// Migrations are the collections schema's migrations.
func Migrations() pgdb.Migrations {
	sub, err := fs.Sub(migrationFiles, "migrations")
	if err != nil {
		panic(err) // the embedded directory always exists
	}
	return pgdb.ServiceMigrations(Schema, sub)
}

// Store is the PostgreSQL collections store.
type Store struct{ db *pgdb.DB }

// New returns a store on db, whose pool's search path must be the
// collections schema.
func New(db *pgdb.DB) *Store { return &Store{db: db} }

// Site implements app.Store.
func (s *Store) Site(ctx context.Context, id string) (app.Site, error) {
	var site app.Site
	err := s.db.Pool().QueryRow(ctx, `SELECT id, name, created_at, updated_at FROM sites WHERE id = $1`, id).
		Scan(&site.ID, &site.Name, &site.CreatedAt, &site.UpdatedAt)
	site.CreatedAt, site.UpdatedAt = site.CreatedAt.UTC(), site.UpdatedAt.UTC()
	return site, pgdb.Err(err, "site "+id)
}

// InTx implements app.Store.
func (s *Store) InTx(ctx context.Context, fn func(app.Tx) error) error {
	return s.db.InTx(ctx, func(t *pgdb.Tx) error { return fn(tx{t}) })
}

type tx struct{ *pgdb.Tx }

func (t tx) InsertSite(ctx context.Context, site app.Site) error {
	_, err := t.Exec(ctx, `INSERT INTO sites (id, name, created_at, updated_at) VALUES ($1, $2, $3, $4)`,
		site.ID, site.Name, site.CreatedAt, site.UpdatedAt)
	return pgdb.Err(err, "insert site")
}
