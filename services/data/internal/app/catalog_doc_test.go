package app

import (
	"fmt"
	"os"
	"strings"
	"testing"
)

// catalogMarkdown is the catalog as docs/datasets.md lists it.
func catalogMarkdown() string {
	var b strings.Builder
	for _, r := range Catalog {
		fmt.Fprintf(&b, "### %s\n\n%s.", r.Name, r.Description)
		if r.Name == ClientsResource {
			b.WriteString(" Read from the CRM, not stored; no client_id.")
		}
		if r.BeyondSpec {
			b.WriteString(" **Beyond the spec:** an Atrium dataset the actions write.")
		}
		if r.ByAgency {
			b.WriteString(" Rows are an agency's: a read returns only those whose `agency_id` is the key's agency.")
		}
		b.WriteString("\n\n| Field | Type | Required on load |\n|---|---|---|\n")
		for _, f := range r.AllFields() {
			req := ""
			switch {
			case f.Required:
				req = "yes"
			case f.Name == "id" || f.Name == "created_at" || f.Name == "updated_at":
				req = "filled in when absent"
			}
			fmt.Fprintf(&b, "| %s | %s | %s |\n", f.Name, f.Type, req)
		}
		fmt.Fprintf(&b, "\nOrder by: %s. Filter by: %s.\n\n", list(r.Orders()), list(r.Filters()))
	}
	return b.String()
}

const (
	docPath   = "../../../../docs/datasets.md"
	docMarker = "<!-- catalog: generated from services/data/internal/app/catalog.go by TestDatasetsDocMatchesCatalog; UPDATE_DOCS=1 rewrites it -->\n"
)

// TestDatasetsDocMatchesCatalog keeps docs/datasets.md's row shapes the
// catalog's: the catalog is the one statement of them.
func TestDatasetsDocMatchesCatalog(t *testing.T) {
	b, err := os.ReadFile(docPath)
	if err != nil {
		t.Fatal(err)
	}
	head, _, ok := strings.Cut(string(b), docMarker)
	if !ok {
		t.Fatalf("docs/datasets.md lacks the catalog marker %q", docMarker)
	}
	want := head + docMarker + "\n" + catalogMarkdown()
	if string(b) == want {
		return
	}
	if os.Getenv("UPDATE_DOCS") == "1" {
		if err := os.WriteFile(docPath, []byte(want), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	t.Fatal("docs/datasets.md does not list the catalog; run UPDATE_DOCS=1 go test -run TestDatasetsDocMatchesCatalog ./services/data/internal/app")
}

func TestCatalogHasTheSpecsResources(t *testing.T) {
	var spec, own []string
	for _, r := range Catalog {
		if r.Name != ClientsResource && len(r.Fields) == 0 {
			t.Errorf("%s has no fields", r.Name)
		}
		if r.BeyondSpec {
			own = append(own, r.Name)
		} else if len(own) > 0 {
			t.Errorf("%s, of the spec, comes after Atrium's own datasets", r.Name)
		} else {
			spec = append(spec, r.Name)
		}
		// A json value has no order: it can be neither an order nor a
		// filter key.
		for _, f := range r.Fields {
			if f.Type == TJSON && isKey(f.Name) {
				t.Errorf("%s.%s is json but named as an order or filter field", r.Name, f.Name)
			}
		}
	}
	if len(spec) != 31 || list(own) != "action_runs, blog_images" {
		t.Fatalf("%d resources of the spec and %v of Atrium's, want 31 and action_runs, blog_images", len(spec), own)
	}
	for name, want := range map[string]struct{ orders, filters string }{
		"keywords":       {"created_at, updated_at, id, tracked_at", "id, status"},
		"backlinks":      {"created_at, updated_at, id, external_pages, linking_domains", "id, source_type, source_id"},
		"call_scores":    {"created_at, updated_at, id", "id, lead_grade, quality_grade"},
		"blogs":          {"created_at, updated_at, id", "id, status, category_id, published"},
		"llm_reports":    {"created_at, updated_at, id, scored_at", "id"},
		"competitors":    {"created_at, updated_at, id, appearances", "id"},
		"clients":        {"created_at, updated_at, id", "id, status"},
		"reviews":        {"created_at, updated_at, id", "id, sentiment"},
		"domain_metrics": {"created_at, updated_at, id, fetched_at, linking_domains", "id"},
		"seo_tasks":      {"created_at, updated_at, id", "id, status, source_id, category_id"},
		"seo_reports":    {"created_at, updated_at, id, fetched_at", "id"},
		"geo_articles":   {"created_at, updated_at, id", "id, status, category_id, published"},
		"action_runs":    {"created_at, updated_at, id", "id, status"},
		"blog_images":    {"created_at, updated_at, id", "id"},
	} {
		r, _ := Lookup(name)
		if got := list(r.Orders()); got != want.orders {
			t.Errorf("%s orders = %s, want %s", name, got, want.orders)
		}
		if got := list(r.Filters()); got != want.filters {
			t.Errorf("%s filters = %s, want %s", name, got, want.filters)
		}
	}
}
