package pgdb_test

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"testing/fstest"

	"github.com/atrium-hq/atrium/platform/pgdb"
	"github.com/atrium-hq/atrium/platform/pgtest"
)

func TestMain(m *testing.M) { pgtest.Main(m) }

func file(sql string) *fstest.MapFile { return &fstest.MapFile{Data: []byte(sql)} }

func TestMigrations(t *testing.T) {
	url := pgtest.NewDatabase(t, "empty", func(context.Context, string) error { return nil })
	ctx := t.Context()
	pool, err := pgdb.Open(ctx, url, "demo")
	if err != nil {
		t.Fatal(err)
	}
	defer pool.Close()
	v1 := pgdb.ServiceMigrations("demo", fstest.MapFS{"0001_things.sql": file("CREATE TABLE things (id int PRIMARY KEY);")})
	v2 := pgdb.ServiceMigrations("demo", fstest.MapFS{
		"0001_things.sql": file("CREATE TABLE things (id int PRIMARY KEY);"),
		"0002_more.sql":   file("ALTER TABLE things ADD COLUMN name text;"),
	})
	if err := v1.Check(ctx, pool); err == nil || !strings.Contains(err.Error(), "atrium migrate") {
		t.Fatalf("Check on an empty database = %v, want advice to migrate", err)
	}
	got, err := v1.Apply(ctx, pool)
	if err != nil || fmt.Sprint(got) != "[outbox/1 outbox/2 outbox/3 demo/1]" {
		t.Fatalf("Apply v1 = %v, %v; want the outbox's, then the service's own", got, err)
	}
	if got, err := v1.Apply(ctx, pool); err != nil || len(got) != 0 {
		t.Fatalf("Apply v1 again = %v, %v; want nothing applied", got, err)
	}
	if err := v1.Check(ctx, pool); err != nil {
		t.Fatal(err)
	}
	var outbox int
	if err := pool.QueryRow(ctx, "SELECT count(*) FROM demo.outbox").Scan(&outbox); err != nil {
		t.Fatalf("the platform's outbox table is missing: %v", err)
	}
	if err := v2.Check(ctx, pool); err == nil || !strings.Contains(err.Error(), "demo version 1") {
		t.Fatalf("Check v2 = %v", err)
	}
	if got, err := v2.Apply(ctx, pool); err != nil || len(got) != 1 || got[0].String() != "demo/2" {
		t.Fatalf("Apply v2 = %v, %v", got, err)
	}
	if err := v1.Check(ctx, pool); err == nil || !strings.Contains(err.Error(), "newer") {
		t.Fatalf("Check of an older binary = %v, want it told the schema is newer", err)
	}

	// A failing migration applies nothing.
	bad := pgdb.ServiceMigrations("demo", fstest.MapFS{
		"0001_things.sql": file("CREATE TABLE things (id int PRIMARY KEY);"),
		"0002_more.sql":   file("ALTER TABLE things ADD COLUMN name text;"),
		"0003_ok.sql":     file("CREATE TABLE fine (id int);"),
		"0004_broken.sql": file("ALTER TABLE nowhere ADD COLUMN x int;"),
	})
	if _, err := bad.Apply(ctx, pool); err == nil || !strings.Contains(err.Error(), "0004_broken.sql") {
		t.Fatalf("Apply broken = %v, want the failing file named", err)
	}
	var n int
	if err := pool.QueryRow(ctx, "SELECT count(*) FROM pg_tables WHERE schemaname = 'demo' AND tablename = 'fine'").Scan(&n); err != nil || n != 0 {
		t.Fatalf("a failed migration run left table fine behind (%d, %v)", n, err)
	}

	misnamed := pgdb.ServiceMigrations("demo", fstest.MapFS{"init.sql": file("SELECT 1")})
	if _, err := misnamed.Apply(ctx, pool); err == nil {
		t.Fatal("a migration without a version number was accepted")
	}
}

// TestLegacyVersionTableIsUpgraded: a schema migrated by a development
// build from before migration sources (one version series, whose first file
// also made the outbox) is upgraded in place and needs nothing re-applied.
func TestLegacyVersionTableIsUpgraded(t *testing.T) {
	url := pgtest.NewDatabase(t, "empty", func(context.Context, string) error { return nil })
	ctx := t.Context()
	pool, err := pgdb.Open(ctx, url, "old")
	if err != nil {
		t.Fatal(err)
	}
	defer pool.Close()
	for _, stmt := range []string{
		"CREATE SCHEMA old",
		"CREATE TABLE old.schema_migrations (version integer PRIMARY KEY, name text NOT NULL, applied_at timestamptz NOT NULL DEFAULT now())",
		"CREATE TABLE old.things (id int PRIMARY KEY)",
		"CREATE TABLE old.outbox (seq bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY, id uuid NOT NULL UNIQUE, subject text NOT NULL, payload bytea NOT NULL, created_at timestamptz NOT NULL)",
		"INSERT INTO old.schema_migrations (version, name) VALUES (1, '0001_things.sql')",
	} {
		if _, err := pool.Exec(ctx, stmt); err != nil {
			t.Fatal(err)
		}
	}
	m := pgdb.ServiceMigrations("old", fstest.MapFS{"0001_things.sql": file("CREATE TABLE things (id int PRIMARY KEY);")})
	if err := m.Check(ctx, pool); err == nil || !strings.Contains(err.Error(), "atrium migrate") {
		t.Fatalf("Check on a legacy table = %v, want advice to migrate", err)
	}
	// The outbox's later migrations (its trace context) are new to it.
	if got, err := m.Apply(ctx, pool); err != nil || fmt.Sprint(got) != "[outbox/2 outbox/3]" {
		t.Fatalf("Apply on a legacy table = %v, %v; want the upgrade, nothing re-applied, and only the outbox's newer migrations", got, err)
	}
	if err := m.Check(ctx, pool); err != nil {
		t.Fatal(err)
	}
}
