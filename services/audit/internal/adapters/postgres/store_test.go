package postgres_test

import (
	"testing"

	"github.com/atrium-hq/atrium/platform/pgdb"
	"github.com/atrium-hq/atrium/platform/pgtest"
	"github.com/atrium-hq/atrium/services/audit/internal/adapters/postgres"
	"github.com/atrium-hq/atrium/services/audit/internal/app"
	"github.com/atrium-hq/atrium/services/audit/internal/app/storetest"
)

func TestMain(m *testing.M) { pgtest.Main(m) }

func TestPostgresStoreContract(t *testing.T) {
	storetest.RunAll(t, func(t *testing.T) app.Store {
		pool := pgtest.NewPool(t, postgres.Migrations())
		return postgres.New(pgdb.NewDB(pool, nil))
	})
}
