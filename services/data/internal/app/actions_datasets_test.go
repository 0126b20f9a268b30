package app

import (
	"bytes"
	"fmt"
	"go/format"
	"os"
	"strings"
	"testing"

	"github.com/atrium-hq/atrium/platform/value"
)

// The actions service writes rows into these datasets, and must name their
// fields as this catalog does. It cannot import this module (services share
// only platform and proto), so the catalog is generated into it as Go, the
// way generated proto code is committed: TestActionsDatasetsMatchCatalog
// fails while the actions service's copy differs from the catalog, and
// rewrites it under UPDATE_GENERATED=1, which is what go generate runs.

//go:generate env UPDATE_GENERATED=1 go test -count=1 -run TestActionsDatasetsMatchCatalog .

const actionsDatasetsPath = "../../../actions/internal/app/datasets/catalog_gen.go"

// goInitialisms are the words Go spells in capitals in a field's name.
var goInitialisms = map[string]string{"id": "ID", "url": "URL", "ai": "AI", "cpc": "CPC", "cta": "CTA", "seo": "SEO", "llm": "LLM", "gbp": "GBP"}

// goName is a catalog name as a Go identifier: post_title is PostTitle,
// prospect_url ProspectURL.
func goName(name string) string {
	var b strings.Builder
	for _, w := range strings.Split(name, "_") {
		if up, ok := goInitialisms[w]; ok {
			b.WriteString(up)
		} else if w != "" {
			b.WriteString(strings.ToUpper(w[:1]) + w[1:])
		}
	}
	return b.String()
}

// actionsDatasetsGo is the catalog as the actions service's datasets
// package holds it: a variable per dataset naming it and its fields, the
// field types, and every field's type for the tests that check the rows.
func actionsDatasetsGo() ([]byte, error) {
	var b bytes.Buffer
	b.WriteString("// Code generated from services/data/internal/app/catalog.go by go generate ./services/data/internal/app; DO NOT EDIT.\n\n")
	b.WriteString("package datasets\n\n")
	b.WriteString("// Field types of dataset rows, as the data service checks them.\nconst (\n")
	for _, t := range []struct {
		name string
		kind value.Kind
	}{
		{"TString", TString}, {"TNumber", TNumber}, {"TInteger", TInteger}, {"TBoolean", TBoolean}, {"TDate", TDate},
		{"TTimestamp", TTimestamp}, {"TURL", TURL}, {"TUUID", TUUID}, {"TJSON", TJSON},
	} {
		fmt.Fprintf(&b, "\t%s = %q\n", t.name, t.kind.String())
	}
	b.WriteString(")\n")
	for _, r := range Catalog {
		fields := r.AllFields()
		fmt.Fprintf(&b, "\n// %s is the dataset %s: %s.", goName(r.Name), r.Name, r.Description)
		if r.Name == ClientsResource {
			b.WriteString(" Read from the CRM, never written.")
		}
		fmt.Fprintf(&b, "\nvar %s = struct {\n\tResource string\n", goName(r.Name))
		for _, f := range fields {
			if goName(f.Name) == "Resource" {
				return nil, fmt.Errorf("%s.%s is named as the dataset's own name is held (Resource); rename the member in actionsDatasetsGo", r.Name, f.Name)
			}
			req := ""
			if f.Required {
				req = ", required"
			}
			fmt.Fprintf(&b, "\t%s string // %s%s\n", goName(f.Name), f.Type, req)
		}
		fmt.Fprintf(&b, "}{\n\tResource: %q,\n", r.Name)
		for _, f := range fields {
			fmt.Fprintf(&b, "\t%s: %q,\n", goName(f.Name), f.Name)
		}
		b.WriteString("}\n")
	}
	b.WriteString("\n// All is every dataset with every field of its rows, system fields\n// included, in the catalog's order.\nvar All = []Dataset{\n")
	for _, r := range Catalog {
		fmt.Fprintf(&b, "\t{Resource: %q, Fields: []Field{\n", r.Name)
		for _, f := range r.AllFields() {
			fmt.Fprintf(&b, "\t\t{Name: %q, Type: %s, Required: %t},\n", f.Name, goType(f.Type), f.Required)
		}
		b.WriteString("\t}},\n")
	}
	b.WriteString("}\n")
	return format.Source(b.Bytes())
}

// goType names a field type's constant in the generated file.
func goType(t value.Kind) string {
	return map[value.Kind]string{TString: "TString", TNumber: "TNumber", TInteger: "TInteger", TBoolean: "TBoolean", TDate: "TDate",
		TTimestamp: "TTimestamp", TURL: "TURL", TUUID: "TUUID", TJSON: "TJSON"}[t]
}

// TestActionsDatasetsMatchCatalog keeps the actions service's names of the
// datasets and their fields this catalog's, the one statement of them.
func TestActionsDatasetsMatchCatalog(t *testing.T) {
	want, err := actionsDatasetsGo()
	if err != nil {
		t.Fatal(err)
	}
	got, err := os.ReadFile(actionsDatasetsPath)
	if err == nil && bytes.Equal(got, want) {
		return
	}
	if os.Getenv("UPDATE_GENERATED") == "1" {
		if err := os.WriteFile(actionsDatasetsPath, want, 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	t.Fatalf("%s is not generated from the catalog (%v); run go generate ./services/data/internal/app and commit it", strings.TrimPrefix(actionsDatasetsPath, "../../../"), err)
}

func TestGoNames(t *testing.T) {
	for name, want := range map[string]string{"post_title": "PostTitle", "id": "ID", "prospect_url": "ProspectURL", "credits_ai": "CreditsAI",
		"seo_tasks": "SEOTasks", "ai_summaries": "AISummaries", "radius_km": "RadiusKm", "cta": "CTA"} {
		if got := goName(name); got != want {
			t.Errorf("goName(%q) = %q, want %q", name, got, want)
		}
	}
}
