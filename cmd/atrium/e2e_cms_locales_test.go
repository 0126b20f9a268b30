package main

// Content in several languages (docs/collections.md#locales): a site's
// locales and localized fields, as an operator sets them.

import (
	"net/http"
	"slices"
	"testing"
)

func testCollectionsLocales(t *testing.T, s *stack) {
	c := s.newCMS(t)
	other := s.newCMS(t)
	sitePath := "/admin/v1/sites/" + c.site
	locales := func(r response) (string, []string) {
		t.Helper()
		site := r.json["site"].(map[string]any)
		var tags []string
		for _, l := range site["locales"].([]any) {
			tags = append(tags, l.(string))
		}
		return site["default_locale"].(string), tags
	}
	// A site starts in en alone: nothing changes for one locale.
	r := s.adminCall(t, "GET", sitePath, nil)
	wantStatus(t, r, http.StatusOK)
	if def, tags := locales(r); def != "en" || !slices.Equal(tags, []string{"en"}) {
		t.Fatalf("a new site's locales: %q %v, want en alone", def, tags)
	}

	// Tags are checked, each refusal naming the tag and the form.
	for _, bad := range []map[string]any{
		{"default_locale": "english", "locales": []string{"de"}},
		{"default_locale": "en", "locales": []string{"de", "de_AT"}},
		{"locales": []string{"de"}},
	} {
		wantError(t, s.adminCall(t, "PUT", sitePath+"/locales", bad), http.StatusBadRequest, "BCP 47")
	}
	// Any case is accepted and stored canonical, the default first.
	r = s.adminCall(t, "PUT", sitePath+"/locales", map[string]any{"default_locale": "en", "locales": []string{"de", "DE-at", "en"}})
	wantStatus(t, r, http.StatusOK)
	if def, tags := locales(r); def != "en" || !slices.Equal(tags, []string{"en", "de", "de-AT"}) {
		t.Fatalf("after PUT: %q %v, want en, de, de-AT", def, tags)
	}
	if def, tags := locales(s.adminCall(t, "GET", sitePath, nil)); def != "en" || len(tags) != 3 {
		t.Fatalf("read back: %q %v", def, tags)
	}
	// Another site is untouched, and an unknown one is 404.
	if def, tags := locales(s.adminCall(t, "GET", "/admin/v1/sites/"+other.site, nil)); def != "en" || len(tags) != 1 {
		t.Fatalf("another site's locales changed: %q %v", def, tags)
	}
	wantError(t, s.adminCall(t, "PUT", "/admin/v1/sites/0190b7a8-3c1e-7d2f-9a4b-0000000000ff/locales", map[string]any{"default_locale": "en"}),
		http.StatusNotFound, "0190b7a8-3c1e-7d2f-9a4b-0000000000ff")

	// Text fields may be localized, and the collection says so; other
	// types are refused naming those that may.
	cols := sitePath + "/collections"
	wantError(t, s.adminCall(t, "POST", cols, map[string]any{"name": "Products", "slug": "products",
		"fields": []map[string]any{{"key": "price", "type": "number", "localized": true}}}), http.StatusBadRequest, "only text and rich_text", "number")
	s.create(t, cols, "collection", map[string]any{"name": "Products", "slug": "products",
		"fields": []map[string]any{{"key": "name", "type": "text", "required": true, "localized": true}, {"key": "price", "type": "number"}}})
	r = call(t, "GET", c.base+"/products", c.read, nil)
	wantStatus(t, r, http.StatusOK)
	fields := r.json["collection"].(map[string]any)["fields"].([]any)
	if fields[0].(map[string]any)["localized"] != true {
		t.Fatalf("a localized field reads as %v", fields[0])
	}
	if _, shown := fields[1].(map[string]any)["localized"]; shown {
		t.Fatalf("a field that is not localized shows localized: %v", fields[1])
	}
}
