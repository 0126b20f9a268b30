package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"

	"github.com/atrium-hq/atrium/platform/envflag"
	"github.com/atrium-hq/atrium/platform/pgdb"
	actions "github.com/atrium-hq/atrium/services/actions/service"
	collections "github.com/atrium-hq/atrium/services/collections/service"
	crm "github.com/atrium-hq/atrium/services/crm/service"
	data "github.com/atrium-hq/atrium/services/data/service"
)

// allMigrations are the schemas of every service, in dependency order.
func allMigrations() []pgdb.Migrations {
	return []pgdb.Migrations{collections.Migrations(), crm.Migrations(), data.Migrations(), actions.Migrations()}
}

// migrate applies every service's pending migrations to one database. Each
// service keeps its tables in its own schema there.
func migrate(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("atrium migrate", flag.ContinueOnError)
	fs.SetOutput(stderr)
	url := fs.String("database-url", "", "PostgreSQL URL (postgres://user@host:5432/db); required")
	if err := envflag.Parse(fs, args, "ATRIUM_", os.LookupEnv); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return nil
		}
		return err
	}
	if *url == "" {
		return errors.New("--database-url (or ATRIUM_DATABASE_URL) is required")
	}
	for _, m := range allMigrations() {
		pool, err := pgdb.Open(ctx, *url, m.Schema)
		if err != nil {
			return err
		}
		applied, err := m.Apply(ctx, pool)
		pool.Close()
		if err != nil {
			return err
		}
		latest, _ := m.Latest()
		fmt.Fprintf(stdout, "schema %-12s at version %d (applied now: %v)\n", m.Schema, latest, applied)
	}
	return nil
}
