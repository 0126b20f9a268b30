package postgres_test

import (
	"fmt"
	"testing"
	"time"

	"github.com/atrium-hq/atrium/platform/pgdb"
	"github.com/atrium-hq/atrium/platform/pgtest"
	"github.com/atrium-hq/atrium/services/actions/internal/adapters/postgres"
	"github.com/atrium-hq/atrium/services/actions/internal/app/seocache"
	"github.com/atrium-hq/atrium/services/actions/internal/app/storetest"
)

func TestMain(m *testing.M) { pgtest.Main(m) }

func TestPostgresStoreContract(t *testing.T) {
	storetest.RunAll(t, func(t *testing.T) storetest.Store {
		pool := pgtest.NewPool(t, postgres.Migrations())
		return postgres.New(pgdb.NewDB(pool, nil))
	})
}

// Expired SEO answers do not pile up: each write removes up to 16 of them,
// oldest first, and none that is still valid.
func TestSEOCacheForgetsExpiredAnswers(t *testing.T) {
	pool := pgtest.NewPool(t, postgres.Migrations())
	s := postgres.New(pgdb.NewDB(pool, nil))
	at := time.Date(2026, 5, 1, 8, 0, 0, 0, time.UTC)
	for i := range 40 {
		if err := s.CacheAnswer(t.Context(), fmt.Sprintf("old-%d", i), seocache.Answer{Value: []byte("{}"), StoredAt: at, ExpiresAt: at.Add(time.Hour)}); err != nil {
			t.Fatal(err)
		}
	}
	count := func(cond string) int {
		var n int
		if err := pool.QueryRow(t.Context(), `SELECT count(*) FROM seo_cache WHERE `+cond).Scan(&n); err != nil {
			t.Fatal(err)
		}
		return n
	}
	later := at.Add(2 * time.Hour)
	for i := range 3 {
		if err := s.CacheAnswer(t.Context(), fmt.Sprintf("new-%d", i), seocache.Answer{Value: []byte("{}"), StoredAt: later, ExpiresAt: later.Add(24 * time.Hour)}); err != nil {
			t.Fatal(err)
		}
		if got, want := count("key LIKE 'old-%'"), max(0, 40-16*(i+1)); got != want {
			t.Fatalf("after %d writes, %d expired answers left, want %d", i+1, got, want)
		}
	}
	if n := count("key LIKE 'new-%'"); n != 3 {
		t.Fatalf("%d valid answers, want 3", n)
	}
}
