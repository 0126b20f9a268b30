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

	"github.com/atrium-hq/atrium/platform/outbox"
)

// Migrations are the versioned SQL migrations of one service's schema. They
// come from several sources, applied in order: the platform's shared tables
// (the outbox) first, then the service's own. Each source numbers its files
// NNNN_description.sql from 1, independently of the others, so the platform
// can change its tables without touching any service's files.
type Migrations struct {
	Schema  string
	Sources []Source
}

// Source is one numbered series of migration files.
type Source struct {
	// Name identifies the series in schema_migrations ("outbox", "crm").
	Name string
	FS   fs.FS
}

// ServiceMigrations returns the migrations of a service's schema: the
// platform's shared tables, then the service's files in own (a directory of
// NNNN_description.sql files; nil while it has none), recorded under the
// schema's name.
func ServiceMigrations(schema string, own fs.FS) Migrations {
	return Migrations{Schema: schema, Sources: []Source{
		{Name: "outbox", FS: outbox.Migrations},
		{Name: schema, FS: own},
	}}
}

// EmbeddedMigrations is ServiceMigrations for a service whose own
// migrations are the files of the migrations directory of files (its
// //go:embed migrations/*.sql).
func EmbeddedMigrations(schema string, files fs.FS) Migrations {
	own, err := fs.Sub(files, "migrations")
	if err != nil {
		panic(err) // an embedded directory always exists
	}
	return ServiceMigrations(schema, own)
}

type migration struct {
	source  string
	version int
	name    string
	sql     string
}

func (s Source) load() ([]migration, error) {
	if s.FS == nil {
		return nil, nil
	}
	names, err := fs.Glob(s.FS, "*.sql")
	if err != nil {
		return nil, err
	}
	slices.Sort(names)
	out := make([]migration, 0, len(names))
	for _, n := range names {
		num, _, ok := strings.Cut(path.Base(n), "_")
		v, err := strconv.Atoi(num)
		if !ok || err != nil || v < 1 {
			return nil, fmt.Errorf("migration %s/%s: name must start with a positive number and an underscore", s.Name, n)
		}
		if len(out) > 0 && out[len(out)-1].version == v {
			return nil, fmt.Errorf("migrations %s and %s of %s share version %d", out[len(out)-1].name, n, s.Name, v)
		}
		b, err := fs.ReadFile(s.FS, n)
		if err != nil {
			return nil, err
		}
		out = append(out, migration{source: s.Name, version: v, name: n, sql: string(b)})
	}
	return out, nil
}

// Latest is the highest version of each source.
func (m Migrations) Latest() (map[string]int, error) {
	out := map[string]int{}
	for _, s := range m.Sources {
		ms, err := s.load()
		if err != nil {
			return nil, err
		}
		out[s.Name] = 0
		if len(ms) > 0 {
			out[s.Name] = ms[len(ms)-1].version
		}
	}
	return out, nil
}

// Migrator is what migrations need of a connection or pool.
type Migrator interface {
	Begin(ctx context.Context) (pgx.Tx, error)
	QueryRow(ctx context.Context, sql string, args ...any) pgx.Row
	Query(ctx context.Context, sql string, args ...any) (pgx.Rows, error)
}

// Applied is a migration Apply ran.
type Applied struct {
	Source  string
	Version int
}

func (a Applied) String() string { return fmt.Sprintf("%s/%d", a.Source, a.Version) }

const createVersionTable = `CREATE TABLE IF NOT EXISTS schema_migrations (
	source text NOT NULL,
	version integer NOT NULL,
	name text NOT NULL,
	applied_at timestamptz NOT NULL DEFAULT now(),
	PRIMARY KEY (source, version))`

// Apply applies every migration not yet applied, all in one transaction,
// under an advisory lock so that concurrent starters do not race. It
// returns what it applied.
func (m Migrations) Apply(ctx context.Context, db Migrator) ([]Applied, error) {
	var all []migration
	for _, s := range m.Sources {
		ms, err := s.load()
		if err != nil {
			return nil, err
		}
		all = append(all, ms...)
	}
	schema := pgx.Identifier{m.Schema}.Sanitize()
	var applied []Applied
	err := pgx.BeginFunc(ctx, db, func(tx pgx.Tx) error {
		if _, err := tx.Exec(ctx, "SELECT pg_advisory_xact_lock(hashtext($1))", "atrium.migrate."+m.Schema); err != nil {
			return err
		}
		if _, err := tx.Exec(ctx, "CREATE SCHEMA IF NOT EXISTS "+schema); err != nil {
			return err
		}
		if _, err := tx.Exec(ctx, "SET LOCAL search_path TO "+schema); err != nil {
			return err
		}
		if err := upgradeVersionTable(ctx, tx, m.Schema); err != nil {
			return err
		}
		if _, err := tx.Exec(ctx, createVersionTable); err != nil {
			return err
		}
		current, err := versions(ctx, tx, "schema_migrations")
		if err != nil {
			return err
		}
		for _, mg := range all {
			if mg.version <= current[mg.source] {
				continue
			}
			if _, err := tx.Exec(ctx, mg.sql); err != nil {
				return fmt.Errorf("apply %s migration %s/%s: %w", m.Schema, mg.source, mg.name, err)
			}
			if _, err := tx.Exec(ctx, "INSERT INTO schema_migrations (source, version, name) VALUES ($1, $2, $3)", mg.source, mg.version, mg.name); err != nil {
				return err
			}
			applied = append(applied, Applied{mg.source, mg.version})
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	return applied, nil
}

// upgradeVersionTable converts the version table of development builds
// before migration sources existed (one series per schema, whose first file
// also created the outbox table) to the per-source form.
func upgradeVersionTable(ctx context.Context, tx pgx.Tx, schema string) error {
	var legacy bool
	err := tx.QueryRow(ctx, `SELECT EXISTS (SELECT 1 FROM information_schema.tables t
		WHERE t.table_schema = $1 AND t.table_name = 'schema_migrations')
		AND NOT EXISTS (SELECT 1 FROM information_schema.columns c
		WHERE c.table_schema = $1 AND c.table_name = 'schema_migrations' AND c.column_name = 'source')`, schema).Scan(&legacy)
	if err != nil || !legacy {
		return err
	}
	for _, stmt := range []string{
		`ALTER TABLE schema_migrations ADD COLUMN source text`,
		// Schemas whose only table was the outbox had a first file by that name.
		`UPDATE schema_migrations SET source = CASE WHEN name = '0001_outbox.sql' THEN 'outbox' ELSE current_schema() END`,
		`ALTER TABLE schema_migrations ALTER COLUMN source SET NOT NULL, DROP CONSTRAINT schema_migrations_pkey, ADD PRIMARY KEY (source, version)`,
		// The outbox table was created by the schema's first migration.
		`INSERT INTO schema_migrations (source, version, name)
			SELECT 'outbox', 1, '0001_outbox.sql' WHERE to_regclass('outbox') IS NOT NULL
			ON CONFLICT DO NOTHING`,
	} {
		if _, err := tx.Exec(ctx, stmt); err != nil {
			return fmt.Errorf("upgrade %s.schema_migrations: %w", schema, err)
		}
	}
	return nil
}

func versions(ctx context.Context, db interface {
	Query(ctx context.Context, sql string, args ...any) (pgx.Rows, error)
}, table string) (map[string]int, error) {
	rows, err := db.Query(ctx, "SELECT source, max(version) FROM "+table+" GROUP BY source")
	if err != nil {
		return nil, err
	}
	out := map[string]int{}
	for rows.Next() {
		var (
			s string
			v int
		)
		if err := rows.Scan(&s, &v); err != nil {
			return nil, err
		}
		out[s] = v
	}
	return out, rows.Err()
}

// Check returns an error that says what to do when the database's schema is
// not at the versions this binary needs.
func (m Migrations) Check(ctx context.Context, db Migrator) error {
	want, err := m.Latest()
	if err != nil {
		return err
	}
	have, err := versions(ctx, db, pgx.Identifier{m.Schema, "schema_migrations"}.Sanitize())
	if err != nil {
		code, _ := sqlState(err)
		switch code {
		case "42P01": // undefined_table: nothing migrated yet
			have = map[string]int{}
		case "42703": // undefined_column: a version table from before sources
			return fmt.Errorf("database schema %q predates this binary's migration layout: run `atrium migrate` or start with --migrate", m.Schema)
		default:
			return fmt.Errorf("read %s schema version: %w", m.Schema, err)
		}
	}
	for _, s := range m.Sources {
		switch h, w := have[s.Name], want[s.Name]; {
		case h < w:
			return fmt.Errorf("database schema %q is at %s version %d, this binary needs %d: run `atrium migrate` or start with --migrate", m.Schema, s.Name, h, w)
		case h > w:
			return fmt.Errorf("database schema %q is at %s version %d, newer than this binary knows (%d): deploy the newer binary", m.Schema, s.Name, h, w)
		}
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
