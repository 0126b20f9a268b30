// Package postgres is the actions service's PostgreSQL adapter. It owns the
// actions schema; today that holds only the outbox.
package postgres

import (
	"embed"
	"io/fs"

	"github.com/atrium-hq/atrium/platform/pgdb"
)

//go:embed migrations/*.sql
var migrationFiles embed.FS

// Schema is the PostgreSQL schema the actions service owns.
const Schema = "actions"

// Migrations are the actions schema's migrations.
func Migrations() pgdb.Migrations {
	sub, err := fs.Sub(migrationFiles, "migrations")
	if err != nil {
		panic(err) // the embedded directory always exists
	}
	return pgdb.Migrations{Schema: Schema, FS: sub}
}
