package postgres

import (
	"embed"

	"github.com/atrium-hq/atrium/platform/pgdb"
)

//go:embed migrations/*.sql
var migrationFiles embed.FS

// Schema is the PostgreSQL schema the actions service owns.
const Schema = "actions"

// Migrations are the actions schema's migrations: credits, runs and the
// platform's outbox.
func Migrations() pgdb.Migrations {
	return pgdb.EmbeddedMigrations(Schema, migrationFiles)
}
