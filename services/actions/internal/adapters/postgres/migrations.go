// Package postgres is the actions service's PostgreSQL adapter. It owns the
// actions schema; today that holds only the platform's outbox.
package postgres

import "github.com/atrium-hq/atrium/platform/pgdb"

// Schema is the PostgreSQL schema the actions service owns.
const Schema = "actions"

// Migrations are the actions schema's migrations: the platform's outbox, and
// none of the service's own yet.
func Migrations() pgdb.Migrations { return pgdb.ServiceMigrations(Schema, nil) }
