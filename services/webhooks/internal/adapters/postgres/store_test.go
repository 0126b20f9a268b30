package postgres_test

import (
	"context"
	"testing"

	"github.com/atrium-hq/atrium/platform/pgdb"
	"github.com/atrium-hq/atrium/platform/pgtest"
	"github.com/atrium-hq/atrium/services/webhooks/internal/adapters/postgres"
	"github.com/atrium-hq/atrium/services/webhooks/internal/app"
	"github.com/atrium-hq/atrium/services/webhooks/internal/app/storetest"
)

func TestMain(m *testing.M) { pgtest.Main(m) }

func TestPostgresStoreContract(t *testing.T) {
	storetest.RunAll(t, func(t *testing.T) app.Store {
		url := pgtest.NewDatabase(t, postgres.Schema, func(ctx context.Context, url string) error {
			return pgdb.ApplyURL(ctx, url, postgres.Migrations())
		})
		pool, err := pgdb.Open(t.Context(), url, postgres.Schema)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(pool.Close)
		return postgres.New(pgdb.NewDB(pool, nil))
	})
}
