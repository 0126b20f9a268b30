// Package postgres is the data store on PostgreSQL through pgx. It owns the
// data schema: one rows table for every dataset, with typed columns for the
// order and filter fields; transactions and the outbox are platform/pgdb's.
package postgres

import (
	"embed"

	"github.com/atrium-hq/atrium/platform/pgdb"
)

//go:embed migrations/*.sql
var migrationFiles embed.FS

// Schema is the PostgreSQL schema the data service owns.
const Schema = "data"

// Migrations are the data schema's migrations.
func Migrations() pgdb.Migrations {
	return pgdb.EmbeddedMigrations(Schema, migrationFiles)
}
