package openapi

import (
	"encoding/json"
	"slices"
	"strings"
	"testing"
)

func load(t *testing.T, doc func(string) (Doc, error)) map[string]any {
	t.Helper()
	d, err := doc("test")
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(string(d.JSON), "rendered_json") {
		t.Fatal("the document shows rendered_json, which is internal to the gateway and the services")
	}
	var out map[string]any
	if err := json.Unmarshal(d.JSON, &out); err != nil {
		t.Fatal(err)
	}
	return out
}

func dig(t *testing.T, v any, path ...string) any {
	t.Helper()
	for _, p := range path {
		m, ok := v.(map[string]any)
		if !ok {
			t.Fatalf("%s: not an object at %q", strings.Join(path, "."), p)
		}
		v = m[p]
	}
	return v
}

func strs(v any) []string {
	var out []string
	for _, s := range v.([]any) {
		out = append(out, s.(string))
	}
	return out
}

func TestSchemasSayWhatTheAPIChecks(t *testing.T) {
	pub := load(t, Public)
	prospect := dig(t, pub, "definitions", "v1Prospect")
	if got := strs(dig(t, prospect, "properties", "pipeline_stage", "enum")); !slices.Equal(got,
		[]string{"new", "contacted", "qualified", "proposal_sent", "negotiation", "won", "lost"}) {
		t.Fatalf("pipeline_stage enum = %v", got)
	}
	if f := dig(t, prospect, "properties", "id", "format"); f != "uuid" {
		t.Fatalf("prospect id format = %v, want uuid", f)
	}
	if f := dig(t, prospect, "properties", "created_at", "format"); f != "date-time" {
		t.Fatalf("created_at format = %v, want date-time", f)
	}
	if req := strs(dig(t, prospect, "required")); len(req) != 10 {
		t.Fatalf("prospect required = %v, want all 10 fields (every one is always in the JSON)", req)
	}
	deal := dig(t, pub, "definitions", "v1Deal")
	if f := dig(t, deal, "properties", "expected_close_date", "format"); f != "date" {
		t.Fatalf("expected_close_date format = %v, want date", f)
	}
	if got := strs(dig(t, deal, "properties", "stage", "enum")); len(got) != 6 || got[0] != "lead" {
		t.Fatalf("deal stage enum = %v", got)
	}

	admin := load(t, Admin)
	createKey := dig(t, admin, "definitions", "v1CreateKeyRequest")
	if got := strs(dig(t, createKey, "required")); !slices.Equal(got, []string{"name", "scopes"}) {
		t.Fatalf("create key required = %v", got)
	}
	if got := strs(dig(t, createKey, "properties", "scopes", "items", "enum")); !slices.Equal(got, []string{"read", "write"}) {
		t.Fatalf("scopes enum = %v", got)
	}
	if req := strs(dig(t, admin, "definitions", "v1APIKey", "required")); slices.Contains(req, "secret") || !slices.Contains(req, "site_id") {
		t.Fatalf("API key required = %v: secret is present only at creation, site_id always (null when unset)", req)
	}
}

func TestEveryRouteListsItsErrors(t *testing.T) {
	pub := load(t, Public)
	list := dig(t, pub, "paths", "/api/v1/prospects", "get", "responses").(map[string]any)
	for _, code := range []string{"200", "400", "401", "403", "429", "500", "503"} {
		if _, ok := list[code]; !ok {
			t.Errorf("GET /api/v1/prospects does not document %s", code)
		}
	}
	if _, ok := list["404"]; ok {
		t.Error("GET /api/v1/prospects documents 404 but names no object in its path")
	}
	patch := dig(t, pub, "paths", "/api/public/v1/collections/{collection_slug}/{item_id}", "patch", "responses").(map[string]any)
	for _, code := range []string{"200", "400", "403", "404", "412", "413"} {
		if _, ok := patch[code]; !ok {
			t.Errorf("PATCH of an item does not document %s", code)
		}
	}
	admin := load(t, Admin)
	create := dig(t, admin, "paths", "/admin/v1/keys", "post", "responses").(map[string]any)
	for _, code := range []string{"201", "400", "401", "413", "503"} {
		if _, ok := create[code]; !ok {
			t.Errorf("POST /admin/v1/keys does not document %s", code)
		}
	}
	if _, ok := create["429"]; ok {
		t.Error("POST /admin/v1/keys documents 429, but the admin API is not rate limited")
	}
	if ref := dig(t, create, "400", "schema", "$ref"); ref != "#/definitions/Error" {
		t.Errorf("400 schema = %v, want the error body", ref)
	}
	revoke := dig(t, admin, "paths", "/admin/v1/keys/{key_id}", "delete").(map[string]any)
	if _, ok := revoke["responses"].(map[string]any)["404"]; !ok {
		t.Error("DELETE /admin/v1/keys/{key_id} does not document 404")
	}
	if f := dig(t, revoke["parameters"].([]any)[0], "format"); f != "uuid" {
		t.Errorf("key_id format = %v, want uuid", f)
	}
}
