package postgres_test

import (
	"context"
	"testing"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/atrium-hq/atrium/platform/pgdb"
	"github.com/atrium-hq/atrium/platform/pgtest"
	"github.com/atrium-hq/atrium/services/crm/internal/adapters/postgres"
	"github.com/atrium-hq/atrium/services/crm/internal/app/storetest"
)

func TestMain(m *testing.M) { pgtest.Main(m) }

func TestPostgresStoreContract(t *testing.T) {
	storetest.RunAll(t, func(t *testing.T) storetest.Store { return postgres.New(pgdb.NewDB(openDB(t), nil)) })
}

func migrate(ctx context.Context, url string) error {
	return pgdb.ApplyURL(ctx, url, postgres.Migrations())
}

func openDB(t *testing.T) *pgxpool.Pool {
	t.Helper()
	return pgtest.NewPool(t, postgres.Migrations())
}

func BenchmarkCRMStoreLists(b *testing.B) {
	url := pgtest.NewDatabase(b, postgres.Schema, migrate)
	pool, err := pgdb.Open(b.Context(), url, postgres.Schema)
	if err != nil {
		b.Fatal(err)
	}
	defer pool.Close()
	storetest.BenchmarkLists(b, postgres.New(pgdb.NewDB(pool, nil)))
}
