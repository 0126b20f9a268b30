package pgdb

import (
	"context"
	"fmt"
	"io/fs"
	"path"
	"slices"
	"strconv"
	"strings"

	"github.com/jackc/pgx/v5"
)

// Migrations is a service's embedded SQL migrations, named
// NNNN_description.sql and applied in order in the service's schema.
type Migrations struct {
	Schema string
	FS     fs.FS
}

type migration struct {
	version int
	name    string
	sql     string
}

func (m Migrations) load() ([]migration, error) {
	names, err := fs.Glob(m.FS, "*.sql")
	if err != nil {
		return nil, err
	}
	slices.Sort(names)
	out := make([]migration, 0, len(names))
	for _, n := range names {
		num, _, ok := strings.Cut(path.Base(n), "_")
		v, err := strconv.Atoi(num)
		if !ok || err != nil || v < 1 {
			return nil, fmt.Errorf("migration %s: name must start with a positive number and an underscore", n)
		}
		if len(out) > 0 && out[len(out)-1].version == v {
			return nil, fmt.Errorf("migrations %s and %s share version %d", out[len(out)-1].name, n, v)
		}
		b, err := fs.ReadFile(m.FS, n)
		if err != nil {
			return nil, err
		}
		out = append(out, migration{version: v, name: n, sql: string(b)})
	}
	return out, nil
}

// Latest is the highest migration version.
func (m Migrations) Latest() (int, error) {
	ms, err := m.load()
	if err != nil || len(ms) == 0 {
		return 0, err
	}
	return ms[len(ms)-1].version, nil
}

// Querier is what migrations need of a connection or pool.
type Querier interface {
	Begin(ctx context.Context) (pgx.Tx, error)
	QueryRow(ctx context.Context, sql string, args ...any) pgx.Row
}

// Apply applies every migration not yet applied, in one transaction, under
// an advisory lock so that concurrent starters do not race. It returns the
// versions it applied.
func (m Migrations) Apply(ctx context.Context, db Querier) ([]int, error) {
	ms, err := m.load()
	if err != nil {
		return nil, err
	}
	schema := pgx.Identifier{m.Schema}.Sanitize()
	var applied []int
	err = pgx.BeginFunc(ctx, db, func(tx pgx.Tx) error {
		if _, err := tx.Exec(ctx, "SELECT pg_advisory_xact_lock(hashtext($1))", "atrium.migrate."+m.Schema); err != nil {
			return err
		}
		if _, err := tx.Exec(ctx, "CREATE SCHEMA IF NOT EXISTS "+schema); err != nil {
			return err
		}
		if _, err := tx.Exec(ctx, "SET LOCAL search_path TO "+schema); err != nil {
			return err
		}
		if _, err := tx.Exec(ctx, `CREATE TABLE IF NOT EXISTS schema_migrations (
			version integer PRIMARY KEY,
			name text NOT NULL,
			applied_at timestamptz NOT NULL DEFAULT now())`); err != nil {
			return err
		}
		var current int
		if err := tx.QueryRow(ctx, "SELECT coalesce(max(version), 0) FROM schema_migrations").Scan(&current); err != nil {
			return err
		}
		for _, mg := range ms {
			if mg.version <= current {
				continue
			}
			if _, err := tx.Exec(ctx, mg.sql); err != nil {
				return fmt.Errorf("apply %s migration %s: %w", m.Schema, mg.name, err)
			}
			if _, err := tx.Exec(ctx, "INSERT INTO schema_migrations (version, name) VALUES ($1, $2)", mg.version, mg.name); err != nil {
				return err
			}
			applied = append(applied, mg.version)
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	return applied, nil
}

// Check returns an error that says what to do when the database's schema is
// not at the version this binary needs.
func (m Migrations) Check(ctx context.Context, db Querier) error {
	want, err := m.Latest()
	if err != nil {
		return err
	}
	var have int
	err = db.QueryRow(ctx, "SELECT coalesce(max(version), 0) FROM "+pgx.Identifier{m.Schema, "schema_migrations"}.Sanitize()).Scan(&have)
	if err != nil {
		if v, ok := violationCode(err); ok && v == "42P01" { // undefined_table
			have = 0
		} else {
			return fmt.Errorf("read %s schema version: %w", m.Schema, err)
		}
	}
	switch {
	case have < want:
		return fmt.Errorf("database schema %q is at version %d, this binary needs %d: run `atrium migrate` or start with --migrate", m.Schema, have, want)
	case have > want:
		return fmt.Errorf("database schema %q is at version %d, newer than this binary knows (%d): deploy the newer binary", m.Schema, have, want)
	}
	return nil
}

// ApplyURL applies each set of migrations to the database at databaseURL,
// for tests and tools that hold a URL rather than a pool.
func ApplyURL(ctx context.Context, databaseURL string, sets ...Migrations) error {
	for _, m := range sets {
		pool, err := Open(ctx, databaseURL, m.Schema)
		if err != nil {
			return err
		}
		_, err = m.Apply(ctx, pool)
		pool.Close()
		if err != nil {
			return err
		}
	}
	return nil
}
