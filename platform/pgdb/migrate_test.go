package pgdb_test

import (
	"context"
	"strings"
	"testing"
	"testing/fstest"

	"github.com/atrium-hq/atrium/platform/pgdb"
	"github.com/atrium-hq/atrium/platform/pgtest"
)

func TestMain(m *testing.M) { pgtest.Main(m) }

func TestMigrations(t *testing.T) {
	url := pgtest.NewDatabase(t, "empty", func(context.Context, string) error { return nil })
	ctx := t.Context()
	pool, err := pgdb.Open(ctx, url, "demo")
	if err != nil {
		t.Fatal(err)
	}
	defer pool.Close()
	v1 := pgdb.Migrations{Schema: "demo", FS: fstest.MapFS{
		"0001_things.sql": {Data: []byte("CREATE TABLE things (id int PRIMARY KEY);")},
	}}
	v2 := pgdb.Migrations{Schema: "demo", FS: fstest.MapFS{
		"0001_things.sql": {Data: []byte("CREATE TABLE things (id int PRIMARY KEY);")},
		"0002_more.sql":   {Data: []byte("ALTER TABLE things ADD COLUMN name text;")},
	}}
	if err := v1.Check(ctx, pool); err == nil || !strings.Contains(err.Error(), "atrium migrate") {
		t.Fatalf("Check on an empty database = %v, want advice to migrate", err)
	}
	if got, err := v1.Apply(ctx, pool); err != nil || len(got) != 1 {
		t.Fatalf("Apply v1 = %v, %v", got, err)
	}
	if got, err := v1.Apply(ctx, pool); err != nil || len(got) != 0 {
		t.Fatalf("Apply v1 again = %v, %v; want nothing applied", got, err)
	}
	if err := v1.Check(ctx, pool); err != nil {
		t.Fatal(err)
	}
	if err := v2.Check(ctx, pool); err == nil || !strings.Contains(err.Error(), "version 1") {
		t.Fatalf("Check v2 = %v", err)
	}
	if got, err := v2.Apply(ctx, pool); err != nil || len(got) != 1 || got[0] != 2 {
		t.Fatalf("Apply v2 = %v, %v", got, err)
	}
	if err := v1.Check(ctx, pool); err == nil || !strings.Contains(err.Error(), "newer") {
		t.Fatalf("Check of an older binary = %v, want it told the schema is newer", err)
	}

	// A failing migration applies nothing.
	bad := pgdb.Migrations{Schema: "demo", FS: fstest.MapFS{
		"0001_things.sql": {Data: []byte("CREATE TABLE things (id int PRIMARY KEY);")},
		"0002_more.sql":   {Data: []byte("ALTER TABLE things ADD COLUMN name text;")},
		"0003_ok.sql":     {Data: []byte("CREATE TABLE fine (id int);")},
		"0004_broken.sql": {Data: []byte("ALTER TABLE nowhere ADD COLUMN x int;")},
	}}
	if _, err := bad.Apply(ctx, pool); err == nil || !strings.Contains(err.Error(), "0004_broken.sql") {
		t.Fatalf("Apply broken = %v, want the failing file named", err)
	}
	var n int
	if err := pool.QueryRow(ctx, "SELECT count(*) FROM pg_tables WHERE schemaname = 'demo' AND tablename = 'fine'").Scan(&n); err != nil || n != 0 {
		t.Fatalf("a failed migration run left table fine behind (%d, %v)", n, err)
	}

	misnamed := pgdb.Migrations{Schema: "demo", FS: fstest.MapFS{"init.sql": {Data: []byte("SELECT 1")}}}
	if _, err := misnamed.Apply(ctx, pool); err == nil {
		t.Fatal("a migration without a version number was accepted")
	}
}
