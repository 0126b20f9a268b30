// Package pgtest gives each PostgreSQL-backed test its own migrated database.
//
// The first test of a process that asks for a database of some kind migrates
// a template database once; every test then gets a copy (CREATE DATABASE ...
// TEMPLATE), dropped when the test ends, so tests run in parallel and leave
// nothing behind. Main drops the templates when the package's tests finish.
//
// When PostgreSQL cannot be reached the tests fail, naming the server they
// tried; they are skipped only when ATRIUM_TEST_SKIP_POSTGRES=1 is set outside
// CI, so a suite that did not run is never counted as passing.
package pgtest

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"net/url"
	"os"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/atrium-hq/atrium/platform/pgdb"
)

// DefaultURL is the local server every development machine of this project
// runs (trust authentication).
const DefaultURL = "postgres://postgres@127.0.0.1:5432/postgres?sslmode=disable"

// URL returns TEST_DATABASE_URL, or DefaultURL when it is unset.
func URL() string {
	if u := os.Getenv("TEST_DATABASE_URL"); u != "" {
		return u
	}
	return DefaultURL
}

var (
	mu        sync.Mutex
	templates = map[string]string{} // kind -> template database name
)

// Main runs the tests of a package that uses NewDatabase and drops the
// template databases it created. Call it from TestMain; the tests' result
// becomes the exit code when TestMain returns.
func Main(m *testing.M) {
	m.Run()
	mu.Lock()
	defer mu.Unlock()
	if len(templates) == 0 {
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	conn, err := pgx.Connect(ctx, URL())
	if err != nil {
		fmt.Fprintf(os.Stderr, "pgtest: drop templates: %v\n", err)
		return
	}
	defer conn.Close(ctx)
	for _, name := range templates {
		if err := dropDatabase(ctx, conn, name); err != nil {
			fmt.Fprintf(os.Stderr, "pgtest: drop template %s: %v\n", name, err)
		}
	}
}

// NewDatabase returns the URL of a fresh database for t, with kind's schema
// migrated by migrate. Tests asking for the same kind share one template.
func NewDatabase(t testing.TB, kind string, migrate func(ctx context.Context, databaseURL string) error) string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	conn, err := pgx.Connect(ctx, URL())
	if err != nil {
		if os.Getenv("ATRIUM_TEST_SKIP_POSTGRES") == "1" && os.Getenv("CI") == "" {
			t.Skipf("PostgreSQL unreachable and ATRIUM_TEST_SKIP_POSTGRES=1: %v", err)
		}
		t.Fatalf("PostgreSQL is required for this test and is unreachable at %s: %v\n"+
			"start it (see DEVELOPERS.md) or point TEST_DATABASE_URL at a server", redact(URL()), err)
	}
	defer conn.Close(context.Background())

	mu.Lock()
	defer mu.Unlock()
	tpl, ok := templates[kind]
	if !ok {
		tpl = "atrium_tpl_" + kind + "_" + randomSuffix()
		if _, err := conn.Exec(ctx, "CREATE DATABASE "+pgx.Identifier{tpl}.Sanitize()); err != nil {
			t.Fatalf("create template database: %v", err)
		}
		if err := migrate(ctx, withDatabase(t, tpl)); err != nil {
			_ = dropDatabase(ctx, conn, tpl)
			t.Fatalf("migrate template database: %v", err)
		}
		templates[kind] = tpl
	}
	name := "atrium_test_" + randomSuffix()
	if _, err := conn.Exec(ctx, "CREATE DATABASE "+pgx.Identifier{name}.Sanitize()+" TEMPLATE "+pgx.Identifier{tpl}.Sanitize()); err != nil {
		t.Fatalf("create test database from template: %v", err)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		conn, err := pgx.Connect(ctx, URL())
		if err != nil {
			t.Errorf("drop test database %s: %v", name, err)
			return
		}
		defer conn.Close(ctx)
		if err := dropDatabase(ctx, conn, name); err != nil {
			t.Errorf("drop test database %s: %v", name, err)
		}
	})
	return withDatabase(t, name)
}

func dropDatabase(ctx context.Context, conn *pgx.Conn, name string) error {
	_, err := conn.Exec(ctx, "DROP DATABASE IF EXISTS "+pgx.Identifier{name}.Sanitize()+" WITH (FORCE)")
	return err
}

func withDatabase(t testing.TB, name string) string {
	u, err := url.Parse(URL())
	if err != nil || (u.Scheme != "postgres" && u.Scheme != "postgresql") {
		t.Fatalf("TEST_DATABASE_URL must be a postgres:// URL, got %q", redact(URL()))
	}
	u.Path = "/" + name
	return u.String()
}

func redact(raw string) string {
	u, err := url.Parse(raw)
	if err != nil {
		return "(unparsable URL)"
	}
	return u.Redacted()
}

func randomSuffix() string {
	b := make([]byte, 6)
	_, _ = rand.Read(b)
	return hex.EncodeToString(b)
}

// NewPool returns a pool on a new database migrated with m, its search path
// m's schema, closed when the test ends: what a service's postgres adapter
// test builds its store on.
func NewPool(t testing.TB, m pgdb.Migrations) *pgxpool.Pool {
	t.Helper()
	url := NewDatabase(t, m.Schema, func(ctx context.Context, url string) error { return pgdb.ApplyURL(ctx, url, m) })
	pool, err := pgdb.Open(t.Context(), url, m.Schema)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(pool.Close)
	return pool
}
