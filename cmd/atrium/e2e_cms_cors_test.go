package main

// Browsers as clients: CORS per site, judged by the gateway.

import (
	"net/http"
	"strings"
	"testing"
)

func testCollectionsCORS(t *testing.T, s *stack) {
	c := s.newCMS(t)
	origins := "/admin/v1/sites/" + c.site + "/allowed_origins"
	shop := "https://shop.example"
	for _, bad := range []string{"https://shop.example/", "https://Shop.example", "ftp://shop.example", "https://shop.example:443", "shop.example"} {
		wantError(t, s.adminCall(t, "PUT", origins, map[string]any{"allowed_origins": []string{bad}}), http.StatusBadRequest, "allowed_origins[0]")
	}
	r := s.adminCall(t, "PUT", origins, map[string]any{"allowed_origins": []string{shop, "http://localhost:8080"}})
	wantStatus(t, r, http.StatusOK)
	if got := r.json["site"].(map[string]any)["allowed_origins"]; len(got.([]any)) != 2 {
		t.Fatalf("site after PUT = %v, want its two origins", r.json["site"])
	}

	// The preflight: the route's methods and headers, never credentials.
	r = call(t, "OPTIONS", c.base+"/posts", "", nil, "Origin", shop, "Access-Control-Request-Method", "POST",
		"Access-Control-Request-Headers", "authorization, content-type")
	wantStatus(t, r, http.StatusNoContent)
	h := r.header
	if h.Get("Access-Control-Allow-Origin") != shop || h.Get("Access-Control-Allow-Methods") != "GET, POST" ||
		!strings.Contains(h.Get("Access-Control-Allow-Headers"), "Authorization") || !strings.Contains(h.Get("Access-Control-Allow-Headers"), "Content-Type") ||
		h.Get("Access-Control-Allow-Credentials") != "" || !strings.Contains(strings.Join(h.Values("Vary"), ","), "Origin") {
		t.Fatalf("preflight of posts = %v", h)
	}
	r = call(t, "OPTIONS", c.base+"/posts/x", "", nil, "Origin", shop, "Access-Control-Request-Method", "PATCH")
	if r.header.Get("Access-Control-Allow-Methods") != "DELETE, GET, PATCH" || !strings.Contains(r.header.Get("Access-Control-Allow-Headers"), "If-Match") {
		t.Fatalf("preflight of an item = %v", r.header)
	}

	// The request itself: an allowed origin may read, another is refused.
	r = call(t, "GET", c.base+"/posts", c.read, nil, "Origin", shop)
	wantStatus(t, r, http.StatusOK)
	if r.header.Get("Access-Control-Allow-Origin") != shop || r.header.Get("Access-Control-Allow-Credentials") != "" {
		t.Fatalf("allowed origin's list: headers %v", r.header)
	}
	r = call(t, "GET", c.base+"/posts", c.read, nil, "Origin", "https://evil.example")
	wantError(t, r, http.StatusForbidden, "https://evil.example", "allowed_origins")
	if r.header.Get("Access-Control-Allow-Origin") != "" {
		t.Fatalf("a refused origin may read the answer: %v", r.header)
	}
	// Without an Origin nothing changes.
	if r := call(t, "GET", c.base+"/posts", c.read, nil); r.status != http.StatusOK || r.header.Get("Access-Control-Allow-Origin") != "" {
		t.Fatalf("a request without Origin: %d %v", r.status, r.header)
	}

	// * serves only keys that cannot write.
	wantStatus(t, s.adminCall(t, "PUT", origins, map[string]any{"allowed_origins": []string{"*"}}), http.StatusOK)
	page := s.newKey(t, map[string]any{"scopes": []string{"read"}, "site_id": c.site, "published_only": true})
	r = call(t, "GET", c.base+"/posts", page, nil, "Origin", "https://anywhere.example")
	wantStatus(t, r, http.StatusOK)
	if r.header.Get("Access-Control-Allow-Origin") != "https://anywhere.example" {
		t.Fatalf("* with a published-only key: headers %v", r.header)
	}
	wantError(t, call(t, "GET", c.base+"/posts", c.write, nil, "Origin", "https://anywhere.example"), http.StatusForbidden, "*", "write")
	r = call(t, "POST", c.base+"/posts", page, map[string]any{"data": map[string]any{"title": "From a page"}}, "Origin", "https://anywhere.example")
	wantError(t, r, http.StatusForbidden, "published_only")
	if r.header.Get("Access-Control-Allow-Origin") == "" {
		t.Fatalf("the page cannot read why its write was refused: %v", r.header)
	}
}
