package main

// Full-text search over HTTP: q on the item list, order=relevance, and the
// search language set through the admin API.

import (
	"net/http"
	"net/url"
	"slices"
	"testing"
)

func testCollectionsSearch(t *testing.T, s *stack) {
	c, other := s.newCMS(t), s.newCMS(t)
	published := true
	loaf := c.createItem(t, "posts", map[string]any{"is_published": published,
		"data": map[string]any{"title": "Sourdough loaf", "body": "<p>Feed the <b>starter</b> daily.</p>"}})
	rye := c.createItem(t, "posts", map[string]any{"data": map[string]any{"title": "Rye bread", "body": "Starter, starter and STARTER"}})
	c.createItem(t, "posts", map[string]any{"data": map[string]any{"title": "Baguette", "body": `<a href="starter">crust</a>`, "contact": "starter@example.com"}})
	other.createItem(t, "posts", map[string]any{"data": map[string]any{"title": "starter of another site"}})
	search := func(query string) []string {
		t.Helper()
		r := call(t, "GET", c.base+"/posts?"+query, c.read, nil)
		wantStatus(t, r, http.StatusOK)
		var out []string
		for _, it := range r.json["items"].([]any) {
			out = append(out, it.(map[string]any)["id"].(string))
		}
		return out
	}
	id := func(it map[string]any) string { return it["id"].(string) }
	for query, want := range map[string][]string{
		"q=starter":                                  {id(rye), id(loaf)},
		"q=" + url.QueryEscape("STARTER rye"):        {id(rye)},
		"q=starter&order=relevance&direction=desc":   {id(rye), id(loaf)},
		"q=starter&order=relevance&limit=1&offset=1": {id(loaf)},
		"q=starter&is_published=true":                {id(loaf)},
		"q=starter&filter_field=title&filter_value=" + url.QueryEscape("Rye bread"): {id(rye)},
		"q=example":   nil,
		"q=croissant": nil,
	} {
		if got := search(query); !slices.Equal(got, want) {
			t.Errorf("GET posts?%s = %v, want %v", query, got, want)
		}
	}
	wantError(t, call(t, "GET", c.base+"/posts?q=%21%21", c.read, nil), http.StatusBadRequest, "q", "word")
	wantError(t, call(t, "GET", c.base+"/posts?order=relevance", c.read, nil), http.StatusBadRequest, "relevance", "q")
	wantError(t, call(t, "GET", c.base+"/posts?order=nope&q=starter", c.read, nil), http.StatusBadRequest, "relevance")

	// The language is the collection's, set through the admin API
	// (stemming is PostgreSQL's: the postgres store's tests check it; the
	// memory store matches the words as written in every language).
	admin := "/admin/v1/sites/" + c.site + "/collections"
	wantError(t, s.adminCall(t, "POST", admin, map[string]any{"name": "Notes", "slug": "notes", "search_language": "klingon",
		"fields": []map[string]any{{"key": "text", "type": "text"}}}), http.StatusBadRequest, "search_language", "english", "simple")
	notes := s.create(t, admin, "collection", map[string]any{"name": "Notes", "slug": "notes", "search_language": "english",
		"fields": []map[string]any{{"key": "text", "type": "text"}}})
	if notes["search_language"] != "english" {
		t.Fatalf("created collection = %v, want search_language english", notes)
	}
	c.createItem(t, "notes", map[string]any{"data": map[string]any{"text": "She bakes bread"}})
	count := func() int {
		r := call(t, "GET", c.base+"/notes?q=bakes", c.read, nil)
		wantStatus(t, r, http.StatusOK)
		return len(r.json["items"].([]any))
	}
	if n := count(); n != 1 {
		t.Fatalf("english q=bakes found %d items, want 1", n)
	}
	r := s.adminCall(t, "PATCH", admin+"/notes", map[string]any{"search_language": "simple"})
	wantStatus(t, r, http.StatusOK)
	if lang := r.json["collection"].(map[string]any)["search_language"]; lang != "simple" || count() != 1 {
		t.Fatalf("after PATCH search_language=simple: language %v, q=bakes found %d; want simple and 1", lang, count())
	}
}
