package main

import (
	"fmt"
	"net/http"
	"slices"
	"testing"
)

// names is n event type names, all different.
func names(n int) []string {
	out := make([]string, n)
	for i := range out {
		out[i] = fmt.Sprintf("item.e%d", i)
	}
	return out
}

// testRequestLimits: a list or a map over the maximum its proto field
// declares is a 400 naming the field, the count and the maximum, through
// the JSON API, and nothing is stored; a webhook's events are kept once
// each (docs/http-api.md, "Limits"; docs/webhooks.md).
func testRequestLimits(t *testing.T, s *stack) {
	c := s.newCMS(t)
	site := s.newKey(t, map[string]any{"scopes": []string{"read", "write"}, "site_id": c.site})

	// A webhook's events: 65 is refused, on create and on update.
	wantError(t, call(t, "POST", s.api+"/api/v1/webhooks", site, map[string]any{"url": "https://hooks.example.com/x", "events": names(65)}),
		http.StatusBadRequest, "events has 65 items; at most 64 are allowed")
	if hooks := s.hooksCall(t, "GET", "", site, nil).json["webhooks"].([]any); len(hooks) != 0 {
		t.Fatalf("a refused registration stored %v", hooks)
	}
	// 64 names, most of them the same: each is kept once, in order.
	events := append(slices.Repeat([]string{"item.*"}, 62), "item.published", "item.*")
	r := call(t, "POST", s.api+"/api/v1/webhooks", site, map[string]any{"url": "https://hooks.example.com/x", "events": events})
	wantStatus(t, r, http.StatusCreated)
	hook := r.json["webhook"].(map[string]any)
	id := hook["id"].(string)
	if got := fmt.Sprint(hook["events"]); got != "[item.* item.published]" {
		t.Fatalf("registered with 64 names, 2 of them different: events = %s, want [item.* item.published]", got)
	}
	wantError(t, s.hooksCall(t, "PATCH", "/"+id, site, map[string]any{"events": names(65)}),
		http.StatusBadRequest, "events has 65 items; at most 64 are allowed")
	if got := s.hooksCall(t, "GET", "/"+id, site, nil).json["webhook"].(map[string]any); fmt.Sprint(got["events"]) != "[item.* item.published]" ||
		got["updated_at"] != hook["updated_at"] {
		t.Fatalf("a refused PATCH changed the webhook: %v", got)
	}

	// An item's data: at most 200 keys (a collection's most fields).
	data := map[string]any{}
	for i := range 201 {
		data[fmt.Sprintf("f%d", i)] = i
	}
	wantError(t, call(t, "POST", c.base+"/posts", c.write, map[string]any{"data": data}),
		http.StatusBadRequest, "data has 201 keys; at most 200 are allowed")
	if items := call(t, "GET", c.base+"/posts", c.read, nil).json["items"].([]any); len(items) != 0 {
		t.Fatalf("a refused item was stored: %v", items)
	}

	// A list nested in a list, named by its path (admin API).
	options := names(501)
	wantError(t, s.adminCall(t, "POST", "/admin/v1/sites/"+c.site+"/collections", map[string]any{"name": "Tags", "slug": "tags",
		"fields": []map[string]any{{"key": "kind", "type": "text"}, {"key": "tag", "type": "select", "options": options}}}),
		http.StatusBadRequest, "fields[1].options has 501 items; at most 500 are allowed")
	wantError(t, call(t, "GET", c.base+"/tags", c.read, nil), http.StatusNotFound, "tags")

	// An action's fields are the whole body: the 400 says so.
	body := map[string]any{"action": "generate_blog", "client_id": "00000000-0000-7000-8000-000000000000"}
	for i := range 63 {
		body[fmt.Sprintf("x%d", i)] = i
	}
	wantError(t, call(t, "POST", s.api+"/api/v1/data", c.write, body), http.StatusBadRequest,
		"the request body has 65 keys; at most 64 are allowed")

	// The event stream's filter, comma-separated in the query.
	q := ""
	for i, n := range names(65) {
		if i > 0 {
			q += ","
		}
		q += n
	}
	wantError(t, call(t, "GET", s.api+"/api/v1/event-stream?events="+q, c.read, nil), http.StatusBadRequest,
		"events has 65 items; at most 64 are allowed")
}
