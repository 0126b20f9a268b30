package postgres

import (
	"context"
	"encoding/json"
	"io/fs"
	"maps"
	"slices"
	"strings"
	"testing"
	"testing/fstest"

	"github.com/google/uuid"

	"github.com/atrium-hq/atrium/platform/pgdb"
	"github.com/atrium-hq/atrium/platform/pgtest"
	"github.com/atrium-hq/atrium/services/data/internal/app"
)

// TestRowsStoredBeforeTheActionFields: rows stored before migration 3 read
// afterwards with every field of their resource, a blog's title as
// post_title, and their values kept.
func TestRowsStoredBeforeTheActionFields(t *testing.T) {
	before := fstest.MapFS{}
	for _, name := range []string{"0001_rows.sql", "0002_row_counts.sql"} {
		b, err := fs.ReadFile(migrationFiles, "migrations/"+name)
		if err != nil {
			t.Fatal(err)
		}
		before[name] = &fstest.MapFile{Data: b}
	}
	url := pgtest.NewDatabase(t, Schema+"-before-3", func(ctx context.Context, url string) error {
		return pgdb.ApplyURL(ctx, url, pgdb.ServiceMigrations(Schema, before))
	})
	pool, err := pgdb.Open(t.Context(), url, Schema)
	if err != nil {
		t.Fatal(err)
	}
	defer pool.Close()
	client, blog, kw := uuid.NewString(), uuid.NewString(), uuid.NewString()
	for _, r := range []struct{ id, resource, data string }{
		{blog, "blogs", `{"id": "` + blog + `", "title": "Old post", "slug": null, "content": "<p>Hi</p>", "status": "draft", "published": null,
			"category_id": null, "author_id": null, "published_at": null, "created_at": "2026-01-01T00:00:00Z", "updated_at": "2026-01-01T00:00:00Z"}`},
		{kw, "keywords", `{"id": "` + kw + `", "keyword": "bread", "position": 3, "url": null, "search_volume": 90, "difficulty": null,
			"status": "active", "tracked_at": null, "created_at": "2026-01-01", "updated_at": "2026-01-01T00:00:00Z"}`},
	} {
		if _, err := pool.Exec(t.Context(), `INSERT INTO rows (id, client_id, resource, created_at, updated_at, data)
			VALUES ($1, $2, $3, '2026-01-01T00:00:00Z', '2026-01-01T00:00:00Z', $4)`, r.id, client, r.resource, r.data); err != nil {
			t.Fatal(err)
		}
	}
	if err := pgdb.ApplyURL(t.Context(), url, Migrations()); err != nil {
		t.Fatal(err)
	}
	s := New(pgdb.NewDB(pool, nil))
	for id, want := range map[string]map[string]any{
		blog: {"post_title": "Old post", "content": "<p>Hi</p>", "status": "draft", "keyword": nil},
		kw:   {"keyword": "bread", "position": 3.0, "search_volume": 90.0, "location": nil, "created_at": "2026-01-01"},
	} {
		resource := "blogs"
		if id == kw {
			resource = "keywords"
		}
		row, err := s.Row(t.Context(), client, resource, id)
		if err != nil {
			t.Fatal(err)
		}
		var got map[string]any
		if err := json.Unmarshal(row.Data, &got); err != nil {
			t.Fatal(err)
		}
		r, _ := app.Lookup(resource)
		var fields []string
		for _, f := range r.AllFields() {
			fields = append(fields, f.Name)
		}
		slices.Sort(fields)
		keys := slices.Sorted(maps.Keys(got))
		if !slices.Equal(keys, fields) {
			t.Errorf("%s row has %s\nwant the fields %s", resource, strings.Join(keys, ", "), strings.Join(fields, ", "))
		}
		for k, v := range want {
			if got[k] != v {
				t.Errorf("%s.%s = %v, want %v", resource, k, got[k], v)
			}
		}
	}
}
