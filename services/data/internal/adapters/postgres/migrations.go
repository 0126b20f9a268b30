// Package postgres is the data service's PostgreSQL adapter. It owns the
// data schema; today that holds only the platform's outbox.
package postgres

import "github.com/atrium-hq/atrium/platform/pgdb"

// Schema is the PostgreSQL schema the data service owns.
const Schema = "data"

// Migrations are the data schema's migrations: the platform's outbox, and
// none of the service's own yet.
func Migrations() pgdb.Migrations { return pgdb.ServiceMigrations(Schema, nil) }
