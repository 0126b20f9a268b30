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

// Migrations are the actions schema's migrations: credits, runs and the
// platform's outbox.
func Migrations() pgdb.Migrations {
	sub, err := fs.Sub(migrationFiles, "migrations")
	if err != nil {
		panic(err) // the embedded directory always exists
	}
	return pgdb.ServiceMigrations(Schema, sub)
}
