package catalog

import (
	"bytes"
	"encoding/json"
	"maps"
	"os"
	"strings"
	"testing"
)

// The gateway's OpenAPI document makes the action request a oneOf of one
// schema per action, each this catalog's InputSchema, with its cost and
// example. The gateway cannot import this module, so the catalog is
// generated into it as JSON: TestOpenAPIActions fails while the gateway's
// copy differs, and rewrites it under UPDATE_GENERATED=1, which go
// generate (make generate) runs.

//go:generate env UPDATE_GENERATED=1 go test -count=1 -run TestOpenAPIActions .

const openAPIActionsPath = "../../../../../gateway/openapi/catalog/actions.json"

type openAPIAction struct {
	Name           string           `json:"name"`
	Description    string           `json:"description"`
	Cost           map[string]int64 `json:"cost"`
	Writes         string           `json:"writes"`
	Refreshes      bool             `json:"refreshes"`
	TypicalSeconds float64          `json:"typical_seconds"`
	InputSchema    map[string]any   `json:"input_schema"`
	Example        map[string]any   `json:"example"`
}

func openAPIActionsJSON() ([]byte, error) {
	out := make([]openAPIAction, 0, len(catalog))
	for _, a := range All() {
		ex := maps.Clone(a.Example)
		ex["action"], ex["client_id"] = a.Name, "0190b7a8-3c1e-7d2f-9a4b-5c6d7e8f9a0b"
		out = append(out, openAPIAction{Name: a.Name, Description: a.Description,
			Cost:   map[string]int64{"ai": a.Cost.AI, "data": a.Cost.Data},
			Writes: a.Writes, Refreshes: a.Refreshes, TypicalSeconds: a.TypicalSeconds,
			InputSchema: InputSchema(a), Example: ex})
	}
	b, err := json.MarshalIndent(map[string]any{
		"comment": "Generated from services/actions/internal/app/catalog by go generate ./services/actions/internal/app/catalog; DO NOT EDIT.",
		"actions": out,
	}, "", "  ")
	return append(b, '\n'), err
}

// TestOpenAPIActions keeps the gateway's copy of the catalog this one.
func TestOpenAPIActions(t *testing.T) {
	want, err := openAPIActionsJSON()
	if err != nil {
		t.Fatal(err)
	}
	got, err := os.ReadFile(openAPIActionsPath)
	if err == nil && bytes.Equal(got, want) {
		return
	}
	if os.Getenv("UPDATE_GENERATED") == "1" {
		if err := os.WriteFile(openAPIActionsPath, want, 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	t.Fatalf("%s is not generated from the catalog (%v); run go generate ./services/actions/internal/app/catalog and commit it", strings.TrimPrefix(openAPIActionsPath, "../../../../../"), err)
}
