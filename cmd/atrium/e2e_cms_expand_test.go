package main

// Expanding references over HTTP: expand on the item list and get.

import (
	"net/http"
	"testing"
)

func testCollectionsExpand(t *testing.T, s *stack) {
	c, other := s.newCMS(t), s.newCMS(t)
	ana := c.createItem(t, "authors", map[string]any{"data": map[string]any{"name": "Ana"}})
	bo := c.createItem(t, "authors", map[string]any{"data": map[string]any{"name": "Bo"}})
	first := c.createItem(t, "posts", map[string]any{"data": map[string]any{"title": "First", "author": ana["id"]}})
	second := c.createItem(t, "posts", map[string]any{"data": map[string]any{"title": "Second", "author": bo["id"]}})
	c.createItem(t, "posts", map[string]any{"data": map[string]any{"title": "Anonymous"}})
	wantStatus(t, call(t, "DELETE", c.base+"/authors/"+bo["id"].(string), c.write, nil), http.StatusOK)

	r := call(t, "GET", c.base+"/posts?expand=author", c.read, nil)
	wantStatus(t, r, http.StatusOK)
	byTitle := map[string]any{}
	for _, it := range r.json["items"].([]any) {
		it := it.(map[string]any)
		byTitle[it["title"].(string)] = it["author"]
	}
	if a, ok := byTitle["First"].(map[string]any); !ok || a["name"] != "Ana" || a["id"] != ana["id"] {
		t.Fatalf("First's author = %v, want Ana's item", byTitle["First"])
	}
	if byTitle["Second"] != nil || byTitle["Anonymous"] != nil {
		t.Fatalf("a deleted author and no author = %v, %v; want null", byTitle["Second"], byTitle["Anonymous"])
	}
	r = call(t, "GET", c.base+"/posts/"+first["id"].(string)+"?expand=author", c.read, nil)
	wantStatus(t, r, http.StatusOK)
	if a, ok := r.json["item"].(map[string]any)["author"].(map[string]any); !ok || a["name"] != "Ana" {
		t.Fatalf("get with expand = %s, want Ana expanded", r.body)
	}
	// Without expand the id stays.
	r = call(t, "GET", c.base+"/posts/"+second["id"].(string), c.read, nil)
	if r.json["item"].(map[string]any)["author"] != bo["id"] {
		t.Fatalf("get without expand = %s, want the author's id", r.body)
	}
	wantError(t, call(t, "GET", c.base+"/posts?expand=title", c.read, nil), http.StatusBadRequest, "title", "Expandable: author")
	wantError(t, call(t, "GET", c.base+"/posts?expand=author.name", c.read, nil), http.StatusBadRequest, "name", "authors")
	wantError(t, call(t, "GET", c.base+"/posts?expand=author,author.a.b.c", c.read, nil), http.StatusBadRequest, "at most 3")
	// Another site's item is not found, expand or not.
	wantError(t, call(t, "GET", other.base+"/posts/"+first["id"].(string)+"?expand=author", other.read, nil), http.StatusNotFound)
}
