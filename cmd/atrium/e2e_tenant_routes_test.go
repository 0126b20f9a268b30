package main

import (
	"net/http"
	"slices"
	"testing"
	"time"
)

// testTenantSchemaRoutes: an agency reads its own sites (GET
// /api/v1/sites) and clients (GET /api/v1/clients), by name, never
// another agency's; its owner defines a site's collections through the
// public API (the schema routes), which the site's keys then use, and the
// trail names the owner; another agency's site is refused in Atrium-Site,
// and another agency's key does not find the collection.
func testTenantSchemaRoutes(t *testing.T, s *stack) {
	a, b := s.auditTenant(t), s.auditTenant(t)
	// "Alpha shop" comes before a's first site, "Site", by name.
	alpha := s.create(t, "/admin/v1/sites", "site", map[string]any{"name": "Alpha shop", "agency_id": a.agency})["id"].(string)
	siteIDs := func(key string) []string {
		t.Helper()
		r := call(t, "GET", s.api+"/api/v1/sites", key, nil)
		wantStatus(t, r, http.StatusOK)
		var out []string
		for _, v := range r.json["sites"].([]any) {
			out = append(out, v.(map[string]any)["id"].(string))
		}
		return out
	}
	if got, want := siteIDs(a.read), []string{alpha, a.site}; !slices.Equal(got, want) {
		t.Fatalf("agency a's sites = %v, want %v (by name)", got, want)
	}
	if got := siteIDs(b.read); !slices.Equal(got, []string{b.site}) {
		t.Fatalf("agency b's sites = %v, want only %s", got, b.site)
	}

	// Clients: made out of name order, one linked to both agencies.
	client := func(name string, agencies ...string) string {
		t.Helper()
		id := s.create(t, "/admin/v1/clients", "client", map[string]any{"name": name, "domain": "tenant-routes.example"})["id"].(string)
		for _, ag := range agencies {
			wantStatus(t, s.adminCall(t, "PUT", "/admin/v1/agencies/"+ag+"/clients/"+id, nil), http.StatusOK)
		}
		return id
	}
	zulu, both, onlyB := client("Zulu Bakery", a.agency), client("Bakery of both", a.agency, b.agency), client("B's", b.agency)
	clientIDs := func(r response) []string {
		t.Helper()
		wantStatus(t, r, http.StatusOK)
		var out []string
		for _, v := range r.json["clients"].([]any) {
			out = append(out, v.(map[string]any)["id"].(string))
		}
		return out
	}
	if got, want := clientIDs(call(t, "GET", s.api+"/api/v1/clients", a.read, nil)), []string{both, zulu}; !slices.Equal(got, want) {
		t.Fatalf("agency a's clients = %v, want %v (by name)", got, want)
	}
	if got, want := clientIDs(call(t, "GET", s.api+"/api/v1/clients", b.read, nil)), []string{onlyB, both}; !slices.Equal(got, want) {
		t.Fatalf("agency b's clients = %v, want %v", got, want)
	}

	// The owner, signed in, defines a collection of a's site.
	owner := s.signedInOwner(t, a.agency)
	if got := clientIDs(owner.do(t, "GET", "/api/v1/clients", nil)); !slices.Equal(got, []string{both, zulu}) {
		t.Fatalf("the owner's clients = %v", got)
	}
	r := owner.do(t, "POST", "/api/public/v1/schema/collections", map[string]any{"name": "Recipes", "slug": "recipes",
		"fields": []map[string]any{{"key": "title", "type": "text", "required": true}}}, "Atrium-Site", a.site)
	wantStatus(t, r, http.StatusCreated)
	created := r.json["collection"].(map[string]any)
	if created["slug"] != "recipes" || created["search_language"] != "simple" || created["is_system"] != false {
		t.Fatalf("created %s", r.body)
	}
	r = owner.do(t, "PATCH", "/api/public/v1/schema/collections/recipes", map[string]any{"add_fields": []map[string]any{{"key": "serves", "type": "integer"}}},
		"Atrium-Site", a.site)
	wantStatus(t, r, http.StatusOK)
	if fields := r.json["collection"].(map[string]any)["fields"].([]any); len(fields) != 2 {
		t.Fatalf("updated %s; want two fields", r.body)
	}
	r = owner.do(t, "GET", "/api/public/v1/schema/collections", nil, "Atrium-Site", a.site)
	wantStatus(t, r, http.StatusOK)
	if cs := r.json["collections"].([]any); len(cs) != 1 || cs[0].(map[string]any)["slug"] != "recipes" {
		t.Fatalf("a's schema: %s", r.body)
	}
	// The site's keys use it at once, with the new field.
	wantStatus(t, call(t, "POST", s.api+"/api/public/v1/collections/recipes", a.write, map[string]any{"data": map[string]any{"title": "Rye", "serves": 4}}),
		http.StatusCreated)
	// The admin API's rules: a taken slug.
	wantStatus(t, owner.do(t, "POST", "/api/public/v1/schema/collections", map[string]any{"name": "Again", "slug": "recipes"}, "Atrium-Site", a.site),
		http.StatusConflict)

	// Another agency's site: refused in the header; its key finds nothing.
	r = owner.do(t, "POST", "/api/public/v1/schema/collections", map[string]any{"name": "Theirs", "slug": "theirs"}, "Atrium-Site", b.site)
	wantStatus(t, r, http.StatusForbidden)
	wantStatus(t, call(t, "PATCH", s.api+"/api/public/v1/schema/collections/recipes", b.write, map[string]any{"name": "Taken"}), http.StatusNotFound)
	r = call(t, "GET", s.api+"/api/public/v1/schema/collections", b.read, nil)
	wantStatus(t, r, http.StatusOK)
	if cs := r.json["collections"].([]any); len(cs) != 0 {
		t.Fatalf("agency b's site shows %s", r.body)
	}

	// The trail names the owner for the create and the update (and
	// nothing for the refused writes).
	var recs []map[string]any
	eventually(t, 30*time.Second, func() bool {
		recs = auditEvents(t, owner.trail(t, "resource_type=collection"))
		return len(recs) >= 2
	})
	if got := auditActions(recs); !slices.Equal(got, []string{"collection.updated", "collection.created"}) {
		t.Fatalf("the trail's collection records: %v; want the update and the create, newest first", got)
	}
	for _, rec := range recs {
		if actor := rec["actor"].(map[string]any); actor["kind"] != "user" || actor["member_id"] == nil || rec["site_id"] != a.site {
			t.Fatalf("audit record %v; want the owner (a user with a member id) on site %s", rec, a.site)
		}
	}
}
