// Package postgres is the data service's PostgreSQL adapter. It owns the
// data schema; today that holds only the outbox.
package postgres

import (
	"embed"
	"io/fs"

	"github.com/atrium-hq/atrium/platform/pgdb"
)

//go:embed migrations/*.sql
var migrationFiles embed.FS

// Schema is the PostgreSQL schema the data service owns.
const Schema = "data"

// Migrations are the data schema's migrations.
func Migrations() pgdb.Migrations {
	sub, err := fs.Sub(migrationFiles, "migrations")
	if err != nil {
		panic(err) // the embedded directory always exists
	}
	return pgdb.Migrations{Schema: Schema, FS: sub}
}
