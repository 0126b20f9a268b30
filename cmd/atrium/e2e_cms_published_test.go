package main

// Keys safe to embed in a web page: published_only keys see only
// published items and cannot write.

import (
	"net/http"
	"slices"
	"testing"
)

func testCollectionsPublishedOnly(t *testing.T, s *stack) {
	c, other := s.newCMS(t), s.newCMS(t)
	wantError(t, s.adminCall(t, "POST", "/admin/v1/keys", map[string]any{"name": "page", "scopes": []string{"read", "write"},
		"site_id": c.site, "published_only": true}), http.StatusBadRequest, "published_only", "read")
	r := s.adminCall(t, "POST", "/admin/v1/keys", map[string]any{"name": "page", "scopes": []string{"read"}, "site_id": c.site, "published_only": true})
	wantStatus(t, r, http.StatusCreated)
	k := r.json["key"].(map[string]any)
	if k["published_only"] != true {
		t.Fatalf("created key = %v, want published_only true", k)
	}
	page := k["secret"].(string)

	author := c.createItem(t, "authors", map[string]any{"data": map[string]any{"name": "Ana"}}) // a draft
	live := c.createItem(t, "posts", map[string]any{"is_published": true, "data": map[string]any{"title": "Live", "author": author["id"]}})
	draft := c.createItem(t, "posts", map[string]any{"data": map[string]any{"title": "Draft"}})

	listed := func(query string) []string {
		t.Helper()
		r := call(t, "GET", c.base+"/posts"+query, page, nil)
		wantStatus(t, r, http.StatusOK)
		var out []string
		for _, it := range r.json["items"].([]any) {
			out = append(out, it.(map[string]any)["id"].(string))
		}
		return out
	}
	if got := listed(""); !slices.Equal(got, []string{live["id"].(string)}) {
		t.Fatalf("published-only list = %v, want only the published item", got)
	}
	if got := listed("?is_published=false"); len(got) != 0 {
		t.Fatalf("published-only list of drafts = %v, want none", got)
	}
	wantError(t, call(t, "GET", c.base+"/posts/"+draft["id"].(string), page, nil), http.StatusNotFound)
	r = call(t, "GET", c.base+"/posts/"+live["id"].(string)+"?expand=author", page, nil)
	wantStatus(t, r, http.StatusOK)
	if a := r.json["item"].(map[string]any)["author"]; a != nil {
		t.Fatalf("a draft author expanded for a published-only key: %v", a)
	}
	// The read key of the site still sees the draft.
	wantStatus(t, call(t, "GET", c.base+"/posts/"+draft["id"].(string), c.read, nil), http.StatusOK)
	// Writes are refused, naming why, and change nothing.
	wantError(t, call(t, "POST", c.base+"/posts", page, map[string]any{"data": map[string]any{"title": "Injected"}}), http.StatusForbidden, "published_only")
	wantError(t, call(t, "PATCH", c.base+"/posts/"+live["id"].(string), page, map[string]any{"data": map[string]any{"title": "X"}}), http.StatusForbidden, "published_only")
	wantError(t, call(t, "DELETE", c.base+"/posts/"+live["id"].(string), page, nil), http.StatusForbidden, "published_only")
	if got := call(t, "GET", c.base+"/posts/"+live["id"].(string), c.read, nil); got.json["item"].(map[string]any)["title"] != "Live" {
		t.Fatalf("a refused write changed the item: %s", got)
	}
	// Another site's items stay invisible.
	wantError(t, call(t, "GET", other.base+"/posts/"+live["id"].(string), other.read, nil), http.StatusNotFound)
}
