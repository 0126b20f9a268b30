package app

import (
	"bytes"
	"encoding/json"
	"os"
	"strings"
	"testing"
)

// The gateway's OpenAPI document states each dataset's row shape and the
// order and filter fields each offers. The gateway cannot import this
// module, so the catalog is generated into it as JSON (as it is into the
// actions service as Go: actions_datasets_test.go): TestOpenAPIDatasets
// fails while the gateway's copy differs, and rewrites it under
// UPDATE_GENERATED=1, which go generate runs.

//go:generate env UPDATE_GENERATED=1 go test -count=1 -run TestOpenAPIDatasets .

const openAPIDatasetsPath = "../../../../gateway/openapi/catalog/datasets.json"

// openAPIDataset is one dataset as the gateway's document builder reads it.
type openAPIDataset struct {
	Name        string   `json:"name"`
	Description string   `json:"description"`
	BeyondSpec  bool     `json:"beyond_spec,omitempty"`
	Orders      []string `json:"orders"`
	Filters     []string `json:"filters"`
	// Row is the JSON Schema (2020-12) of a row as the read returns it:
	// every field present, null when it has no value (a field required on
	// write always has one), and no other field.
	Row map[string]any `json:"row"`
	// NewRow is the schema of a row as a write takes it: the fields
	// required on write, any other of the resource's (null is no value),
	// id, created_at and updated_at filled in when absent.
	NewRow map[string]any `json:"new_row"`
}

// rowSchema is the JSON Schema of one field's value in a read row.
func rowSchema(f Field) map[string]any {
	s := map[string]any{}
	switch f.Type {
	case TString:
		s["type"], s["maxLength"] = "string", maxText
	case TNumber:
		s["type"] = "number"
	case TInteger:
		s["type"] = "integer"
	case TBoolean:
		s["type"] = "boolean"
	case TDate:
		s["type"], s["format"] = "string", "date"
	case TTimestamp:
		s["type"], s["format"] = "string", "date-time"
	case TURL:
		s["type"], s["format"] = "string", "uri"
	case TUUID:
		s["type"], s["format"] = "string", "uuid"
	case TJSON:
		// Any JSON value as written: an object, array, string, number or
		// boolean (null when absent, like every field).
		s["description"] = "Any JSON value, as the record holds it."
		if !f.Required {
			return s
		}
		s["type"] = []string{"object", "array", "string", "number", "boolean"}
		return s
	}
	if !f.Required && f.Name != "id" && f.Name != "created_at" && f.Name != "updated_at" {
		s["type"] = []any{s["type"], "null"}
	}
	return s
}

func openAPIDatasetsJSON() ([]byte, error) {
	out := make([]openAPIDataset, 0, len(Catalog))
	for _, r := range Catalog {
		props, newProps := map[string]any{}, map[string]any{}
		var required, newRequired []string
		for _, f := range r.AllFields() {
			props[f.Name] = rowSchema(f)
			required = append(required, f.Name)
			w := rowSchema(f)
			if f.Required {
				newRequired = append(newRequired, f.Name)
			} else if t, ok := w["type"].(string); ok {
				w["type"] = []any{t, "null"}
			}
			newProps[f.Name] = w
		}
		row := map[string]any{
			"type":                 "object",
			"description":          r.Description + ".",
			"properties":           props,
			"required":             required,
			"additionalProperties": false,
		}
		newRow := map[string]any{
			"type":                 "object",
			"description":          "A row of " + r.Name + " to write.",
			"properties":           newProps,
			"required":             nonNil(newRequired),
			"additionalProperties": false,
		}
		out = append(out, openAPIDataset{Name: r.Name, Description: r.Description, BeyondSpec: r.BeyondSpec,
			Orders: nonNil(r.Orders()), Filters: nonNil(r.Filters()), Row: row, NewRow: newRow})
	}
	b, err := json.MarshalIndent(map[string]any{
		"comment":  "Generated from services/data/internal/app/catalog.go by go generate ./services/data/internal/app; DO NOT EDIT.",
		"datasets": out,
	}, "", "  ")
	return append(b, '\n'), err
}

func nonNil(s []string) []string {
	if s == nil {
		return []string{}
	}
	return s
}

// TestOpenAPIDatasets keeps the gateway's copy of the catalog this one.
func TestOpenAPIDatasets(t *testing.T) {
	want, err := openAPIDatasetsJSON()
	if err != nil {
		t.Fatal(err)
	}
	got, err := os.ReadFile(openAPIDatasetsPath)
	if err == nil && bytes.Equal(got, want) {
		return
	}
	if os.Getenv("UPDATE_GENERATED") == "1" {
		if err := os.WriteFile(openAPIDatasetsPath, want, 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	t.Fatalf("%s is not generated from the catalog (%v); run go generate ./services/data/internal/app and commit it", strings.TrimPrefix(openAPIDatasetsPath, "../../../../"), err)
}
