package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/atrium-hq/atrium/platform/cli"
	"github.com/atrium-hq/atrium/platform/pgdb"
	"github.com/atrium-hq/atrium/platform/runner"
	actions "github.com/atrium-hq/atrium/services/actions/service"
	audit "github.com/atrium-hq/atrium/services/audit/service"
	collections "github.com/atrium-hq/atrium/services/collections/service"
	crm "github.com/atrium-hq/atrium/services/crm/service"
	data "github.com/atrium-hq/atrium/services/data/service"
	webhooks "github.com/atrium-hq/atrium/services/webhooks/service"
)

// allMigrations are the schemas of every service, in dependency order.
func allMigrations() []pgdb.Migrations {
	return []pgdb.Migrations{collections.Migrations(), crm.Migrations(), data.Migrations(), actions.Migrations(), webhooks.Migrations(), audit.Migrations()}
}

// migrate applies every service's pending migrations to one database. Each
// service keeps its tables in its own schema there.
func migrate(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("atrium migrate", flag.ContinueOnError)
	fs.SetOutput(stderr)
	url := new(string)
	runner.BindDatabaseURL(fs, url, "required")
	if err := cli.Parse(fs, args, version, stdout, os.LookupEnv); err != nil {
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
		fmt.Fprintf(stdout, "schema %-12s %s (applied now: %s)\n", m.Schema, describeVersions(m), describeApplied(applied))
	}
	return nil
}

// describeVersions says which version of each source a schema is at once
// migrated: "outbox 1, crm 1".
func describeVersions(m pgdb.Migrations) string {
	latest, err := m.Latest()
	if err != nil {
		return err.Error()
	}
	var parts []string
	for _, s := range m.Sources {
		parts = append(parts, fmt.Sprintf("%s %d", s.Name, latest[s.Name]))
	}
	return "at " + strings.Join(parts, ", ")
}

func describeApplied(applied []pgdb.Applied) string {
	if len(applied) == 0 {
		return "none"
	}
	parts := make([]string, len(applied))
	for i, a := range applied {
		parts[i] = a.String()
	}
	return strings.Join(parts, ", ")
}
