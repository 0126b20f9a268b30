package main

// Content in several languages (docs/collections.md#locales): a site's
// locales and localized fields, as an operator sets them.

import (
	"net/http"
	"slices"
	"testing"

	atrium "github.com/atrium-hq/atrium/sdk/go"
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

	// An item is written in the default locale, then in de: only the
	// localized fields, and only de's values change.
	bread := c.createItem(t, "products", map[string]any{"data": map[string]any{"name": "Bread", "price": 3.5}, "is_published": true})
	item := c.base + "/products/" + bread["id"].(string)
	wantError(t, call(t, "PATCH", item, c.write, map[string]any{"locale": "de", "data": map[string]any{"name": "Brot", "price": 4}}),
		http.StatusBadRequest, "localized fields (name)", "price")
	wantError(t, call(t, "PATCH", item, c.write, map[string]any{"locale": "fr", "data": map[string]any{"name": "Pain"}}),
		http.StatusBadRequest, `"fr"`, "en, de, de-AT")
	r = call(t, "PATCH", item, c.write, map[string]any{"locale": "de", "data": map[string]any{"name": "Brot"}})
	wantStatus(t, r, http.StatusOK)
	if got := r.json["item"].(map[string]any); got["name"] != "Brot" || got["price"] != 3.5 || got["locale"] != "de" {
		t.Fatalf("the de write answers %v", got)
	}
	// Without locale the item is as before: the default's values, and no
	// locale properties.
	r = call(t, "GET", item, c.read, nil)
	wantStatus(t, r, http.StatusOK)
	if got := r.json["item"].(map[string]any); got["name"] != "Bread" || got["locale"] != nil || got["locale_fallbacks"] != nil {
		t.Fatalf("read without locale: %v", got)
	}
	// de-AT falls back to de and says so; fallback=none shows its own
	// values only; * shows every locale's.
	r = call(t, "GET", item+"?locale=de-AT", c.read, nil)
	wantStatus(t, r, http.StatusOK)
	got := r.json["item"].(map[string]any)
	if got["name"] != "Brot" || got["locale"] != "de-AT" || got["locale_fallbacks"].(map[string]any)["name"] != "de" || got["price"] != 3.5 {
		t.Fatalf("read in de-AT: %v", got)
	}
	r = call(t, "GET", item+"?locale=de-AT&fallback=none", c.read, nil)
	wantStatus(t, r, http.StatusOK)
	if got := r.json["item"].(map[string]any); got["name"] != nil {
		t.Fatalf("read in de-AT without fallback: %v", got)
	}
	r = call(t, "GET", item+"?locale=*", c.read, nil)
	wantStatus(t, r, http.StatusOK)
	if got := r.json["item"].(map[string]any)["name"].(map[string]any); got["en"] != "Bread" || got["de"] != "Brot" || len(got) != 2 {
		t.Fatalf("read in every locale: %v", got)
	}
	wantError(t, call(t, "GET", item+"?locale=fr", c.read, nil), http.StatusBadRequest, `"fr"`, "en, de, de-AT")
	wantError(t, call(t, "GET", item+"?locale=de&fallback=sometimes", c.read, nil), http.StatusBadRequest, "fallback must be default or none")
	// The list reads the same way, the rendered page as the typed one.
	r = call(t, "GET", c.base+"/products?locale=de", c.read, nil)
	wantStatus(t, r, http.StatusOK)
	if got := r.json["items"].([]any)[0].(map[string]any); got["name"] != "Brot" || got["locale"] != "de" {
		t.Fatalf("list in de: %v", got)
	}
	wantError(t, call(t, "GET", c.base+"/products?locale=de&order=name", c.read, nil), http.StatusBadRequest, "localized field (name)")
	// The Go SDK reads the same: the locale and its fallbacks apart from
	// the fields, the field marked localized.
	sdk := atrium.New(s.api, c.read, atrium.WithHTTPClient(http.DefaultClient))
	one, err := sdk.Items.GetWith(t.Context(), "products", bread["id"].(string), atrium.ItemGet{Locale: "de-AT"})
	if err != nil || one.Locale != "de-AT" || one.LocaleFallbacks["name"] != "de" || one.Fields["name"] != "Brot" || one.Fields["locale"] != nil {
		t.Fatalf("the SDK's read in de-AT: %+v, %v", one, err)
	}
	page, err := sdk.Items.List(t.Context(), "products", &atrium.ItemQuery{Locale: "de", Fallback: "none"})
	if err != nil || len(page.Items) == 0 || page.Items[0].Locale != "de" || page.Items[0].Fields["name"] != "Brot" {
		t.Fatalf("the SDK's list in de: %+v, %v", page, err)
	}
	if i := slices.IndexFunc(page.Collection.Fields, func(f atrium.Field) bool { return f.Key == "name" }); i < 0 || !page.Collection.Fields[i].Localized {
		t.Fatalf("the SDK's collection does not mark name localized: %+v", page.Collection.Fields)
	}
	// de cannot leave the site while the item holds a value in it.
	wantError(t, s.adminCall(t, "PUT", sitePath+"/locales", map[string]any{"default_locale": "en", "locales": []string{"de-AT"}}),
		http.StatusConflict, "1 items hold values in locale de")
	// Another site's key finds nothing, in any locale.
	wantStatus(t, call(t, "GET", other.base+"/products/"+bread["id"].(string)+"?locale=de", other.read, nil), http.StatusNotFound)
}
