// Package postgres is the collections store on PostgreSQL through pgx. It
// owns the collections schema.
package postgres

import (
	"context"
	"embed"
	"errors"
	"fmt"
	"io/fs"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/atrium-hq/atrium/platform/outbox"
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
	return pgdb.Migrations{Schema: Schema, FS: sub}
}

// Store is the PostgreSQL collections store.
type Store struct {
	pool     *pgxpool.Pool
	onCommit func()
}

// New returns a store on pool, whose search path must be the collections
// schema.
func New(pool *pgxpool.Pool, onCommit func()) *Store { return &Store{pool: pool, onCommit: onCommit} }

// Outbox is the store's event outbox.
func (s *Store) Outbox() outbox.Source { return outbox.NewPostgres(s.pool) }

func storeErr(err error, what string) error {
	switch {
	case err == nil:
		return nil
	case errors.Is(err, pgx.ErrNoRows):
		return fmt.Errorf("%s: %w", what, app.ErrNotFound)
	}
	if c, ok := pgdb.UniqueViolation(err); ok {
		return fmt.Errorf("%s (%s): %w", what, c, app.ErrDuplicate)
	}
	return fmt.Errorf("%s: %w", what, err)
}

// Site implements app.Store.
func (s *Store) Site(ctx context.Context, id string) (app.Site, error) {
	var site app.Site
	err := s.pool.QueryRow(ctx, `SELECT id, name, created_at, updated_at FROM sites WHERE id = $1`, id).
		Scan(&site.ID, &site.Name, &site.CreatedAt, &site.UpdatedAt)
	site.CreatedAt, site.UpdatedAt = site.CreatedAt.UTC(), site.UpdatedAt.UTC()
	return site, storeErr(err, "site "+id)
}

// InTx implements app.Store.
func (s *Store) InTx(ctx context.Context, fn func(app.Tx) error) error {
	var t *tx
	err := pgx.BeginFunc(ctx, s.pool, func(ptx pgx.Tx) error {
		t = &tx{ptx: ptx}
		return fn(t)
	})
	if err == nil && t.events > 0 && s.onCommit != nil {
		s.onCommit()
	}
	return err
}

type tx struct {
	ptx    pgx.Tx
	events int
}

func (t *tx) InsertSite(ctx context.Context, site app.Site) error {
	_, err := t.ptx.Exec(ctx, `INSERT INTO sites (id, name, created_at, updated_at) VALUES ($1, $2, $3, $4)`,
		site.ID, site.Name, site.CreatedAt, site.UpdatedAt)
	return storeErr(err, "insert site")
}

func (t *tx) Enqueue(ctx context.Context, e outbox.Event) error {
	if err := outbox.Insert(ctx, t.ptx, e); err != nil {
		return storeErr(err, "enqueue event")
	}
	t.events++
	return nil
}
