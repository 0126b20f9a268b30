package main

// Preview links over HTTP: made with a write key, opened without any key
// (drafts included, the item as it is now), listed, revoked, expired, and
// another site's items and links out of reach.

import (
	"net/http"
	"strings"
	"testing"
	"time"

	atrium "github.com/atrium-hq/atrium/sdk/go"
)

func (c cmsTenant) previewLinks(s *stack) string { return s.api + "/api/public/v1/preview-links" }

// listPreviews lists preview links with a query, as {"preview_links": [...]}.
func (c cmsTenant) listPreviews(t *testing.T, s *stack, query string) []map[string]any {
	t.Helper()
	r := call(t, "GET", c.previewLinks(s)+"?"+query, c.write, nil)
	wantStatus(t, r, http.StatusOK)
	raw, ok := r.json["preview_links"].([]any)
	if !ok || len(r.json) != 1 {
		t.Fatalf("list = %s, want {\"preview_links\": [...]}", r.body)
	}
	out := make([]map[string]any, len(raw))
	for i, v := range raw {
		out[i] = v.(map[string]any)
	}
	return out
}

func (c cmsTenant) newPreview(t *testing.T, slug, id string, body any) map[string]any {
	t.Helper()
	r := call(t, "POST", c.base+"/"+slug+"/"+id+"/preview-links", c.write, body)
	wantStatus(t, r, http.StatusCreated)
	return r.json["preview_link"].(map[string]any)
}

func testPreviewLinks(t *testing.T, s *stack) {
	c := s.newCMS(t)
	item := c.createItem(t, "posts", map[string]any{"data": map[string]any{"title": "Draft of the week"}})
	id := item["id"].(string)
	before := time.Now()
	link := c.newPreview(t, "posts", id, map[string]any{})
	wantKeys(t, link, "id", "collection", "item_id", "url", "created_at", "expires_at")
	if link["item_id"] != id || link["collection"] != "posts" {
		t.Fatalf("link = %v", link)
	}
	// Default lifetime: 7 days.
	exp, err := time.Parse(time.RFC3339Nano, link["expires_at"].(string))
	if err != nil {
		t.Fatal(err)
	}
	if d := exp.Sub(before); d < 7*24*time.Hour-time.Minute || d > 7*24*time.Hour+time.Minute {
		t.Fatalf("expires_at %s is %s away, want 7 days", exp, d)
	}
	u := link["url"].(string)
	if !strings.HasPrefix(u, s.api+"/api/public/v1/preview/") {
		t.Fatalf("url = %s", u)
	}
	// Opened without a key: the draft, as the item route shows it.
	r := fetch(t, u)
	wantStatus(t, r, http.StatusOK)
	if cc := r.header.Get("Cache-Control"); cc != "no-store" {
		t.Fatalf("a preview's Cache-Control = %q, want no-store: a draft must not stay in a shared cache", cc)
	}
	got := r.json["item"].(map[string]any)
	if got["id"] != id || got["title"] != "Draft of the week" || got["is_published"] != false || r.json["collection"] != "posts" {
		t.Fatalf("preview = %s", r)
	}
	// The item as it is now, not as it was when the link was made.
	wantStatus(t, call(t, "PATCH", c.base+"/posts/"+id, c.write, map[string]any{"data": map[string]any{"title": "Edited"}}), http.StatusOK)
	if got := fetch(t, u).json["item"].(map[string]any); got["title"] != "Edited" {
		t.Fatalf("preview after an edit = %v", got)
	}
	// A token that is not one given out, or a changed one, is 404.
	wantError(t, fetch(t, s.api+"/api/public/v1/preview/nope"), http.StatusNotFound, "no preview")
	tampered := u[:len(u)-1] + map[bool]string{true: "B", false: "A"}[strings.HasSuffix(u, "A")]
	wantError(t, fetch(t, tampered), http.StatusNotFound, "no preview")

	// Listed (without urls) for the collection and for the item.
	second := c.newPreview(t, "posts", id, map[string]any{"expires_in_seconds": 3600})
	rows := c.listPreviews(t, s, "collection=posts")
	if got := ids(rows); len(got) != 2 || got[0] != second["id"] || got[1] != link["id"] {
		t.Fatalf("listed %v, want the two links newest first", got)
	}
	if _, has := rows[0]["url"]; has {
		t.Fatalf("a listed link carries its url: %v", rows[0])
	}
	if got := c.listPreviews(t, s, "collection=posts&item_id="+id); len(got) != 2 {
		t.Fatalf("links of the item = %v", ids(got))
	}
	// Listing needs a write key and a collection.
	wantError(t, call(t, "GET", c.previewLinks(s)+"?collection=posts", c.read, nil), http.StatusForbidden, "write")
	wantError(t, call(t, "GET", c.previewLinks(s), c.write, nil), http.StatusBadRequest, "collection")
	wantError(t, call(t, "GET", c.previewLinks(s)+"?collection=nope", c.write, nil), http.StatusNotFound, "nope")

	// Revoked: 404 at once, and gone from the list.
	wantStatus(t, call(t, "DELETE", c.previewLinks(s)+"/"+link["id"].(string), c.write, nil), http.StatusOK)
	wantError(t, fetch(t, u), http.StatusNotFound, "no preview")
	wantError(t, call(t, "DELETE", c.previewLinks(s)+"/"+link["id"].(string), c.write, nil), http.StatusNotFound)
	if got := ids(c.listPreviews(t, s, "collection=posts")); len(got) != 1 || got[0] != second["id"] {
		t.Fatalf("after revoking, listed %v", got)
	}
	// Deleting the item kills its links.
	wantStatus(t, fetch(t, second["url"].(string)), http.StatusOK)
	wantStatus(t, call(t, "DELETE", c.base+"/posts/"+id, c.write, nil), http.StatusOK)
	wantError(t, fetch(t, second["url"].(string)), http.StatusNotFound, "no preview")
}

func testPreviewLinksValidation(t *testing.T, s *stack) {
	c := s.newCMS(t)
	id := c.createItem(t, "posts", map[string]any{"data": map[string]any{"title": "x"}})["id"].(string)
	links := c.base + "/posts/" + id + "/preview-links"
	for _, bad := range []any{0, -5, 2592001} {
		wantError(t, call(t, "POST", links, c.write, map[string]any{"expires_in_seconds": bad}), http.StatusBadRequest, "expires_in_seconds must be from 1 to 2592000")
	}
	wantStatus(t, call(t, "POST", links, c.write, map[string]any{"expires_in_seconds": 2592000}), http.StatusCreated)
	wantError(t, call(t, "POST", links, c.read, map[string]any{}), http.StatusForbidden, "write")
	wantError(t, call(t, "POST", c.base+"/posts/not-an-id/preview-links", c.write, map[string]any{}), http.StatusNotFound)
	wantError(t, call(t, "POST", c.base+"/nope/"+id+"/preview-links", c.write, map[string]any{}), http.StatusNotFound)
	wantError(t, call(t, "POST", links, "", map[string]any{}), http.StatusUnauthorized)
}

// testPreviewLinksExpire makes a link that lives a second and waits for
// the gateway to answer 404 on it.
func testPreviewLinksExpire(t *testing.T, s *stack) {
	c := s.newCMS(t)
	id := c.createItem(t, "posts", map[string]any{"data": map[string]any{"title": "Short-lived"}})["id"].(string)
	link := c.newPreview(t, "posts", id, map[string]any{"expires_in_seconds": 1})
	exp, err := time.Parse(time.RFC3339Nano, link["expires_at"].(string))
	if err != nil {
		t.Fatal(err)
	}
	if r := fetch(t, link["url"].(string)); r.status != http.StatusOK && time.Now().Before(exp) {
		t.Fatalf("a live link: %s", r)
	}
	time.Sleep(time.Until(exp) + 5*time.Millisecond) // why sleep: expiry is the service's wall clock, not something a test can signal
	wantError(t, fetch(t, link["url"].(string)), http.StatusNotFound, "no preview")
	if got := c.listPreviews(t, s, "collection=posts"); len(got) != 0 {
		t.Fatalf("expired links are listed: %v", ids(got))
	}
}

func testPreviewLinksTenancy(t *testing.T, s *stack) {
	a, b := s.newCMS(t), s.newCMS(t)
	id := a.createItem(t, "posts", map[string]any{"data": map[string]any{"title": "Mine"}})["id"].(string)
	link := a.newPreview(t, "posts", id, map[string]any{})
	// b cannot make links to a's items, list a's links or revoke them.
	wantError(t, call(t, "POST", b.base+"/posts/"+id+"/preview-links", b.write, map[string]any{}), http.StatusNotFound)
	if got := b.listPreviews(t, s, "collection=posts"); len(got) != 0 {
		t.Fatalf("site b lists site a's links: %v", ids(got))
	}
	wantError(t, call(t, "DELETE", b.previewLinks(s)+"/"+link["id"].(string), b.write, nil), http.StatusNotFound)
	wantStatus(t, fetch(t, link["url"].(string)), http.StatusOK)
}

// testSDKPreviewsAndSchedule: the Go SDK makes, lists and revokes preview
// links, and writes and reads an item's schedule.
func testSDKPreviewsAndSchedule(t *testing.T, s *stack) {
	c := s.newCMS(t)
	sdk := atrium.New(s.api, c.write, atrium.WithHTTPClient(http.DefaultClient))
	ctx := t.Context()
	when := time.Now().Add(time.Hour).UTC().Truncate(time.Second)
	it, err := sdk.Items.Create(ctx, "posts", atrium.ItemWrite{Data: map[string]any{"title": "Via SDK"}, PublishAt: &when})
	if err != nil || it.PublishAt == nil || !it.PublishAt.Equal(when) || it.UnpublishAt != nil {
		t.Fatalf("Items.Create with PublishAt = %+v, %v", it, err)
	}
	if _, has := it.Fields["publish_at"]; has {
		t.Fatalf("publish_at is among the fields: %v", it.Fields)
	}
	link, err := sdk.Previews.Create(ctx, "posts", it.ID, time.Hour)
	if err != nil || link.URL == "" || link.ItemID != it.ID || link.ExpiresAt.Sub(link.CreatedAt) != time.Hour {
		t.Fatalf("Previews.Create = %+v, %v", link, err)
	}
	wantStatus(t, fetch(t, link.URL), http.StatusOK)
	links, err := sdk.Previews.List(ctx, "posts", it.ID)
	if err != nil || len(links) != 1 || links[0].ID != link.ID || links[0].URL != "" {
		t.Fatalf("Previews.List = %+v, %v", links, err)
	}
	if err := sdk.Previews.Revoke(ctx, link.ID); err != nil {
		t.Fatal(err)
	}
	wantStatus(t, fetch(t, link.URL), http.StatusNotFound)
	if err := sdk.Previews.Revoke(ctx, link.ID); atrium.StatusOf(err) != http.StatusNotFound {
		t.Fatalf("revoking twice = %v, want 404", err)
	}
}
