package postgres

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// TestMigrationIndexesMatchCatalog keeps the migrations' indexes the
// catalog's: every (resource, filter, order) read has its index, and no
// index is left that the catalog does not need. Migrations that shipped
// are never edited: the indexes section of the newest migration that has
// one ("-- indexes:") holds the difference between the catalog and what
// the migrations before it leave, and UPDATE_DOCS=1 rewrites that section.
// A catalog change after that migration shipped needs a new migration
// file ending with the marker.
func TestMigrationIndexesMatchCatalog(t *testing.T) {
	const marker = "-- indexes:\n"
	paths, err := filepath.Glob("migrations/*.sql")
	if err != nil || len(paths) == 0 {
		t.Fatalf("no migrations (%v)", err)
	}
	texts := make([]string, len(paths))
	newest := -1
	for i, p := range paths {
		b, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		texts[i] = string(b)
		if strings.Contains(texts[i], marker) {
			newest = i
		}
	}
	if newest < 0 {
		t.Fatalf("no migration has the marker %q", marker)
	}
	built := map[string]string{}
	for _, text := range texts[:newest] {
		builtIndexes(built, text)
	}
	for _, text := range texts[newest+1:] {
		if strings.Contains(text, "INDEX") {
			t.Fatal("a migration after the newest one with the indexes marker touches indexes: give it the marker")
		}
	}
	head, _, _ := strings.Cut(texts[newest], marker)
	builtIndexes(built, head)
	want := head + marker + indexSection(built)

	// Whatever the newest section says, every migration together must
	// leave exactly the catalog's indexes.
	all := map[string]string{}
	for _, text := range texts {
		builtIndexes(all, text)
	}
	exact := len(all) == len(catalogIndexes())
	for _, stmt := range catalogIndexes() {
		name, _, _ := indexStatement(stmt)
		exact = exact && all[name] == stmt
	}
	if texts[newest] == want && exact {
		return
	}
	if os.Getenv("UPDATE_DOCS") == "1" {
		if err := os.WriteFile(paths[newest], []byte(want), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	t.Fatalf("the migrations do not leave the catalog's indexes; run UPDATE_DOCS=1 go test -run TestMigrationIndexesMatchCatalog ./services/data/internal/adapters/postgres to rewrite the indexes section of %s (or add a migration ending with %q if that one shipped)", paths[newest], strings.TrimSpace(marker))
}

// TestIndexSectionDropsAndCreates: a section made against earlier
// migrations drops what the catalog no longer needs, recreates a changed
// index and adds the missing ones, and nothing else.
func TestIndexSectionDropsAndCreates(t *testing.T) {
	all := catalogIndexes()
	built := map[string]string{}
	for _, stmt := range all[1:] {
		name, _, _ := indexStatement(stmt)
		built[name] = stmt
	}
	changed, _, _ := indexStatement(all[2])
	built[changed] = "CREATE INDEX " + changed + " ON rows (client_id) WHERE resource = 'x';"
	built["rows_gone_by_created_at"] = "CREATE INDEX rows_gone_by_created_at ON rows (client_id, created_at, id) WHERE resource = 'gone';"
	got := indexSection(built)
	drops := []string{changed, "rows_gone_by_created_at"}
	slices.Sort(drops)
	want := "DROP INDEX " + drops[0] + ";\nDROP INDEX " + drops[1] + ";\n" + all[0] + "\n" + all[2] + "\n"
	if got != want {
		t.Fatalf("section =\n%s\nwant\n%s", got, want)
	}
	builtIndexes(built, got)
	if len(built) != len(all) {
		t.Fatalf("after the section %d indexes, want %d", len(built), len(all))
	}
}
