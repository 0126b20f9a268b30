package postgres

import (
	"os"
	"strings"
	"testing"
)

// TestMigrationIndexesMatchCatalog keeps the rows migration's indexes the
// catalog's: every (resource, filter, order) read has its index.
func TestMigrationIndexesMatchCatalog(t *testing.T) {
	const path, marker = "migrations/0001_rows.sql", "-- indexes:\n"
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	head, _, ok := strings.Cut(string(b), marker)
	if !ok {
		t.Fatalf("%s lacks the marker %q", path, marker)
	}
	want := head + marker + indexDDL()
	if string(b) == want {
		return
	}
	if os.Getenv("UPDATE_DOCS") == "1" {
		if err := os.WriteFile(path, []byte(want), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	t.Fatalf("%s does not create the catalog's indexes; run UPDATE_DOCS=1 go test -run TestMigrationIndexesMatchCatalog ./services/data/internal/adapters/postgres", path)
}
