package postgres_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/atrium-hq/atrium/platform/apperr"
	"github.com/atrium-hq/atrium/platform/pgdb"
	"github.com/atrium-hq/atrium/platform/pgtest"
	"github.com/atrium-hq/atrium/services/collections/internal/adapters/postgres"
	"github.com/atrium-hq/atrium/services/collections/internal/app"
	"github.com/atrium-hq/atrium/services/collections/internal/app/storetest"
)

func TestMain(m *testing.M) { pgtest.Main(m) }

func TestPostgresStoreContract(t *testing.T) {
	storetest.RunAll(t, func(t *testing.T) storetest.Store {
		return postgres.New(pgdb.NewDB(pgtest.NewPool(t, postgres.Migrations()), nil))
	})
}

func migrate(ctx context.Context, url string) error {
	return pgdb.ApplyURL(ctx, url, postgres.Migrations())
}

// TestCreateSeesAnotherReplicasChange: two stores on one database, as two
// replicas of the service; one remembers the collection's fields, the
// other changes them. Creates through the first are validated against the
// fields as they are now: a new field is accepted and a removed one
// refused, and no item is written against the old ones.
func TestCreateSeesAnotherReplicasChange(t *testing.T) {
	ctx := t.Context()
	url := pgtest.NewDatabase(t, postgres.Schema, migrate)
	open := func() *app.Content {
		pool, err := pgdb.Open(ctx, url, postgres.Schema)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(pool.Close)
		return app.NewContent(app.ContentStoreOf(postgres.New(pgdb.NewDB(pool, nil))), app.Clock(time.Now))
	}
	first, second := open(), open()
	pool, err := pgdb.Open(ctx, url, postgres.Schema)
	if err != nil {
		t.Fatal(err)
	}
	defer pool.Close()
	site, err := app.NewSites(app.SiteStoreOf(postgres.New(pgdb.NewDB(pool, nil))), nil, app.Clock(time.Now)).Create(ctx, app.NewSite{Name: "Replicas"})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := first.CreateCollection(ctx, site.ID, app.NewCollection{Name: "Posts", Slug: "posts",
		Fields: []app.Field{{Key: "title", Type: app.TypeText}, {Key: "tag", Type: app.TypeText}}}); err != nil {
		t.Fatal(err)
	}
	if _, _, err := first.CreateItem(ctx, site.ID, "posts", app.NewItem{Data: map[string]any{"title": "Remembered"}}); err != nil {
		t.Fatal(err)
	}
	body := "body"
	if _, err := second.UpdateCollection(ctx, site.ID, "posts", app.CollectionChange{
		Add: []app.Field{{Key: body, Type: app.TypeText}}, Remove: []string{"tag"}}); err != nil {
		t.Fatal(err)
	}
	c, it, err := first.CreateItem(ctx, site.ID, "posts", app.NewItem{Data: map[string]any{"title": "New", body: "Fresh"}})
	if err != nil || len(c.Fields) != 2 || string(it.Values[body]) != `"Fresh"` {
		t.Fatalf("create with the added field = %+v, %v; want it accepted under the new fields", it.Values, err)
	}
	_, _, err = first.CreateItem(ctx, site.ID, "posts", app.NewItem{Data: map[string]any{"title": "Old", "tag": "x"}})
	if apperr.KindOf(err) != apperr.KindInvalid || !strings.Contains(err.Error(), "tag") {
		t.Fatalf("create with the removed field = %v; want it refused naming the field", err)
	}
	var n int
	if err := pool.QueryRow(ctx, `SELECT count(*) FROM items WHERE data ? 'tag'`).Scan(&n); err != nil || n != 0 {
		t.Fatalf("%d items hold the removed field (%v)", n, err)
	}
}

// TestSearchInTheCollectionsLanguage: a collection searched in english
// matches the stems of the words (baking finds bakes), has a GIN index
// over its document in that language (the benchmark measures that the
// planner uses it at scale), and changing the language replaces the index.
func TestSearchInTheCollectionsLanguage(t *testing.T) {
	ctx := t.Context()
	pool := pgtest.NewPool(t, postgres.Migrations())
	st := postgres.New(pgdb.NewDB(pool, nil))
	content := app.NewContent(app.ContentStoreOf(st), app.Clock(time.Now))
	site, err := app.NewSites(app.SiteStoreOf(st), nil, app.Clock(time.Now)).Create(ctx, app.NewSite{Name: "Bakery"})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := content.CreateCollection(ctx, site.ID, app.NewCollection{Name: "Posts", Slug: "posts", SearchLanguage: "english",
		Fields: []app.Field{{Key: "title", Type: app.TypeText}, {Key: "body", Type: app.TypeRichText}}}); err != nil {
		t.Fatal(err)
	}
	if _, _, err := content.CreateItem(ctx, site.ID, "posts", app.NewItem{Data: map[string]any{"title": "Weekends", "body": "<p>She bakes bread</p>"}}); err != nil {
		t.Fatal(err)
	}
	search := func(q string) int {
		_, items, _, err := content.Items(ctx, site.ID, "posts", app.ListParams{Q: q})
		if err != nil {
			t.Fatal(err)
		}
		return len(items)
	}
	if n := search("baking"); n != 1 {
		t.Fatalf("english q=baking found %d items, want the one that bakes", n)
	}
	indexOf := func() string {
		var def string
		if err := pool.QueryRow(ctx, `SELECT string_agg(indexdef, '; ') FROM pg_indexes WHERE indexname LIKE 'items\_search\_%'`).Scan(&def); err != nil {
			t.Fatal(err)
		}
		return def
	}
	if def := indexOf(); !strings.Contains(def, "USING gin (to_tsvector('english'::regconfig") {
		t.Fatalf("search index = %q, want one GIN index over the english document", def)
	}
	simple := "simple"
	if _, err := content.UpdateCollection(ctx, site.ID, "posts", app.CollectionChange{SearchLanguage: &simple}); err != nil {
		t.Fatal(err)
	}
	if n, m := search("baking"), search("bakes"); n != 0 || m != 1 {
		t.Fatalf("simple: q=baking found %d, q=bakes %d; want 0 and 1 (no stemming)", n, m)
	}
	if def := indexOf(); strings.Count(def, "USING gin") != 1 || !strings.Contains(def, "to_tsvector('simple'::regconfig") {
		t.Fatalf("search indexes after the language changed = %q, want only one over the simple document", def)
	}
}
