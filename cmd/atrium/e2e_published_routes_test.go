package main

// A published_only key is the key a public web page embeds: anyone who
// views the page can copy it. It reaches the site's published content and
// nothing else. This walks every operation the gateway documents, on both
// listeners, with such a key of a site that has data of every kind, so
// that a route added tomorrow is judged without anyone listing it here.

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"
)

// publishedRoutes are the operations a published_only key may call (the
// RPCs marked open_to_published_only in the proto): the collections, their
// items and an asset by id. Not the asset list.
var publishedRoutes = []string{
	"GET /api/public/v1/assets/{asset_id}",
	"GET /api/public/v1/collections",
	"GET /api/public/v1/collections/{collection_slug}",
	"GET /api/public/v1/collections/{collection_slug}/{item_id}",
	"POST /api/public/v1/realtime",
}

func testPublishedOnlyEveryRoute(t *testing.T, s *stack) {
	c := s.newCMS(t)
	// Bound to the agency too: what an agency key reads is refused as well.
	page := s.newKey(t, map[string]any{"scopes": []string{"read"}, "site_id": c.site, "agency_id": c.agency, "published_only": true})

	// Something behind every kind of id the routes take.
	live := c.createItem(t, "posts", map[string]any{"is_published": true, "data": map[string]any{"title": "Live"}})
	draft := c.createItem(t, "posts", map[string]any{"data": map[string]any{"title": "Draft"}})
	asset := s.newAsset(t, c.write, "photo.png", pngBytes(t, 4, 4))
	hook := s.register(t, c.write, "https://hooks.example.com/rebuild/secret-in-path", "item.published")
	r := call(t, "POST", c.base+"/posts/"+draft["id"].(string)+"/preview-links", c.write, map[string]any{})
	wantStatus(t, r, http.StatusCreated)
	link := r.json["preview_link"].(map[string]any)
	const fabricated = "0b9d6f0e-8d5e-4c1a-9a6e-2f1f3c4d5e6f"
	params := map[string]string{
		"collection_slug": "posts", "item_id": live["id"].(string), "asset_id": asset["id"].(string),
		"id": hook["id"].(string), "preview_link_id": link["id"].(string),
		"site_id": c.site, "agency_id": c.agency, "slug": "posts", "version": "1",
	}

	walk := func(base string, refused int, word string) (allowed []string) {
		t.Helper()
		doc := call(t, "GET", base+"/openapi.json", "", nil)
		wantStatus(t, doc, http.StatusOK)
		paths, _ := doc.json["paths"].(map[string]any)
		if len(paths) == 0 {
			t.Fatalf("%s/openapi.json has no paths", base)
		}
		for path, ops := range paths {
			for method, op := range ops.(map[string]any) {
				method = strings.ToUpper(method)
				if !slices.Contains([]string{"GET", "POST", "PUT", "PATCH", "DELETE"}, method) {
					continue // parameters shared by the path's operations
				}
				route := method + " " + path
				if sec, ok := op.(map[string]any)["security"].([]any); ok && len(sec) == 0 {
					// Open to anyone, key or not (a preview link's token,
					// the capability): a key changes nothing there.
					continue
				}
				url := base + fillPath(path, params, fabricated)
				if route == "POST /api/public/v1/realtime" {
					// A subscription names a live stream: a published-only
					// key may subscribe one (it then receives only what
					// it may read: testRealtime).
					st := openRealtime(t, s, "")
					wantStatus(t, subscribe(t, s, page, st.clientID, "posts"), http.StatusNoContent)
					st.close()
					allowed = append(allowed, route)
					continue
				}
				status, msg := probe(t, method, url, page)
				// A person's own session (GET and DELETE
				// /api/v1/sessions/current) takes no key of any kind,
				// and says so rather than naming published_only.
				says := strings.Contains(msg, word) || (personOnly(op) && strings.Contains(msg, "signed-in person"))
				switch {
				case status >= 200 && status < 300:
					allowed = append(allowed, route)
				case status != refused || !says:
					t.Errorf("%s with a published_only key: %d %q, want %d naming %s", route, status, msg, refused, word)
				}
			}
		}
		slices.Sort(allowed)
		return allowed
	}
	if got := walk(s.api, http.StatusForbidden, "published_only"); !slices.Equal(got, publishedRoutes) {
		t.Errorf("a published_only key was answered 2xx on %v, want exactly %v", got, publishedRoutes)
	}
	// The admin listener takes no API key at all.
	if got := walk(s.admin, http.StatusUnauthorized, "admin"); len(got) != 0 {
		t.Errorf("a published_only key was answered 2xx on the admin listener: %v", got)
	}

	// The allowed reads hide drafts (the rest of that is
	// testCollectionsPublishedOnly's).
	wantError(t, call(t, "GET", c.base+"/posts/"+draft["id"].(string), page, nil), http.StatusNotFound)
	for _, it := range call(t, "GET", c.base+"/posts", page, nil).json["items"].([]any) {
		if id := it.(map[string]any)["id"]; id != live["id"] {
			t.Fatalf("a published_only key listed item %v, not the published one", id)
		}
	}

	// The MCP server calls these routes with the caller's key: it offers
	// such a key the tools of the routes open to it, no others.
	if got, want := toolNamesOf(listTools(t, mcpSession(t, s, page))), []string{"get_asset", "get_item", "list_collections", "list_items"}; !slices.Equal(got, want) {
		t.Errorf("a published_only key's MCP tools = %v, want %v", got, want)
	}
}

// fillPath puts params' values (else fabricated) in a path template's
// variables.
func fillPath(template string, params map[string]string, fabricated string) string {
	var b strings.Builder
	for {
		open := strings.IndexByte(template, '{')
		if open < 0 {
			b.WriteString(template)
			return b.String()
		}
		end := strings.IndexByte(template[open:], '}') + open
		b.WriteString(template[:open])
		v, ok := params[template[open+1:end]]
		if !ok {
			v = fabricated
		}
		b.WriteString(v)
		template = template[end+1:]
	}
}

// probe sends one request with key (a body of {} where one is taken) and
// returns its status and, for an error, the message. A 2xx body is not
// read: it may be a stream that never ends (the event stream).
func probe(t *testing.T, method, url, key string) (int, string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), 30*time.Second)
	defer cancel()
	var body io.Reader
	if method != "GET" && method != "DELETE" {
		body = strings.NewReader("{}")
	}
	req, err := http.NewRequestWithContext(ctx, method, url, body)
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Authorization", "Bearer "+key)
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatalf("%s %s: %v", method, url, err)
	}
	defer resp.Body.Close()
	if resp.StatusCode < 300 {
		return resp.StatusCode, ""
	}
	var e struct {
		Error string `json:"error"`
	}
	if err := json.NewDecoder(resp.Body).Decode(&e); err != nil {
		t.Errorf("%s %s: %d with a body that is not {\"error\": ...}: %v", method, url, resp.StatusCode, err)
	}
	return resp.StatusCode, e.Error
}

// personOnly reports whether an operation takes only a person's session
// cookie (its only security requirement is the session scheme) and no
// resource of a tenant: a signed-in person's own session.
func personOnly(op any) bool {
	o, _ := op.(map[string]any)
	sec, _ := o["security"].([]any)
	if len(sec) != 1 {
		return false
	}
	req, _ := sec[0].(map[string]any)
	_, session := req["session"]
	_, resource := o["x-atrium-resource"]
	return session && len(req) == 1 && !resource
}
