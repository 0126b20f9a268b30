package main

// Revisions of items over HTTP: an item edited three times lists its four
// revisions newest first, one is read, one restored (a new version with
// the old data, announced and delivered as an update), If-Match guards
// the restore; published-only keys and other sites' keys reach none of
// it; a deleted item is restored from its revisions.

import (
	"fmt"
	"net/http"
	"slices"
	"testing"
)

func testCollectionsRevisions(t *testing.T, s *stack) {
	c := s.newCMS(t)
	rx := newHookReceiver(t)
	s.register(t, c.write, rx.URL+"/site", "item.created", "item.updated", "item.deleted")

	id := c.createItem(t, "posts", map[string]any{"data": map[string]any{"title": "First", "views": 1}})["id"].(string)
	item := c.base + "/posts/" + id
	for i, title := range []string{"Second", "Third", "Fourth"} {
		r := call(t, "PATCH", item, c.write, map[string]any{"data": map[string]any{"title": title, "views": i + 2}})
		wantStatus(t, r, http.StatusOK)
	}

	// Four revisions, newest first, each the item's whole data then.
	r := call(t, "GET", item+"/revisions", c.read, nil)
	wantStatus(t, r, http.StatusOK)
	// next_cursor is absent on the last page, as in every cursor list.
	wantKeys(t, r.json, "revisions")
	if r.json["next_cursor"] != nil {
		t.Fatalf("one page of four revisions has next_cursor %v", r.json["next_cursor"])
	}
	revs := r.json["revisions"].([]any)
	var got []string
	for _, v := range revs {
		rev := v.(map[string]any)
		wantKeys(t, rev, "version", "data", "is_published", "change", "actor", "created_at")
		wantTimestamp(t, rev, "created_at")
		data := rev["data"].(map[string]any)
		got = append(got, fmt.Sprintf("%v:%v:%v:%v", rev["version"], rev["change"], data["title"], data["views"]))
		actor := rev["actor"].(map[string]any)
		wantKeys(t, actor, "kind", "id", "member_id")
		if actor["kind"] != "key" || actor["id"] == "" || actor["member_id"] != nil {
			t.Fatalf("revision actor %v, want the write key", actor)
		}
	}
	if want := []string{"4:updated:Fourth:4", "3:updated:Third:3", "2:updated:Second:2", "1:created:First:1"}; !slices.Equal(got, want) {
		t.Fatalf("revisions %v, want %v", got, want)
	}
	// Pages of two, through next_cursor.
	r = call(t, "GET", item+"/revisions?limit=2", c.read, nil)
	wantStatus(t, r, http.StatusOK)
	cursor, _ := r.json["next_cursor"].(string)
	if n := len(r.json["revisions"].([]any)); n != 2 || cursor == "" {
		t.Fatalf("limit=2 gave %d revisions and next_cursor %q", n, cursor)
	}
	r = call(t, "GET", item+"/revisions?limit=2&cursor="+cursor, c.read, nil)
	wantStatus(t, r, http.StatusOK)
	if revs := r.json["revisions"].([]any); len(revs) != 2 || revs[1].(map[string]any)["version"] != float64(1) || r.json["next_cursor"] != nil {
		t.Fatalf("the second page = %s, want versions 2 and 1 and no next_cursor", r)
	}
	wantError(t, call(t, "GET", item+"/revisions?limit=101", c.read, nil), http.StatusBadRequest, "limit must be an integer from 1 to 100")

	// One revision.
	r = call(t, "GET", item+"/revisions/2", c.read, nil)
	wantStatus(t, r, http.StatusOK)
	if rev := r.json["revision"].(map[string]any); rev["version"] != float64(2) || rev["data"].(map[string]any)["title"] != "Second" {
		t.Fatalf("revision 2 = %s", r)
	}
	wantError(t, call(t, "GET", item+"/revisions/9", c.read, nil), http.StatusNotFound, "revision", "not found")
	wantError(t, call(t, "GET", item+"/revisions/two", c.read, nil), http.StatusNotFound, "revision", "not found")

	// Restore: a stale If-Match changes nothing; the current one makes
	// version 5 with revision 1's data, answered as an update is.
	wantError(t, call(t, "POST", item+"/revisions/1/restore", c.write, nil, "If-Match", `"3"`), http.StatusPreconditionFailed, "has changed", "If-Match")
	wantError(t, call(t, "POST", item+"/revisions/1/restore", c.read, nil), http.StatusForbidden, "write")
	r = call(t, "POST", item+"/revisions/1/restore", c.write, nil, "If-Match", `"4"`)
	wantStatus(t, r, http.StatusOK)
	restored := r.json["item"].(map[string]any)
	if r.header.Get("ETag") != `"5"` || restored["title"] != "First" || restored["views"] != float64(1) || restored["id"] != id {
		t.Fatalf("restore = %s (ETag %s), want revision 1's data as version 5", r, r.header.Get("ETag"))
	}
	if got := call(t, "GET", item, c.read, nil); got.json["item"].(map[string]any)["title"] != "First" || got.header.Get("ETag") != `"5"` {
		t.Fatalf("the item after the restore: %s (ETag %s)", got, got.header.Get("ETag"))
	}
	r = call(t, "GET", item+"/revisions?limit=1", c.read, nil)
	if rev := r.json["revisions"].([]any)[0].(map[string]any); rev["version"] != float64(5) || rev["change"] != "restored" {
		t.Fatalf("newest revision after the restore: %v", rev)
	}
	// Delivered as an update: three PATCHes and the restore.
	hooks := rx.waitCounts(t, map[string]int{"item.created": 1, "item.updated": 4})
	if !slices.ContainsFunc(hooks, func(h hook) bool {
		return h.typ() == "item.updated" && h.data()["id"] == id && h.data()["version"] == float64(5)
	}) {
		t.Fatalf("deliveries %v: none is the restore's item.updated of version 5", typesOf(hooks))
	}

	// A published-only key reaches none of the revision routes; another
	// site's key finds no such item.
	page := s.newKey(t, map[string]any{"scopes": []string{"read"}, "site_id": c.site, "agency_id": c.agency, "published_only": true})
	other := s.newCMS(t)
	routes := [][2]string{{"GET", item + "/revisions"}, {"GET", item + "/revisions/1"}, {"POST", item + "/revisions/1/restore"}}
	for _, rt := range routes {
		wantError(t, call(t, rt[0], rt[1], page, nil), http.StatusForbidden, "published_only")
		wantError(t, call(t, rt[0], rt[1], other.write, nil), http.StatusNotFound, "not found")
	}

	// A deleted item: its revisions stay (the delete among them), and a
	// restore makes it again, with its id, as a draft.
	wantStatus(t, call(t, "DELETE", item, c.write, nil), http.StatusOK)
	wantError(t, call(t, "GET", item, c.read, nil), http.StatusNotFound, "not found")
	r = call(t, "GET", item+"/revisions?limit=1", c.read, nil)
	wantStatus(t, r, http.StatusOK)
	if rev := r.json["revisions"].([]any)[0].(map[string]any); rev["version"] != float64(6) || rev["change"] != "deleted" || rev["data"].(map[string]any)["title"] != "First" {
		t.Fatalf("newest revision of the deleted item: %v", rev)
	}
	wantError(t, call(t, "POST", item+"/revisions/3/restore", c.write, nil, "If-Match", "*"), http.StatusPreconditionFailed, "deleted")
	r = call(t, "POST", item+"/revisions/3/restore", c.write, nil)
	wantStatus(t, r, http.StatusOK)
	back := r.json["item"].(map[string]any)
	if back["id"] != id || back["title"] != "Third" || back["is_published"] != false || r.header.Get("ETag") != `"7"` {
		t.Fatalf("restoring the deleted item = %s (ETag %s), want it back with revision 3's data, a draft, version 7", r, r.header.Get("ETag"))
	}
	if got := call(t, "GET", item, c.read, nil); got.status != http.StatusOK || got.json["item"].(map[string]any)["title"] != "Third" {
		t.Fatalf("the restored item reads %s", got)
	}
	rx.waitCounts(t, map[string]int{"item.created": 2, "item.updated": 4, "item.deleted": 1})
}
