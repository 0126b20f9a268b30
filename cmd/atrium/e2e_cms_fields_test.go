package main

// The item list's field projection over HTTP: fields on the item list.

import (
	"net/http"
	"strings"
	"testing"
)

func testCollectionsFields(t *testing.T, s *stack) {
	c, other := s.newCMS(t), s.newCMS(t)
	ana := c.createItem(t, "authors", map[string]any{"data": map[string]any{"name": "Ana"}})
	c.createItem(t, "posts", map[string]any{"data": map[string]any{"title": "Bread", "body": "<p>" + strings.Repeat("Long. ", 200) + "</p>",
		"rating": 4.5, "author": ana["id"]}})

	r := call(t, "GET", c.base+"/posts?fields=title,rating", c.read, nil)
	wantStatus(t, r, http.StatusOK)
	items := r.json["items"].([]any)
	if len(items) != 1 {
		t.Fatalf("fields=title,rating listed %s", r.body)
	}
	it := items[0].(map[string]any)
	wantKeys(t, it, "id", "is_published", "publish_at", "unpublish_at", "created_at", "updated_at", "title", "rating")
	if it["title"] != "Bread" || it["rating"] != 4.5 {
		t.Fatalf("projected item = %v", it)
	}
	if fields := r.json["collection"].(map[string]any)["fields"].([]any); len(fields) != len(postsFields) {
		t.Fatalf("the collection lost fields under a projection: %v", fields)
	}
	// expand's fields are kept (and expanded); a filter on a field left
	// out still applies.
	r = call(t, "GET", c.base+"/posts?fields=title&expand=author&filter_field=rating&filter_value=4.5", c.read, nil)
	wantStatus(t, r, http.StatusOK)
	it = r.json["items"].([]any)[0].(map[string]any)
	if a, ok := it["author"].(map[string]any); !ok || a["name"] != "Ana" || it["rating"] != nil {
		t.Fatalf("fields=title&expand=author = %v, want the author expanded and no rating", it)
	}
	wantError(t, call(t, "GET", c.base+"/posts?fields=title,summary", c.read, nil), http.StatusBadRequest, `"summary"`, "Allowed: title, body")
	wantError(t, call(t, "GET", c.base+"/posts?fields="+strings.Repeat("title,", 201), c.read, nil), http.StatusBadRequest, "at most 200")
	// Another site's collection is not found, whatever fields names.
	r = call(t, "GET", other.base+"/posts?fields=title", other.read, nil)
	wantStatus(t, r, http.StatusOK)
	if n := len(r.json["items"].([]any)); n != 0 {
		t.Fatalf("another site's list holds %d items", n)
	}
}
